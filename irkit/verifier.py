"""The IR verifier: op-local rules, block terminators, region rules and SSA dominance.

Algorithm:

1. Walk every op (pre-order, with an explicit stack, so deep nesting cannot overflow).
2. For a registered op, check its declared structure against its `OpSpec` (operand and
   result counts including variadic groups, type constraints, required properties and their
   constraints, region and successor counts), then each trait's `verify`, then the op's
   own `verify_`.
3. For every region of a registered op without `NoTerminator`: each block must end with an
   op that may be a terminator (checked once the block's ops are), and no registered
   terminator may appear before the end. Ops are visited in textual order, so the first
   error reported is the first in the text, as with MLIR.
4. Successors must be blocks of the region that holds the branching op.
5. Dominance: each operand's definition must dominate the use. Within one block that is
   program order (ops carry lazily computed order indices); across blocks of one region it is
   the dominator tree (Cooper-Harvey-Kennedy iteration over reverse post-order), computed
   once per multi-block region; for a use nested in regions, the use is first lifted to its
   ancestor in the defining region. Graph regions skip ordering, uses in unreachable blocks
   are not checked (as in MLIR), and no use may cross an isolated-from-above op.

Every error is a `VerifyError` at the offending op's location; dominance errors carry a note
pointing at the definition.
"""

from __future__ import annotations

from irkit.attributes import SymbolRefAttr
from irkit.diagnostics import VerifyError
from irkit.ir import BlockArgument, Operation, OpResult, Region, install_verifier
from irkit.opdef import (
    GraphRegion, IsolatedFromAbove, NoTerminator, Op, Terminator, op_error,
)


def verify(root: Operation) -> None:
    Verifier().run(root)


