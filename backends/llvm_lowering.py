"""irkit IR to LLVM IR: the value map, the op-rule registry, and the rules for functions and
structured control flow (`func`, `loop`).

A module is translated in two sweeps: every `func.func` is first declared (so calls may
precede their callee), then each body is lowered op by op. An op's translation is a *rule*:
a function registered for the op's name with `@lowers("arith.addi", ...)` that receives the
`FunctionLowering` (builder, value map, helpers) and the LLVM values of the op's operands,
and returns the LLVM values of its results. Rules for each dialect family live in their own
module (`llvm_arith`, `llvm_vector`, `llvm_memory`, `llvm_parallel`); an op without a rule is
a located error naming it.

Calling convention (the C interface; see docs/backend.md). `func.func @f(args) -> results`
becomes `void f(ARGS..., RESULT_PTRS...)`:

- a scalar argument is passed by value as its ABI type (`llvm_types.abi_scalar`: `i1` as a
  byte 0/1, odd integer widths widened, `f16` as its 16 bits);
- a vector argument is a pointer to its elements in row-major order (storage types);
- a memref argument is a pointer to its descriptor `{T*, T*, i64, [R x i64], [R x i64]}`;
- each result is written through one pointer appended after the arguments: a scalar or
  vector to its storage, a memref as a whole descriptor.

Private functions get internal linkage; declarations (no body) are external symbols with the
same convention. Calls between functions of the module use the same convention (LLVM's
inliner and SROA remove the result slots).
"""

from __future__ import annotations

from typing import Callable, Collection, Mapping

import llvmlite.ir as ir
from llvmlite.ir._utils import DuplicatedNameError, NameScope

from irkit.diagnostics import IRError
from irkit.ir import Block, Operation, Value, gc_paused
from irkit.target import VECTORIZED_ATTRIBUTE, power_of_two_pieces
from irkit.types import FunctionType, MemRefType, Type, VectorType
from irkit.backends.llvm_profile import profile_region, timed
from irkit.backends.llvm_types import (
    I32, I64, PTR, VOID, abi_scalar, byte_size, element_of, error_at, from_abi,
    from_storage, storage_type, to_abi, to_storage, value_type,
)

#: op name -> rule(lowering, op, operand values) -> result value(s)
RULES: dict[str, Callable] = {}


def lowers(*names: str, table: dict[str, Callable] = RULES):
    """Register the decorated function as the translation rule of the ops `names` in `table`
    (default: `RULES`, the rules every target shares)."""
    def register(fn):
        for n in names:
            table[n] = fn
        return fn
    return register


def mangle(t: ir.Type) -> str:
    """LLVM's suffix for an overloaded intrinsic type: `f32`, `i8`, `v4f32`."""
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{mangle(t.element)}"
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    if isinstance(t, ir.PointerType):
        return f"p{t.addrspace}"
    return {ir.HalfType: "f16", ir.FloatType: "f32", ir.DoubleType: "f64"}[type(t)]


# ---------------------------------------------------------------------------------------------
# Signatures
# ---------------------------------------------------------------------------------------------


class Signature:
    """The C interface of a function type (of a `func.func`, or of a function value called
    with `func.call_indirect`): irkit types, value types, and the LLVM type."""

    def __init__(self, fn: Operation, ftype: FunctionType | None = None) -> None:
        if ftype is None:
            ftype = fn.properties["function_type"].value
        self.inputs: list[Type] = list(ftype.inputs)
        self.results: list[Type] = list(ftype.results)
        self.arg_values = [value_type(t, fn) for t in self.inputs]
        self.result_values = [value_type(t, fn) for t in self.results]
        params = [abi_scalar(v) if _by_value(t) else PTR
                  for t, v in zip(self.inputs, self.arg_values)]
        self.llvm_type = ir.FunctionType(VOID, params + [PTR] * len(self.results))


def _by_value(t: Type) -> bool:
    return not isinstance(t, (VectorType, MemRefType))


# ---------------------------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------------------------

_LIBM = ("exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt",
         "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "atan2", "asinh",
         "acosh", "atanh", "erf", "erfc", "pow", "fabs", "fmod", "ceil", "floor", "round",
         "roundeven", "trunc", "rint", "nearbyint", "copysign", "fma", "fmax", "fmin",
         "fmaximum", "fminimum", "fmaximum_num", "fminimum_num", "sincos", "ldexp", "frexp")
#: C library functions compiled code may call, directly or through LLVM's lowering of
#: intrinsics (llvm.exp.f32 becomes a call to `expf`): a module function of one of these
#: names would silently replace the library's
RESERVED_NAMES = frozenset([n + s for n in _LIBM for s in ("", "f")] +
                           ["malloc", "free", "memcpy", "memmove", "memset",
                            "pthread_create", "pthread_join"])


