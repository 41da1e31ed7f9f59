"""`tensor` ops and tensor constants -> buffers, views and copies.

- `tensor.empty`: nothing. Its sizes are remembered and an op writing into it gets a buffer
  of its own; it gets a buffer (undefined contents) only when something reads it whole.
- `tensor.dim`: the size: a constant, a size the buffer was made with, or `memory.dim`.
- `tensor.cast`: the same buffer; a `memory.subview` of the whole when the shapes differ.
- `tensor.extract`: `memory.load` (a splat constant's scalar).
- `tensor.insert`: `memory.store` into the destination (in place when safe, else a copy).
- `tensor.from_elements`, `tensor.splat`, `tensor.generate`: a buffer, then stores, a
  `linalg.fill`, a `linalg.generic` over it.
- `tensor.extract_slice`: a `memory.subview`, a view: its source lives as long as it (and
  is not overwritten while it is read, see `analysis`). A slice that drops unit dimensions
  is copied, as `memory.subview` keeps the rank; so is one with a negative stride (Python's
  `x[::-1]`), which a memory view cannot have: the elements are viewed in increasing order
  and copied reversed.
- `tensor.insert_slice`: `memory.copy` into a subview of the destination (in place when
  safe), reversed along the axes of a negative stride; nothing when the source was computed
  in that very window.
- `tensor.concat`: one destination, each input copied into its subview.
- `tensor.pad`: the destination filled with the padding value (`linalg.fill`, or a
  `linalg.generic` when the value depends on the position), the source copied into its
  interior.
- `tensor.collapse_shape`, `tensor.expand_shape`: a `memory.view` of the source's bytes with
  the new shape; when the source is not such bytes (an argument, a variable, a slice), a
  copy into fresh bytes first.
- `arith.constant dense<...> : tensor<...>`: a splat is its scalar for readers of elements
  and a `linalg.fill` where a buffer is needed; other constants one `memory.store` per
  element, up to `max-constant-elements`.

Copies that change the rank (a rank-reducing slice) are `linalg.generic`s whose maps put the
constant 0 on the unit dimensions; everything else here is a plain `memory.copy`.
"""

from __future__ import annotations

import numpy as np

from irkit.affine import AffineConst, AffineDim, AffineMap
from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.rewrite import constant_value
from irkit.types import I1, I64, FloatType
from irkit.dialects.linalg import PARALLEL, GenericOp, IndexOp, make_fill, make_generic
from irkit.dialects.memory import CopyOp, LoadOp, StoreOp, SubviewOp
from irkit.dialects.tensor import (
    CastOp, CollapseShapeOp, ConcatOp, DimOp, EmptyOp, ExpandShapeOp, ExtractOp,
    ExtractSliceOp, GenerateOp, InsertOp, InsertSliceOp, PadOp,
)
from irkit.dialects.memory import reassociation_lists
from irkit.passes.bufferization.analysis import init_use, tied_result
from irkit.passes.bufferization.buffers import buffer_type, is_tensor
from irkit.passes.bufferization.function import Bufferization, BufferizeError, bufferizes
from irkit.passes.bufferization.structured import dim_axis, inline_block, read_element


def _identity(n: int) -> AffineMap:
    return AffineMap(n, 0, tuple(AffineDim(i) for i in range(n)))


def _with_units(rank: int, dropped: list[int]) -> AffineMap:
    """The map from the loops of the reduced shape to the full window: 0 on `dropped`."""
    it = iter(range(rank - len(dropped)))
    return AffineMap(rank - len(dropped), 0, tuple(
        AffineConst(0) if i in dropped else AffineDim(next(it)) for i in range(rank)))


def _copy(bz: Bufferization, src: Value, dst: Value, src_map: AffineMap,
          dst_map: AffineMap) -> None:
    """`dst[dst_map(i)] = src[src_map(i)]` over the loops of the smaller shape."""
    make_generic(bz.b, [src], [dst], [src_map, dst_map], [PARALLEL] * src_map.num_dims,
                 lambda b, args: [args[0]])


def _window(bz: Bufferization, buf: Value, op) -> tuple[Value, list[int]]:
    """The `memory.subview` of `buf` a slice op's offsets, sizes and strides select, and the
    axes along which the op walks it backwards. The memory dialect's strides are not
    negative (MLIR's are): along an axis of stride -k the view holds the same elements in
    increasing order (offset `start - (n - 1) * k`, stride k), and the copy into or out of
    it reverses that axis (`_flipped_copy`). A window without such an axis is remembered
    (`windows`) for an insert that puts a result back where it came from."""
    offsets = [bz.new_mixed(m) for m in op.mixed_offsets()]
    sizes = [bz.new_mixed(m) for m in op.mixed_sizes()]
    strides = [bz.new_mixed(m) for m in op.mixed_strides()]
    flipped = [a for a, k in enumerate(strides) if isinstance(k, int) and k < 0]
    for a in flipped:
        offsets[a], strides[a] = _increasing(bz, offsets[a], sizes[a], strides[a])
    view = bz.b.insert(SubviewOp.create(buf, offsets, sizes, strides,
                                        location=bz.b.location)).results[0]
    bz.know_sizes(view, [bz.index_value(m) for m in op.mixed_sizes()])
    if not flipped:
        bz.windows[view] = (buf, op)
    return view, flipped


