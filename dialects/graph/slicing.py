"""Graph ops that cut tensors into pieces along their axes and put pieces back: `concat`
and `split`, `slice` and `insert_slice`.

Their derivative rules build one another: concat's cotangent is sliced apart (or split, when
several sizes along the axis are unknown), split's parts are concatenated, and a slice's
cotangent is inserted into zeros by `graph.insert_slice` (MLIR's `tensor.insert_slice`), whose
own cotangent is sliced out again. So they share a module, where each can name the others'
classes. They follow the conventions of `shape.py` (symbols kept where a size provably
is one, folds in `fold_identity`, cotangents typed with `emit_typed`) and import its helpers.
"""

from __future__ import annotations

import numpy as np

from irkit.ad_rules import Linear
from irkit.opdef import AnyTensor, Operand, Pure, Result, VarOperand, VarResult
from irkit.dialects.graph.base import (
    GraphOp, IntProp, IntsProp, ShapeError, TensorSpec, checked_axis, graph, same_dtype, unify_dim,
)
from irkit.dialects.graph.shape import check_size_operands, emit_typed, format_shape, same_value

_TRAITS = (Pure(),)

#: the largest i64, which `graph.slice` reads as "past the end" (Python's omitted bound);
#: bounds at least this large (or at most its negation) are treated as infinite
END = 9223372036854775807


# ---------------------------------------------------------------------------------------------
# graph.concat and graph.split
# ---------------------------------------------------------------------------------------------


def _sum_dims(dims) -> object:
    """The sum of sizes along the concat axis: an int when all are; the one non-zero size
    when the rest are 0; else unknown (a symbolic sum such as N + 3 is not a dim)."""
    nonzero = [d for d in dims if d != 0]
    if all(type(d) is int for d in nonzero):
        return sum(nonzero)
    return nonzero[0] if len(nonzero) == 1 else None


@graph.op
class ConcatOp(GraphOp):
    """The inputs joined along `axis`; every other axis must agree.

        %r = graph.concat %a, %b {axis = 1 : i64}
            : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>

    Folds: the concat of a single input is that input. Transpose (vjp): each input's part
    of the cotangent, sliced out.
    """

    name = "graph.concat"
    inputs = VarOperand(AnyTensor)
    result = Result(AnyTensor)
    axis = IntProp(doc="the axis joined along; negative counts from the end")
    traits = _TRAITS + (Linear(),)

    @classmethod
    def infer(cls, args, props):
        if not args:
            raise ShapeError("concat needs at least one input")
        dtype = same_dtype(*args)
        first = args[0]
        for s in args[1:]:
            if s.rank != first.rank:
                raise ShapeError(f"cannot concatenate {first} and {s}: ranks differ")
        axis = checked_axis(props["axis"], first)
        out = list(first.shape)
        for s in args[1:]:
            for i, d in enumerate(s.shape):
                if i == axis:
                    continue
                try:
                    out[i] = unify_dim(out[i], d)
                except ValueError:
                    raise ShapeError(f"cannot concatenate {first} and {s} along axis {axis}: "
                                     f"dimension {i} differs") from None
        out[axis] = _sum_dims([s.shape[axis] for s in args])
        return [TensorSpec(tuple(out), dtype)]

    def evaluate(self, *xs):
        return np.concatenate(xs, axis=self.props()["axis"])

    def fold_identity(self, operands):
        """concat(x) -> x."""
        inputs = self.inputs
        return same_value(self, inputs[0]) if len(inputs) == 1 else None

    def transpose(self, ad, cts):
        """Input i's part starts after the sizes of the inputs before it. A slice's bounds
        are static, so an input of unknown size along the axis is cut between the static
        offset from the front before it and the one from the back after it (a negative
        bound). With two such inputs, the offsets between them are known only at run time:
        a split into parts of the inputs' run-time sizes (`graph.dim`) cuts them all."""
        rank = self.results[0].type.rank
        axis = self.props()["axis"] % rank
        inputs = list(self.inputs)
        sizes = [v.type.shape[axis] for v in inputs]
        unknown = [i for i, d in enumerate(sizes) if d is None]
        if len(unknown) > 1:
            lengths = [ad.op("graph.dim", v, axis=axis) for v in inputs]
            return emit_typed(ad, SplitOp, cts[0], lengths, type=[v.type for v in inputs],
                              axis=axis, sections=len(inputs))
        split = unknown[0] if unknown else len(sizes)
        out = []
        for i, (v, d) in enumerate(zip(inputs, sizes)):
            if d == 0:
                out.append(None)        # an empty input: nothing to pass back
                continue
            start = sum(sizes[:i]) if i <= split else -sum(sizes[i:])
            if i < split:
                stop = start + d
            else:
                after = sum(sizes[i + 1:])
                stop = -after if after else END
            starts, stops = [0] * rank, [END] * rank
            starts[axis], stops[axis] = start, stop
            out.append(emit_typed(ad, SliceOp, cts[0], type=v.type, starts=starts, stops=stops,
                                  steps=[1] * rank))
        return out