def align_function(fn: ir.Function, align: int) -> None:
    """Start `fn`'s code at a multiple of `align` bytes (none for 0). llvmlite has no
    setter for a function's alignment, and LLVM's parser takes `align N` among the
    function attributes (and moves it where it belongs), so it is added there, past the
    attribute set's list of names it knows."""
    if align:
        set.add(fn.attributes, f"align {align}")


class ModuleLowering:
    """Translates one `builtin.module` of `func.func`s into an `ir.Module`."""

    #: the op a module to translate is (the NVPTX backend translates `gpu.module`s)
    container = "builtin.module"

    def __init__(self, module: Operation, name: str = "irkit", openmp: bool = False,
                 rules: Mapping[str, Callable] = RULES,
                 only: Collection[str] | None = None, function_align: int = 0) -> None:
        if module.name != self.container:
            raise error_at(module, f"cannot be translated to LLVM IR: expected a "
                                   f"'{self.container}'")
        self.module = module
        self.llmod = ir.Module(name=name)
        #: symbol name -> (LLVM function, signature, func.func op)
        self.functions: dict[str, tuple[ir.Function, Signature, Operation]] = {}
        #: names of the C-library functions the code calls (checked before JIT linking)
        self.runtime_symbols: set[str] = set()
        #: whether outermost `loop.parallel`s run on OpenMP threads (`llvm_parallel`)
        self.openmp = openmp
        #: op name -> rule: `RULES`, or a target's own view of them (the NVPTX backend's
        #: kernels replace the math rules by libdevice calls and add the gpu ops')
        self.rules = rules
        #: the function definitions to translate (None: all); the others are left out, not
        #: even declared, so `only` must hold every function they call
        #: (`llvm_cpu.entry_functions`). Declarations are always kept.
        self.only = None if only is None else frozenset(only)
        #: each defined function's code starts at a multiple of this many bytes (0: LLVM's
        #: choice; `align_function`)
        self.function_align = function_align
        self._helpers: dict = {}

    def translate(self) -> ir.Module:
        """The module translated. The cycle collector is paused meanwhile (`gc_paused`):
        every llvmlite value is in a cycle (instruction -> block -> function), and the
        collector's full sweeps, triggered by those allocations, rescanned the whole lowered
        IR again and again: 5-20% of the translation's time in a fresh process compiling an
        example model, half of it in one holding more IR (issue 14)."""
        with gc_paused():
            return self._translate()

    def _translate(self) -> ir.Module:
        body = self.module.regions[0].blocks[0] if self.module.regions[0].blocks else None
        funcs = []
        for op in (body.ops if body is not None else ()):
            if op.name != "func.func":
                raise error_at(op, "cannot be translated to LLVM IR: only 'func.func' ops "
                                   "may appear at module level")
            if self.only is None or not op.regions[0].blocks or \
                    op.properties["sym_name"].value in self.only:
                funcs.append(op)
        for fn in funcs:
            self._declare(fn)
        for fn in funcs:
            if fn.regions[0].blocks:
                llfn, sig, _ = self.functions[fn.properties["sym_name"].value]
                FunctionLowering(self, llfn, fn, sig).lower()
        return self.llmod

    def _declare(self, fn: Operation) -> None:
        name = fn.properties["sym_name"].value
        if fn.regions[0].blocks and name in RESERVED_NAMES:
            raise error_at(fn, f"defines '@{name}', a C library function the compiled code "
                               "may call (LLVM lowers math intrinsics to such calls); rename "
                               "it")
        sig = Signature(fn)
        llfn = ir.Function(self.llmod, sig.llvm_type, name=name)
        vis = fn.properties.get("sym_visibility")
        if fn.regions[0].blocks:
            if vis is not None and vis.value == "private":
                llfn.linkage = "internal"
            llfn.attributes.add("nounwind")
            align_function(llfn, self.function_align)
        self.functions[name] = (llfn, sig, fn)

    def declare_runtime(self, name: str, fnty: ir.FunctionType, where) -> ir.Function:
        """The C-library function or intrinsic `name` (declared once). A module function of
        the same name would be called instead, so that is an error at the op needing it."""
        g = self.llmod.globals.get(name)
        if g is None:
            if not name.startswith("llvm."):
                self.runtime_symbols.add(name)
            return ir.Function(self.llmod, fnty, name=name)
        if name in self.functions:
            user = self.functions[name][2]
            raise error_at(where, f"needs the runtime function '{name}', but the module "
                                  f"defines a function of that name at "
                                  f"{_where(user)}; rename it")
        return g

    def unique_name(self, prefix: str) -> str:
        """`prefix` followed by the first number no global of the module has yet."""
        n = 0
        while f"{prefix}{n}" in self.llmod.globals:
            n += 1
        return f"{prefix}{n}"

    def hidden_global(self, name: str, t: ir.Type) -> ir.GlobalVariable:
        """The module's zero-initialized global `name` of type `t` (created on first use),
        hidden: two libraries in one process never share it, yet the library's own C code
        and MCJIT find it by name."""
        g = self.llmod.globals.get(name)
        if g is None:
            g = ir.GlobalVariable(self.llmod, t, name)
            g.initializer = ir.Constant(t, None)
            g.storage_class = "hidden"
        return g

    def helper(self, key, build: Callable[[], ir.Function]) -> ir.Function:
        """A private helper function of this module (built once per `key`)."""
        fn = self._helpers.get(key)
        if fn is None:
            fn = self._helpers[key] = build()
        return fn

    def vectorized_loop_id(self) -> ir.MDValue:
        """The `!llvm.loop` of a loop irkit has vectorized as far as it will (loop-vectorize's
        docstring): `!N = !{!N, !{!"llvm.loop.vectorize.enable", i1 false}}`, LLVM's loop
        vectorizer told to leave it. One node for all such loops of the module, so that
        bodies outlined alike stay alike (`llvm_partition` merges them)."""
        def build():
            off = self.llmod.add_metadata([ir.MetaDataString(self.llmod,
                                                             "llvm.loop.vectorize.enable"),
                                           ir.Constant(ir.IntType(1), 0)])
            md = self.llmod.add_metadata([off, off])
            md.operands = (md, off)         # a loop id's first operand is itself
            return md
        return self.helper("vectorized loop id", build)


