"""linalg-fuse-elementwise-ops: producer-consumer fusion of structured ops on tensors (MLIR's
ElementwiseOpFusion), so that chains of elementwise kernels become one kernel and elementwise
producers run inside the reductions that read them (softmax's `exp` inside its sum).

The rule. A consumer `C` (a `linalg.generic`, or a named op other than the contractions,
convolutions and poolings) reads, through the projected-permutation map `c` of an input, a
result of a producer `P` whose loops are all parallel and whose map `o` for that result is a
permutation. At a point `x` of `C`'s loops, `C` reads the element `c(x)`, which `P` computed
at its point `t(x) = o^-1(c(x))`, from the elements `m_k(t(x))` of its operands (`m_k` their
maps) and the loop indices `t(x)`. So one structured op over `C`'s loops that reads `P`'s
operands through `m_k o o^-1 o c`, runs `P`'s body (its `linalg.index k` now reading the
loop of `C` that is `t`'s result `k`: a bare loop, `t` being a projected permutation) and
hands the value `P` yields to `C`'s body in place of the argument it read computes, at every
point, exactly what `C` did: the fused op. It does not
matter that `C` may reduce: `P` has no reduction, its value at a point depends on nothing
but the point, so computing it where it is read, in whatever order `C` visits its points,
gives the same value. A body is copied op for op, each with its types and flags, and the
values that flowed through memory are the same scalars in registers, so the fused op rounds
exactly as the two did (no widening or `truncf` is added or removed).

When a result of `P` is also used elsewhere, the fused op computes it for those users too,
as an extra output (its map `o_k o o^-1 o c`) ahead of `C`'s outputs, and the other uses read
it there. That is only done when `c` is a permutation, so `C`'s points are `P`'s points one
for one and nothing is computed twice, and when every other use comes after `C` (where the
fused op is placed); otherwise `P` would have to stay as well and its work would be done
twice, so there is no fusion. The extra output's map may use `C`'s reduction loops: each
point stores its own element (the loop lowering stores such an output every iteration, the
interpreter scatters it at every reduction step). A producer read through a broadcasting map
(`(d0, d1) -> (d1)`, or a matmul reading its operand through `(i, j, k) -> (i, k)`) with no
other user runs once per consumer point, so its work is repeated along every loop the map
leaves out (N times for a matmul's left operand). MLIR fuses it anyway; here that is done only
when its body holds at most `max-recompute-ops` ops (default 2: a transpose, a cast, a bias
add), where the repeated work costs less than the buffer written and read back.

Named ops take part through the structured-op interface (their maps, iterators and body are
what `generalize` copies), so an op that fuses with nothing keeps its name. A `linalg.fill`
read as an input becomes its scalar in the body; one that initializes an output (a reduction's
start value) is not an input and stays. A transpose is a producer like any other (its body
yields its input), so a transpose feeding a generic becomes a permuted indexing map there.

Option `max-body-ops` (default 64): no fusion whose body would hold more ops than this (the
producer's and the consumer's ops, nested ones included, before dead ones are removed), so a
long chain becomes a few kernels of bounded size instead of one huge body.
"""

from __future__ import annotations

from dataclasses import dataclass

from irkit.affine import AffineDim, AffineMap
from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.ir import Block, Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.passes import fusion_report
from irkit.passes.fusion_cost import Binding
from irkit.rewrite import is_pure, is_trivially_dead
from irkit.types import I64, ShapedType
from irkit.dialects.linalg import (
    PARALLEL, BatchMatmulOp, Conv2DNchwFchwOp, GenericOp, IndexOp, MatmulOp, PoolingNchwMaxOp,
    PoolingNchwSumOp, StructuredOp, YieldOp, iterator_types_attr, maps_attr,
)

#: named ops that keep their own kernel on both sides of a fusion (another pass fuses their
#: epilogues; as generics they would lose what their names tell later passes)
_KEEP_NAMED = (MatmulOp, BatchMatmulOp, Conv2DNchwFchwOp, PoolingNchwMaxOp, PoolingNchwSumOp)


def _takes_part(op: Operation) -> bool:
    """A structured op on tensors that may be a producer or a consumer here."""
    return isinstance(op, StructuredOp) and not isinstance(op, _KEEP_NAMED) \
        and op.has_tensor_semantics and bool(op.regions[0].blocks)


def _body_size(op: StructuredOp) -> int:
    """The ops of `op`'s body, nested ones included, but not its `linalg.yield`."""
    return sum(1 for o in op.body.ops for _ in o.walk()) - 1


