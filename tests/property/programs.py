"""Random arith/math programs for pass-soundness tests: `programs()` draws
(module text, entry function names).

A program is a module of several functions over scalar f32/f64/i32/i64/i1/index values and
small tensors and vectors (`tensor<3xf32>`, `tensor<2x2xi32>`, `vector<4xf32>`, and the
dynamic `tensor<?xf64>`, which only ever holds function arguments because a constant cannot
have a dynamic shape). Function bodies are chains of arith/math ops seasoned with what each
pass looks for:

- algebraic identities and near-identities (`x * 1.0`, `x + -0.0`, `x - x` on integers,
  `max(x, x)`, `negf(negf x)`, `xor x, x`, `(x ^ y) ^ y`, `select c, x, x`, ...), and
  non-identities a sloppy canonicalizer might take for one (`x + 0.0`, `x * 0.0`, `x - x`
  on floats: wrong for -0.0, NaN and infinities), comparisons negated by `xori true`
  (folded into the inverse predicate) and integers converted to float compared with
  constants at and past the type's bounds (folded into `cmpi`) -- for canonicalize;
- the same pure op written twice -- for cse;
- values nobody uses -- for dce;
- private helper functions called with `func.call` -- for inline, and private functions
  nobody calls -- for symbol-dce;
- `loc(...)` on some ops -- for strip-debuginfo; some ops in generic form.

Undefined behaviour is avoided, because MLIR makes it poison and a pass may then legitimately
change the result (so a checker would report a correct pass):

- integer division and remainder only by `(b & 0x7fff) | 1`: never zero and never -1 (so
  no `MIN / -1` overflow); no division on i1, whose only non-zero value is -1;
- shift amounts masked into `[0, width)` with `andi` (`index` counts as 64 bits, as MLIR's
  folders assume); no shifts on i1;
- float -> int casts only of values clamped into [-100, 100] with `maxnumf`/`minnumf`,
  which also turn NaN into a number;
- no `nsw`/`nuw` overflow flags and no fastmath flags (both assert facts whose violation is
  poison); no float -> int `bitcast` (it would expose NaN payloads, which folding need not
  preserve); no `math.ipowi` (negative exponents of zero are poison).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st


@dataclass(frozen=True)
class Ty:
    """A type of the generated programs: element kind and width, optional shape."""

    kind: str                       # "f", "i" (signless integer) or "index"
    width: int = 64
    shape: tuple | None = None      # None for a scalar; None entries are dynamic dims
    vector: bool = False

    def __str__(self) -> str:
        e = "index" if self.kind == "index" else f"{self.kind}{self.width}"
        if self.shape is None:
            return e
        dims = "x".join("?" if d is None else str(d) for d in self.shape)
        return f"{'vector' if self.vector else 'tensor'}<{dims}x{e}>"

    def elem(self, kind: str, width: int) -> "Ty":
        """The same shape with another element type (cmp results, casts)."""
        return Ty(kind, width, self.shape, self.vector)

    @property
    def scalar(self) -> "Ty":
        return Ty(self.kind, self.width)

    @property
    def constable(self) -> bool:
        """Whether `arith.constant` can make one (not with a dynamic shape)."""
        return self.shape is None or None not in self.shape

    @property
    def count(self) -> int:
        n = 1
        for d in self.shape or ():
            n *= d
        return n


F32, F64, I1, I32, I64, INDEX = Ty("f", 32), Ty("f", 64), Ty("i", 1), Ty("i", 32), Ty("i", 64), \
    Ty("index")
TENSOR_F32 = Ty("f", 32, (3,))
TENSOR_I32 = Ty("i", 32, (2, 2))
VECTOR_F32 = Ty("f", 32, (4,), vector=True)
DYN_F64 = Ty("f", 64, (None,))
ARG_TYPES = [F32, F64, I1, I32, I64, INDEX, TENSOR_F32, TENSOR_I32, VECTOR_F32, DYN_F64]

FLOAT_BINARY = ["arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf",
                "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf",
                "math.powf", "math.copysign", "math.atan2"]
FLOAT_UNARY = ["arith.negf", "math.absf", "math.exp", "math.log", "math.sqrt", "math.sin",
               "math.cos", "math.tanh", "math.floor", "math.ceil", "math.round",
               "math.roundeven", "math.trunc", "math.atan", "math.erf", "math.exp2",
               "math.log1p", "math.expm1", "math.rsqrt", "math.cbrt"]
INT_BINARY = ["arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori",
              "arith.xori", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui"]
INT_DIVISION = ["arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.ceildivsi",
                "arith.ceildivui", "arith.floordivsi"]
SHIFTS = ["arith.shli", "arith.shrsi", "arith.shrui"]
INT_UNARY = ["math.absi", "math.ctlz", "math.cttz", "math.ctpop"]
FLOAT_PREDICATES = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
                    "uge", "ult", "ule", "une", "uno", "true"]
INT_PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]

# Float constants include the values that make identities false: signed zeros, NaN, inf.
FLOAT_CONSTANTS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.25, -7.5, 1e-3, 100.0, "nan", "inf",
                   "-inf"]
# Where an integer converted to float meets a constant: type bounds, just past them, halves.
INT_BOUNDS = [2.5, -2.5, 127.0, 128.0, -129.0, 255.0, 256.0, 2147483647.0, 2147483648.0,
              -2147483649.0, 4294967296.0, 9.3e18, -9.3e18, 1.0e30]
_HEX = {32: {"nan": "0x7FC00000", "inf": "0x7F800000", "-inf": "0xFF800000"},
        64: {"nan": "0x7FF8000000000000", "inf": "0x7FF0000000000000",
             "-inf": "0xFFF0000000000000"}}


def _int_constants(t: Ty) -> list[int]:
    if t.kind == "index":
        return [0, 1, 2, 3, 8, 63]
    w = t.width
    if w == 1:
        return [0, 1]
    return [0, 1, -1, 2, 7, w - 1, w, (1 << (w - 1)) - 1, -(1 << (w - 1))]


def _literal(t: Ty, v) -> str:
    if t.kind == "f":
        if isinstance(v, str):
            return _HEX[t.width][v]
        # MLIR's float literals need a '.' before any exponent: `1.0e+30`, not `1e+30`.
        mantissa, e, exp = repr(float(v)).partition("e")
        return (mantissa if "." in mantissa else mantissa + ".0") + e + exp
    if t.kind == "i" and t.width == 1:
        return "true" if v else "false"
    return str(v)


class _Function:
    """The text of one function being generated, and the values available at its end."""

    def __init__(self, draw, name: str, args: list[Ty], callees: list["_Signature"],
                 locations: bool) -> None:
        self.draw = draw
        self.name = name
        self.lines: list[str] = []
        self.pool: dict[Ty, list[str]] = {}          # computed values by type
        self.defs: list[tuple[str, Ty]] = []      # (right-hand side, type): for duplicates
        self.computed: list[tuple[str, Ty]] = []  # values not constants: what to return
        self.callees = callees
        self.locations = locations
        self.n = 0
        self.args = args
        for i, t in enumerate(args):
            self.pool.setdefault(t, []).append(f"%a{i}")
            self.computed.append((f"%a{i}", t))

    # ----- values ---------------------------------------------------------------------------

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def loc(self) -> str:
        if not self.locations or not self.draw(st.booleans()):
            return ""
        kind = self.draw(st.integers(0, 2))
        line, col = self.draw(st.integers(1, 99)), self.draw(st.integers(1, 40))
        if kind == 0:
            return f' loc("prog.py":{line}:{col})'
        if kind == 1:
            return f' loc("v{self.n}")'
        return f' loc(fused["prog.py":{line}:{col}, "v{self.n}"])'

    def emit(self, rhs: str, t: Ty) -> str:
        name = self.fresh()
        self.lines.append(f"{name} = {rhs}{self.loc()}")
        self.defs.append((rhs, t))
        if not rhs.startswith("arith.constant"):
            # Constants stay out of the pool: `value` makes new ones when it wants one.
            self.pool.setdefault(t, []).append(name)
            self.computed.append((name, t))
        return name

    def const(self, t: Ty, v) -> str:
        lit = _literal(t.scalar, v)
        if t.shape is None:
            text = f"arith.constant {lit} : {t}" if t != I1 else f"arith.constant {lit}"
        else:
            text = f"arith.constant dense<{lit}> : {t}"
        return self.emit(text, t)

    def random_const(self, t: Ty) -> str:
        if t.kind == "f":
            choices = FLOAT_CONSTANTS
        else:
            choices = _int_constants(t)
        if t.shape is not None and self.draw(st.booleans()):
            # A non-splat constant: one literal per element, nested by dims.
            elems = [_literal(t.scalar, self.draw(st.sampled_from(choices)))
                     for _ in range(t.count)]
            if len(t.shape) == 2:
                rows = [elems[r * t.shape[1]:(r + 1) * t.shape[1]] for r in range(t.shape[0])]
                body = ", ".join("[" + ", ".join(r) + "]" for r in rows)
            else:
                body = ", ".join(elems)
            return self.emit(f"arith.constant dense<[{body}]> : {t}", t)
        return self.const(t, self.draw(st.sampled_from(choices)))

    def value(self, t: Ty) -> str:
        """An existing value of type `t` (recent ones preferred), or a new constant."""
        have = self.pool.get(t, [])
        if t.constable and (not have or self.draw(st.integers(0, 5)) == 0):
            return self.random_const(t)
        assert have, f"no value of type {t}"
        i = self.draw(st.integers(0, len(have) - 1))
        # Skew towards recent values, so chains get deep rather than wide.
        return have[max(i, len(have) - 1 - i)]

    def callable(self) -> list["_Signature"]:
        """Callees whose arguments can be supplied (dynamic tensors only from the pool)."""
        return [c for c in self.callees
                if all(t.constable or self.pool.get(t) for t in c.inputs)]

    def usable(self) -> list[Ty]:
        return [t for t in ARG_TYPES if t.constable or self.pool.get(t)] + \
            [t for t in self.pool if t not in ARG_TYPES]

    # ----- ops ------------------------------------------------------------------------------

    def step(self) -> None:
        # Mostly continue on types that already hold values, so ops consume the arguments
        # and each other instead of fresh constants.
        have = [t for t, names in self.pool.items() if names]
        pick_from = have if self.draw(st.integers(0, 3)) else self.usable()
        t = self.draw(st.sampled_from(pick_from))
        choice = self.draw(st.integers(0, 9))
        if choice == 0 and self.defs:
            rhs, rt = self.draw(st.sampled_from(self.defs))
            self.emit(rhs, rt)                               # a duplicate, for CSE
        elif choice == 1 and self.callable():
            self.call(self.draw(st.sampled_from(self.callable())))
        elif choice in (2, 3):
            self.identity(t)
        elif t.kind == "f":
            self.float_op(t)
        else:
            self.int_op(t)

    def binary(self, op: str, t: Ty, a: str, b: str) -> str:
        if self.draw(st.integers(0, 7)) == 0:
            return self.emit(f'"{op}"({a}, {b}) : ({t}, {t}) -> {t}', t)   # generic form
        return self.emit(f"{op} {a}, {b} : {t}", t)

    def select(self, t: Ty, a: str, b: str) -> str:
        c = self.value(I1)
        return self.emit(f"arith.select {c}, {a}, {b} : {t}", t)

    def compare(self, op: str, predicates: list[str], t: Ty, a: str, b: str) -> str:
        """`op pred, a, b`, sometimes negated with `xori true` (folded into the inverse
        predicate by canonicalize, which must get the unordered cases right)."""
        bt = t.elem("i", 1)
        r = self.emit(f"{op} {self.draw(st.sampled_from(predicates))}, {a}, {b} : {t}", bt)
        if bt.constable and self.draw(st.booleans()):
            r = self.binary("arith.xori", bt, r, self.const(bt, 1))
        return r

    def float_op(self, t: Ty) -> None:
        k = self.draw(st.integers(0, 7))
        if k <= 2:
            op = self.draw(st.sampled_from(FLOAT_BINARY))
            self.binary(op, t, self.value(t), self.value(t))
        elif k <= 4:
            op = self.draw(st.sampled_from(FLOAT_UNARY))
            self.emit(f"{op} {self.value(t)} : {t}", t)
        elif k == 5:
            self.compare("arith.cmpf", FLOAT_PREDICATES, t, self.value(t), self.value(t))
        elif k == 6:
            if self.draw(st.booleans()):
                self.emit(f"math.fma {self.value(t)}, {self.value(t)}, {self.value(t)} : {t}",
                          t)
            else:
                self.select(t, self.value(t), self.value(t))
        else:
            self.float_cast(t)

    def float_cast(self, t: Ty) -> None:
        x = self.value(t)
        k = self.draw(st.integers(0, 1)) if t.constable else 0
        if k == 0:
            other = t.elem("f", 96 - t.width)
            op = "arith.extf" if t.width == 32 else "arith.truncf"
            self.emit(f"{op} {x} : {t} to {other}", other)
            return
        # fptosi/fptoui of a NaN or of a value out of range is poison: clamp into
        # [lo, 100] first; maxnumf/minnumf return the number when the other side is NaN.
        signed = self.draw(st.booleans())
        lo, hi = self.const(t, -100.0 if signed else 0.0), self.const(t, 100.0)
        y = self.emit(f"arith.maxnumf {x}, {lo} : {t}", t)
        z = self.emit(f"arith.minnumf {y}, {hi} : {t}", t)
        it = t.elem("i", self.draw(st.sampled_from([32, 64])))
        self.emit(f"arith.{'fptosi' if signed else 'fptoui'} {z} : {t} to {it}", it)

    def safe_divisor(self, t: Ty) -> str:
        """`(b & 0x7fff) | 1`: positive, so neither zero nor -1."""
        m = self.binary("arith.andi", t, self.value(t), self.const(t, 0x7FFF))
        return self.binary("arith.ori", t, m, self.const(t, 1))

    def int_op(self, t: Ty) -> None:
        k = self.draw(st.integers(0, 9))
        wide = not (t.kind == "i" and t.width == 1)
        if k <= 2 or (not wide and k <= 6):
            self.binary(self.draw(st.sampled_from(INT_BINARY)), t, self.value(t),
                        self.value(t))
        elif k == 3 and t.constable:
            op = self.draw(st.sampled_from(INT_DIVISION))
            a = self.value(t)
            self.binary(op, t, a, self.safe_divisor(t))
        elif k == 4 and t.constable:
            width = 64 if t.kind == "index" else t.width
            amount = self.binary("arith.andi", t, self.value(t), self.const(t, width - 1))
            self.binary(self.draw(st.sampled_from(SHIFTS)), t, self.value(t), amount)
        elif k == 5 and t.kind == "i":
            self.emit(f"{self.draw(st.sampled_from(INT_UNARY))} {self.value(t)} : {t}", t)
        elif k == 6:
            self.compare("arith.cmpi", INT_PREDICATES, t, self.value(t), self.value(t))
        elif k == 7:
            self.select(t, self.value(t), self.value(t))
        else:
            self.int_cast(t)

    def int_cast(self, t: Ty) -> None:
        x = self.value(t)
        if t.kind == "index":
            it = self.draw(st.sampled_from([I32, I64]))
            op = self.draw(st.sampled_from(["arith.index_cast", "arith.index_castui"]))
            self.emit(f"{op} {x} : index to {it}", it)
            return
        k = self.draw(st.integers(0, 3))
        w = t.width
        if k == 0 and w < 64:
            wider = t.elem("i", 64 if w == 32 else 32)
            op = self.draw(st.sampled_from(["arith.extsi", "arith.extui"]))
            self.emit(f"{op} {x} : {t} to {wider}", wider)
        elif k == 1 and w > 1:
            narrower = t.elem("i", 32 if w == 64 else 1)
            self.emit(f"arith.trunci {x} : {t} to {narrower}", narrower)
        elif k == 2 and w > 1:
            ft = t.elem("f", self.draw(st.sampled_from([32, 64])))
            op = self.draw(st.sampled_from(["arith.sitofp", "arith.uitofp"]))
            if self.draw(st.booleans()):
                ft = t.elem("f", w)                # same width: a bitcast is allowed too
                op = self.draw(st.sampled_from([op, "arith.bitcast"]))
            f = self.emit(f"{op} {x} : {t} to {ft}", ft)
            if op != "arith.bitcast" and self.draw(st.booleans()):
                # A converted integer against a constant: canonicalize turns it into cmpi.
                c = self.const(ft, self.draw(st.sampled_from(FLOAT_CONSTANTS + INT_BOUNDS)))
                self.compare("arith.cmpf", FLOAT_PREDICATES, ft, f, c)
        elif t.shape is None and w > 1:
            op = self.draw(st.sampled_from(["arith.index_cast", "arith.index_castui"]))
            self.emit(f"{op} {x} : {t} to index", INDEX)
        else:
            self.binary("arith.xori", t, x, self.value(t))

    def identity(self, t: Ty) -> None:
        """An algebraic identity or a near miss, on a value of type `t`."""
        x = self.value(t)
        if not t.constable:
            k = self.draw(st.integers(0, 2))
            ops = (["arith.maximumf", "arith.minimumf", "arith.subf"] if t.kind == "f"
                   else ["arith.xori", "arith.subi", "arith.andi"])
            self.binary(ops[k], t, x, x)
            return
        if t.kind == "f":
            k = self.draw(st.integers(0, 9))
            table = [("arith.mulf", 1.0), ("arith.divf", 1.0), ("arith.addf", -0.0),
                     ("arith.subf", 0.0), ("arith.addf", 0.0), ("arith.mulf", 0.0)]
            if k < len(table):
                op, c = table[k]
                self.binary(op, t, x, self.const(t, c))
            elif k == 6:
                y = self.emit(f"arith.negf {x} : {t}", t)
                self.emit(f"arith.negf {y} : {t}", t)
            elif k == 7:
                self.binary(self.draw(st.sampled_from(["arith.maximumf", "arith.minimumf",
                                                       "arith.maxnumf", "arith.subf"])),
                            t, x, x)
            elif k == 8:
                self.select(t, x, x)
            else:
                y = self.emit(f"arith.extf {x} : {t} to {t.elem('f', 64)}", t.elem("f", 64)) \
                    if t.width == 32 else None
                if y is not None:
                    self.emit(f"arith.truncf {y} : {t.elem('f', 64)} to {t}", t)
            return
        k = self.draw(st.integers(0, 11))
        consts = [("arith.addi", 0), ("arith.subi", 0), ("arith.muli", 1), ("arith.muli", 0),
                  ("arith.andi", 0), ("arith.ori", -1), ("arith.andi", -1), ("arith.ori", 0)]
        if t.kind == "i" and t.width == 1:
            consts = [(op, c if c in (0, 1) else 1) for op, c in consts]
        if k < len(consts):
            op, c = consts[k]
            self.binary(op, t, x, self.const(t, c))
        elif k == 8:
            self.binary(self.draw(st.sampled_from(["arith.subi", "arith.xori", "arith.andi",
                                                   "arith.ori", "arith.maxsi", "arith.minui"])),
                        t, x, x)
        elif k == 9:
            # (x op y) inverse y: xor/xor, add/sub, sub/add.
            y = self.value(t)
            op, inv = self.draw(st.sampled_from([("arith.xori", "arith.xori"),
                                                 ("arith.addi", "arith.subi"),
                                                 ("arith.subi", "arith.addi")]))
            z = self.binary(op, t, x, y)
            self.binary(inv, t, z, y)
        elif k == 10:
            self.compare("arith.cmpi", INT_PREDICATES, t, x, x)
        elif t.kind == "i" and t.width > 1:
            op = self.draw(st.sampled_from(["arith.divsi", "arith.divui", "arith.remsi",
                                            "arith.remui"]))
            self.binary(op, t, x, self.const(t, 1))
        else:
            self.select(t, x, x)

    def call(self, callee: "_Signature") -> None:
        args = [self.value(t) for t in callee.inputs]
        ftype = (f"({', '.join(map(str, callee.inputs))}) -> "
                 f"({', '.join(map(str, callee.results))})")
        name = self.fresh()
        n = len(callee.results)
        self.lines.append(f"{name}{':' + str(n) if n > 1 else ''} = func.call "
                          f"@{callee.name}({', '.join(args)}) : {ftype}{self.loc()}")
        for i, t in enumerate(callee.results):
            v = f"{name}#{i}" if n > 1 else name
            self.pool.setdefault(t, []).append(v)
            self.computed.append((v, t))

    # ----- the function ---------------------------------------------------------------------

    def finish(self, private: bool) -> tuple[str, list[Ty]]:
        """The function's text and result types: 1-3 of the most recent computed values, so
        the chains reach the return and dead code is what came before the last ops."""
        recent = self.computed[-6:]
        picks = self.draw(st.lists(st.integers(0, len(recent) - 1), min_size=1, max_size=3))
        rets = [recent[i][0] for i in picks]
        results = [recent[i][1] for i in picks]
        sig = ", ".join(f"%a{i}: {t}" for i, t in enumerate(self.args))
        res = ", ".join(map(str, results))
        head = f"func.func {'private ' if private else ''}@{self.name}({sig})"
        if results:
            head += f" -> ({res})"
        body = [f"  {line}" for line in self.lines]
        body.append(f"  return {', '.join(rets)} : {res}")
        return "\n".join([head + " {", *body, "}"]), results


@dataclass
class _Signature:
    name: str
    inputs: list
    results: list


@st.composite
def _function(draw, name: str, callees: list, private: bool, locations: bool,
              max_ops: int) -> tuple[str, _Signature]:
    args = draw(st.lists(st.sampled_from(ARG_TYPES), min_size=1, max_size=4))
    fn = _Function(draw, name, args, callees, locations)
    for _ in range(draw(st.integers(1, max_ops))):
        fn.step()
    text, results = fn.finish(private)
    return text, _Signature(name, args, results)


@st.composite
def programs(draw, max_functions: int = 3, max_ops: int = 12) -> tuple[str, list[str]]:
    """A module of public entry functions, private helpers they call, and unused private
    functions; returns (module text, names of the public functions)."""
    locations = draw(st.booleans())
    helpers: list[_Signature] = []
    texts = []
    for i in range(draw(st.integers(0, 2))):
        text, sig = draw(_function(f"helper{i}", list(helpers), True, locations, max_ops))
        helpers.append(sig)
        texts.append(text)
    for i in range(draw(st.integers(0, 1))):
        text, _ = draw(_function(f"unused{i}", list(helpers), True, locations, max_ops))
        texts.append(text)
    entries = []
    for i in range(draw(st.integers(1, max_functions))):
        text, sig = draw(_function(f"entry{i}", helpers, False, locations, max_ops))
        entries.append(sig.name)
        texts.append(text)
    order = draw(st.permutations(range(len(texts))))
    return "\n\n".join(texts[j] for j in order) + "\n", entries