class Verifier:
    def __init__(self) -> None:
        self._dom: dict = {}
        # Per-run caches (the IR does not change while it is verified). A lowered model has
        # 10^4-10^5 uses, nearly all in blocks nested a few loops deep under the definition:
        # whether a region is a graph region, and which ancestor of a use's block lies in a
        # definition's region, are asked again for every use and answered once here.
        self._graph_regions: dict = {}
        self._lifted: dict = {}

    def run(self, root: Operation) -> None:
        # Ops are visited in textual order, and a block's terminator is checked after its ops
        # (a `(op, block)` entry pushed beneath them), as MLIR does: the first error reported
        # is the first one in the text, and a misplaced terminator is reported as such rather
        # than as a block that lacks one.
        stack: list = [root]
        while stack:
            item = stack.pop()
            if type(item) is tuple:
                self._verify_block_end(*item)
                continue
            op = item
            self._verify_op(op)
            regions = op.regions
            if not regions:
                continue
            needs_terminator = isinstance(op, Op) and not op.has_trait(NoTerminator)
            for region in reversed(regions):
                for block in reversed(region.blocks):
                    if needs_terminator:
                        stack.append((op, block))
                    o = block.last
                    while o is not None:
                        stack.append(o)
                        o = o._prev

    # ----- one op -----------------------------------------------------------------------

    def _verify_op(self, op: Operation) -> None:
        block = op.parent
        for i, operand in enumerate(op._operands):
            value = operand.value
            # The common cases answered here (a use in the defining block, after the
            # definition or of one of the block's arguments: fine in any region), the rest
            # by `_check_dominance`
            owner = getattr(value, "owner", None)
            if owner is block and block is not None and type(value) is BlockArgument:
                continue
            if type(value) is OpResult and owner.parent is block and block is not None \
                    and owner is not op:
                if not block._order_valid:
                    block._renumber()
                if owner._order < op._order:
                    continue
            self._check_dominance(op, i, value)
        if op.successors:
            region = block.parent if block is not None else None
            for s in op.successors:
                if s.parent is not region:
                    raise op_error(op, "reference to block defined in another region")
                if s is region.blocks[0]:
                    raise op_error(op, "entry block of region may not have predecessors")
        if isinstance(op, Op):
            _verify_spec(op)
            for trait in op._verifying_traits:
                trait.verify(op)
            if op._has_verify:
                op.verify_()
            if block is not None and op._next is not None and Terminator in op._trait_types:
                raise op_error(op, "must be the last operation in the parent block")

    @staticmethod
    def _verify_block_end(op: Operation, block) -> None:
        """The block of `op` (which needs terminators) ends with an op that may be one.
        MLIR words both errors without the usual `'op' op` prefix."""
        last = block.last
        if last is None:
            raise VerifyError("empty block: expect at least a terminator", op.location)
        if isinstance(last, Op) and not last.has_trait(Terminator):
            raise VerifyError(f"block with no terminator, has '{last.name}'", last.location)

    # ----- dominance --------------------------------------------------------------------

    def _check_dominance(self, user: Operation, index: int, value) -> None:
        if isinstance(value, OpResult):
            def_block = value.owner.parent
        elif isinstance(value, BlockArgument):
            def_block = value.owner
        else:
            name = getattr(value, "name", "")
            raise op_error(user, f"operand #{index} refers to an undefined value {name}".rstrip())
        if def_block is None:
            raise op_error(user, f"operand #{index} is defined by an op that is not in any block")
        ublock = user.parent
        if ublock is def_block:
            if isinstance(value, OpResult) and not self._is_graph(def_block.parent):
                if value.owner is user or not value.owner.is_before_in_block(user):
                    # MLIR checks no use inside an unreachable block, even in its own block.
                    if def_block.parent is None or self._is_reachable(def_block):
                        raise self._dom_error(user, index, value)
            return
        def_region = def_block.parent
        anc = self._lift(user, def_region)
        if anc is None:
            raise self._dom_error(user, index, value)
        if type(anc) is tuple:                  # ("isolated", op) on the way up
            err = op_error(user, f"using value defined outside the region")
            err.note(f"required by region isolation constraints", anc[1].location)
            raise err
        if self._is_graph(def_region):
            return
        ablock = anc.parent
        if ablock is def_block:
            if isinstance(value, OpResult):
                if value.owner is anc or not value.owner.is_before_in_block(anc):
                    if self._is_reachable(ablock):
                        raise self._dom_error(user, index, value)
            return
        if not self._is_reachable(ablock):
            return
        if not self._dominates(def_block, ablock):
            raise self._dom_error(user, index, value)

    def _lift(self, user: Operation, def_region: Region):
        """The ancestor of `user` (itself included) whose block is in `def_region`; None if
        there is none; `("isolated", op)` if the way up crosses an isolated-from-above `op`
        first. Above `user` itself the answer depends only on `user`'s block: cached."""
        ublock = user.parent
        if ublock is None or ublock.parent is def_region:
            return user if ublock is not None else None
        key = (ublock, def_region)
        found = self._lifted.get(key, key)
        if found is key:
            found = self._lifted[key] = _lift_block(ublock, def_region)
        return found

    def _is_graph(self, region: Region) -> bool:
        found = self._graph_regions.get(region)
        if found is None:
            found = self._graph_regions[region] = self._graph(region)
        return found

    @staticmethod
    def _graph(region: Region) -> bool:
        op = region.parent
        if isinstance(op, Op):
            return op.has_trait(GraphRegion)
        # As MLIR's `mayBeGraphRegion`: nothing is known of an unregistered op's regions.
        return op is not None

    @staticmethod
    def _dom_error(user, index, value) -> VerifyError:
        """MLIR's dominance error, worded as MLIR words it (no `'op' op` prefix), with a note
        at the definition saying where it is relative to the use."""
        err = VerifyError(f"operand #{index} does not dominate this use", user.location)
        use_region = user.parent.parent if user.parent is not None else None
        if isinstance(value, OpResult):
            def_block = value.owner.parent
            if def_block is user.parent:
                where = "op in the same block"
            else:
                where = "op " + _relation(def_block.parent, use_region)
            err.note(f"operand defined here ({where})", value.owner.location)
        else:
            block = value.owner
            region = block.parent
            bi = region.blocks.index(block) if region is not None else "?"
            where = _relation(region, use_region).removeprefix("is ")
            err.note(f"operand defined as a block argument (block #{bi} {where})",
                     block.parent_op.location if block.parent_op else None)
        return err

    def _idom(self, region: Region) -> dict:
        idom = self._dom.get(region)
        if idom is None:
            idom = self._dom[region] = dominators(region)
        return idom

    def _is_reachable(self, block) -> bool:
        return block in self._idom(block.parent)

    def _dominates(self, a, b) -> bool:
        idom = self._idom(a.parent)
        while b is not None:
            if b is a:
                return True
            nb = idom.get(b)
            if nb is b:
                return False
            b = nb
        return False