def _where(op: Operation) -> str:
    flc = getattr(op.location, "file_line_col", None)
    r = flc() if flc is not None else None
    return f"{r[0]}:{r[1]}:{r[2]}" if r else f"@{op.properties['sym_name'].value}"


# ---------------------------------------------------------------------------------------------
# The builder: integer constants folded as they are built
# ---------------------------------------------------------------------------------------------


def _const_int(v: ir.Value) -> int | None:
    """The bits of scalar integer constant `v` as an unsigned int, else None (not a
    constant, an undef, a vector, a constant expression)."""
    if isinstance(v, ir.Constant) and isinstance(v.type, ir.IntType) and \
            isinstance(v.constant, int):
        return v.constant & ((1 << v.type.width) - 1)
    return None


def _signed(x: int, width: int) -> int:
    return x - (1 << width) if x >> (width - 1) else x


def _fits(x: int, width: int, flags, signed_x: int | None = None) -> bool:
    """Whether an exact result `x` (unsigned) / `signed_x` (signed) is what the wrapping one
    is under `flags`: with `nuw` or `nsw`, an overflow is poison, which is left to LLVM."""
    if "nuw" in flags and not 0 <= x < 1 << width:
        return False
    return "nsw" not in flags or signed_x is None or \
        -(1 << (width - 1)) <= signed_x < 1 << (width - 1)


_COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class FoldingBuilder(ir.IRBuilder):
    """llvmlite's `IRBuilder`, but integer arithmetic, comparisons, selects and casts of
    constants are computed instead of emitted, as LLVM's own `IRBuilder` does with its
    constant folder, and `x + 0`, `x * 1`, `x / 1`, `select c, x, x` are `x`.

    Rules emit index arithmetic generically (a loop's trip count, a tile's bound, a parallel
    loop's work estimate) and many of its operands are constants: folding took the MLP
    example's LLVM IR from 13,000 lines to 10,000, each one text to print, parse and
    optimize (issue 14). Folding keeps what LLVM would compute: two's-complement wrapping;
    a division by zero, a signed `MIN / -1` and an `nsw`/`nuw` overflow (poison or
    undefined behaviour) are emitted as they are, for LLVM to judge (shifts are not
    folded).

    Aggregates (memref descriptors) are read once: a field of a descriptor built in this
    function is the value inserted there, and a field of one defined in the function's
    first code block (`home`: the arguments' descriptors, an outlined body's captures) is
    extracted there, once, however many loop bodies read it (every load and store reads
    the aligned pointer of its buffer)."""

    def __init__(self, home: ir.Block) -> None:
        super().__init__(home)
        self._home = home
        self._fields: dict = {}             # (id of an aggregate in home, path) -> field

    def extract_value(self, agg, idx, name=""):
        path = list(idx) if isinstance(idx, (tuple, list)) else [idx]
        while isinstance(agg, ir.InsertValue):
            have = list(agg.indices)
            n = min(len(have), len(path))
            if have[:n] != path[:n]:        # another field: look further down the chain
                agg = agg.aggregate
            elif len(have) < len(path):     # a part of this field
                return self.extract_value(agg.value, path[len(have):])
            elif _same_type(agg.value.type, _field_type(agg.type, have)):
                return agg.value            # this field, as it was inserted
            else:                           # a whole filled in parts, or another pointer
                break
        home = self._home
        if not (isinstance(agg, ir.Instruction) and agg.parent is home) or \
                (self.block is not home and not home.is_terminated):
            return super().extract_value(agg, path, name)
        key = (id(agg), tuple(path))
        field = self._fields.get(key)
        if field is None:
            if self.block is home:
                field = super().extract_value(agg, path, name)
            else:                           # home dominates every block that follows it
                at = ir.IRBuilder(home)
                at.position_before(home.terminator)
                field = at.extract_value(agg, path, name)
            self._fields[key] = field
        return field

    def _binary(self, op: str, fold, lhs, rhs, name, flags):
        """`fold(a, b, width, flags)` of constants (None: leave it to LLVM), else `op`."""
        a, b = _const_int(lhs), _const_int(rhs)
        if a is not None and b is not None and lhs.type == rhs.type:
            r = fold(a, b, lhs.type.width, flags)
            if r is not None:
                return ir.Constant(lhs.type, r & ((1 << lhs.type.width) - 1))
        return getattr(super(), op)(lhs, rhs, name, flags)

    def add(self, lhs, rhs, name="", flags=()):
        if _const_int(rhs) == 0:
            return lhs
        if _const_int(lhs) == 0:
            return rhs
        return self._binary("add", lambda a, b, w, f: a + b if _fits(
            a + b, w, f, _signed(a, w) + _signed(b, w)) else None, lhs, rhs, name, flags)

    def sub(self, lhs, rhs, name="", flags=()):
        if _const_int(rhs) == 0:
            return lhs
        return self._binary("sub", lambda a, b, w, f: a - b if _fits(
            a - b, w, f, _signed(a, w) - _signed(b, w)) else None, lhs, rhs, name, flags)

    def mul(self, lhs, rhs, name="", flags=()):
        if _const_int(rhs) == 1:
            return lhs
        if _const_int(lhs) == 1:
            return rhs
        return self._binary("mul", lambda a, b, w, f: a * b if _fits(
            a * b, w, f, _signed(a, w) * _signed(b, w)) else None, lhs, rhs, name, flags)

    def udiv(self, lhs, rhs, name="", flags=()):
        if _const_int(rhs) == 1:
            return lhs
        return self._binary("udiv", lambda a, b, w, f: a // b if b else None,
                            lhs, rhs, name, flags)

    def urem(self, lhs, rhs, name="", flags=()):
        return self._binary("urem", lambda a, b, w, f: a % b if b else None,
                            lhs, rhs, name, flags)

    def sdiv(self, lhs, rhs, name="", flags=()):
        if _const_int(rhs) == 1:
            return lhs
        return self._binary("sdiv", lambda a, b, w, f: _sdiv(_signed(a, w), _signed(b, w), w),
                            lhs, rhs, name, flags)

    def srem(self, lhs, rhs, name="", flags=()):
        def rem(a, b, w, f):
            q = _sdiv(_signed(a, w), _signed(b, w), w)
            return None if q is None else _signed(a, w) - q * _signed(b, w)
        return self._binary("srem", rem, lhs, rhs, name, flags)

    def and_(self, lhs, rhs, name="", flags=()):
        return self._binary("and_", lambda a, b, w, f: a & b, lhs, rhs, name, flags)

    def or_(self, lhs, rhs, name="", flags=()):
        return self._binary("or_", lambda a, b, w, f: a | b, lhs, rhs, name, flags)

    def xor(self, lhs, rhs, name="", flags=()):
        return self._binary("xor", lambda a, b, w, f: a ^ b, lhs, rhs, name, flags)

    def _icmp(self, prefix, cmpop, lhs, rhs, name):
        a, b = _const_int(lhs), _const_int(rhs)
        if a is not None and b is not None and lhs.type == rhs.type:
            if prefix == "s":
                a, b = _signed(a, lhs.type.width), _signed(b, lhs.type.width)
            return ir.Constant(ir.IntType(1), int(_COMPARE[cmpop](a, b)))
        return super()._icmp(prefix, cmpop, lhs, rhs, name)

    def select(self, cond, lhs, rhs, name="", flags=()):
        c = _const_int(cond)
        if c is not None and isinstance(cond.type, ir.IntType) and cond.type.width == 1:
            return lhs if c else rhs
        if lhs is rhs:
            return lhs
        return super().select(cond, lhs, rhs, name, flags)

    def trunc(self, value, typ, name=""):
        x = _const_int(value)
        if x is not None and isinstance(typ, ir.IntType):
            return ir.Constant(typ, x & ((1 << typ.width) - 1))
        return super().trunc(value, typ, name)

    def zext(self, value, typ, name=""):
        x = _const_int(value)
        if x is not None and isinstance(typ, ir.IntType):
            return ir.Constant(typ, x)
        return super().zext(value, typ, name)

    def sext(self, value, typ, name=""):
        x = _const_int(value)
        if x is not None and isinstance(typ, ir.IntType):
            return ir.Constant(typ, _signed(x, value.type.width) & ((1 << typ.width) - 1))
        return super().sext(value, typ, name)


