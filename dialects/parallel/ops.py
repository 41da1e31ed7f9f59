"""The ops of the `parallel` dialect: the grid, the sharding annotation, the rank's index, and
the collectives (MLIR's `shard` dialect, spelled with this dialect's names).

Collectives take and give tensors, name their grid and the grid axes they run over (the
group: the ranks that differ only along those axes, MLIR's `grid_axes`), and have one
custom syntax:

    %r = parallel.all_gather %x on @g ["model"] {dim = 1 : i64}
        : tensor<4x2xf32> -> tensor<4x4xf32>

Their verifiers check the types against the grid: a gather multiplies `dim` by the group
size, a scatter divides it (a static size must divide), an all-to-all does both. In the
interpreter they call the rank's `Communicator` (see `comm.py`); a program with collectives
runs under `run_spmd`, which gives every rank one.
"""

from __future__ import annotations

import numpy as np

from irkit.ad_rules import Linear
from irkit.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr, OpaqueAttr, StringAttr
from irkit.interpreter import InterpreterError
from irkit.opdef import (
    AnyTensor, Dialect, FlatSymbolRef, Op, Operand, Prop, Pure, Result, Symbol, SymbolNameAttr,
    attr_constraint,
)
from irkit.types import I64, RankedTensorType, Type
from irkit.dialects.parallel.sharding import GridInfo, Sharding, ShardingSyntaxError

parallel = Dialect("parallel", "Grids of ranks, sharding annotations and collectives: "
                   "programs partitioned across ranks.")

_Ints = attr_constraint(DenseArrayAttr, "i64 dense array attribute",
                        lambda a: a.element_type is I64)
_Strs = attr_constraint(ArrayAttr, "array of string attributes",
                        lambda a: all(isinstance(x, StringAttr) for x in a.value))
_I64 = attr_constraint(IntegerAttr, "64-bit integer attribute", lambda a: a.type is I64)
_ShardingAttr = attr_constraint(OpaqueAttr, "#parallel.sharding attribute",
                                lambda a: a.body.startswith("parallel.sharding<"))


@parallel.op
class GridOp(Op):
    """A grid of ranks with named axes (MLIR's `shard.grid`), a module-level symbol.

        parallel.grid @g(shape = [2, 2], axes = ["data", "model"])
    """

    name = "parallel.grid"
    sym_name = Prop(SymbolNameAttr)
    shape = Prop(_Ints)
    axes = Prop(_Strs)
    traits = (Symbol(),)

    @classmethod
    def create(cls, name: str, shape, axes, location=None) -> "GridOp":
        return cls.build(result_types=[], sym_name=StringAttr(name),
                         shape=DenseArrayAttr(I64, [int(s) for s in shape]),
                         axes=ArrayAttr([StringAttr(a) for a in axes]), location=location)

    def info(self) -> GridInfo:
        return GridInfo(self.properties["sym_name"].value,
                        tuple(int(s) for s in self.properties["shape"]),
                        tuple(a.value for a in self.properties["axes"].value))

    def verify_(self):
        g = self.info()
        if len(g.shape) != len(g.axes):
            raise self.error(f"has {len(g.shape)} sizes but {len(g.axes)} axis names")
        if any(s < 1 for s in g.shape):
            raise self.error(f"axis sizes must be positive, got {list(g.shape)}")
        if len(set(g.axes)) != len(g.axes):
            raise self.error(f"axis names must be distinct, got {list(g.axes)}")

    @classmethod
    def parse(cls, p, num_results):
        name = p.parse_symbol_name()
        p.expect("(")
        p.expect("shape")
        p.expect("=")
        tk = p.i
        shape = p.parse_attribute()
        if not isinstance(shape, ArrayAttr) or \
                not all(isinstance(x, IntegerAttr) for x in shape.value):
            raise p.error("expected a list of axis sizes", tk)
        p.expect(",")
        p.expect("axes")
        p.expect("=")
        tk = p.i
        axes = p.parse_attribute()
        if not isinstance(axes, ArrayAttr) or \
                not all(isinstance(x, StringAttr) for x in axes.value):
            raise p.error("expected a list of axis names", tk)
        p.expect(")")
        op = object.__new__(cls)
        op._init([], [], {"sym_name": StringAttr(name),
                          "shape": DenseArrayAttr(I64, [x.value for x in shape.value]),
                          "axes": axes}, None, 0, (), None)
        return op

    def print(self, p):
        from irkit.attributes import format_symbol
        g = self.info()
        axes = ", ".join(StringAttr(a).format() for a in g.axes)
        p.write(f" {format_symbol(g.name)}(shape = [{', '.join(map(str, g.shape))}], "
                f"axes = [{axes}])")

    def interpret(self, interp, values):
        return []


