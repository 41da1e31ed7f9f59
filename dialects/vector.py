"""The `vector` dialect: the few ops on whole SIMD vectors that arith and math cannot express,
with MLIR 22's names, properties, custom syntax and semantics (a subset of MLIR's `vector`).

Elementwise arithmetic on `vector<8xf32>` is plain `arith`/`math` (their ops accept vectors,
lane by lane); what vectorized loops need beyond that is moving between scalars and vectors:

- `vector.broadcast` splats a scalar into every lane (or copies a vector along new leading
  dimensions), e.g. a loop-invariant scale factor before a vectorized multiply;
- `vector.reduction` combines the lanes of a 1-D vector into one scalar, e.g. the tail of a
  vectorized sum;
- `vector.shuffle` picks lanes of two 1-D vectors, e.g. the even elements of a contiguous
  load, for a loop that reads every second element (a 2 x 2 pooling window);
- `vector.extract` takes one element (or one row) out of a vector, e.g. each of the sums
  that one tree of shuffles and adds made of many accumulators' lanes.

Each prints and parses exactly as MLIR's, so irkit's custom form is valid `mlir-opt` input too.
In the interpreter a vector is a numpy array of its shape; index lanes are int64.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import DenseArrayAttr, OpaqueAttr
from irkit.ir import Block
from irkit.opdef import (
    AnyType, AnyVector, Constraint, DenseI64Array, Dialect, Index, Op, OptOperand, Operand,
    Prop, Pure, Result, VarOperand, lookup_op,
)
from irkit.types import I64, FloatType, IndexType, IntegerType, Type, VectorType
from irkit.dialects.arith import fold as af
from irkit.dialects.arith import materialize_constant
from irkit.dialects.arith.base import FASTMATH, flags_text
from irkit.dialects.arith.floating import FastMathOp

vector = Dialect("vector", "Operations on whole SIMD vectors: broadcast, reduction, shuffle, "
                 "extract.",
                 allows_unknown_ops=True)
# Folded broadcasts and reductions are plain constants: `arith.constant dense<...>`, as in MLIR.
vector.constant_materializer = materialize_constant


def _is_scalar(t: Type) -> bool:
    """An integer, index or float type: what a vector's lanes hold."""
    return isinstance(t, (IntegerType, IndexType, FloatType))


def _parse_vector_type(p) -> VectorType:
    """A type that must be a vector (`vector.reduction`'s and `vector.shuffle`'s operands),
    or the parse error at it."""
    tk = p.i
    t = p.parse_type()
    if not isinstance(t, VectorType):
        raise p.error(f"expected a vector type, found '{t}'", tk)
    return t


def _lane_dtype(t: Type):
    return np.int64 if isinstance(t, IndexType) else af.numpy_dtype(t)


# ---------------------------------------------------------------------------------------------
# vector.broadcast
# ---------------------------------------------------------------------------------------------


@vector.op
class BroadcastOp(Op):
    """Copies a scalar into every lane of a vector, or a vector along new leading dimensions
    and across its unit dimensions (numpy's and MLIR's broadcasting rule: dimensions align at
    the end, and each source dimension is 1 or equal to the result's).

        %s = arith.constant 1.5 : f32
        %v = vector.broadcast %s : f32 to vector<8xf32>
    """

    name = "vector.broadcast"
    source = Operand(AnyType, doc="a scalar, or a vector of rank at most the result's")
    vector = Result(AnyVector)
    traits = (Pure(),)

    def verify_(self):
        src, dst = self.source.type, self.vector.type
        if not _is_scalar(src) and not isinstance(src, VectorType):
            raise self.error("source type is not a vector")
        if af.elem(src) is not dst.element:
            raise self.error("failed to verify that source operand and result have same "
                             "element type")
        if not isinstance(src, VectorType):
            return
        if src.rank > dst.rank:
            raise self.error("source rank higher than destination rank")
        lead = dst.rank - src.rank
        for k, d in enumerate(src.shape):
            want, scalable = dst.shape[lead + k], dst.scalable[lead + k]
            if d != 1 and (d != want or src.scalable[k] != scalable):
                raise self.error(f"dimension mismatch ({d} vs. {want})")

    def fold(self, operands):
        src = self.source
        if src.type is self.vector.type:
            return [src]                                    # broadcast to its own type: x
        inner = src.defining_op("vector.broadcast")
        if inner is not None:
            self.set_operand(0, inner.source)               # broadcast(broadcast(x)) -> ...(x)
            return list(self.results)
        if operands[0] is not None and not any(self.vector.type.scalable):
            return af.constant_fold(self, operands)         # a splat (or tiled) constant
        return None

    # ----- custom assembly: `%v = vector.broadcast %s : f32 to vector<8xf32>` --------------

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        src = p.parse_type()
        p.expect("to")
        tk = p.i
        dst = p.parse_type()
        if not isinstance(dst, VectorType):
            raise p.error(f"invalid kind of type specified: expected a vector type, but "
                          f"found '{dst}'", tk)
        return cls.build(p.resolve(ref, src), result_types=[dst], attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.source)}")
        p.attr_dict(self)
        p.write(f" : {self.source.type} to {self.vector.type}")

    # ----- semantics ----------------------------------------------------------------------

    def evaluate(self, x):
        t = self.vector.type
        return np.broadcast_to(np.asarray(x, dtype=_lane_dtype(t.element)), t.shape).copy()


