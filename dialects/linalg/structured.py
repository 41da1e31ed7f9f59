"""The structured-op interface (MLIR's `LinalgStructuredInterface`) and what its ops share.

A structured op is a loop nest written as data: an iteration space of `n` loops, each
`parallel` or `reduction`; one affine map per operand from the loop indices `(d0, ...,
d{n-1})` to the operand's indices; and a scalar body, one block whose arguments are one
element per operand and whose `linalg.yield` gives the new value of each output element.
`linalg.generic` spells all of it out; a named op (`linalg.matmul`, `linalg.fill`, ...)
derives its maps and iterators from its operand types and attributes and builds its body
itself, but carries the same region, so every consumer reads any linalg op the same way.

The interface. Every linalg op except `linalg.yield` and `linalg.index` is a
`StructuredOp`; passes code against these names only (all methods of the op):

- `inputs` / `outputs`: lists of Values, the operands read and the operands written, in
  destination-passing style: on tensors the op has one result per output (the output's new
  value; value semantics), on memrefs no result (the outputs are written in place);
- `structured_operands()`: `inputs + outputs`, the order maps and body arguments follow;
- `indexing_maps_list() -> list[AffineMap]`: one map per operand, inputs then outputs (a
  scalar operand's map has no results); `iterator_types_list() -> list[str]`: `"parallel"`
  or `"reduction"` per loop; `num_loops`;
- `body`: the payload block (one argument per operand: its element type, or the operand's
  own type for a scalar), ended by a `linalg.yield` of one value per output;
- `loop_bound_sources() -> list[(operand index, dim index)]`: which operand dimension gives
  each loop its extent: the first map result, over the operands in order, that is the bare
  loop index (MLIR's `getShapesToLoopsMap`); None when a loop has none (not invertible);
- `loop_ranges(shape_of=None) -> list`: the extent of each loop, `shape_of(operand index,
  dim index)` of its source; without `shape_of`, the static size from the operand's type
  (None where it is `?`). A lowering passes a function that materializes `memory.dim` /
  `tensor.dim` values;
- `generalize(builder) -> GenericOp`: the same computation as a `linalg.generic` inserted at
  `builder` (a named op's maps, iterators and a copy of its body; see `generic.py`);
- `has_tensor_semantics` / `has_buffer_semantics`, `memory_effects()`;
- `interpret(interp, values)`: the reference semantics (`semantics.py`).

`generalize` and `interpret` are defined by the two roots of the concrete ops,
`GenericOp` (`generic.py`) and `NamedOp` (`named.py`), which sit above the modules they
call: the parts of this dialect import each other in one direction only (structured <
semantics < generic < named < the op families), as the import contracts require.

Effects. On tensors a structured op only computes its results; on memrefs it reads its
inputs and writes its outputs (reading an output too when the body uses its old value), as
`memory_effects()` lists. It does not carry the core's class-level `Pure` trait, which cannot
depend on the operand types, so trait-driven passes (DCE, CSE) keep even unused tensor ops.

This module also holds the custom-syntax pieces the ops share: `ins(...)` / `outs(...)`
groups, integer lists (`permutation = [1, 0]`), region argument lists, result arrows.
"""

from __future__ import annotations

from irkit.affine import AffineBinary, AffineConst, AffineDim, AffineExpr, AffineMap
from irkit.attributes import AffineMapAttr, ArrayAttr, DenseArrayAttr, OpaqueAttr
from irkit.ir import Block, Region, Value
from irkit.opdef import (
    AnyRankedTensor, Constraint, Op, RegionDef, Trait, VarResult, attr_constraint,
)
from irkit.types import (
    MemRefType, RankedTensorType, ShapedType, Type, UnrankedMemRefType,
    UnrankedTensorType,
)

# ---------------------------------------------------------------------------------------------
# Iterator types and indexing maps as attributes
# ---------------------------------------------------------------------------------------------

PARALLEL = "parallel"
REDUCTION = "reduction"
#: `#linalg.iterator_type<...>` as the generic form stores it, by name, and back
ITERATOR_ATTRS = {k: OpaqueAttr(f"linalg.iterator_type<{k}>") for k in (PARALLEL, REDUCTION)}
_ITERATOR_NAMES = {a: k for k, a in ITERATOR_ATTRS.items()}