def _covers(maps: list[AffineMap], num_loops: int) -> bool:
    """Whether every loop is some map's bare result, so its extent is an operand's size."""
    bare = {e.position for m in maps for e in m.results if isinstance(e, AffineDim)}
    return bare >= set(range(num_loops))


def _after_in_block(use_owner: Operation, anchor: Operation) -> bool:
    """Whether `use_owner` is, or is nested in, an op after `anchor` in `anchor`'s block."""
    op = use_owner
    while op is not None and op.parent is not anchor.parent:
        op = op.parent_op
    return op is not None and op is not anchor and anchor.is_before_in_block(op)


# ---------------------------------------------------------------------------------------------
# Which fusion
# ---------------------------------------------------------------------------------------------


@dataclass
class _Plan:
    """The fusion of `producer`'s result `result` into `consumer`'s inputs `fused` (all read
    through one map). `to_producer` takes the consumer's loops to the producer's (`o^-1 o
    c`); `preserved`: the producer's results the fused op must also output."""

    consumer: StructuredOp
    producer: StructuredOp
    result: int
    fused: list[int]
    to_producer: AffineMap
    preserved: list[int]


def _plan(consumer: StructuredOp, index: int, max_body_ops: int,
          max_recompute_ops: int = 2) -> _Plan | None:
    """The fusion into `consumer`'s input `index`, or None when the rule does not allow it."""
    value = consumer.inputs[index]
    producer = value.defining_op(StructuredOp)
    if producer is None or not _takes_part(producer) or producer.parent is not consumer.parent:
        return None
    if any(it != PARALLEL for it in producer.iterator_types_list()):
        return None
    if any(not is_pure(o) for o in producer.body.ops if not isinstance(o, YieldOp)):
        return None                     # run once per consumer point, an effect would repeat
    if any(r in consumer.outputs for r in producer.results):
        return None
    if _body_size(producer) + _body_size(consumer) > max_body_ops:
        return None
    n_in = len(producer.inputs)
    out_map = producer.indexing_maps_list()[n_in + value.index]
    cmaps = consumer.indexing_maps_list()
    read = cmaps[index]
    if not out_map.is_permutation() or not read.is_projected_permutation():
        return None
    if not read.is_permutation() and _body_size(producer) > max_recompute_ops:
        return None                     # repeated along the loops `read` leaves out
    preserved = []
    for k, r in enumerate(producer.results):
        others = [u.owner for u in r.uses if u.owner is not consumer]
        if not others:
            continue
        if not read.is_permutation() or not all(_after_in_block(o, consumer) for o in others):
            return None
        preserved.append(k)
    fused = [j for j, (v, m) in enumerate(zip(consumer.inputs, cmaps))
             if v is value and m == read]
    to_producer = out_map.inverse_permutation().compose(read)
    return _Plan(consumer, producer, value.index, fused, to_producer, preserved)


def _operands(plan: _Plan) -> tuple[list, list]:
    """The fused op's inputs and outputs, each (value, map, the body argument it replaces):
    MLIR's order, the producer's operands where the fused input was, its preserved outputs
    ahead of the consumer's. A producer output whose old value its body reads (an init) is
    read as an input, through its map like the others."""
    c, p = plan.consumer, plan.producer
    cmaps, pmaps = c.indexing_maps_list(), p.indexing_maps_list()
    cargs, pargs = c.body.args, p.body.args
    n_c, n_p = len(c.inputs), len(p.inputs)

    def through(m: AffineMap) -> AffineMap:
        return m.compose(plan.to_producer)

    from_producer = [(v, through(m), a) for v, m, a in zip(p.inputs, pmaps, pargs)]
    from_producer += [(v, through(pmaps[n_p + k]), pargs[n_p + k])
                      for k, v in enumerate(p.outputs)
                      if k not in plan.preserved and pargs[n_p + k].has_uses()]
    first = plan.fused[0]
    kept = [(j, (v, m, a)) for j, (v, m, a) in enumerate(zip(c.inputs, cmaps, cargs))
            if j not in plan.fused]
    inputs = [x for j, x in kept if j < first] + from_producer + [x for j, x in kept
                                                                  if j > first]
    outputs = [(p.outputs[k], through(pmaps[n_p + k]), pargs[n_p + k]) for k in plan.preserved]
    outputs += [(v, cmaps[n_c + k], cargs[n_c + k]) for k, v in enumerate(c.outputs)]
    return inputs, outputs


# ---------------------------------------------------------------------------------------------
# Building the fused op
# ---------------------------------------------------------------------------------------------