# ---------------------------------------------------------------------------------------------
# vector.reduction
# ---------------------------------------------------------------------------------------------

#: MLIR's CombiningKind, in its order, with the arith op that combines two lanes of an integer
#: (or index) vector and of a float vector; None where the kind does not apply.
COMBINING_KINDS = {
    "add": ("arith.addi", "arith.addf"),
    "mul": ("arith.muli", "arith.mulf"),
    "minui": ("arith.minui", None),
    "minsi": ("arith.minsi", None),
    "minnumf": (None, "arith.minnumf"),
    "maxui": ("arith.maxui", None),
    "maxsi": ("arith.maxsi", None),
    "maxnumf": (None, "arith.maxnumf"),
    "and": ("arith.andi", None),
    "or": ("arith.ori", None),
    "xor": ("arith.xori", None),
    "maximumf": (None, "arith.maximumf"),
    "minimumf": (None, "arith.minimumf"),
}
#: kinds with `x op x == x`: a reduction over copies of one value is that value
_IDEMPOTENT = frozenset(("minui", "minsi", "minnumf", "maxui", "maxsi", "maxnumf", "and", "or",
                         "maximumf", "minimumf"))
KIND_ATTRS = {k: OpaqueAttr(f"vector.kind<{k}>") for k in COMBINING_KINDS}
_KIND_OF = {a.body: k for k, a in KIND_ATTRS.items()}
CombiningKindAttr = Constraint(lambda a: isinstance(a, OpaqueAttr) and a.body in _KIND_OF,
                               "vector combining kind attribute")

_COMBINERS: dict = {}


def combiner(kind: str, t: Type):
    """`f(a, b)`: the arith op of `kind` on two scalars of type `t` (its `evaluate`), so a
    reduction means exactly what the same chain of arith ops means (NaNs, signed zeros,
    wrapping included). None if `kind` does not apply to `t`."""
    key = (kind, t)
    f = _COMBINERS.get(key)
    if f is None:
        name = COMBINING_KINDS[kind][isinstance(t, FloatType)] if _is_scalar(t) else None
        if name is None:
            return None
        lane = Block([t]).args[0]
        f = _COMBINERS[key] = lookup_op(name).build(lane, lane).evaluate
    return f