def _check_parts(x: TensorSpec, axis: int, parts: list) -> None:
    """Known part sizes of a sized split must be non-negative and, where all are ints and so
    is the axis size, add up to it (what `SplitOp._bounds` checks at run time)."""
    if any(type(p) is int and p < 0 for p in parts):
        raise ShapeError(f"part sizes {parts} of a split of {x} must be non-negative")
    d = x.shape[axis]
    if type(d) is int and all(type(p) is int for p in parts) and sum(parts) != d:
        raise ShapeError(f"part sizes {parts} do not add up to the size {d} of axis {axis} "
                         f"of {x}")


@graph.op
class SplitOp(GraphOp):
    """x cut along `axis` into `sections` parts: equal ones (numpy's `split` with an int;
    the axis size must be divisible by `sections`), or with `sizes` operands, one per part,
    parts of those run-time sizes (which must add up to the axis size). The sized form is
    the transpose of a concat whose inputs' sizes along the axis are unknown.

        %r:2 = graph.split %x {axis = 1 : i64, sections = 2 : i64}
            : (tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
        %s:2 = graph.split %y, %m, %n {axis = 0 : i64, sections = 2 : i64}
            : (tensor<?x6xf32>, tensor<i64>, tensor<i64>) -> (tensor<?x6xf32>, tensor<?x6xf32>)

    Folds: a split into one section is x. Transpose (vjp): the parts' cotangents
    concatenated, zeros for a part nothing flows back through.
    """

    name = "graph.split"
    x = Operand(AnyTensor)
    sizes = VarOperand(AnyTensor, doc="none, or one 0-d integer tensor per part: its size")
    outs = VarResult(AnyTensor, doc="the `sections` parts, in order along the axis")
    axis = IntProp(default=0, doc="the axis cut; negative counts from the end")
    sections = IntProp(doc="how many parts")
    traits = _TRAITS + (Linear(),)

    @classmethod
    def infer(cls, args, props):
        x, *sizes = args
        check_size_operands(sizes)
        n = props["sections"]
        if n < 1:
            raise ShapeError(f"sections must be at least 1, got {n}")
        if sizes and len(sizes) != n:
            raise ShapeError(f"a split into {n} sections takes {n} size operands (or none), "
                             f"got {len(sizes)}")
        axis = checked_axis(props["axis"], x)
        d = x.shape[axis]
        if n == 1:
            part = d
        elif sizes:
            part = None
        elif type(d) is int:
            if d % n:
                raise ShapeError(f"cannot split {x} into {n} equal sections along axis "
                                 f"{axis}: {d} is not divisible by {n}")
            part = d // n
        else:
            part = None
        parts = [part] * n
        if sizes and n > 1:         # the sizes the operands hold, where known (`graph.dim`)
            parts = [s.value for s in sizes]
            _check_parts(x, axis, parts)
        return [x.with_shape(x.shape[:axis] + (p,) + x.shape[axis + 1:]) for p in parts]

    def _bounds(self, x, sizes) -> list[int] | int:
        """np.split's second argument: the section count, or the cut positions."""
        if not sizes:
            return self.props()["sections"]
        lengths = [int(s) for s in sizes]
        total = x.shape[self.props()["axis"]]
        if min(lengths) < 0 or sum(lengths) != total:
            raise ValueError(f"part sizes {lengths} do not add up to the axis size {total}")
        return list(np.cumsum(lengths)[:-1])

    def evaluate(self, x, *sizes):
        parts = np.split(x, self._bounds(x, sizes), axis=self.props()["axis"])
        # One result is returned bare: the interpreter and folder wrap single results.
        return parts[0] if len(parts) == 1 else parts

    def _poison(self, x, *sizes) -> bool:
        """Folding declines constant part sizes that do not add up."""
        try:
            self._bounds(x, sizes)
        except ValueError:
            return True
        return False

    def fold_identity(self, operands):
        """split(x, 1 section) -> x."""
        return same_value(self, self.x) if len(self.results) == 1 else None

    def nondiff_operands(self):
        return tuple(range(1, len(self.operands)))

    def transpose(self, ad, cts):
        parts = [ct if ct is not None else ad.zeros_like(r) for ct, r in zip(cts, self.results)]
        return [emit_typed(ad, ConcatOp, parts, type=self.x.type, axis=self.props()["axis"])] \
            + [None] * len(self.sizes)