def lookup_grid(op: Op, ref) -> "GridOp | None":
    """The `parallel.grid` that `ref` (a symbol reference or name) names from `op`."""
    from irkit.symbols import lookup_symbol
    g = lookup_symbol(op, ref)
    return g if isinstance(g, GridOp) else None


def sharding_error(op: Op, sharding: Sharding, t: Type) -> str | None:
    """Why `sharding` cannot place a value of type `t` seen from `op`, or None."""
    grid = lookup_grid(op, sharding.grid)
    if grid is None:
        return f"'@{sharding.grid}' does not name a parallel.grid"
    g = grid.info()
    if len(sharding.placements) != len(g.shape):
        return f"{sharding} has {len(sharding.placements)} placements for a grid of rank " \
               f"{len(g.shape)}"
    rank = t.rank if isinstance(t, RankedTensorType) else 0
    for p in sharding.placements:
        if getattr(p, "dim", 0) >= rank:
            return f"{sharding} splits dimension {p.dim} of {t}"
    from irkit.dialects.parallel.sharding import local_type
    try:
        local_type(g, sharding, t)
    except ValueError as e:
        return str(e)
    return None


@parallel.op
class ShardOp(Op):
    """Annotation: the value has this placement (MLIR's `shard.shard`). In an unpartitioned
    program it is the identity; `parallel-propagate` spreads it to the values around, and
    `parallel-partition` replaces it by the collectives that give its operand this sharding.

        %y = parallel.shard %x to #parallel.sharding<@g, [split(0)]> : tensor<8x4xf32>
    """

    name = "parallel.shard"
    operand = Operand(AnyTensor)
    sharding = Prop(_ShardingAttr)
    result = Result(AnyTensor)
    traits = (Pure(), Linear())

    def transpose(self, ad, cts):
        """The identity's: the cotangent passes through (its placement is propagated)."""
        return [cts[0]]

    def value(self) -> Sharding:
        return Sharding.of_attr(self.properties["sharding"])

    def verify_(self):
        try:
            s = self.value()
        except ShardingSyntaxError as e:
            raise self.error(str(e)) from None
        why = sharding_error(self, s, self.operand.type)
        if why is not None:
            raise self.error(why)
        if self.results[0].type is not self.operand.type:
            raise self.error("result type must be the operand's type")

    def infer_result_types(self):
        return [self.operand.type]

    @classmethod
    def parse(cls, p, num_results):
        r = p.parse_operand_ref()
        p.expect("to")
        tk = p.i
        s = p.parse_attribute()
        if not isinstance(s, OpaqueAttr) or not s.body.startswith("parallel.sharding<"):
            raise p.error("expected a #parallel.sharding attribute", tk)
        # `: T` after a dialect attribute parses as the attribute's type (MLIR's
        # `#foo.attr : T`): here it is the operand's type.
        if s.type is None:
            p.expect(":")
            t = p.parse_type()
        else:
            t = s.type
        op = object.__new__(cls)
        op._init([p.resolve(r, t)], [t], {"sharding": OpaqueAttr(s.body)}, None, 0, (), None)
        return op

    def print(self, p):
        p.write(f" {p.value(self.operand)} to {self.properties['sharding'].format()} : "
                f"{self.operand.type}")

    def evaluate(self, x):
        return x


# ---------------------------------------------------------------------------------------------
# Ops over a group of ranks
# ---------------------------------------------------------------------------------------------


def communicator(interp, op: Op):
    """The running rank's `Communicator`, or a located error outside `run_spmd`."""
    comm = interp.state.get("parallel.communicator")
    if comm is None:
        raise InterpreterError(f"'{op.name}' needs the ranks of its grid: run the function "
                               f"with irkit.dialects.parallel.run_spmd", op.location)
    grid = op.properties["grid"].root
    if comm.grid.name != grid:
        raise InterpreterError(f"'{op.name}' runs on grid '@{grid}', but the ranks run grid "
                               f"'@{comm.grid.name}'", op.location)
    return comm