def _generic(inputs: list, outputs: list, iterators: list[str], location) -> GenericOp:
    """A `linalg.generic` on (value, map, ...) operands with an empty region."""
    return GenericOp.build([x[0] for x in inputs], [x[0] for x in outputs],
                           result_types=[x[0].type for x in outputs], location=location,
                           regions=1, indexing_maps=maps_attr([x[1] for x in inputs + outputs]),
                           iterator_types=iterator_types_attr(iterators))


def _fuse(plan: _Plan, inputs: list, outputs: list) -> GenericOp:
    """Build the fused op before the consumer, move the uses over, erase what is dead."""
    c, p = plan.consumer, plan.producer
    op = _generic(inputs, outputs, c.iterator_types_list(), c.location)
    operands = inputs + outputs
    block = Block([a.type for _, _, a in operands])
    op.regions[0].add_block(block)
    Builder.before(c).insert(op)
    mapping: dict[Value, Value] = {a: new for (_, _, a), new in zip(operands, block.args)}
    b = Builder.at_end(block)
    b.location = c.location
    p_yield, c_yield = p.body.last, c.body.last
    copied = [b.insert(o.clone(mapping)) for o in p.body.ops if o is not p_yield]
    _remap_loop_indices(op, copied, plan.to_producer)
    produced = [mapping.get(v, v) for v in p_yield.operands]
    for j in plan.fused:
        mapping[c.body.args[j]] = produced[plan.result]
    for o in c.body.ops:
        if o is not c_yield:
            b.insert(o.clone(mapping))
    b.create(YieldOp, [produced[k] for k in plan.preserved]
             + [mapping.get(v, v) for v in c_yield.operands], result_types=[])
    c.replace_all_uses_with(op.results[len(plan.preserved):])
    c.erase()
    for k, new in zip(plan.preserved, op.results):
        p.results[k].replace_uses_if(new, lambda use: use.owner is not op)
    if not any(r.has_uses() for r in p.results):
        p.erase()
    return op


def _remap_loop_indices(op: GenericOp, copied: list[Operation], to_producer: AffineMap) -> None:
    """The producer's `linalg.index k` becomes the consumer loop that its loop `k` is at
    (the composed map's result `k`, a bare loop index of a projected permutation)."""
    for top in copied:
        for o in top.walk():
            if isinstance(o, IndexOp) and o.structured_parent() is op:
                position = to_producer.results[o.dim.value].position
                o.properties["dim"] = IntegerAttr(position, I64)


# ---------------------------------------------------------------------------------------------
# Tidying the fused op (MLIR's canonicalization of generics; irkit's canonicalize has none)
# ---------------------------------------------------------------------------------------------


def _erase_dead_body_ops(block: Block) -> None:
    """Erase the body's unused pure ops (the producer's computations of outputs that are
    not kept); in reverse order, so a chain goes in one sweep."""
    for o in list(block.ops_reversed()):
        if o is not block.last and is_trivially_dead(o):
            o.erase()


def _tidy(op: GenericOp) -> GenericOp:
    """Drop what the fused op does not need: scalar inputs (the body uses the value itself),
    inputs read twice through one map (one argument serves), outputs nobody reads (their
    results unused, their old value too; one output always stays) and inputs the body does
    not read, each only while every loop keeps an operand that gives its extent. Rebuilds
    the op when something goes; returns the op that stands."""
    block = op.body
    _erase_dead_body_ops(block)
    n_in = len(op.inputs)
    operands = op.structured_operands()
    maps = op.indexing_maps_list()
    keep = [True] * len(operands)
    first: dict = {}
    for i in range(n_in):
        v, arg = operands[i], block.args[i]
        if not isinstance(v.type, ShapedType):
            arg.replace_all_uses_with(v)
        elif (v, maps[i]) in first:
            arg.replace_all_uses_with(block.args[first[v, maps[i]]])
        else:
            first[v, maps[i]] = i
            continue
        keep[i] = False

    def droppable(i: int) -> bool:
        rest = [m for j, m in enumerate(maps) if keep[j] and j != i]
        return _covers(rest, op.num_loops)

    yield_values = list(block.last.operands)
    for k in range(len(op.outputs)):
        i = n_in + k
        if sum(keep[n_in:]) > 1 and not op.results[k].has_uses() \
                and not block.args[i].has_uses() and droppable(i):
            keep[i] = False
            yield_values[k] = None
    _replace_yield(block, [v for v in yield_values if v is not None])
    _erase_dead_body_ops(block)
    for i in range(n_in):
        if keep[i] and not block.args[i].has_uses() and droppable(i):
            keep[i] = False
    if all(keep):
        return op
    return _rebuild(op, keep)