# ---------------------------------------------------------------------------------------------
# graph.slice and graph.insert_slice
# ---------------------------------------------------------------------------------------------


def _covers_all(start: int, stop: int, step: int) -> int:
    """+1 if the slice keeps a dynamic axis whole in order, -1 if whole in reverse, else 0.

    Only infinite-looking bounds (|bound| >= END) and 0 / -1 are size-independent: `0:5`
    keeps min(5, n) elements, which is unknown when n is."""
    if step == 1 and (start == 0 or start <= -END) and stop >= END:
        return 1
    if step == -1 and (start == -1 or start >= END) and stop <= -END:
        return -1
    return 0


@graph.op
class SliceOp(GraphOp):
    """`x[starts[0]:stops[0]:steps[0], ...]` with Python's rules: negative bounds count from
    the end, bounds are clamped to the axis, a negative step walks backwards. A stop of
    9223372036854775807 (the largest i64) means "to the end".

        %r = graph.slice %x {starts = array<i64: 0, 1>, stops = array<i64: 9223372036854775807, 5>,
                             steps = array<i64: 1, 2>} : (tensor<?x6xf32>) -> tensor<?x2xf32>

    Folds: a slice that keeps every element in order is x; a slice of a `graph.insert_slice`
    at the same bounds is what was inserted. Transpose (vjp): the cotangent inserted at the
    same bounds into zeros of x's type (`graph.insert_slice`).
    """

    name = "graph.slice"
    x = Operand(AnyTensor)
    result = Result(AnyTensor)
    starts = IntsProp(doc="first index per axis")
    stops = IntsProp(doc="end index (exclusive) per axis")
    steps = IntsProp(doc="stride per axis; nonzero, negative walks backwards")
    traits = _TRAITS + (Linear(),)

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        return [x.with_shape(slice_shape(x, props))]

    def evaluate(self, x):
        return np.array(x[_index(self.props())])

    def fold_identity(self, operands):
        """slice(x) -> x when every axis keeps all its elements in order;
        slice(insert_slice(src, dest, bounds), bounds) -> src."""
        p = self.props()
        inserted = self.x.defining_op(InsertSliceOp)
        if inserted is not None and inserted.props() == p:
            return same_value(self, inserted.src)
        for a, b, c, d in zip(p["starts"], p["stops"], p["steps"], self.x.type.shape):
            whole = range(*slice(a, b, c).indices(d)) == range(d) if d is not None \
                else _covers_all(a, b, c) == 1
            if not whole:
                return None
        return same_value(self, self.x)

    def transpose(self, ad, cts):
        return [emit_typed(ad, InsertSliceOp, cts[0], ad.zeros_like(self.x), type=self.x.type,
                           **self.props())]