def _field_type(t: ir.Type, path: list[int]) -> ir.Type:
    """The type of the member at `path` of aggregate type `t`."""
    for i in path:
        t = t.elements[i] if isinstance(t, (ir.LiteralStructType, ir.IdentifiedStructType)) \
            else t.element
    return t


def _same_type(a: ir.Type, b: ir.Type) -> bool:
    """Whether `a` and `b` print the same: llvmlite's `==` holds a typed pointer (the NVPTX
    backend's address spaces) equal to an opaque `ptr`, which LLVM does not."""
    return a is b or (type(a) is type(b) and str(a) == str(b))


def _sdiv(a: int, b: int, width: int) -> int | None:
    """Signed division rounding toward zero (LLVM's `sdiv`); None where it is undefined."""
    if b == 0 or (b == -1 and a == -(1 << (width - 1))):
        return None
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# ---------------------------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------------------------


class _Names(NameScope):
    """llvmlite's `NameScope` of a function (the names of its values and blocks), taking over
    the names `scope` has given; the same names, given faster.

    Every instruction is named when it is made: an unnamed one is `""` made unique as
    `.1`, `.2`, ... by `NameScope.deduplicate`, a loop of method calls and a `str.format`
    per instruction, 10% of the translation's time under cProfile (issue 14). `register`
    does the same in one call: a name not yet used as it is; else `<name>.<n>` for the
    next `n` counted for that name that is unused."""

    def __init__(self, scope: NameScope) -> None:
        super().__init__()
        self._useset = scope._useset              # noqa: SLF001 (taken over, not copied)
        self._basenamemap = scope._basenamemap    # noqa: SLF001

    def register(self, name: str, deduplicate: bool = False) -> str:
        used = self._useset
        if name in used:
            if not deduplicate:
                raise DuplicatedNameError(name)
            n = self._basenamemap[name]
            base = name
            while name in used:
                n += 1
                name = f"{base}.{n}"
            self._basenamemap[base] = n
        used.add(name)
        return name