@vector.op
class ReductionOp(FastMathOp):
    """Combines the lanes of a 1-D vector into a scalar with `kind`, starting from the
    accumulator when one is given.

        %v = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : vector<4xf32>
        %s = vector.reduction <add>, %v : vector<4xf32> into f32

    The lanes combine in order, `((acc op v0) op v1) op ...` (without an accumulator, from
    `v0`), each step the `arith` op of that kind: `add` is `arith.addf` or `arith.addi`,
    `maximumf` is `arith.maximumf`, and so on. That order matters only to float `add` and
    `mul`, and is LLVM's ordered `llvm.vector.reduce.fadd`; `fastmath<reassoc>` lets compiled
    code reassociate (a tree of partial sums), so it may round differently from this
    reference.
    """

    name = "vector.reduction"
    kind = Prop(CombiningKindAttr)
    vector = Operand(AnyVector)
    acc = OptOperand(AnyType, doc="the starting value; the result type")
    dest = Result(AnyType)
    traits = (Pure(),)

    @property
    def kind_name(self) -> str:
        return _KIND_OF[self.properties["kind"].body]

    def infer_result_types(self):
        return [self.vector.type.element]

    def verify_(self):
        vt, dest = self.vector.type, self.dest.type
        if vt.rank > 1:
            raise self.error(f"unsupported reduction rank: {vt.rank}")
        if vt.element is not dest:
            raise self.error("failed to verify that source operand and result have same "
                             "element type")
        acc = self.acc
        if acc is not None and acc.type is not dest:
            raise self.error("failed to verify that dest and acc have the same type")
        if combiner(self.kind_name, dest) is None:
            raise self.error(f"unsupported reduction type '{dest}' for kind "
                             f"'{self.kind_name}'")

    def fold_identity(self, operands):
        """A reduction over copies of one scalar is that scalar when the kind is idempotent
        or there is a single lane (no accumulator): min(x, x, x) -> x."""
        if self.acc is not None:
            return None
        src = self.vector.defining_op("vector.broadcast")
        if src is None or src.source.type is not self.dest.type:
            return None
        if self.kind_name in _IDEMPOTENT or self.vector.type.num_elements == 1:
            return [src.source]
        return None

    # ----- custom assembly: `<kind>, %v[, %acc] [fastmath<..>] : vector<NxT> into T` -------

    @classmethod
    def parse(cls, p, num_results):
        p.expect("<")
        tk = p.i
        kind = p.next()
        if kind not in COMBINING_KINDS:
            raise p.error(f"expected vector combining kind to be one of: "
                          f"{', '.join(COMBINING_KINDS)}", tk)
        p.expect(">")
        p.expect(",")
        vref = p.parse_operand_ref()
        aref = p.parse_operand_ref() if p.accept(",") else None
        props = {"kind": KIND_ATTRS[kind]}
        if p.accept("fastmath"):
            props["fastmath"] = FASTMATH.parse(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        vt = _parse_vector_type(p)
        p.expect("into")
        dest = p.parse_type()
        acc = p.resolve(aref, dest) if aref is not None else None
        return cls.build(p.resolve(vref, vt), acc, result_types=[dest], attributes=attrs,
                         **props)

    def print(self, p):
        p.write(f" <{self.kind_name}>, {p.value(self.vector)}")
        if self.acc is not None:
            p.write(f", {p.value(self.acc)}")
        p.write(flags_text(self))
        p.attr_dict(self, elided=("kind", "fastmath"))
        p.write(f" : {self.vector.type} into {self.dest.type}")

    # ----- semantics ----------------------------------------------------------------------

    def evaluate(self, v, acc=None):
        f = combiner(self.kind_name, self.dest.type)
        lanes = list(np.asarray(v).reshape(-1))
        if acc is None:
            acc = lanes.pop(0)
            if isinstance(self.dest.type, IndexType):
                acc = int(acc)
        for x in lanes:
            acc = f(acc, x)
        return acc


# ---------------------------------------------------------------------------------------------
# vector.shuffle
# ---------------------------------------------------------------------------------------------


@vector.op
class ShuffleOp(Op):
    """Lane `i` of the result is lane `mask[i]` of the two 1-D operands laid end to end
    (`v1`'s lanes first, then `v2`'s): LLVM's `shufflevector`.

        %e = vector.shuffle %w, %w [0, 2, 4, 6] : vector<7xf32>, vector<7xf32>

    The operands have one element type and may differ in length; the result is a vector of
    that type, as long as the mask. MLIR's mask may also hold -1 (a poison lane); irkit's
    may not, so that every lane has a value the interpreter can give.
    """

    name = "vector.shuffle"
    v1 = Operand(AnyVector)
    v2 = Operand(AnyVector)
    mask = Prop(DenseI64Array)
    vector = Result(AnyVector)
    traits = (Pure(),)

    def infer_result_types(self):
        return [VectorType((len(self.properties["mask"]),), self.v1.type.element)]

    def verify_(self):
        t1, t2, mask = self.v1.type, self.v2.type, self.properties["mask"].value
        if t1.rank != 1 or t2.rank != 1 or any(t1.scalable) or any(t2.scalable):
            raise self.error("operands must be fixed-length 1-D vectors")
        if t1.element is not t2.element:
            raise self.error("failed to verify that second operand v2 and result have same "
                             "element type")
        if not mask:
            raise self.error("invalid mask length")
        total = t1.shape[0] + t2.shape[0]
        for i, k in enumerate(mask):
            if not 0 <= k < total:
                raise self.error(f"mask index #{i + 1} out of range")
        want = VectorType((len(mask),), t1.element)
        if self.vector.type != want:
            raise self.error(f"result type {self.vector.type} is not {want}")

    # ----- custom assembly: `%r = vector.shuffle %a, %b [0, 2] : vector<4xf32>, vector<4xf32>`

    @classmethod
    def parse(cls, p, num_results):
        r1 = p.parse_operand_ref()
        p.expect(",")
        r2 = p.parse_operand_ref()
        mask = p.parse_i64_list()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t1 = _parse_vector_type(p)
        p.expect(",")
        t2 = _parse_vector_type(p)
        return cls.build(p.resolve(r1, t1), p.resolve(r2, t2), mask=mask,
                         result_types=[VectorType((len(mask),), t1.element)],
                         attributes=attrs)

    def print(self, p):
        mask = ", ".join(map(str, self.properties["mask"].value))
        p.write(f" {p.value(self.v1)}, {p.value(self.v2)} [{mask}]")
        p.attr_dict(self, elided=("mask",))
        p.write(f" : {self.v1.type}, {self.v2.type}")

    # ----- semantics ----------------------------------------------------------------------

    def evaluate(self, a, b):
        lanes = np.concatenate([np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)])
        return lanes[list(self.properties["mask"].value)].copy()