class GroupOp(Op):
    """Base of the ops that name a grid and the axes of their group (see the module
    docstring for the syntax). Subclasses declare `operand` and/or `result` and their
    integer properties, and check types in `check_types`."""

    __slots__ = ()
    grid = Prop(FlatSymbolRef)
    axes = Prop(_Strs)

    def grid_info(self) -> GridInfo:
        return lookup_grid(self, self.properties["grid"]).info()

    def axis_indices(self) -> tuple:
        g = self.grid_info()
        return tuple(g.axis_index(a.value) for a in self.properties["axes"].value)

    def group_size(self) -> int:
        return self.grid_info().group_size(self.axis_indices())

    def int_prop(self, name: str) -> int:
        return self.properties[name].value

    def verify_(self):
        ref = self.properties["grid"]
        grid = lookup_grid(self, ref)
        if grid is None:
            raise self.error(f"'{ref.format()}' does not name a parallel.grid")
        g = grid.info()
        names = [a.value for a in self.properties["axes"].value]
        for a in names:
            if a not in g.axes:
                raise self.error(f"grid '{ref.format()}' has no axis \"{a}\" (its axes: "
                                 f"{', '.join(g.axes)})")
        if len(set(names)) != len(names):
            raise self.error(f"names an axis twice: {names}")
        self.check_types(g.group_size([g.axis_index(a) for a in names]))

    def check_types(self, k: int) -> None:
        """Types against the group size `k`; default: the result has the operand's type."""
        if self.results[0].type is not self.operands[0].type:
            raise self.error(f"result type {self.results[0].type} must be the operand's "
                             f"type {self.operands[0].type}")

    def _dim(self, name: str, t: Type) -> int:
        d = self.int_prop(name)
        rank = t.rank if isinstance(t, RankedTensorType) else 0
        if not 0 <= d < rank:
            raise self.error(f"{name} {d} is out of range for {t}")
        return d

    def _resized(self, t, dim: int, k: int, grow: bool, what: str):
        """`t` with `dim` multiplied (`grow`) or divided by `k`; `?` stays."""
        n = t.shape[dim]
        if n is None:
            return t
        if not grow and n % k:
            raise self.error(f"{what} size {n} of dimension {dim} is not divisible by the "
                             f"group size {k}")
        shape = list(t.shape)
        shape[dim] = n * k if grow else n // k
        return RankedTensorType(tuple(shape), t.element)

    def _expect(self, want, what: str = "result") -> None:
        got = self.results[0].type
        if got is not want:
            raise self.error(f"{what} type {got} does not match the expected {want}")

    @classmethod
    def parse(cls, p, num_results):
        spec_operands = len(cls.spec.operands)
        ref = p.parse_operand_ref() if spec_operands else None
        p.expect("on")
        grid = p.parse_attribute()
        tk = p.i
        axes = p.parse_attribute()
        if not isinstance(axes, ArrayAttr) or \
                not all(isinstance(a, StringAttr) for a in axes.value):
            raise p.error("expected a list of grid axis names", tk)
        attrs = p.parse_optional_attr_dict()
        props = {k: attrs.pop(k) for k in list(attrs) if k in cls.spec.prop_names}
        props.update(grid=grid, axes=axes)
        p.expect(":")
        first = p.parse_type()
        operands, results = [], []
        if ref is not None:
            operands = [p.resolve(ref, first)]
            if cls.spec.results:
                p.expect("->")
                results = [p.parse_type()]
        else:
            results = [first]
        op = object.__new__(cls)
        op._init(operands, results, props, attrs or None, 0, (), None)
        return op

    def print(self, p):
        if self.operands:
            p.write(f" {p.value(self.operands[0])}")
        axes = ", ".join(a.format() for a in self.properties["axes"].value)
        p.write(f" on {self.properties['grid'].format()} [{axes}]")
        p.attr_dict(self, elided=("grid", "axes"))
        types = [str(v.type) for v in self.operands] + [str(r.type) for r in self.results]
        p.write(" : " + " -> ".join(types))


@parallel.op
class AxisIndexOp(GroupOp):
    """This rank's index in its group along `axes` (MLIR's `shard.process_multi_index`,
    linearized, the first axis outermost): an offset from the rank, as a 0-d i64 tensor.

        %i = parallel.axis_index on @g ["model"] : tensor<i64>
    """

    name = "parallel.axis_index"
    result = Result(AnyTensor)
    traits = (Pure(),)

    def check_types(self, k):
        self._expect(RankedTensorType((), I64))

    def interpret(self, interp, values):
        comm = communicator(interp, self)
        return [np.asarray(comm.index_in_group(self.axis_indices()), dtype=np.int64)]