class FunctionLowering:
    """The state of one LLVM function's translation: builder, value map and helpers for
    rules. The function is a `func.func` (`sig` is its signature; `lower` translates it), or
    a body outlined from an op (`llvm_parallel`), whose creator fills `values` and emits."""

    def __init__(self, ml: ModuleLowering, llfn: ir.Function, where: Operation,
                 sig: Signature | None = None) -> None:
        self.ml = ml
        self.fn = where
        self.llfn = llfn
        self.sig = sig
        if not llfn.blocks:
            llfn.scope = _Names(llfn.scope)
        # Stack slots go to a block of their own before the code (where mem2reg and SROA look
        # for them): llvmlite's builders insert at a remembered index, so two builders must
        # never insert into one block. `finish` links it to the code.
        self.entry = llfn.append_basic_block("entry")
        self._allocas = ir.IRBuilder(self.entry)
        self._start = llfn.append_basic_block("start")
        self.builder = FoldingBuilder(self._start)
        self.values: dict[Value, ir.Value] = {}
        #: the op being translated (rules' errors point at it)
        self.op: Operation = where
        #: inside an outlined parallel body (nested `loop.parallel`s run sequentially)
        self.in_parallel = False
        #: whether the loops here are as irkit's `loop-vectorize` left them (its function
        #: is `irkit.vectorized`): LLVM's loop vectorizer is told to leave them (`emit_loop`)
        self.vectorized = any(o.name == "func.func" and VECTORIZED_ATTRIBUTE in o.attributes
                              for o in (where, *where.ancestors()))

    def finish(self) -> None:
        self._allocas.branch(self._start)

    # ----- driving -------------------------------------------------------------------------

    def lower(self) -> None:
        region = self.fn.regions[0]
        if len(region.blocks) != 1:
            raise error_at(self.fn, "cannot be translated to LLVM IR: functions with more "
                                    "than one block are not supported")
        b = self.builder
        block = region.blocks[0]
        for arg, param, t, vt in zip(block.args, self.llfn.args, self.sig.inputs,
                                     self.sig.arg_values):
            if isinstance(t, MemRefType):
                self.values[arg] = b.load(param, typ=vt)
            elif isinstance(t, VectorType):
                self.values[arg] = self.load_elements(param, vt)
            else:
                self.values[arg] = from_abi(b, param, vt)
        self.lower_block(block)
        self.finish()

    def lower_block(self, block: Block) -> list[ir.Value] | None:
        """Translate the ops of `block`; a `loop.yield` at its end is not translated but its
        operands' values are returned, for the parent op to route."""
        for op in block.ops:
            if op.name == "loop.yield":
                return [self.get(v) for v in op.operands]
            self.lower_op(op)
        return None

    def lower_op(self, op: Operation) -> None:
        rule = self.ml.rules.get(op.name)
        if rule is None:
            raise error_at(op, "cannot be translated to LLVM IR: no lowering for this op in "
                               "the LLVM backend")
        self.op = op
        try:
            args = [self.get(v) for v in op.operands]
            region = profile_region(op)     # opt-in timing (`llvm_profile`); None normally
            out = rule(self, op, args) if region is None else \
                timed(self, region, lambda: rule(self, op, args))
        except IRError:
            raise
        except Exception as e:     # a bug in a rule: still report it at the op
            raise error_at(op, f"failed to translate to LLVM IR: {type(e).__name__}: "
                               f"{e}") from e
        if out is None:
            out = []
        elif isinstance(out, ir.Value):
            out = [out]
        for r, v in zip(op.results, out):
            self.values[r] = v

    def get(self, v: Value) -> ir.Value:
        return self.values[v]

    def error(self, message: str) -> IRError:
        return error_at(self.op, message)

    def value_type(self, t: Type) -> ir.Type:
        return value_type(t, self.op)

    # ----- helpers for rules ----------------------------------------------------------------

    def const(self, t: ir.Type, value) -> ir.Constant:
        """`value` as a constant of scalar or vector type `t` (a splat for vectors)."""
        if isinstance(t, ir.VectorType):
            return ir.Constant(t, [self.const(t.element, value)] * t.count)
        if isinstance(t, ir.IntType):
            w = t.width
            value = int(value) & ((1 << w) - 1)
            if w > 1 and value >> (w - 1):
                value -= 1 << w
            return ir.Constant(t, value)
        return ir.Constant(t, float(value))

    def alloca(self, t: ir.Type) -> ir.Value:
        """A stack slot in the entry block."""
        return self._allocas.alloca(t)

    def intrinsic(self, base: str, ret: ir.Type, args: list[ir.Type],
                  overloads: list[ir.Type] | None = None) -> ir.Function:
        """The LLVM intrinsic `llvm.<base>` mangled by `overloads` (default: `ret`)."""
        over = [ret] if overloads is None else overloads
        name = "llvm." + base + "".join("." + mangle(t) for t in over)
        return self.ml.declare_runtime(name, ir.FunctionType(ret, args), self.op)

    def call_intrinsic(self, base: str, args: list[ir.Value], ret: ir.Type | None = None,
                       overloads: list[ir.Type] | None = None, fastmath=()) -> ir.Value:
        ret = args[0].type if ret is None else ret
        fn = self.intrinsic(base, ret, [a.type for a in args], overloads)
        return self.builder.call(fn, args, fastmath=fastmath)

    def per_lane(self, fn: Callable, *values: ir.Value) -> ir.Value:
        """`fn` applied to each lane of vector operands (or once to scalars): for functions
        LLVM has no vector form of, such as C-library calls."""
        vt = values[0].type
        if not isinstance(vt, ir.VectorType):
            return fn(*values)
        b = self.builder
        out = None
        for i in range(vt.count):
            idx = ir.Constant(ir.IntType(32), i)
            r = fn(*(b.extract_element(v, idx) for v in values))
            if out is None:
                out = ir.Constant(ir.VectorType(r.type, vt.count), None)
            out = b.insert_element(out, r, idx)
        return out

    def load_elements(self, ptr: ir.Value, t: ir.Type) -> ir.Value:
        """A scalar or vector of value type `t` read from its storage at `ptr`."""
        st = storage_type(t)
        v = self.builder.load(ptr, typ=st, align=byte_size(element_of(st)))
        return from_storage(self.builder, v, t)

    def store_elements(self, v: ir.Value, ptr: ir.Value) -> None:
        s = to_storage(self.builder, v)
        self.builder.store(s, ptr, align=byte_size(element_of(s.type)))


# ---------------------------------------------------------------------------------------------
# func
# ---------------------------------------------------------------------------------------------


@lowers("func.return")
def _return(lw: FunctionLowering, op, args):
    b = lw.builder
    outs = lw.llfn.args[len(lw.sig.inputs):]
    for v, ptr, t in zip(args, outs, lw.sig.results):
        if isinstance(t, MemRefType):
            b.store(v, ptr)
        else:
            lw.store_elements(v, ptr)
    b.ret_void()


@lowers("func.call")
def _call(lw: FunctionLowering, op, args):
    name = op.properties["callee"].root
    entry = lw.ml.functions.get(name)
    if entry is None:
        raise lw.error(f"calls '@{name}', which is not a function of this module")
    callee, sig, _ = entry
    return emit_call(lw, callee, sig, args)


@lowers("func.call_indirect")
def _call_indirect(lw: FunctionLowering, op, args):
    """A call through a function pointer (`func.constant`), with the same convention."""
    sig = Signature(op, op.operands[0].type)
    fnptr = args[0]
    return emit_call(lw, fnptr, sig, args[1:], sig.llvm_type)


