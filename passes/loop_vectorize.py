"""loop-vectorize: innermost loops to the `vector` dialect, `width` lanes per iteration.

A vectorized loop runs `width` consecutive iterations at once: lane `l` of every vector is
what iteration `iv + l` computed. Values are of three kinds along the loop's induction
variable `iv`:

- uniform: the same in every lane (defined above the loop, or computed from such values
  only); kept scalar, and splatted with `vector.broadcast` where a vector needs it;
- lane index: `iv + c` with `c` uniform (the `index` values that address consecutive
  elements); kept as the scalar index of lane 0;
- vector: everything else: one `vector<W x T>` per scalar of type `T`.

Each body op is rewritten by what its operands are: a `memory.load` at uniform indices is
a scalar load; one whose last index is a lane index and whose other indices are uniform is
a `memory.vector_load` of `W` consecutive elements (the memref's last stride must be 1 by
type); `memory.store` the same with `memory.vector_store`; an elementwise `arith` / `math`
op with a vector operand is the same op on vectors (`cmpf` gives `vector<W x i1>`, `select`
takes it lane-wise); an `arith.addi` / `subi` of a lane index and a uniform index is a lane
index. An `arith.muli` of a lane index by a constant `s` is a strided one (`s * iv + c`,
lanes `s` elements apart, `s` up to `MAX_STRIDE` = 4), which a load may use as its last
index: one `memory.vector_load` of the `s * (W - 1) + 1` elements from lane 0's to the last
lane's (no element the scalar loop does not read: nothing past a buffer's end) and one
`vector.shuffle` picking every `s`-th (LLVM's interleaved loads: a 2 x 2 max-pool's
input, `2x + kx`; the CNN step of examples/cnn.irk, B=64, 1 thread, `.so` builds
alternated: 0.711 -> 0.650 ms). A lane index cast to an integer (`arith.index_cast`, a
column compared with a label: the one-hot of a cross-entropy's gradient) is a vector: lane
0's index cast, splatted, plus the constant `[0, s, 2s, ...]` (the logistic regression's
gradient of its logits, 10 columns a row, had stayed scalar for it; its step, 1 thread,
`.so` builds alternated: 46.2 -> 45.7 us, 47.5 -> 45.5 on 2 threads). Anything else
leaves the loop scalar, with the reason
(`remarks=true` writes it on the loop as `loop_vectorize.missed`): a load whose index is
computed per lane (a gather: an index loaded from memory, or computed from a lane index by
anything but `+ c` and `* s`), a lane index in another position, a strided store, a store
of one element from every lane, a per-lane loop bound or condition, a call, a run-time
check, an op with regions.

Three loop shapes are vectorized.

1. The last dimension of an innermost `loop.parallel` (no `loop.parallel` inside it), its
   body straight-line code or `loop.for`s with uniform bounds. Every parallel iteration is
   independent (`loop.parallel`'s meaning), so running `W` of them in lock step is one of
   their valid orders, whatever they load and store. A `loop.for` inside keeps its scalar
   trip count; a value it carries becomes a vector when its init or what its body yields
   is one (found by a fixpoint: start uniform, widen what turns out per-lane). That is the
   matmul case: `C[i, j] += A[i, k] * B[k, j]` with `j` the last parallel dimension and the
   `k` loop inside carries `W` sums of `j` lanes, `A[i, k]` broadcast, `B[k, j:j+W]` one
   vector load. No lane's sum is reordered: the result is bit-exact.
2. An innermost `loop.for` (no region inside its body) carrying reductions: each carried
   value `%acc` has one use, `%new = op %acc, %x` (or `op %x, %acc`), and `%new` is only
   yielded at `%acc`'s position, with `op` associative and commutative: `addf`, `mulf`,
   `maximumf`, `minimumf` and the integer `addi`, `muli`, `andi`, `ori`, `xori`, `max/min`
   `si/ui`. The loop then carries `W` partial results, one per lane, from the identity of
   `op`; after it `vector.reduction` combines them with the loop's init. Lane `l` sums the
   iterations `l, l + W, l + 2W, ...`: for float `addf` / `mulf` that reassociates the
   sum, so it rounds differently from the sequential one (by at most about `log2(W) + n/W`
   roundings instead of `n`: more accurate in the worst case, not bit-equal). Float add
   and mul reductions are therefore vectorized when `reassociate=true` (the default; the
   project's accuracy contract bounds the error of sums, not their order) or when the op
   carries `fastmath<reassoc>`; the final `vector.reduction` gets `fastmath<reassoc>` too.
   `maximumf` / `minimumf` and the integer kinds are associative exactly: always
   vectorized, bit-exact. Stores beside the reductions are shape 3's: nothing but its
   combining op reads a carried value, so no stored value depends on a partial result.
   Interleaving. A short reduction body (a row maximum: one load and one `maximumf`)
   is bound by the latency of its chain, not by its ops: every iteration waits for the
   previous one's result (4 cycles for a vector `maxps`/`addpd`, 6 ops of LLVM's NaN-aware
   `llvm.maximum` expansion), while the loads could issue several per cycle. With
   `interleave=U` (default 4) such a loop steps by `U * W` and runs its body `U` times, at
   lanes `iv, iv + W, ...`, each copy carrying its own vectors of partial results: `U`
   independent chains. After it the `U` partials are combined lane-wise by the same op
   (a balanced tree), a one-copy vector loop takes the rest up to the last multiple of
   `W`, and `vector.reduction` and the scalar remainder follow as above. For `maximumf`
   and the integer kinds this is exact again; float sums are reassociated as the partial
   sums already are (lane `l` of copy `j` sums iterations `l + jW, l + (j + U)W, ...`).
   A body is short when it has at most 8 ops and no `math` op that expands into a long
   sequence (`exp`, `log`, ...: such a loop is bound by its ops, and `U` copies of the
   expansion would only spill registers); `U` is halved while the partials would fill
   more than half the target's vector registers (a `vector<16xf64>` is two AVX-512
   registers: layernorm's two f64 sums take 16 of 32 with `U = 4`). On a 4096 x 1024 row
   softmax (AVX-512), the maximum's pass took 0.5 ms less with 4 chains than with one
   (3.40 -> 2.91 ms).
3. An innermost `loop.for` without carried values (a parallel dimension lowered
   sequentially): vectorized only when no buffer it stores to is loaded in it at other
   indices (as SSA values: the emitter's buffers, one per operand, do not overlap where an
   op is defined, see lower_linalg_to_loop's docstring), so no iteration reads what an
   earlier one wrote.

Remainders. The vector loop steps by `W` up to `lb + ((ub - lb) floordiv W) * W`; the
original scalar loop is kept for the rest, its lower bound moved to where the vector loop
stopped (for a reduction, its init the combined vector result). With a static trip count
that is a multiple of `W` there is no remainder loop; with one of `n` below `W` (at least
2) the loop is one vector of exactly `n` lanes. A static remainder of two or more
iterations is vectorized again the same way: one vector of what is left. So a row of 12
is one vector of 12 (on AVX-512), a row of 10 classes one of 10, a row of 14 at 8 lanes
a vector of 8 and one of 6. LLVM widens such a vector to a whole register for its
arithmetic (the lanes past `n` computed and never stored) and splits only its loads and
stores into legal pieces (12: 8 and 4), which read nothing past the `n` elements; a
reduction's padding lanes get the op's identity. Splitting the vector itself into powers
of two (12 as 8 and 4, 10 as 8 and 2), as this pass did before, ran the body, its
`exp` polynomial or its reduction tree, once per piece. Measured (fresh `.so`-less JIT
builds of both in one process, alternated, medians of the raw calls): examples/cnn.irk's
training step at B=64 (rows of 12, 6 and 4 pixels) 586 -> 517 us on 1 thread and 474 ->
430 on 2; the logistic regression's and the MLP's steps (rows of 10 classes) unchanged
within this machine's noise. A dynamic remainder stays scalar. Scalar rather than masked
loads and stores: the remainder is the original, unchanged code (nothing new to trust), it
is at most `W - 1` iterations per row, and LLVM lowers masked memory ops well only on
AVX-512.

Width. `width=0` (the default) takes it from the target (`irkit.target.of` the loop: this
machine, or the CPU the module's `irkit.target` attribute names; read in the core because
passes may not import a backend): one vector register's worth of the
smallest element the loop loads or stores (16 f32 or 8 f64 on AVX-512, 8 / 4 on AVX2). A
loop mixing f32 data with f64 sums then carries `vector<16xf64>` (two registers), and LLVM
splits it. A fixed `width=N` vectorizes for another target or for tests.

LLVM's own loop vectorizer. Every function this pass has run on carries `irkit.vectorized`
(`irkit.target.VECTORIZED_ATTRIBUTE`, a unit attribute): its loops are as vectorized as
irkit makes them, and the LLVM backend tells LLVM's loop vectorizer to leave them
(`llvm.loop.vectorize.enable` false on each loop). What it would do to what is left only
costs: it vectorized a scalar remainder of fewer than `W` iterations, a copy into a BLIS
panel with masked loads and scatters (`vscatterqps`), and an update of a transposed tile
with gathers. Measured with it off for these functions (`.so` builds alternated in one
process, medians, 1 thread): the CNN step (examples/cnn.irk, B=64) 0.785 -> 0.723 ms, the
logistic regression 56.4 -> 55.6 us, the attention block 277 -> 271 us, the MLP
784-256-10 at B=128 1.030 -> 1.022 ms. A function that never went through this pass (IR
written by hand, loops left scalar) is still vectorized by LLVM.
"""