def iterator_types_attr(names) -> ArrayAttr:
    """`["parallel", "reduction"]` as the property `iterator_types` holds it."""
    return ArrayAttr([ITERATOR_ATTRS[n] for n in names])


def iterator_names(attr: ArrayAttr) -> list[str]:
    return [_ITERATOR_NAMES[a] for a in attr]


def maps_attr(maps) -> ArrayAttr:
    """An `ArrayAttr` of affine maps (`AffineMap`s or `AffineMapAttr`s)."""
    return ArrayAttr([m if isinstance(m, AffineMapAttr) else AffineMapAttr(m) for m in maps])


IndexingMaps = attr_constraint(ArrayAttr, "AffineMap array attribute",
                               lambda a: all(isinstance(m, AffineMapAttr) for m in a))
IteratorTypes = attr_constraint(
    ArrayAttr, "Iterator type should be an enum.",
    lambda a: all(isinstance(x, OpaqueAttr) and x in _ITERATOR_NAMES for x in a))
#: what `permutation` / `dimensions` hold (`array<i64: ...>`)
#: outputs: ranked tensors (value semantics) or memrefs (written in place)
Destination = Constraint(lambda t: isinstance(t, (RankedTensorType, MemRefType)),
                         "ranked tensor or memref")


def scalar_type(t: Type) -> Type:
    """The type of a body argument for an operand of type `t`: its element type, or `t`
    itself for a scalar operand."""
    return t.element if isinstance(t, ShapedType) else t


class LoopIndex(Trait):
    """Reads the loop indices of the enclosing structured op (`linalg.index`): the reference
    semantics hands it the indices of the point, or the index grid of the points, it runs
    the body for, so it takes part in a vectorized body like an elementwise op."""


def dim(position: int) -> AffineDim:
    return AffineDim(position)


def affine_map(num_dims: int, results) -> AffineMap:
    return AffineMap(num_dims, 0, tuple(results))


# ---------------------------------------------------------------------------------------------
# The interface
# ---------------------------------------------------------------------------------------------