@lowers("func.constant")
def _func_constant(lw: FunctionLowering, op, args):
    name = op.properties["value"].root
    entry = lw.ml.functions.get(name)
    if entry is None:
        raise lw.error(f"refers to '@{name}', which is not a function of this module")
    return lw.builder.bitcast(entry[0], PTR)         # function values are plain pointers


def emit_call(lw: FunctionLowering, callee: ir.Value, sig: Signature, args,
              fnty: ir.FunctionType | None = None) -> list[ir.Value]:
    """Call `callee` (a function, or a pointer to one of type `fnty`) with the C interface:
    memrefs and vectors through stack slots, results read back from slots."""
    b = lw.builder
    params = []
    for v, t in zip(args, sig.inputs):
        if isinstance(t, MemRefType):
            slot = lw.alloca(v.type)
            b.store(v, slot)
            params.append(slot)
        elif isinstance(t, VectorType):
            slot = lw.alloca(storage_type(v.type))
            lw.store_elements(v, slot)
            params.append(slot)
        else:
            params.append(to_abi(b, v))
    slots = []
    for t, vt in zip(sig.results, sig.result_values):
        slots.append(lw.alloca(vt if isinstance(t, MemRefType) else storage_type(vt)))
    if fnty is not None:
        # llvmlite reads the signature off the callee's type, so the pointer is retyped as
        # one to a function of that type (through an integer: llvmlite elides a bitcast
        # between pointers; LLVM folds the pair away).
        callee = b.inttoptr(b.ptrtoint(callee, I64), fnty.as_pointer())
    b.call(callee, params + slots)
    out = []
    for slot, t, vt in zip(slots, sig.results, sig.result_values):
        out.append(b.load(slot, typ=vt) if isinstance(t, MemRefType)
                   else lw.load_elements(slot, vt))
    return out


# ---------------------------------------------------------------------------------------------
# loop
# ---------------------------------------------------------------------------------------------


def cross_blocks(b: ir.IRBuilder, v: ir.Value) -> list[ir.Value]:
    """`v` as it goes into phis: one value, or a vector of lanes other than a power of two
    in pieces of powers of two, largest first (`power_of_two_pieces`: 10 as 8 and 2;
    `from_block` puts them together again).

    Why. LLVM carries a value from block to block in registers of a legal type, and breaks
    a vector of 10 doubles into the largest legal vector that divides it: five of 2 lanes.
    The bias gradient of a 10-class head, a row loop carrying a `vector<10xf64>` sum, then
    took every lane apart into its own register at the end of each iteration and built the
    vector again at the start of the next (about 20 shuffles per row around its one add).
    Carried as `<8 x double>` and `<2 x double>`, each is a register of its own, and the
    shuffles that split and join them are the register halves LLVM's widened `<10 x
    double>` arithmetic has anyway: that loop went from 0.8 to 0.3 us (`Model.profile`),
    the logistic regression's step (B = 100) from 23.0 to 22.6 us on 1 thread and from 21.3
    to 20.9 on 2 (both builds in one process, medians of 24 alternated rounds). Padding the
    phi to `<16 x double>` instead does not last: LLVM's instcombine narrows it back."""
    if not isinstance(v.type, ir.VectorType) or v.type.count & (v.type.count - 1) == 0:
        return [v]                      # a scalar, or a vector that crosses whole
    pieces = power_of_two_pieces(v.type.count)
    out, at = [], 0
    for n in pieces:
        out.append(b.shuffle_vector(v, ir.Constant(v.type, None), ir.Constant(
            ir.VectorType(I32, n), list(range(at, at + n)))))
        at += n
    return out


def from_block(b: ir.IRBuilder, parts: list[ir.Value], t: ir.Type) -> ir.Value:
    """The value of type `t` whose pieces (`cross_blocks`) a block's phis are."""
    v = parts[0]
    for part in parts[1:]:              # each piece shorter than what is joined before it
        n, m = v.type.count, part.type.count
        padded = b.shuffle_vector(part, ir.Constant(part.type, None), ir.Constant(
            ir.VectorType(I32, n), [min(i, m) for i in range(n)]))
        v = b.shuffle_vector(v, padded, ir.Constant(
            ir.VectorType(I32, n + m), list(range(n + m))))
    return v