def slice_shape(x: TensorSpec, props: dict) -> tuple:
    """The shape of `x[starts:stops:steps]` (`graph.slice`'s bounds in `props`)."""
    starts, stops, steps = props["starts"], props["stops"], props["steps"]
    for what, v in (("starts", starts), ("stops", stops), ("steps", steps)):
        if len(v) != x.rank:
            raise ShapeError(f"{what} has {len(v)} entries, but {x} has rank {x.rank}")
    out = []
    for i, (a, b, c, d) in enumerate(zip(starts, stops, steps, x.shape)):
        if c == 0:
            raise ShapeError(f"slice step of axis {i} is 0")
        if type(d) is int:
            out.append(len(range(*slice(a, b, c).indices(d))))
        else:
            out.append(d if _covers_all(a, b, c) else None)
    return tuple(out)


def _index(props: dict) -> tuple:
    """The numpy index of `graph.slice`'s bounds."""
    return tuple(slice(a, b, c) for a, b, c in zip(props["starts"], props["stops"],
                                                   props["steps"]))


@graph.op
class InsertSliceOp(GraphOp):
    """`dest` with `dest[starts:stops:steps] = src`, the bounds read as `graph.slice` reads
    them; src must have that slice's shape (MLIR's `tensor.insert_slice`). Into zeros it is
    the transpose of `graph.slice`, for any steps and any run-time size of `dest`: each
    element goes back where the slice took it from.

        %r = graph.insert_slice %src, %dest {starts = array<i64: 0, 1>,
                                             stops = array<i64: 9223372036854775807, 5>,
                                             steps = array<i64: 1, 2>}
            : (tensor<4x2xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>

    Folds: an insert that covers all of dest in order is src. Transpose (vjp), as the op is
    linear in src and dest together: src gets the slice of the cotangent, dest the
    cotangent with zeros inserted over the slice.
    """

    name = "graph.insert_slice"
    src = Operand(AnyTensor)
    dest = Operand(AnyTensor)
    result = Result(AnyTensor)
    starts = IntsProp(doc="first index per axis")
    stops = IntsProp(doc="end index (exclusive) per axis")
    steps = IntsProp(doc="stride per axis; nonzero, negative walks backwards")
    traits = _TRAITS + (Linear(),)

    @classmethod
    def infer(cls, args, props):
        src, dest = args
        dtype = same_dtype(src, dest)
        want = slice_shape(dest, props)
        if src.rank != len(want):
            raise ShapeError(f"cannot insert {src} into the rank-{len(want)} slice "
                             f"{format_shape(want)} of {dest}")
        for i, (a, b) in enumerate(zip(src.shape, want)):
            try:
                unify_dim(a, b)
            except ValueError:
                raise ShapeError(f"cannot insert {src} into the slice {format_shape(want)} of "
                                 f"{dest}: dimension {i} differs") from None
        return [dest.with_dtype(dtype)]

    def evaluate(self, src, dest):
        out = np.array(dest)
        index = _index(self.props())
        if out[index].shape != src.shape:     # numpy would broadcast a size-1 src silently
            raise ValueError(f"cannot insert shape {src.shape} into a slice of shape "
                             f"{out[index].shape}")
        out[index] = src
        return out

    def _poison(self, src, dest) -> bool:
        """Folding declines a src that does not fit the slice: the error belongs to run
        time."""
        return np.array(dest)[_index(self.props())].shape != src.shape

    def fold_identity(self, operands):
        """insert_slice(src, dest) -> src when the slice is all of dest, in order."""
        p = self.props()
        for a, b, c, d in zip(p["starts"], p["stops"], p["steps"], self.dest.type.shape):
            whole = range(*slice(a, b, c).indices(d)) == range(d) if d is not None \
                else _covers_all(a, b, c) == 1
            if not whole:
                return None
        return same_value(self, self.src)

    def transpose(self, ad, cts):
        (ct,) = cts
        p = self.props()
        return [emit_typed(ad, SliceOp, ct, type=self.src.type, **p),
                emit_typed(ad, InsertSliceOp, ad.zeros_like(self.src), ct, type=self.dest.type,
                           **p)]