def _replace_yield(block: Block, values: list[Value]) -> None:
    old = block.last
    if list(old.operands) != values:
        Builder.before(old).create(YieldOp, values, result_types=[], location=old.location)
        old.erase()


def _rebuild(op: GenericOp, keep: list[bool]) -> GenericOp:
    """`op` with only the operands `keep` says, its body moved over."""
    n_in = len(op.inputs)
    entries = [(v, m) for v, m in zip(op.structured_operands(), op.indexing_maps_list())]
    inputs = [e for i, e in enumerate(entries[:n_in]) if keep[i]]
    outputs = [e for i, e in enumerate(entries[n_in:]) if keep[n_in + i]]
    new = _generic(inputs, outputs, op.iterator_types_list(), op.location)
    new.regions[0].take_body(op.regions[0])
    block = new.body
    for i in reversed(range(len(keep))):
        if not keep[i]:
            block.erase_argument(i)
    Builder.before(op).insert(new)
    results = iter(new.results)
    for k, r in enumerate(op.results):
        if keep[n_in + k]:
            r.replace_all_uses_with(next(results))
    op.erase()
    return new


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


@register_pass
class LinalgFuseElementwiseOps(Pass):
    """Fuse all-parallel structured producers into the structured ops that read them (the
    rule and why it is sound: the module docstring).

    Algorithm:
      1. Sweep the structured ops on tensors in program order as consumers (not matmul,
         batch_matmul, convolutions or poolings).
      2. For a consumer, find the first input whose producer qualifies: a structured op in
         the same block, all loops parallel, a pure body, the result's map a permutation,
         read through a projected permutation; if the producer's results have other users,
         the read must be a permutation and those users must come after the consumer; the
         two bodies together hold at most `max-body-ops` ops; a producer read through a
         broadcasting map holds at most `max-recompute-ops`; every loop keeps an operand
         that gives its extent.
      3. Build the fused `linalg.generic` before the consumer: the consumer's other inputs
         with the producer's operands in place of the fused one, their maps composed with
         `o^-1 o c`; outputs: the producer's results that have other users, then the
         consumer's; body: the producer's (its `linalg.index` renumbered) then the
         consumer's, the read argument replaced by the produced value. Replace the
         consumer's results and the other uses of the producer's; erase what is unused.
      4. Tidy the fused op: erase dead body ops; inline scalar inputs; merge inputs read
         through one map; drop unread, unused outputs and unread inputs (while every loop's
         extent stays known). Go back to 2 with the fused op as the consumer.
      5. Sweep again until a sweep fuses nothing. `self.fusions` counts the fusions.

    Option `max-body-ops` (default 64): the most ops a fused body may hold.
    Option `max-recompute-ops` (default 2): the most ops of a producer whose work the fusion
    repeats (one read through a broadcasting map).
    Option `report`: a remark per function with its kernels and costs before and after
    (passes/fusion_report.py; `--fusion-report`).
    """

    name = "linalg-fuse-elementwise-ops"
    max_body_ops: int = 64
    max_recompute_ops: int = 2
    report: bool = False

    def run(self, root: Operation) -> None:
        binding = Binding()
        funcs = fusion_report.functions(root) if self.report else []
        before = {f: fusion_report.snapshot(f, binding) for f in funcs}
        self._fuse_all(root)
        fusion_report.emit_all([
            fusion_report.totals_remark(f, self.name, before[f],
                                        fusion_report.snapshot(f, binding), binding)
            for f in funcs])

    def _fuse_all(self, root: Operation) -> None:
        self.fusions = 0
        changed = True
        while changed:
            changed = False
            # Not those nested in a structured op's body: fusing that op copies its body.
            consumers = [o for o in root.walk(post_order=False) if o is not root
                         and _takes_part(o)
                         and not any(isinstance(a, StructuredOp) for a in o.ancestors())]
            for consumer in consumers:
                while (fused := self._fuse_into(consumer)) is not None:
                    consumer = fused
                    changed = True
                    self.fusions += 1

    def _fuse_into(self, consumer: StructuredOp) -> GenericOp | None:
        """Fuse the first qualifying producer into `consumer`; the fused op, or None."""
        for index in range(len(consumer.inputs)):
            plan = _plan(consumer, index, self.max_body_ops, self.max_recompute_ops)
            if plan is None:
                continue
            inputs, outputs = _operands(plan)
            if not _covers([x[1] for x in inputs + outputs], consumer.num_loops):
                continue
            return _tidy(_fuse(plan, inputs, outputs))
        return None