def _increasing(bz: Bufferization, offset, size, stride: int) -> tuple:
    """(offset, stride) of the elements `offset + i * stride`, i < size (stride < 0), in
    increasing order: the last one first (none: the offset itself), stride -stride."""
    step = -stride
    if isinstance(offset, int) and isinstance(size, int):
        return offset - max(size - 1, 0) * step, step
    s = bz.scalars()
    last = s.max(s.sub(bz.index_value(size), bz.index(1)), bz.index(0))
    return _mixed(s.sub(bz.index_value(offset), bz.mul(last, bz.index(step)))), step


def _flipped_copy(bz: Bufferization, src: Value, dst: Value, axes: list[int | None],
                  flipped: list[int]) -> None:
    """`dst[i] = src[j]` over `dst`'s shape, where src axis a is indexed by dst's loop
    `axes[a]` (None: index 0, a unit axis), counted from the end along the dst axes
    `flipped`: a `linalg.generic` over `dst` that reads `src` in its body, as an affine map
    cannot count from an end known only at run time."""
    n = dst.type.rank
    sizes = bz.sizes(dst)
    last = {d: bz.index(dst.type.shape[d] - 1) if dst.type.shape[d] is not None
            else bz.scalars().sub(sizes[d], bz.index(1)) for d in flipped}

    def body(b: Builder, args: list[Value]) -> list[Value]:
        s = bz.scalars(b)
        ivs = [b.create(IndexOp, dim=IntegerAttr(k, I64)).results[0] for k in range(n)]
        at = [bz.index(0) if d is None else s.sub(last[d], ivs[d]) if d in last else ivs[d]
              for d in axes]
        return [b.create(LoadOp, src, at).results[0]]

    make_generic(bz.b, [], [dst], [_identity(n)], [PARALLEL] * n, body)


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------


def _written_only(use) -> bool:
    """Whether the use of an empty tensor reads no element of it: an init an op writes
    into, or a `tensor.dim`."""
    return tied_result(use) is not None or isinstance(use.owner, DimOp)


@bufferizes("tensor.empty")
def empty(bz: Bufferization, op: EmptyOp) -> None:
    sizes = [bz.index_value(m) for m in op.mixed_sizes()]
    bz.empties[op.result] = sizes
    if not all(_written_only(u) for u in op.result.uses):
        bz.dest(op.result, sizes)       # read whole (returned, say): undefined contents


@bufferizes("tensor.dim")
def dim(bz: Bufferization, op: DimOp) -> None:
    bz.values[op.result] = bz.size_of(op.source, dim_axis(op))


@bufferizes("tensor.cast")
def cast(bz: Bufferization, op: CastOp) -> None:
    src = bz.buffer(op.source)
    t = buffer_type(op.result.type, op)
    if src.type.shape == t.shape:
        bz.define(op.result, src)
        return
    sizes = [d if d is not None else bz.size(src, a) for a, d in enumerate(t.shape)]
    view = bz.b.insert(SubviewOp.create(src, [0] * t.rank, sizes, [1] * t.rank,
                                        location=op.location)).results[0]
    bz.define(op.result, view)


# ---------------------------------------------------------------------------------------------
# Elements
# ---------------------------------------------------------------------------------------------


@bufferizes("tensor.extract")
def extract(bz: Bufferization, op: ExtractOp) -> None:
    bz.values[op.result] = read_element(bz, bz.b, op.tensor,
                                        [bz.values.get(i, i) for i in op.indices])


@bufferizes("tensor.insert")
def insert(bz: Bufferization, op: InsertOp) -> None:
    buf = bz.destination(op, init_use(op, op.result), op.result, reads=True)
    bz.b.create(StoreOp, bz.values.get(op.scalar, op.scalar), buf,
                [bz.values.get(i, i) for i in op.indices])


@bufferizes("tensor.from_elements")
def from_elements(bz: Bufferization, op: Operation) -> None:
    t = op.result.type
    buf = bz.dest(op.result, [bz.index(d) for d in t.shape])
    for k, idx in enumerate(np.ndindex(*t.shape)):
        e = op.elements[k]
        bz.b.create(StoreOp, bz.values.get(e, e), buf, [bz.index(i) for i in idx])