class _CollectiveOp(GroupOp):
    """One tensor in, one out. Its shape function (`infer`, on `props()`: the integer
    properties and the group size `k`) gives the result's sizes from the operand's, so
    that the runtime's concrete shapes (`irkit.runtime.shapes`) see through collectives
    and size a partitioned function's outputs from its inputs; `resizes` says which
    dimensions a subclass multiplies (True) or divides (False) by `k`."""

    __slots__ = ()
    operand = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = (Pure(),)

    @staticmethod
    def resizes(props: dict) -> tuple:
        """(dim, grow) pairs; none: the result has the operand's sizes."""
        return ()

    def props(self) -> dict:
        out = {n: a.value for n, a in self.properties.items() if isinstance(a, IntegerAttr)}
        out["k"] = self.group_size()
        return out

    @classmethod
    def infer(cls, args, props):
        """The result's spec: a concrete size resized by `k` (a ShapeError where a divided
        one does not divide), a symbolic one unknown (a rank's share has no name)."""
        from irkit.dialects.graph.base import ShapeError, TensorSpec
        x, k = args[0], props["k"]
        shape = list(x.shape)
        for d, grow in cls.resizes(props):
            n = shape[d]
            if not isinstance(n, (int, np.integer)):
                shape[d] = None
            elif not grow and n % k:
                raise ShapeError(f"size {n} of dimension {d} does not split into {k} blocks")
            else:
                shape[d] = int(n) * k if grow else int(n) // k
        return [TensorSpec(tuple(shape), x.dtype)]


@parallel.op
class AllReduceOp(_CollectiveOp):
    """The sum over the group, on every member (partial -> replicate).

        %r = parallel.all_reduce %x on @g ["data"] : tensor<4x8xf32> -> tensor<4x8xf32>
    """

    name = "parallel.all_reduce"

    def interpret(self, interp, values):
        return [communicator(interp, self).all_reduce(values[0], self.axis_indices())]


@parallel.op
class AllGatherOp(_CollectiveOp):
    """The members' blocks concatenated along `dim`, in group order (split -> replicate).

        %r = parallel.all_gather %x on @g ["model"] {dim = 1 : i64}
            : tensor<4x2xf32> -> tensor<4x4xf32>
    """

    name = "parallel.all_gather"
    dim = Prop(_I64)

    @staticmethod
    def resizes(props: dict) -> tuple:
        return ((props["dim"], True),)

    def check_types(self, k):
        t = self.operand.type
        self._expect(self._resized(t, self._dim("dim", t), k, True, "operand"))

    def interpret(self, interp, values):
        return [communicator(interp, self).all_gather(values[0], self.axis_indices(),
                                                      self.int_prop("dim"))]


@parallel.op
class ReduceScatterOp(_CollectiveOp):
    """The sum over the group, each member keeping its block of `dim` (partial -> split).

        %r = parallel.reduce_scatter %x on @g ["data"] {dim = 0 : i64}
            : tensor<8x4xf32> -> tensor<4x4xf32>
    """

    name = "parallel.reduce_scatter"
    dim = Prop(_I64)

    @staticmethod
    def resizes(props: dict) -> tuple:
        return ((props["dim"], False),)

    def check_types(self, k):
        t = self.operand.type
        self._expect(self._resized(t, self._dim("dim", t), k, False, "operand"))

    def interpret(self, interp, values):
        return [communicator(interp, self).reduce_scatter(values[0], self.axis_indices(),
                                                          self.int_prop("dim"))]


@parallel.op
class AllToAllOp(_CollectiveOp):
    """Re-split: each member cuts its block into group-size pieces along `split_dim`, sends
    piece j to member j, and concatenates what it gets along `concat_dim`
    (split(concat_dim) -> split(split_dim)).

        %r = parallel.all_to_all %x on @g ["model"] {concat_dim = 0 : i64, split_dim = 1 : i64}
            : tensor<2x4xf32> -> tensor<4x2xf32>
    """

    name = "parallel.all_to_all"
    split_dim = Prop(_I64)
    concat_dim = Prop(_I64)

    @staticmethod
    def resizes(props: dict) -> tuple:
        return ((props["split_dim"], False), (props["concat_dim"], True))

    def check_types(self, k):
        t = self.operand.type
        s, c = self._dim("split_dim", t), self._dim("concat_dim", t)
        if s == c:
            raise self.error("split_dim and concat_dim must differ")
        mid = self._resized(t, s, k, False, "operand")
        self._expect(self._resized(mid, c, k, True, "operand"))

    def interpret(self, interp, values):
        return [communicator(interp, self).all_to_all(
            values[0], self.axis_indices(), self.int_prop("split_dim"),
            self.int_prop("concat_dim"))]