from __future__ import annotations

import math

import numpy as np

from irkit.attributes import (
    UNIT, DenseArrayAttr, DenseElementsAttr, FloatAttr, IntegerAttr, StringAttr, numpy_dtype,
)
from irkit.builder import Builder
from irkit.ir import Block, Operation, Value
from irkit.opdef import Elementwise, Pure, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import constant_value
from irkit.target import VECTORIZED_ATTRIBUTE
from irkit.target import of as target_of
from irkit.types import (
    I64, INDEX, FloatType, IndexType, IntegerType, MemRefType, Type, VectorType,
)
from irkit.dialects import arith
from irkit.dialects import math as math_dialect
from irkit.dialects.arith import FASTMATH, materialize_constant
from irkit.dialects.loop import ForOp, ParallelOp, YieldOp
from irkit.dialects.memory import (
    DimOp, LoadOp, StoreOp, VectorLoadOp, VectorStoreOp, strides_and_offset,
)
from irkit.dialects.vector import KIND_ATTRS, BroadcastOp, ReductionOp, ShuffleOp
from irkit.passes.lower_linalg_to_loop import IndexConstants

#: the kinds of values along the vectorized induction variable (uniform ones have none): a
#: lane index `s * iv + c` (its stride `s` in `_Lanes.stride` where it is not 1), a vector
LANE, VECTOR = "lane index", "vector"
#: the largest stride a load may step its lanes by (a contiguous load of `s * (W - 1) + 1`
#: elements and one `vector.shuffle`: larger strides would load mostly unused elements)
MAX_STRIDE = 4