@bufferizes("tensor.splat")
def splat(bz: Bufferization, op: Operation) -> None:
    dyn = iter(op.dynamic_sizes)
    sizes = [bz.index(d) if d is not None else bz.values[next(dyn)]
             for d in op.result.type.shape]
    buf = bz.dest(op.result, sizes)
    make_fill(bz.b, bz.values.get(op.input, op.input), buf)


def _generate_into(bz: Bufferization, buf: Value, block) -> None:
    """Fill `buf` from a region giving each element from its indices (`tensor.generate`,
    `tensor.pad`): a `linalg.generic` over `buf` whose body is that region, the indices
    read with `linalg.index`."""
    n = buf.type.rank

    def body(b: Builder, args: list[Value]) -> list[Value]:
        ivs = [b.create(IndexOp, dim=IntegerAttr(k, I64)).results[0] for k in range(n)]
        mapping = dict(zip(block.args, ivs))
        term = inline_block(bz, block, b, mapping)
        return [mapping.get(v, v) for v in term.operands]

    make_generic(bz.b, [], [buf], [_identity(n)], [PARALLEL] * n, body)


@bufferizes("tensor.generate")
def generate(bz: Bufferization, op: GenerateOp) -> None:
    dyn = iter(op.dynamic_extents)
    sizes = [bz.index(d) if d is not None else bz.values[next(dyn)]
             for d in op.result.type.shape]
    _generate_into(bz, bz.dest(op.result, sizes), op.regions[0].blocks[0])


# ---------------------------------------------------------------------------------------------
# Slices
# ---------------------------------------------------------------------------------------------


@bufferizes("tensor.extract_slice")
def extract_slice(bz: Bufferization, op: ExtractSliceOp) -> None:
    src = bz.buffer(op.source)
    if op.is_identity_window() and op.source.type.shape == op.result.type.shape:
        bz.define(op.result, src)
        return
    view, flipped = _window(bz, src, op)
    dropped = op.dropped_dims()
    if not dropped and not flipped:
        bz.define(op.result, view)
        return
    kept = [s for i, s in enumerate(op.mixed_sizes()) if i not in dropped]
    out = bz.dest(op.result, [bz.index_value(m) for m in kept])
    if flipped:
        order = iter(range(out.type.rank))
        axes = [None if a in dropped else next(order) for a in range(view.type.rank)]
        _flipped_copy(bz, view, out, axes, [axes[a] for a in flipped if axes[a] is not None])
        return
    _copy(bz, view, out, _with_units(view.type.rank, dropped), _identity(out.type.rank))


@bufferizes("tensor.insert_slice")
def insert_slice(bz: Bufferization, op: InsertSliceOp) -> None:
    dest = bz.destination(op, init_use(op, op.result), op.result, reads=True)
    src = bz.buffer(op.source)
    viewed, slice_op = bz.windows.get(src, (None, None))
    if viewed is dest and slice_op.same_window(op) and not op.dropped_dims():
        return              # computed in this very window (analysis.window_update)
    window, flipped = _window(bz, dest, op)
    dropped = op.dropped_dims()
    if flipped:
        axes = [a for a in range(window.type.rank) if a not in dropped]
        _flipped_copy(bz, src, window, axes, flipped)
    elif dropped:
        _copy(bz, src, window, _identity(src.type.rank), _with_units(window.type.rank, dropped))
    else:
        bz.b.create(CopyOp, src, window)


@bufferizes("tensor.concat")
def concat(bz: Bufferization, op: ConcatOp) -> None:
    axis = op.dim.value
    t = op.result.type
    first = op.inputs[0]
    sizes = [bz.index(d) if d is not None else bz.size_of(first, a)
             for a, d in enumerate(t.shape)]
    if t.shape[axis] is None:
        total = bz.index(0)
        for v in op.inputs:
            total = bz.add(total, bz.size_of(v, axis))
        sizes[axis] = total
    out = bz.dest(op.result, sizes)
    offset = bz.index(0)
    for k, v in enumerate(op.inputs):
        part = [bz.size_of(v, a) for a in range(t.rank)]
        offsets = [offset if a == axis else bz.index(0) for a in range(t.rank)]
        window = bz.b.insert(SubviewOp.create(
            out, [_mixed(x) for x in offsets], [_mixed(x) for x in part], [1] * t.rank,
            location=op.location)).results[0]
        bz.b.create(CopyOp, bz.buffer(v), window)
        if k + 1 < len(op.inputs):
            offset = bz.add(offset, part[axis])