def emit_loop(lw: FunctionLowering, lb: ir.Value, ub: ir.Value, step: ir.Value,
              inits: list[ir.Value], body: Callable) -> list[ir.Value]:
    """Emit a counted loop `for iv = lb; iv < ub; iv += step` (signed) carrying `inits`;
    `body(iv, carried)` emits one iteration at the builder and returns the next carried
    values. Returns the carried values after the loop (the inits if it never ran).

    The loop is rotated (LLVM's preferred shape: the test at the bottom):

        pre:   br (lb < ub), body, exit
        body:  iv = phi [lb, pre], [iv + step, latch]; carried = phi [inits], [next]
               ...
        latch: br (iv + step < ub), body, exit      (without overflow, see below)
        exit:  results = phi [inits, pre], [next, latch]

    (A vector of lanes other than a power of two crosses in pieces: `cross_blocks`.)

    The interpreter counts with Python integers, so `iv + step` must not wrap where `ub` is
    near the type's maximum: the next iteration exists iff `ub - iv > step` as unsigned
    numbers (`iv < ub`, so `ub - iv` is exact as an unsigned value). With step 1 the plain
    `iv + 1 < ub` is exact and is what LLVM's loop passes recognize best. A step <= 0 is
    undefined (as in MLIR; the interpreter rejects it).
    """
    b = lw.builder
    fn = lw.llfn
    types = [init.type for init in inits]
    inits = [cross_blocks(b, init) for init in inits]      # each a list of pieces
    pre = b.block
    body_bb = fn.append_basic_block("loop.body")
    exit_bb = fn.append_basic_block("loop.exit")
    b.cbranch(b.icmp_signed("<", lb, ub), body_bb, exit_bb)
    b.position_at_end(body_bb)
    iv = b.phi(lb.type)
    iv.add_incoming(lb, pre)
    phis = []
    for init in inits:
        phis.append([b.phi(piece.type) for piece in init])
        for p, piece in zip(phis[-1], init):
            p.add_incoming(piece, pre)
    carried = [from_block(b, p, t) for p, t in zip(phis, types)]
    nexts = [cross_blocks(b, y) for y in body(iv, carried) or []]
    latch = b.block
    if isinstance(step, ir.Constant) and step.constant == 1:
        nxt = b.add(iv, step, flags=["nsw"])
        more = b.icmp_signed("<", nxt, ub)
    else:
        more = b.icmp_unsigned(">", b.sub(ub, iv), step)
        nxt = b.add(iv, step)
    latch_br = b.cbranch(more, body_bb, exit_bb)
    if lw.vectorized:
        latch_br.set_metadata("llvm.loop", lw.ml.vectorized_loop_id())
    iv.add_incoming(nxt, latch)
    for ps, ys in zip(phis, nexts):
        for p, y in zip(ps, ys):
            p.add_incoming(y, latch)
    b.position_at_end(exit_bb)
    out = []                            # every phi first: a block's phis lead it
    for init, ys in zip(inits, nexts):
        out.append([b.phi(piece.type) for piece in init])
        for p, piece, y in zip(out[-1], init, ys):
            p.add_incoming(piece, pre)
            p.add_incoming(y, latch)
    return [from_block(b, parts, t) for parts, t in zip(out, types)]


def emit_loop_nest(lw: FunctionLowering, lbs, ubs, steps, body: Callable) -> None:
    """Nested `emit_loop`s, the first dimension outermost; `body(ivs)` emits the innermost
    iteration."""
    def level(k: int, ivs: list):
        if k == len(lbs):
            body(ivs)
            return []
        emit_loop(lw, lbs[k], ubs[k], steps[k], [],
                  lambda iv, carried: level(k + 1, ivs + [iv]))
        return []
    level(0, [])


@lowers("loop.for")
def _for(lw: FunctionLowering, op, args):
    block = op.regions[0].blocks[0]

    def body(iv, carried):
        lw.values[block.args[0]] = iv
        for a, p in zip(block.args[1:], carried):
            lw.values[a] = p
        return lw.lower_block(block) or []
    return emit_loop(lw, args[0], args[1], args[2], list(args[3:]), body)


@lowers("loop.if")
def _if(lw: FunctionLowering, op, args):
    """`br cond, then, else`; each region's yield feeds a phi in the merge block."""
    b = lw.builder
    fn = lw.llfn
    then_r, else_r = op.regions[0], op.regions[1]
    then_bb = fn.append_basic_block("if.then")
    else_bb = fn.append_basic_block("if.else") if else_r.blocks else None
    merge = fn.append_basic_block("if.end")
    b.cbranch(args[0], then_bb, else_bb or merge)
    incoming = []
    for region, bb in ((then_r, then_bb), (else_r, else_bb)):
        if bb is None:
            continue
        b.position_at_end(bb)
        values = [cross_blocks(b, v) for v in lw.lower_block(region.blocks[0]) or []]
        incoming.append((values, b.block))
        b.branch(merge)
    b.position_at_end(merge)
    out = []                            # every phi first: a block's phis lead it
    for i in range(len(op.results)):
        out.append([b.phi(piece.type) for piece in incoming[0][0][i]])
        for j, p in enumerate(out[-1]):
            for values, bb in incoming:
                p.add_incoming(values[i][j], bb)
    return [from_block(b, parts, lw.value_type(r.type)) for parts, r in zip(out, op.results)]