#: reduction op -> (`vector.reduction` kind, whether it reassociates floats)
_REDUCTIONS = {
    arith.AddFOp: ("add", True), arith.MulFOp: ("mul", True),
    arith.MaximumFOp: ("maximumf", False), arith.MinimumFOp: ("minimumf", False),
    arith.AddIOp: ("add", False), arith.MulIOp: ("mul", False), arith.AndIOp: ("and", False),
    arith.OrIOp: ("or", False), arith.XOrIOp: ("xor", False),
    arith.MaxSIOp: ("maxsi", False), arith.MinSIOp: ("minsi", False),
    arith.MaxUIOp: ("maxui", False), arith.MinUIOp: ("minui", False),
}

#: a reduction loop body of at most this many ops is short: its time is the latency of the
#: chain through its carried value, not the throughput of its ops (see `interleave`)
_SHORT_BODY = 8
#: `math` ops that stay one or a few instructions (the others expand into long sequences,
#: math-polynomial-approximation's or a library call's)
_CHEAP_MATH = (math_dialect.FmaOp, math_dialect.AbsFOp, math_dialect.CopySignOp)


def identity(kind: str, t: Type):
    """The attribute `e` of type `t` with `e op x == x` for every `x`: `-0.0` for float add
    (`-0.0 + x` is `x` for `x = -0.0` too, while `+0.0 + -0.0` is `+0.0`)."""
    if isinstance(t, FloatType):
        value = {"add": -0.0, "mul": 1.0, "maximumf": -math.inf, "minimumf": math.inf}[kind]
        return FloatAttr(value, t)
    w = t.width
    value = {"add": 0, "or": 0, "xor": 0, "maxui": 0, "mul": 1, "and": -1, "minui": -1,
             "maxsi": -(1 << (w - 1)), "minsi": (1 << (w - 1)) - 1}[kind]
    return IntegerAttr(value, t)


class Unvectorizable(Exception):
    """Why a loop stays scalar."""


def _lane_type(t: Type) -> bool:
    """Whether this pass makes vectors of `t`: floats and integers, not `index`."""
    return isinstance(t, (FloatType, IntegerType))


def _const_int(v: Value) -> int | None:
    a = constant_value(v)
    return a.value if isinstance(a, IntegerAttr) else None