def _mixed(v: Value) -> int | Value:
    """An index value as a subview entry: static when it is a constant."""
    a = constant_value(v)
    return a.value if isinstance(a, IntegerAttr) else v


@bufferizes("tensor.pad")
def pad(bz: Bufferization, op: PadOp) -> None:
    src = bz.buffer(op.source)
    low = [bz.index_value(m) for m in op.mixed_low()]
    high = [bz.index_value(m) for m in op.mixed_high()]
    inner = bz.sizes(src)
    sizes = [bz.add(bz.add(lo, n), hi) for lo, n, hi in zip(low, inner, high)]
    out = bz.dest(op.result, sizes)
    block = op.regions[0].blocks[0]
    yielded = block.terminator.value
    if all(not _depends_on(o, block.args) for o in block.ops):
        # One value for every padding position: compute it here and fill.
        mapping: dict = {}
        inline_block(bz, block, bz.b, mapping)
        value = mapping.get(yielded, bz.values.get(yielded, yielded))
        make_fill(bz.b, value, out)
    else:
        _generate_into(bz, out, block)
    window = bz.b.insert(SubviewOp.create(out, [_mixed(x) for x in low],
                                          [_mixed(x) for x in inner], [1] * len(inner),
                                          location=op.location)).results[0]
    bz.b.create(CopyOp, src, window)


def _depends_on(op: Operation, args) -> bool:
    return any(v in args for o in op.walk() for v in o.operands)


# ---------------------------------------------------------------------------------------------
# Reshapes
# ---------------------------------------------------------------------------------------------


@bufferizes("tensor.collapse_shape", "tensor.expand_shape")
def reshape(bz: Bufferization, op: CollapseShapeOp | ExpandShapeOp) -> None:
    """A `memory.view` of the source's bytes with the result's shape. The bytes are the
    source's own when it was made as raw bytes (`Bufferization.dest` does so for a fresh
    value that is reshaped); else the source is copied into fresh bytes first, which the
    result then owns."""
    src_value = op.src
    src = bz.buffer(src_value)
    t = buffer_type(op.result.type, op)
    sizes = _reshaped_sizes(bz, op, src)
    raw = bz.raw.get(src)
    if raw is None:
        copy = bz.byte_backed(buffer_type(src_value.type, op), bz.sizes(src))
        bz.b.create(CopyOp, src, copy)
        raw = bz.raw[copy]
        bz.owned[op.result] = raw
    bz.define(op.result, bz.view(raw, t, sizes))


def _reshaped_sizes(bz: Bufferization, op: Operation, src: Value) -> list[Value]:
    """The result's sizes: a product of source sizes per group (collapse), or the output
    shape (expand)."""
    t = op.result.type
    if isinstance(op, ExpandShapeOp):
        return [bz.index_value(m) for m in op.mixed_output_shape()]
    sizes = []
    for a, group in enumerate(reassociation_lists(op.reassociation)):
        n = bz.index(1)
        for i in group:
            n = bz.mul(n, bz.size(src, i))
        sizes.append(bz.index(t.shape[a]) if t.shape[a] is not None else n)
    return sizes


# ---------------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------------


def _read_as_scalar(use) -> bool:
    """Whether this use of a splat constant can take its scalar instead of a buffer: an
    input of a `linalg.generic`, an element read, a size read."""
    owner = use.owner
    if isinstance(owner, GenericOp):
        return use.index < len(owner.inputs)
    return isinstance(owner, (ExtractOp, DimOp)) and use.index == 0


@bufferizes("arith.constant")
def constant(bz: Bufferization, op: Operation) -> None:
    result = op.result
    if not is_tensor(result.type):
        bz.b.insert(op.clone(bz.values))
        return
    attr = op.value
    t = result.type
    et = t.element
    sizes = [bz.index(d) for d in t.shape]
    if attr.is_splat:
        value = bz.constant(_python(attr.splat_value(), et), et)
        bz.splats[result] = value
        if not all(_read_as_scalar(u) for u in result.uses):
            make_fill(bz.b, value, bz.dest(result, sizes))
        return
    arr = np.asarray(attr.array)
    limit = bz.options.max_constant_elements
    if arr.size > limit:
        raise BufferizeError(f"cannot bufferize a constant of {arr.size} distinct elements: "
                             f"constants above max-constant-elements={limit} need a global "
                             "buffer op", op.location)
    out = bz.dest(result, sizes)
    for idx in np.ndindex(arr.shape):
        bz.b.create(StoreOp, bz.constant(_python(arr[idx], et), et), out,
                    [bz.index(i) for i in idx])


def _python(x, t):
    """A numpy element as the Python number an attribute of type `t` holds."""
    if t is I1:
        return int(bool(x))
    return float(x) if isinstance(t, FloatType) else int(x)