def _lift_block(block, def_region):
    """`Verifier._lift` for a use in `block` (not itself in `def_region`): the ancestor op of
    `block` whose block is in `def_region`, None, or `("isolated", op)`."""
    anc = block.parent_op
    while anc is not None:
        if isinstance(anc, Op) and anc.has_trait(IsolatedFromAbove):
            return ("isolated", anc)
        if anc.parent is None:
            return None
        if anc.parent.parent is def_region:
            return anc
        anc = anc.parent_op
    return None


def _relation(def_region, use_region) -> str:
    """Where a definition's region is, seen from a use's (MLIR's dominance-note wording)."""
    if def_region is use_region:
        return "in the same region"
    if _encloses(def_region, use_region):
        return "in a parent region"
    if _encloses(use_region, def_region):
        return "in a child region"
    return "is neither in a parent nor in a child region"


def _encloses(outer, inner) -> bool:
    """Is region `inner` nested (properly) somewhere inside region `outer`?"""
    while inner is not None:
        op = inner.parent
        block = op.parent if op is not None else None
        inner = block.parent if block is not None else None
        if inner is outer:
            return True
    return False


def dominators(region: Region) -> dict:
    """Immediate dominators of the reachable blocks (entry maps to itself).

    Cooper, Harvey & Kennedy, "A Simple, Fast Dominance Algorithm": iterate
    `idom(b) = intersect(processed preds)` over reverse post-order to a fixpoint.
    """
    blocks = region.blocks
    if not blocks:
        return {}
    entry = blocks[0]
    order: list = []
    seen = {entry}
    stack = [(entry, iter(entry.successors))]
    while stack:
        b, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(s.successors)))
                break
        else:
            order.append(b)
            stack.pop()
    rpo = order[::-1]
    index = {b: i for i, b in enumerate(rpo)}
    preds: dict = {b: [] for b in rpo}
    for b in rpo:
        for s in b.successors:
            if s in preds:
                preds[s].append(b)
    idom = {entry: entry}
    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            new = None
            for p in preds[b]:
                if p in idom:
                    new = p if new is None else _intersect(p, new, idom, index)
            if new is not None and idom.get(b) is not new:
                idom[b] = new
                changed = True
    return idom


def _intersect(a, b, idom, index):
    while a is not b:
        while index[a] > index[b]:
            a = idom[a]
        while index[b] > index[a]:
            b = idom[b]
    return a


# ----- declared structure ---------------------------------------------------------------------
#
# The messages are MLIR's (its op traits and ODS-generated verifiers), so a --verify-diagnostics
# file written for mlir-opt matches irkit's: operands and results are named by their position
# in the op (`operand #2`), never by the Python field that declares them.

_COUNT_WORDS = {0: "zero", 1: "one"}


def _verify_spec(op: Op) -> None:
    spec = op.spec
    if spec.fixed_arity and len(op._operands) == len(spec.operands) and \
            len(op.results) == len(spec.results):
        # Fast path (most ops): field i is operand i.
        for i, (c, o) in enumerate(zip(spec.operand_constraints, op._operands)):
            if not c(o.value.type):
                raise _constraint_error(op, "operand", i, c, o.value.type)
        for i, (c, r) in enumerate(zip(spec.result_constraints, op.results)):
            if not c(r.type):
                raise _constraint_error(op, "result", i, c, r.type)
    else:
        _verify_operands_and_results(op, spec)
    _verify_props_regions_successors(op, spec)


def _constraint_error(op: Op, kind: str, index: int, constraint, t,
                      variadic: bool = False) -> VerifyError:
    what = f"variadic of {constraint.description}" if variadic else constraint.description
    return op_error(op, f"{kind} #{index} must be {what}, but got '{t}'")