# ---------------------------------------------------------------------------------------------
# vector.extract
# ---------------------------------------------------------------------------------------------


@vector.op
class ExtractOp(Op):
    """The element (a full position) or the sub-vector (a leading part of one) of a vector
    at a static position: MLIR's `vector.extract` without dynamic positions or poison.

        %x = vector.extract %v[3] : f32 from vector<16xf32>
        %r = vector.extract %m[1] : vector<4xf32> from vector<2x4xf32>
    """

    name = "vector.extract"
    vector = Operand(AnyVector)
    dynamic_position = VarOperand(Index, doc="MLIR's dynamic positions: irkit takes none")
    static_position = Prop(DenseI64Array)
    result = Result(AnyType)
    traits = (Pure(),)

    @property
    def position(self) -> list[int]:
        return list(self.properties["static_position"].value)

    def infer_result_types(self):
        return [_extracted_type(self.vector.type, len(self.position))]

    def verify_(self):
        vt, pos = self.vector.type, self.position
        if any(vt.scalable):
            raise self.error("expected a fixed-length vector")
        if self.dynamic_position:
            raise self.error("dynamic positions are not supported: irkit's vector.extract "
                             "takes a static position")
        if len(pos) > vt.rank:
            raise self.error(f"expected position attribute of rank no greater than vector "
                             f"rank {vt.rank}, got {len(pos)}")
        for i, (k, d) in enumerate(zip(pos, vt.shape)):
            if not 0 <= k < d:
                raise self.error(f"expected position attribute #{i + 1} to be a non-negative "
                                 f"integer smaller than the corresponding vector dimension")
        want = _extracted_type(vt, len(pos))
        if self.result.type != want:
            raise self.error(f"result type {self.result.type} is not {want}")

    def fold(self, operands):
        if not self.position and self.result.type is self.vector.type:
            return [self.vector]                          # an empty position: the vector
        src = self.vector.defining_op("vector.broadcast")
        if src is not None and src.source.type is self.result.type:
            return [src.source]                           # any element of a splat of x: x
        if operands[0] is not None:
            return af.constant_fold(self, operands)
        return None

    # ----- custom assembly: `%x = vector.extract %v[3] : f32 from vector<16xf32>` ----------

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        p.expect("[")
        pos = []
        if p.tok != "]":
            while True:
                pos.append(p.parse_signed_int("a static position (irkit's vector.extract "
                                              "takes no dynamic ones)"))
                if not p.accept(","):
                    break
        p.expect("]")
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        result = p.parse_type()
        p.expect("from")
        vt = _parse_vector_type(p)
        return cls.build(p.resolve(ref, vt), [], result_types=[result], attributes=attrs,
                         static_position=DenseArrayAttr(I64, pos))

    def print(self, p):
        pos = ", ".join(map(str, self.position))
        p.write(f" {p.value(self.vector)}[{pos}]")
        p.attr_dict(self, elided=("static_position",))
        p.write(f" : {self.result.type} from {self.vector.type}")

    # ----- semantics ----------------------------------------------------------------------

    def evaluate(self, v, *dynamic):
        x = np.asarray(v)[tuple(self.position)]
        if isinstance(self.result.type, VectorType):
            return np.array(x, copy=True)
        return int(x) if isinstance(self.result.type, IndexType) else x


def _extracted_type(vt: VectorType, depth: int) -> Type:
    """What `depth` leading indices of a vector of type `vt` pick: an element, or a vector
    of the remaining dimensions."""
    if depth >= vt.rank:
        return vt.element
    return VectorType(vt.shape[depth:], vt.element)