def _element_bytes(t: Type) -> int:
    """Bytes of a memref element (`index` counted as 8, `i1` as 1)."""
    bits = t.width if isinstance(t, (FloatType, IntegerType)) else 64
    return max(1, bits // 8)


# ---------------------------------------------------------------------------------------------
# Rewriting a body W lanes at a time
# ---------------------------------------------------------------------------------------------


class _Lanes:
    """Rewrites ops of a loop body for `width` lanes, into blocks of a new loop.

    `vmap` maps each source value to its new value (a lane index to lane 0's index), `kind`
    says which values are lane indices or vectors (absent: uniform). Raises
    `Unvectorizable` with the reason on the first op it cannot rewrite; the caller then
    drops what was built (it is not inserted in the IR yet)."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.vmap: dict[Value, Value] = {}
        self.kind: dict[Value, str] = {}
        #: the stride of each lane index whose lanes are not consecutive, in elements
        self.stride: dict[Value, int] = {}
        self._splats: dict[tuple[Block, Value], Value] = {}

    def get(self, v: Value) -> Value:
        return self.vmap.get(v, v)

    def vtype(self, t: Type) -> VectorType:
        return VectorType((self.width,), t)

    def vector(self, v: Value, b: Builder) -> Value:
        """`v` as a vector: itself, or a uniform value splatted (once per block)."""
        kind = self.kind.get(v)
        if kind == VECTOR:
            return self.vmap[v]
        if kind == LANE:
            raise Unvectorizable("a lane index is used as a value (index vectors are not "
                                 "made)")
        key = (b.ip.block, v)
        s = self._splats.get(key)
        if s is None:
            s = self._splats[key] = b.create(BroadcastOp, self.get(v),
                                             result_types=[self.vtype(v.type)]).result
        return s

    def block(self, src: Block, b: Builder) -> None:
        """Rewrite every op of `src` but its terminator at `b`."""
        for op in src.ops:
            if op is not src.terminator:
                self.op(op, b)

    def op(self, op: Operation, b: Builder) -> None:
        if isinstance(op, ForOp):
            return self.for_loop(op, b)
        if op.regions:
            raise Unvectorizable(f"'{op.name}' has regions")
        kinds = [self.kind.get(v) for v in op.operands]
        if isinstance(op, StoreOp):
            return self.store(op, b)
        if not (has_trait(op, Pure) or isinstance(op, (LoadOp, DimOp))):
            raise Unvectorizable(f"'{op.name}' has effects other than loads and stores")
        if not any(kinds):
            b.insert(op.clone(self.vmap))
        elif isinstance(op, LoadOp):
            self.load(op, b)
        elif self.lane_index(op, kinds):
            b.insert(op.clone(self.vmap))
        elif isinstance(op, (arith.IndexCastOp, arith.IndexCastUIOp)) and \
                kinds[0] == LANE and op.result.type.width >= 8:
            self.lane_numbers(op, b)
        elif LANE in kinds:
            raise Unvectorizable(f"a lane index feeds '{op.name}' (only `+ c` and `* s` "
                                 "keep it one)")
        elif has_trait(op, Elementwise) and has_trait(op, Pure):
            self.elementwise(op, b)
        else:
            raise Unvectorizable(f"'{op.name}' cannot take vector operands")

    def lane_index(self, op: Operation, kinds: list) -> bool:
        """Whether `op` makes a lane index of one (recording its kind and stride): `x + c`,
        `c + x` or `x - c` keep `x`'s stride, `x * s` and `s * x` (a constant `s >= 1`)
        multiply it by `s`, up to `MAX_STRIDE`."""
        if len(kinds) != 2 or None not in kinds or VECTOR in kinds:
            return False
        x = op.operands[kinds.index(None) ^ 1]
        stride = self.stride.get(x, 1)
        if isinstance(op, arith.MulIOp):
            c = _const_int(op.operands[1] if x is op.operands[0] else op.operands[0])
            if c is None or c < 1:
                return False
            stride *= c
            if stride > MAX_STRIDE:
                raise Unvectorizable(f"lanes {stride} elements apart (at most {MAX_STRIDE} "
                                     "are loaded together and shuffled)")
        elif not (isinstance(op, arith.AddIOp) or
                  (isinstance(op, arith.SubIOp) and x is op.operands[0])):
            return False
        r = op.results[0]
        self.kind[r] = LANE
        if stride > 1:
            self.stride[r] = stride
        return True

    def lane_numbers(self, op: Operation, b: Builder) -> None:
        """A lane index cast to an integer (a position compared with a label: a one-hot,
        a mask by position): lane 0's index cast once, splatted, plus the constant vector
        [0, s, 2s, ...] of the lanes' offsets (MLIR's `vector.step`, scaled). The cast
        wraps as the scalar one does: `cast(i) + l` and `cast(i + l)` agree modulo 2^w."""
        t = op.result.type
        stride = self.stride.get(op.operands[0], 1)
        first = b.insert(op.clone(self.vmap)).results[0]
        splat = b.create(BroadcastOp, first, result_types=[self.vtype(t)],
                         location=op.location).result
        lanes = np.arange(self.width, dtype=np.int64) * stride
        offsets = DenseElementsAttr(self.vtype(t), lanes.astype(numpy_dtype(t)))  # wrapped
        step = b.insert(materialize_constant(offsets, self.vtype(t), op.location)).result
        self.vmap[op.result] = b.create(arith.AddIOp, splat, step,
                                        location=op.location).result
        self.kind[op.result] = VECTOR

    def elementwise(self, op: Operation, b: Builder) -> None:
        types = [v.type for v in op.operands] + op.result_types
        if not all(_lane_type(t) for t in types):
            raise Unvectorizable(f"'{op.name}' computes a per-lane index (a gather or "
                                 "scatter)" if any(isinstance(t, IndexType) for t in types)
                                 else f"'{op.name}' has operands that are not scalars")
        operands = [self.vector(v, b) for v in op.operands]
        new = b.insert(Operation.create(op.name, operands,
                                        [self.vtype(t) for t in op.result_types],
                                        op.properties, op.attributes, location=op.location))
        for old, res in zip(op.results, new.results):
            self.vmap[old] = res
            self.kind[old] = VECTOR

    # ----- memory ---------------------------------------------------------------------------

    def unit_stride(self, op: Operation, memref: Value, indices: list[Value]) -> None:
        """Check that `memref[indices]` addresses `width` consecutive elements: the last
        index a lane index, the others and the memref uniform, stride 1 by type."""
        kinds = [self.kind.get(v) for v in indices]
        t: MemRefType = memref.type
        if self.kind.get(memref) or VECTOR in kinds:
            raise Unvectorizable(f"'{op.name}' at an index computed per lane (a gather or "
                                 "scatter)")
        if not kinds or any(kinds[:-1]) or kinds[-1] is None:
            raise Unvectorizable(f"'{op.name}' strides the lanes over a dimension other "
                                 "than the last")
        if self.stride.get(indices[-1], 1) > 1 and isinstance(op, StoreOp):
            raise Unvectorizable(f"'{op.name}' of lanes {self.stride[indices[-1]]} elements "
                                 "apart (a strided store)")
        layout = strides_and_offset(t)
        if layout is None or layout[0][-1] != 1:
            raise Unvectorizable(f"'{op.name}' on a memref whose last stride is not 1 by type")
        if not (isinstance(t.element, FloatType) or
                (isinstance(t.element, IntegerType) and t.element.width % 8 == 0)):
            raise Unvectorizable(f"'{op.name}' of {t.element} elements")
        last = t.shape[-1]
        span = self.span(indices[-1])
        if last is not None and last < span:
            raise Unvectorizable(f"'{op.name}': the last dimension ({last}) is shorter than "
                                 f"{span} elements")

    def span(self, index: Value) -> int:
        """How many consecutive elements the lanes of a lane index reach: `W` at stride 1,
        `s * (W - 1) + 1` at stride `s`."""
        return self.stride.get(index, 1) * (self.width - 1) + 1

    def load(self, op: LoadOp, b: Builder) -> None:
        """A vector load of the lanes' elements; at stride `s`, of the `span` elements from
        lane 0's to the last lane's (no element outside those the scalar loop reads), and
        one `vector.shuffle` picking every `s`-th."""
        self.unit_stride(op, op.memref, op.indices)
        stride, span = self.stride.get(op.indices[-1], 1), self.span(op.indices[-1])
        v = b.create(VectorLoadOp, self.get(op.memref), [self.get(i) for i in op.indices],
                     result_types=[VectorType((span,), op.result.type)],
                     location=op.location).result
        if stride > 1:
            v = b.create(ShuffleOp, v, v, mask=DenseArrayAttr(I64, range(0, span, stride)),
                         result_types=[self.vtype(op.result.type)],
                         location=op.location).result
        self.vmap[op.result] = v
        self.kind[op.result] = VECTOR

    def store(self, op: StoreOp, b: Builder) -> None:
        if not any(self.kind.get(v) for v in op.indices):
            raise Unvectorizable("'memory.store' of one element from every lane")
        self.unit_stride(op, op.memref, op.indices)
        b.create(VectorStoreOp, self.vector(op.value, b), self.get(op.memref),
                 [self.get(i) for i in op.indices], location=op.location)

    # ----- loops inside the vectorized one --------------------------------------------------

    def for_loop(self, op: ForOp, b: Builder) -> None:
        """A `loop.for` with uniform bounds, carrying vectors where its values differ per
        lane (see the module docstring, shape 1)."""
        if any(self.kind.get(v) for v in (op.lower_bound, op.upper_bound, op.step)):
            raise Unvectorizable("a 'loop.for' whose bounds differ per lane")
        widened = {i for i, v in enumerate(op.init_args) if self.kind.get(v)}
        while True:
            for i in widened:
                if not _lane_type(op.init_args[i].type):
                    raise Unvectorizable(f"a 'loop.for' carries a per-lane "
                                         f"{op.init_args[i].type}")
            inits = [self.vector(v, b) if i in widened else self.get(v)
                     for i, v in enumerate(op.init_args)]
            new = self.build_for(op, widened, inits)
            late = {i for i, v in enumerate(op.body.blocks[0].terminator.operands)
                    if i not in widened and self.kind.get(v)}
            if not late:
                break
            new.drop_all_references()           # widen those too, and rewrite it again
            widened |= late
        b.insert(new)
        for i, (old, res) in enumerate(zip(op.results, new.results)):
            self.vmap[old] = res
            if i in widened:
                self.kind[old] = VECTOR

    def build_for(self, op: ForOp, widened: set[int], inits: list[Value]) -> ForOp:
        """The rewritten `op`, its carried values `widened` vectors, not inserted yet."""
        types = [v.type for v in inits]
        body = Block([INDEX, *types])
        src = op.body.blocks[0]
        self.vmap[src.args[0]] = body.args[0]
        for i, (old, new) in enumerate(zip(src.args[1:], body.args[1:])):
            self.vmap[old] = new
            if i in widened:
                self.kind[old] = VECTOR
        inner = Builder.at_end(body)
        self.block(src, inner)
        yielded = [self.vector(v, inner) if i in widened else self.get(v)
                   for i, v in enumerate(src.terminator.operands)]
        inner.create(YieldOp, yielded, result_types=[], location=op.location)
        new = ForOp.build(self.get(op.lower_bound), self.get(op.upper_bound),
                          self.get(op.step), inits, result_types=types, regions=1,
                          location=op.location)
        new.regions[0].add_block(body)
        return new


# ---------------------------------------------------------------------------------------------
# The loops
# ---------------------------------------------------------------------------------------------


class _Vectorizer:
    """Vectorizes one loop at a time (`parallel` or `reduction`), or raises
    `Unvectorizable`; `width` 0 asks the target (`irkit.target.of` the loop)."""

    def __init__(self, width: int, reassociate: bool, interleave: int = 1) -> None:
        self.width = width
        self.reassociate = reassociate
        self.interleave = interleave
        self.constants = IndexConstants()

    def lanes_for(self, loop: Operation) -> int:
        """The lane count: the option, or a register's worth of the smallest element the
        loop loads or stores."""
        if self.width:
            return self.width
        sizes = [_element_bytes(o.memref.type.element) for o in loop.walk()
                 if isinstance(o, (LoadOp, StoreOp))]
        return target_of(loop).lanes(min(sizes, default=4))

    def checked_lanes(self, loop: Operation, lb: Value, ub: Value, step: Value) -> int:
        if _const_int(step) != 1:
            raise Unvectorizable("the step is not the constant 1")
        width = self.lanes_for(loop)
        if width < 2:
            raise Unvectorizable("the target has no vector registers")
        lo, hi = _const_int(lb), _const_int(ub)
        if lo is not None and hi is not None and hi - lo < width:
            if hi - lo < 2:
                raise Unvectorizable(f"{max(hi - lo, 0)} iterations, fewer than 2 lanes")
            width = hi - lo                     # 10 iterations: one vector of 10 lanes
        return width

    def main_bound(self, b: Builder, lb: Value, ub: Value, width: int) -> tuple[Value, bool]:
        """Where the vector loop stops, `lb + ((ub - lb) floordiv width) * width` (as
        `ub - (ub - lb) rem width`: the same for `ub >= lb`, and `lb`'s empty loop below),
        and whether a remainder is left."""
        lo, hi = _const_int(lb), _const_int(ub)
        if lo is not None and hi is not None:
            n = hi - lo
            return self.constants.get(b.ip.before, lo + n - n % width), n % width != 0
        span = ub if lo == 0 else b.create(arith.SubIOp, ub, lb).result
        rem = b.create(arith.RemSIOp, span, self.constants.get(b.ip.before, width)).result
        return b.create(arith.SubIOp, ub, rem).result, True

    # ----- shape 1: the last dimension of a loop.parallel -----------------------------------

    def parallel(self, loop: ParallelOp) -> None:
        n = len(loop.induction_vars)
        d = n - 1
        lb, ub = loop.lower_bounds[d], loop.upper_bounds[d]
        width = self.checked_lanes(loop, lb, ub, loop.steps[d])
        steps = list(loop.steps)
        steps[d] = self.constants.get(loop, width)
        new = ParallelOp.build(list(loop.lower_bounds), list(loop.upper_bounds), steps,
                               result_types=[], regions=1, location=loop.location)
        body = new.regions[0].add_block(Block([INDEX] * n))
        lanes = _Lanes(width)
        lanes.vmap.update(zip(loop.induction_vars, body.args))
        lanes.kind[loop.induction_vars[d]] = LANE
        try:
            lanes.block(loop.body.blocks[0], Builder.at_end(body))
        except Unvectorizable:
            new.drop_all_references()
            raise
        Builder.at_end(body).create(YieldOp, [], result_types=[], location=loop.location)
        b = Builder.before(loop)
        main, remainder = self.main_bound(b, lb, ub, width)
        new.set_operand(n + d, main)
        b.insert(new)
        if remainder:
            loop.set_operand(d, main)
        else:
            loop.erase()

    # ----- shapes 2 and 3: an innermost loop.for --------------------------------------------

    def reductions(self, loop: ForOp) -> list[tuple[Operation, str]]:
        """The combining op and kind of each carried value (shape 2), or raise."""
        found = []
        src = loop.body.blocks[0]
        for i, acc in enumerate(loop.region_iter_args):
            users = acc.users
            op = users[0] if len(users) == 1 else None
            entry = _REDUCTIONS.get(type(op))
            yielded = src.terminator.operands[i]
            if entry is None or not _lane_type(acc.type) or op.operands.count(acc) != 1 or \
                    op.results[0] is not yielded or op.results[0].users != [src.terminator] \
                    or src.terminator.operands.count(yielded) != 1:
                raise Unvectorizable(f"carried value #{i} is not a reduction by an "
                                     "associative op")
            kind, reassociates = entry
            if reassociates and not (self.reassociate or
                                     FASTMATH.has(op.properties["fastmath"], "reassoc")):
                raise Unvectorizable(f"a float '{op.name}' reduction, and reassociate=false "
                                     "without fastmath<reassoc>")
            found.append((op, kind))
        return found

    @staticmethod
    def check_memory(loop: ForOp) -> None:
        """No iteration reads what another wrote (shapes 2 and 3)."""
        stores = [o for o in loop.body.blocks[0].ops if isinstance(o, StoreOp)]
        loads = [o for o in loop.body.blocks[0].ops if isinstance(o, LoadOp)]
        for s in stores:
            for ld in loads:
                if ld.memref is s.memref and ld.indices != s.indices:
                    raise Unvectorizable("a buffer stored to is loaded at other indices "
                                         "(a dependence between iterations)")

    def copies_for(self, loop: ForOp, width: int) -> int:
        """How many vectors of partial results each carried value gets: `interleave` for a
        short body (at most `_SHORT_BODY` ops, none of them a `math` op that expands into a
        long sequence) whose trip count may reach `interleave * width`, else 1; halved
        while the partials would take more than half the target's vector registers."""
        ops = [o for o in loop.body.blocks[0].ops if not isinstance(o, YieldOp)]
        if self.interleave < 2 or len(ops) > _SHORT_BODY or \
                any(o.name.startswith("math.") and not isinstance(o, _CHEAP_MATH) for o in ops):
            return 1
        copies = self.interleave
        target = target_of(loop)
        if target.vector_bits and target.vector_registers:
            regs = sum(-(-width * v.type.width // target.vector_bits) for v in loop.init_args)
            while copies > 1 and copies * regs > target.vector_registers // 2:
                copies //= 2
        lo, hi = _const_int(loop.lower_bound), _const_int(loop.upper_bound)
        if copies < 2 or (lo is not None and hi is not None and hi - lo < copies * width):
            return 1
        return copies

    def vector_body(self, loop: ForOp, width: int, copies: int) -> Block:
        """The body of a vector loop stepping `copies * width`: the source body rewritten
        for `width` lanes `copies` times, copy `j` at lanes `iv + j * width` carrying its own
        vectors of partial results (block arguments `1 + j * n ...` for `n` carried
        values). Not inserted anywhere; raises `Unvectorizable`."""
        src = loop.body.blocks[0]
        n = len(loop.init_args)
        types = [VectorType((width,), v.type) for v in loop.init_args]
        body = Block([INDEX, *types * copies])
        inner = Builder.at_end(body)
        yielded = []
        try:
            for j in range(copies):
                lanes = _Lanes(width)
                iv = body.args[0]
                if j:
                    iv = inner.create(arith.AddIOp, iv, self.constants.get(loop, j * width),
                                      location=loop.location).result
                lanes.vmap[src.args[0]] = iv
                lanes.kind[src.args[0]] = LANE
                for old, new in zip(src.args[1:], body.args[1 + j * n:1 + (j + 1) * n]):
                    lanes.vmap[old] = new
                    lanes.kind[old] = VECTOR
                lanes.block(src, inner)
                yielded += [lanes.vector(v, inner) for v in src.terminator.operands]
        except Unvectorizable:
            for o in body.ops:
                o.drop_all_references()
            raise
        inner.create(YieldOp, yielded, result_types=[], location=loop.location)
        return body

    def vector_for(self, b: Builder, loop: ForOp, body: Block, lb: Value, ub: Value,
                   step: int, inits: list[Value]) -> list[Value]:
        """Insert `loop.for lb to ub step step` with `body` and `inits`; its results."""
        new = b.insert(ForOp.build(lb, ub, self.constants.get(loop, step), inits,
                                   result_types=[v.type for v in inits], regions=1,
                                   location=loop.location))
        new.regions[0].add_block(body)
        return list(new.results)

    @staticmethod
    def combine(b: Builder, reductions, partials: list[Value]) -> list[Value]:
        """Each carried value's vectors of partial results (`partials`: one vector per
        carried value, copy after copy) combined lane-wise by its reduction op, as a
        balanced tree."""
        n = len(reductions)
        out = []
        for i, (op, _) in enumerate(reductions):
            vals = partials[i::n]
            while len(vals) > 1:
                pairs = [b.insert(Operation.create(op.name, [x, y], [x.type], op.properties,
                                                   location=op.location)).results[0]
                         for x, y in zip(vals[::2], vals[1::2])]
                vals = pairs + vals[len(pairs) * 2:]
            out.append(vals[0])
        return out

    def for_loop(self, loop: ForOp) -> None:
        reductions = self.reductions(loop)
        self.check_memory(loop)
        lb, ub = loop.lower_bound, loop.upper_bound
        width = self.checked_lanes(loop, lb, ub, loop.step)
        copies = self.copies_for(loop, width)
        body = self.vector_body(loop, width, 1)
        wide = self.vector_body(loop, width, copies) if copies > 1 else None
        b = Builder.before(loop)
        main, remainder = self.main_bound(b, lb, ub, width)
        partials = []
        for (op, kind), init in zip(reductions, loop.init_args):
            t = VectorType((width,), init.type)
            e = b.insert(materialize_constant(identity(kind, init.type), init.type,
                                              loop.location)).results[0]
            partials.append(b.create(BroadcastOp, e, result_types=[t]).result)
        start = lb
        if wide is not None:                    # `copies` chains, then one
            start, _ = self.main_bound(b, lb, ub, width * copies)
            partials = self.vector_for(b, loop, wide, lb, start, width * copies,
                                       partials * copies)
            partials = self.combine(b, reductions, partials)
        if wide is not None and main is start:  # static: no single-vector iteration left
            for o in body.ops:
                o.drop_all_references()
        else:
            partials = self.vector_for(b, loop, body, start, main, width, partials)
        combined = []
        for (op, kind), init, partial in zip(reductions, loop.init_args, partials):
            flags = {"fastmath": FASTMATH.from_names(["reassoc"])} if \
                isinstance(init.type, FloatType) and kind in ("add", "mul") else {}
            combined.append(b.create(ReductionOp, partial, init, result_types=[init.type],
                                     kind=KIND_ATTRS[kind], **flags).result)
        if remainder:
            loop.set_operand(0, main)
            for i, v in enumerate(combined):
                loop.set_operand(3 + i, v)
        else:
            loop.replace_all_uses_with(combined)
            loop.erase()


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


def _innermost_parallel(op: Operation) -> bool:
    return isinstance(op, ParallelOp) and \
        not any(isinstance(n, ParallelOp) for n in op.walk() if n is not op)


def _static_rest(loop: Operation, dim: int) -> bool:
    """Whether the vectorized `loop` kept a remainder over its dimension `dim` whose bounds
    are constants: at most `W - 1` iterations, which one vector of that many lanes takes."""
    if loop.parent is None:                     # erased: no remainder
        return False
    bounds = (loop.lower_bounds[dim], loop.upper_bounds[dim]) if isinstance(loop, ParallelOp) \
        else (loop.lower_bound, loop.upper_bound)
    return all(_const_int(v) is not None for v in bounds)


def _innermost_for(op: Operation) -> bool:
    return isinstance(op, ForOp) and not any(o.regions for o in op.body.blocks[0].ops)


@register_pass
class LoopVectorize(Pass):
    """Vectorize innermost loops to the `vector` dialect, `width` lanes at a time, with
    scalar remainder loops (see the module docstring for what is vectorized and why).

    Algorithm:
      1. Collect the innermost `loop.parallel`s and the innermost `loop.for`s (no region in
         their bodies), in program order, before changing anything.
      2. For each `loop.parallel`: rewrite its body for `W` lanes of its last dimension
         (`_Lanes`: uniform values scalar, `iv + c` indices scalar, the rest vectors;
         unit-stride accesses become `memory.vector_load` / `vector_store`; `loop.for`s
         inside carry vectors where their values differ per lane). On success, insert the
         vector loop, stepping by `W` to the last multiple of `W`, and keep the original
         as the remainder from there (erased when the trip count is a static multiple);
         a remainder with constant bounds is vectorized again (one vector of its trip
         count) unless it is one iteration.
      3. For each `loop.for` not inside a loop vectorized in 2: check its carried values
         are reductions by associative ops (and float add/mul may reassociate), and that
         it carries no dependence through memory; rewrite its body with the induction
         variable as the lane index and the carried values as vectors of partial results
         starting from the op's identity; combine them after the loop with
         `vector.reduction` and the loop's init, which the scalar remainder continues.
         A short body (`copies_for`) is first run `interleave` times per iteration, each
         copy with its own vectors of partial results, up to the last multiple of
         `interleave * W`; the copies' partials are combined lane-wise and a one-copy
         vector loop continues from them to the last multiple of `W` (left out where the
         trip count is static and nothing is left for it). A remainder with constant
         bounds is vectorized again, as in 2.
      4. A loop that fails a check stays as it was; with `remarks=true` the reason is the
         loop's `loop_vectorize.missed` attribute.
      5. Every `func.func` in the root (the root too) gets `irkit.vectorized`, which keeps
         LLVM's loop vectorizer off its loops (module docstring).

    Options: `width` lanes (0: from the target, `irkit.target.of` the loop: one vector
    register of the loop's smallest element); `reassociate` (true: float sums and products
    become per-lane partial results; false: only ops with `fastmath<reassoc>`);
    `interleave` (vectors of partial results per carried value in a reduction loop with a
    short body, 1: one); `remarks`.
    """

    name = "loop-vectorize"
    width: int = 0
    reassociate: bool = True
    interleave: int = 4
    remarks: bool = False

    def run(self, root: Operation) -> None:
        for fn in root.walk():
            if fn.name == "func.func":
                fn.attributes[VECTORIZED_ATTRIBUTE] = UNIT
        vectorizer = _Vectorizer(self.width, self.reassociate, self.interleave)
        parallels = [o for o in root.walk() if _innermost_parallel(o)]
        fors = [o for o in root.walk() if _innermost_for(o)]
        done: set[Operation] = set()
        for loop in parallels:
            if self.attempt(loop, vectorizer.parallel):
                done.add(loop)
                if _static_rest(loop, -1):          # one vector of exactly what is left
                    self.attempt(loop, vectorizer.parallel)
        for loop in fors:
            if not any(a in done for a in loop.ancestors()):
                if self.attempt(loop, vectorizer.for_loop) and _static_rest(loop, 0):
                    self.attempt(loop, vectorizer.for_loop)

    def attempt(self, loop: Operation, vectorize) -> bool:
        try:
            vectorize(loop)
        except Unvectorizable as e:
            if self.remarks:
                loop.set_attr("loop_vectorize.missed", StringAttr(str(e)))
            return False
        return True