@parallel.op
class AllSliceOp(_CollectiveOp):
    """This member's block of `dim`: no communication, an offset from the rank
    (replicate -> split; MLIR's `shard.all_slice`).

        %r = parallel.all_slice %x on @g ["model"] {dim = 1 : i64}
            : tensor<4x4xf32> -> tensor<4x2xf32>
    """

    name = "parallel.all_slice"
    dim = Prop(_I64)

    @staticmethod
    def resizes(props: dict) -> tuple:
        return ((props["dim"], False),)

    def check_types(self, k):
        t = self.operand.type
        self._expect(self._resized(t, self._dim("dim", t), k, False, "operand"))

    def interpret(self, interp, values):
        comm = communicator(interp, self)
        x, axes, dim = values[0], self.axis_indices(), self.int_prop("dim")
        k = comm.grid.group_size(axes)
        if x.shape[dim] % k:
            raise InterpreterError(f"'{self.name}' cannot cut size {x.shape[dim]} of "
                                   f"dimension {dim} into {k} blocks", self.location)
        return [np.ascontiguousarray(np.split(x, k, axis=dim)[comm.index_in_group(axes)])]


@parallel.op
class BroadcastOp(_CollectiveOp):
    """Member `root`'s value (its index in the group) on every member.

        %r = parallel.broadcast %x on @g ["data"] {root = 0 : i64}
            : tensor<4xf32> -> tensor<4xf32>
    """

    name = "parallel.broadcast"
    root = Prop(_I64)

    def check_types(self, k):
        super().check_types(k)
        if not 0 <= self.int_prop("root") < k:
            raise self.error(f"root {self.int_prop('root')} is not a member of a group of {k}")

    def interpret(self, interp, values):
        return [communicator(interp, self).broadcast(values[0], self.axis_indices(),
                                                     self.int_prop("root"))]


class _PointToPointOp(GroupOp):
    """send and recv: one axis, and the peer `offset` steps along it."""

    __slots__ = ()
    offset = Prop(_I64)

    def check_types(self, k):
        if len(self.properties["axes"].value) != 1:
            raise self.error("names exactly one grid axis")

    def peer(self, comm) -> int | None:
        return comm.peer(self.axis_indices()[0], self.int_prop("offset"))


@parallel.op
class SendOp(_PointToPointOp):
    """Send the value to the rank `offset` steps along the axis (pipeline stages); a rank
    whose peer is off the grid's edge sends nothing. It is matched by a `recv` with the
    opposite offset on the peer.

        parallel.send %x on @g ["pipe"] {offset = 1 : i64} : tensor<4xf32>
    """

    name = "parallel.send"
    operand = Operand(AnyTensor)

    def interpret(self, interp, values):
        comm = communicator(interp, self)
        dest = self.peer(comm)
        if dest is not None:
            comm.send(values[0], dest)
        return []


@parallel.op
class RecvOp(_PointToPointOp):
    """Receive the value the rank `offset` steps along the axis sent; zeros where that rank
    is off the grid's edge (the first stage of a pipeline), which needs a static shape. A
    `?` size is the sender's (a pipeline's micro-batch of a batch of any size).

        %x = parallel.recv on @g ["pipe"] {offset = -1 : i64} : tensor<4xf32>
    """

    name = "parallel.recv"
    result = Result(AnyTensor)

    def check_types(self, k):
        super().check_types(k)
        if not isinstance(self.results[0].type, RankedTensorType):
            raise self.error(f"receives a ranked tensor, got {self.results[0].type}")

    def interpret(self, interp, values):
        from irkit.attributes import numpy_dtype
        comm = communicator(interp, self)
        source = self.peer(comm)
        t = self.results[0].type
        if source is None:
            if not t.has_static_shape:
                raise InterpreterError(f"'{self.name}' has no sender on this rank and no "
                                       f"static shape for its zeros: {t}", self.location)
            return [np.zeros(t.shape, dtype=numpy_dtype(t.element))]
        x = comm.recv(source)
        if x.ndim != t.rank or any(d is not None and d != n for d, n in zip(t.shape, x.shape)):
            raise InterpreterError(f"'{self.name}' received shape {list(x.shape)}, expected "
                                   f"{t}", self.location)
        return [x]
