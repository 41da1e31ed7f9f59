"""Structured ops on tensors -> the same ops on buffers, and the scalar ops inside bodies.

A linalg op on tensors becomes the very same op (its class, maps, iterator types,
attributes and a copy of its body) with memref operands and no results: each input's
buffer, and for each output the buffer its result is written into (`destination`: the
output planned for it, its init's buffer in place when safe, or a fresh one that first gets
a copy of the init when the body reads it; MLIR's one-shot bufferization of a
destination-passing op). An op that is already on buffers is copied as it is.

Two refinements:

- a splat constant read as an input of a `linalg.generic` is read as its scalar: the input
  becomes the scalar itself, its map `(d0, ...) -> ()` (structured ops take scalar
  operands), and the constant needs no buffer when nothing else reads it whole;
- the body is copied op by op, and the ops in it that read tensors from above or check
  something are bufferized too (`BODY_RULES`): `tensor.extract` of another tensor (a
  gather) is a `memory.load` of its buffer, `tensor.dim` the size of that buffer, and
  `graph.check` a `memory.check` into the function's status buffer.
"""

from __future__ import annotations

from typing import Callable

from irkit.affine import AffineMap
from irkit.builder import Builder
from irkit.ir import Block, Operation, Region, Value
from irkit.dialects.linalg import GenericOp, StructuredOp, maps_attr
from irkit.dialects.memory import LoadOp
from irkit.dialects.tensor import DimOp
from irkit.dialects.tensor.base import constant_index
from irkit.passes.bufferization.analysis import init_use
from irkit.passes.bufferization.buffers import is_tensor
from irkit.passes.bufferization.function import (
    Bufferization, BufferizeError, bufferizes, touches_tensors,
)


@bufferizes(StructuredOp)
def bufferize_structured(bz: Bufferization, op: StructuredOp) -> None:
    if not any(is_tensor(v.type) for v in op.operands):
        bz.b.insert(op.clone(bz.values))            # already on buffers
        return
    props = dict(op.properties)
    operands = []
    maps = op.indexing_maps_list()
    scalarized = False
    for k, v in enumerate(op.inputs):
        scalar = bz.splats.get(v) if is_tensor(v.type) else None
        if scalar is not None and isinstance(op, GenericOp):
            operands.append(scalar)
            maps[k] = AffineMap(maps[k].num_dims, 0, ())
            scalarized = True
        elif is_tensor(v.type):
            operands.append(bz.buffer(v))
        else:
            operands.append(bz.values.get(v, v))
    if scalarized:
        props["indexing_maps"] = maps_attr(maps)
    n_in = len(op.inputs)
    for j, r in enumerate(op.results):
        operands.append(bz.destination(op, init_use(op, r), r,
                                       reads=op.payload_uses(n_in + j)))
    new = Operation.create(op.name, operands, [], props, op.attributes, regions=1,
                           location=op.location)
    copy_body(bz, op.regions[0], new.regions[0])
    bz.b.insert(new)


# ---------------------------------------------------------------------------------------------
# Bodies
# ---------------------------------------------------------------------------------------------


class _BodyMapping(dict):
    """Old -> new values inside a region: `local` (which it writes, as clones record what
    they copy), falling back to the function's map for values from above. Clones look
    values up with `get`."""

    def __init__(self, outer: dict, local: dict) -> None:
        super().__init__()
        self.outer = outer
        self.local = local

    def __setitem__(self, key, value) -> None:
        self.local[key] = value

    def __getitem__(self, key):
        return self.local[key]

    def __contains__(self, key) -> bool:
        return key in self.local

    def get(self, key, default=None):
        found = self.local.get(key, _MISSING)
        return self.outer.get(key, default) if found is _MISSING else found


_MISSING = object()


#: op name -> rule(bufferization, op, builder, mapping) for ops inside bodies
BODY_RULES: dict[str, Callable] = {}


def body_rule(*names: str):
    def register(fn):
        for n in names:
            BODY_RULES[n] = fn
        return fn
    return register


def copy_body(bz: Bufferization, old: Region, new: Region) -> None:
    """Copy the blocks of `old` into the empty region `new`, bufferizing the ops that read
    tensors (`BODY_RULES`)."""
    for block in old.blocks:
        nb = Block([a.type for a in block.args], [a.location for a in block.args])
        new.add_block(nb)
        mapping = dict(zip(block.args, nb.args))
        term = inline_block(bz, block, Builder.at_end(nb), mapping)
        if term is not None:
            nb.append(term.clone(_BodyMapping(bz.values, mapping)))


def inline_block(bz: Bufferization, block: Block, b: Builder, mapping: dict) -> Operation | None:
    """Copy the ops of `block` but its terminator to `b`, `mapping` giving the new value of
    each old one (block arguments included; values from above fall back to the function's
    map), bufferizing the ops that read tensors; returns the terminator, not copied."""
    chain = _BodyMapping(bz.values, mapping)
    term = block.terminator
    for op in block.ops:
        if op is term:
            break
        b.location = op.location
        rule = BODY_RULES.get(op.name)
        if rule is not None:
            rule(bz, op, b, chain)
        elif touches_tensors(op):
            raise BufferizeError(f"cannot bufferize '{op.name}' inside the region of "
                                 f"'{op.parent_op.name}': no rule for it", op.location)
        else:
            b.insert(op.clone(chain))
    return term


def read_element(bz: Bufferization, b: Builder, tensor: Value, indices: list[Value]) -> Value:
    """The element of `tensor` at `indices` (new values), read at `b`: the scalar of a
    splat constant, else a `memory.load` of its buffer."""
    scalar = bz.splats.get(tensor)
    if scalar is not None:
        return scalar
    return b.create(LoadOp, bz.buffer(tensor), indices).results[0]


def dim_axis(op: DimOp) -> int:
    """The axis of a `tensor.dim`, which must be a constant here (`memory.dim` takes an
    attribute)."""
    k = constant_index(op.index)
    if k is None:
        raise BufferizeError("cannot bufferize 'tensor.dim' of a dimension that is not a "
                             "constant", op.location)
    return k


@body_rule("tensor.extract")
def _extract_in_body(bz: Bufferization, op: Operation, b: Builder, mapping: dict) -> None:
    mapping[op.result] = read_element(bz, b, op.tensor, [mapping.get(i, i) for i in op.indices])


@body_rule("tensor.dim")
def _dim_in_body(bz: Bufferization, op: Operation, b: Builder, mapping: dict) -> None:
    mapping[op.result] = bz.size_of(op.source, dim_axis(op))


@body_rule("graph.check")
def _check_in_body(bz: Bufferization, op: Operation, b: Builder, mapping: dict) -> None:
    bz.record_check(mapping.get(op.ok, op.ok), mapping.get(op.value, op.value),
                  mapping.get(op.bound, op.bound), op.message.value, op.location, b)