class StructuredOp(Op):
    """Base of every linalg op with an iteration space (see the module docstring).

    Subclasses declare their operands (`inputs` and `outputs`, or the names MLIR uses with
    `inputs`/`outputs` properties) and implement `indexing_maps_list` and
    `iterator_types_list`; the results (one per tensor output), the body region, the
    verifier, the effects and the semantics are shared.
    """

    __slots__ = ()
    result_tensors = VarResult(AnyRankedTensor, doc="one per tensor output: its new value")
    region = RegionDef(doc="the payload: one scalar argument per operand", single_block=True)

    # ----- the interface ------------------------------------------------------------------

    def structured_operands(self) -> list[Value]:
        return [*self.inputs, *self.outputs]

    def indexing_maps_list(self) -> list[AffineMap]:
        raise NotImplementedError

    def iterator_types_list(self) -> list[str]:
        raise NotImplementedError

    @property
    def num_loops(self) -> int:
        return len(self.iterator_types_list())

    @property
    def body(self) -> Block:
        return self.regions[0].blocks[0]

    def loop_bound_sources(self) -> list[tuple[int, int]] | None:
        """(operand index, dim index) per loop: the first map result that is that loop bare.
        None when some loop appears bare in no map (its extent cannot be known)."""
        found: list = [None] * self.num_loops
        for i, m in enumerate(self.indexing_maps_list()):
            for j, e in enumerate(m.results):
                if isinstance(e, AffineDim) and e.position < len(found) \
                        and found[e.position] is None:
                    found[e.position] = (i, j)
        return None if None in found else found

    def loop_ranges(self, shape_of=None) -> list:
        """The extent of each loop: `shape_of(operand index, dim index)` of its source
        operand dimension (by default the static size, None for `?`)."""
        sources = self.loop_bound_sources()
        if sources is None:
            raise ValueError(f"'{self.name}': the loop ranges cannot be derived from the "
                             "operand shapes (indexing maps are not invertible)")
        if shape_of is None:
            operands = self.structured_operands()

            def shape_of(i, d):
                return operands[i].type.shape[d]
        return [shape_of(i, d) for i, d in sources]

    @property
    def has_tensor_semantics(self) -> bool:
        """No memref operand (tensors and scalars only): the op returns new values."""
        return not any(isinstance(v.type, MemRefType) for v in self.structured_operands())

    @property
    def has_buffer_semantics(self) -> bool:
        """No tensor operand: the op writes its memref outputs in place."""
        return not any(isinstance(v.type, (RankedTensorType, UnrankedTensorType))
                       for v in self.structured_operands())

    def payload_uses(self, operand_index: int) -> bool:
        """Whether the body reads the value of operand `operand_index` (an output's old
        value is dead when it does not)."""
        blocks = self.regions[0].blocks
        return bool(blocks) and operand_index < len(blocks[0].args) \
            and blocks[0].args[operand_index].has_uses()

    def memory_effects(self) -> list[tuple[str, Value]]:
        # Imported here: loading this dialect loads neither `memory` nor numpy.
        from irkit.dialects.memory import READ, WRITE
        effects = [(READ, v) for v in self.inputs if isinstance(v.type, MemRefType)]
        n_in = len(self.inputs)
        for k, v in enumerate(self.outputs):
            if isinstance(v.type, MemRefType):
                if self.payload_uses(n_in + k):
                    effects.append((READ, v))
                effects.append((WRITE, v))
        return effects

    def infer_result_types(self) -> list[Type]:
        return [v.type for v in self.outputs if isinstance(v.type, RankedTensorType)]

    # ----- verification -------------------------------------------------------------------

    def verify_(self):
        self.verify_structured()

    def verify_structured(self) -> None:
        """MLIR's structured-op rules, in the order its messages are most helpful: maps vs
        operands, loops and ranks; invertible maps; static shapes vs loop ranges; the body's
        arguments; the results."""
        operands = self.structured_operands()
        maps = self.indexing_maps_list()
        if len(maps) != len(operands):
            raise self.error(f"expected the number of indexing_map ({len(maps)}) to be equal "
                             f"to the number of input/output operands ({len(operands)})")
        shaped = [v.type for v in operands if isinstance(v.type, ShapedType)]
        if any(isinstance(t, (MemRefType, UnrankedMemRefType)) for t in shaped) and \
                any(isinstance(t, (RankedTensorType, UnrankedTensorType)) for t in shaped):
            raise self.error("expected to have pure tensor or buffer semantics")
        loops = self.num_loops
        for i, (m, v) in enumerate(zip(maps, operands)):
            if m.num_symbols:
                raise self.error(f"unexpected symbols in indexing_map #{i}")
            if m.num_dims != loops:
                raise self.error(f"expected indexing_map #{i} to have {loops} dim(s) to match "
                                 "the number of loops")
            rank = _rank(v.type)
            if rank is None:
                raise self.error(f"expected operand #{i} to be ranked, got '{v.type}'")
            if rank != len(m.results):
                raise self.error(f"expected operand #{i} rank ({rank}) to match the result "
                                 f"rank of indexing_map ({len(m.results)})")
        if self.loop_bound_sources() is None:
            concat = AffineMap(loops, 0, tuple(e for m in maps for e in m.results))
            raise self.error(f"invalid indexing maps are non-invertible: ({concat})")
        self._verify_static_shapes(maps, operands)
        self._verify_body(operands)
        self._verify_results(operands)

    def _verify_static_shapes(self, maps, operands) -> None:
        ranges = self.loop_ranges()
        for i, (m, v) in enumerate(zip(maps, operands)):
            shape = v.type.shape if isinstance(v.type, ShapedType) else ()
            for j, e in enumerate(m.results):
                size = shape[j]
                if size is None:
                    continue
                if isinstance(e, AffineDim):
                    want = ranges[e.position]
                    if want is not None and want != size:
                        raise self.error(f"inferred input/output operand #{i} has shape's "
                                         f"dimension #{j} to be {want}, but found {size}")
                    continue
                used = dims_of(e)
                if not _is_monotone(e) or any(ranges[d] is None or ranges[d] == 0
                                              for d in used):
                    continue
                first = [0] * len(ranges)
                last = [0 if r is None else r - 1 for r in ranges]
                need = max(e.evaluate(first, ()), e.evaluate(last, ())) + 1
                if need > size:
                    raise self.error(f"inferred input/output operand #{i} has shape's "
                                     f"dimension #{j} to be greater than or equal to {need}, "
                                     f"but found {size}")

    def _verify_body(self, operands) -> None:
        blocks = self.regions[0].blocks
        if len(blocks) != 1:
            raise self.error("expects to have 1 region with 1 block")
        args = blocks[0].args
        if len(args) != len(operands):
            raise self.error("expected as many non-induction variable region arguments as the "
                             "number of input/output operands")
        for i, (a, v) in enumerate(zip(args, operands)):
            want = scalar_type(v.type)
            if a.type is not want and a.type is not v.type:
                raise self.error(f"expected type of bb argument #{i} ('{a.type}') to match "
                                 f"element or self type of the corresponding operand "
                                 f"('{want}')")

    def _verify_results(self, operands) -> None:
        n_in = len(self.inputs)
        tensors = [(n_in + k, v) for k, v in enumerate(self.outputs)
                   if isinstance(v.type, RankedTensorType)]
        if len(self.results) != len(tensors):
            raise self.error(f"expected the number of tensor results ({len(self.results)}) to "
                             f"be equal to the number of output tensors ({len(tensors)})")
        for (index, v), r in zip(tensors, self.results):
            if v.type is not r.type:
                raise self.error(f"expected type of operand #{index} ('{v.type}') to match "
                                 f"type of corresponding result ('{r.type}')")