def _verify_operands_and_results(op: Op, spec) -> None:
    operands, results = op._operands, op.results
    _verify_group(op, "operand", spec.operands, spec.n_var_operands, len(operands),
                  "operandSegmentSizes")
    _verify_group(op, "result", spec.results, spec.n_var_results, len(results),
                  "resultSegmentSizes")
    for f in spec.operands:
        start, size = op._group_range("operand", f.index)
        c = f.constraint
        for i in range(start, start + size):
            t = operands[i].value.type
            if not c(t):
                raise _constraint_error(op, "operand", i, c, t, f.variadic)
    for f in spec.results:
        start, size = op._group_range("result", f.index)
        c = f.constraint
        for i in range(start, start + size):
            t = results[i].type
            if not c(t):
                raise _constraint_error(op, "result", i, c, t, f.variadic)


def _verify_props_regions_successors(op: Op, spec) -> None:
    props = op.properties
    for pd in spec.props:
        a = props.get(pd.name)
        if a is None:
            if not pd.optional:
                raise op_error(op, f"requires attribute '{pd.name}'")
            continue
        if not pd.constraint(a):
            raise op_error(op, f"attribute '{pd.name}' failed to satisfy constraint: "
                               f"{pd.constraint.description}")
    regions = spec.regions
    if spec.variadic_regions or len(op.regions) != len(regions):
        _verify_count(op, "region", len(regions), spec.variadic_regions, len(op.regions))
    for rd in regions:
        if not rd.variadic and rd.single_block and len(op.regions[rd.index].blocks) > 1:
            raise op_error(op, f"expects region #{rd.index} to have 0 or 1 blocks")
    nsucc = len(spec.successors)
    found = len(op.successors)
    if nsucc == found == 0:
        return
    if spec.variadic_successors:
        if found < nsucc - 1:
            raise op_error(op, f"requires at least {nsucc - 1} successors but found {found}")
    elif found != nsucc:
        raise op_error(op, f"requires {nsucc} successor{'s' if nsucc != 1 else ''} but found "
                           f"{found}")


def _verify_count(op, kind: str, declared: int, variadic: bool, found: int) -> None:
    """MLIR's ZeroX / OneX / NX / AtLeastNX trait messages for operands, results, regions."""
    if variadic:
        fixed = declared - 1
        if found < fixed:
            more = f"{fixed} or more {kind}s"
            raise op_error(op, f"expected {more}, but found {found}" if kind == "operand"
                           else f"expected {more}")
        return
    if found == declared:
        return
    if declared <= 1:
        if kind == "operand":
            raise op_error(op, "requires zero operands" if declared == 0
                           else "requires a single operand")
        raise op_error(op, f"requires {_COUNT_WORDS[declared]} {kind}"
                           f"{'s' if declared == 0 else ''}")
    raise op_error(op, f"expected {declared} {kind}s, but found {found}" if kind == "operand"
                   else f"expected {declared} {kind}s")


def _verify_group(op, kind, fields, nvar, total, seg_name) -> None:
    if nvar == 0:
        _verify_count(op, kind, len(fields), False, total)
        return
    fixed = len(fields) - nvar
    if nvar == 1:
        opt = next(f for f in fields if f.variadic or f.optional)
        if opt.variadic:
            _verify_count(op, kind, fixed + 1, True, total)
        elif total < fixed or total > fixed + 1:
            # ODS's message for an optional group whose size is off.
            # (The fields before the only optional one are single: it starts at its index.)
            raise op_error(op, f"{kind} group starting at #{opt.index} requires 0 or 1 "
                               f"element, but found {total - fixed}")
        return
    seg = op.properties.get(seg_name)
    if seg is None:
        raise op_error(op, f"requires dense i32 array attribute '{seg_name}'")
    sizes = list(seg.value)
    if len(sizes) != len(fields):
        raise op_error(op, f"'{seg_name}' attribute for specifying {kind} segments must have "
                           f"{len(fields)} elements, but got {len(sizes)}")
    if sum(sizes) != total:
        raise op_error(op, f"{kind} count ({total}) does not match with the total size "
                           f"({sum(sizes)}) specified in attribute '{seg_name}'")
    start = 0
    for f, n in zip(fields, sizes):
        if n < 0 or (not f.variadic and not f.optional and n != 1) or (f.optional and n > 1):
            need = "1 element" if not (f.variadic or f.optional) else "0 or 1 element"
            raise op_error(op, f"{kind} group starting at #{start} requires {need}, but found "
                               f"{n}")
        start += n


_ = SymbolRefAttr


install_verifier(verify)      # `op.verify()`