def _rank(t: Type) -> int | None:
    if isinstance(t, (UnrankedTensorType, UnrankedMemRefType)):
        return None
    return t.rank if isinstance(t, ShapedType) else 0


def dims_of(e: AffineExpr) -> set[int]:
    if isinstance(e, AffineDim):
        return {e.position}
    if isinstance(e, AffineBinary):
        return dims_of(e.lhs) | dims_of(e.rhs)
    return set()


def _is_monotone(e: AffineExpr) -> bool:
    """Sums of loop indices times non-negative constants (convolution windows): the largest
    index is then reached at the last point of the loop box."""
    if isinstance(e, AffineDim):
        return True
    if isinstance(e, AffineConst):
        return e.value >= 0
    if isinstance(e, AffineBinary):
        if e.kind == "add":
            return _is_monotone(e.lhs) and _is_monotone(e.rhs)
        if e.kind == "mul":
            return (_is_monotone(e.lhs) and isinstance(e.rhs, AffineConst)
                    and e.rhs.value >= 0)
    return False


# ---------------------------------------------------------------------------------------------
# Custom-syntax pieces
# ---------------------------------------------------------------------------------------------


def parse_operand_group(p, keyword: str) -> list[Value]:
    """`keyword(%a, %b : T, U)`, or nothing when the keyword is absent."""
    if not p.accept(keyword):
        return []
    p.expect("(")
    if p.accept(")"):
        return []
    refs = p.parse_operand_refs()
    p.expect(":")
    tk = p.i
    types = p.parse_type_list()
    if len(types) != len(refs):
        raise p.error(f"expected {len(refs)} types in '{keyword}', found {len(types)}", tk)
    p.expect(")")
    return [p.resolve(r, t) for r, t in zip(refs, types)]


def print_operand_group(p, keyword: str, values) -> None:
    if values:
        p.write(f" {keyword}({', '.join(p.value(v) for v in values)} : "
                f"{', '.join(str(v.type) for v in values)})")


def i64_list_text(attr: DenseArrayAttr) -> str:
    return f"[{', '.join(map(str, attr.value))}]"


def print_region_with_arguments(p, region: Region) -> None:
    """MLIR's layout for map / reduce bodies: the arguments on a line of their own, then the
    region, both one level deeper than the op."""
    args = region.blocks[0].args if region.blocks else []
    p.indent += 1
    args = ", ".join(f"{p.value(a)}: {a.type}" for a in args)
    p.write(f"\n{'  ' * p.indent}({args}) ")
    p.region(region, print_entry_args=False)
    p.indent -= 1


def parse_result_arrow(p) -> list[Type]:
    """`-> T` or `-> (T, U)`, or no types when no arrow follows."""
    return p.parse_function_result_types() if p.accept("->") else []


def print_result_arrow(p, types) -> None:
    if len(types) == 1:
        p.write(f" -> {types[0]}")
    elif types:
        p.write(f" -> ({', '.join(map(str, types))})")


def split_attributes(cls, attrs: dict) -> tuple[dict, dict]:
    """An attribute dict of the custom form split into the op's properties and the rest."""
    props = {k: v for k, v in attrs.items() if k in cls.spec.prop_names}
    return props, {k: v for k, v in attrs.items() if k not in props}
