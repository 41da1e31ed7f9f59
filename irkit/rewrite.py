"""The rewrite engine: patterns, the rewriter they mutate IR through, folding, and the greedy
driver that applies both to a fixpoint (MLIR's `applyPatternsGreedily`).

    class FoldDoubleNeg(RewritePattern):
        '''-(-x) -> x'''
        def match_and_rewrite(self, op: NegFOp, rewriter: PatternRewriter) -> bool:
            inner = op.operand.owner_op
            if not isinstance(inner, NegFOp):
                return False
            rewriter.replace_op(op, [inner.operand])
            return True

    apply_patterns_greedily(module, [FoldDoubleNeg()])

A pattern matches one op type, read from the annotation of `match_and_rewrite`'s `op`
parameter (or set as `root = "dialect.op"`; no annotation means any op), and returns whether
it rewrote. Every mutation goes through the `PatternRewriter`, which keeps use lists right and
tells the driver what changed, so the driver revisits exactly the ops a rewrite may have made
foldable again. One-line algebraic rewrites are written as `peephole` strings (see
`irkit.peephole`); anything longer is a pattern class.
"""

from __future__ import annotations

import typing
from contextlib import contextmanager
from typing import Iterable, Sequence

from irkit.attributes import Attribute
from irkit.builder import Builder
from irkit.diagnostics import IRError
from irkit.ir import Block, Operation, Region, UnregisteredOp, Value
from irkit.opdef import Commutative, ConstantLike, IsolatedFromAbove, Pure, Terminator


# ---------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------


class RewritePattern:
    """Base of rewrite patterns. Subclasses define `match_and_rewrite(self, op, rewriter)`.

    `root` is the op name matched (None: every op). It is taken from the annotation of the
    `op` parameter when that names a registered op class, so the signature states the match.
    `benefit` orders patterns on the same op: higher first (MLIR's PatternBenefit).
    """

    root: str | None = None
    benefit: int = 1

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "root" in vars(cls) or "match_and_rewrite" not in vars(cls):
            return
        try:
            hints = typing.get_type_hints(cls.match_and_rewrite)
        except Exception:       # unresolvable forward reference: leave root unset
            return
        t = hints.get("op")
        name = getattr(t, "name", None)
        if isinstance(t, type) and isinstance(name, str) and name:
            cls.root = name

    def match_and_rewrite(self, op: Operation, rewriter: "PatternRewriter") -> bool:
        raise NotImplementedError

    @property
    def label(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<pattern {self.label} on {self.root or '*'}>"


# ---------------------------------------------------------------------------------------------
# The rewriter
# ---------------------------------------------------------------------------------------------


class Listener:
    """What a driver wants to hear about; the default hears nothing."""

    def on_inserted(self, op: Operation) -> None: ...
    def on_modified(self, op: Operation) -> None: ...
    def on_replaced(self, op: Operation, values: Sequence[Value]) -> None: ...
    def on_erased(self, op: Operation) -> None: ...
    def on_operand_dropped(self, value: Value) -> None: ...


class PatternRewriter(Builder):
    """A Builder whose every mutation is reported to a listener (the driver's worklist).

    The insertion point is set before the op being rewritten, so new ops land where the old
    one was and dominate its uses.
    """

    def __init__(self, listener: Listener | None = None) -> None:
        super().__init__()
        self.listener = listener or Listener()

    # ----- creation -----------------------------------------------------------------------

    def insert(self, op: Operation) -> Operation:
        super().insert(op)
        self.listener.on_inserted(op)
        return op

    # ----- replacement and erasure --------------------------------------------------------

    def replace_op(self, op: Operation, values: Iterable[Value]) -> None:
        """Replace every use of `op`'s results with `values`, then erase `op`."""
        values = list(values)
        self.listener.on_replaced(op, values)
        op.replace_all_uses_with(values)
        self.erase_op(op)

    def replace_op_with_new(self, op: Operation, cls, *args, **kwargs) -> Operation:
        """Build `cls(*args, **kwargs)` before `op` and replace `op` with its results."""
        self.set_insertion_point_before(op)
        kwargs.setdefault("location", op.location)
        new = self.create(cls, *args, **kwargs)
        self.replace_op(op, new.results)
        return new

    def erase_op(self, op: Operation) -> None:
        """Erase `op` (its results must be unused) and everything nested in it."""
        for nested in op.walk():
            self.listener.on_erased(nested)
        op.erase()

    def erase_block(self, block: Block) -> None:
        for op in list(block.ops):
            for nested in op.walk():
                self.listener.on_erased(nested)
        block.erase()

    def replace_all_uses_with(self, old: Value, new: Value) -> None:
        for user in old.users:
            self.listener.on_modified(user)
        old.replace_all_uses_with(new)
        self.listener.on_operand_dropped(old)

    # ----- in-place updates ---------------------------------------------------------------

    @contextmanager
    def modify_op_in_place(self, op: Operation):
        """`with rewriter.modify_op_in_place(op): op.properties[...] = ...`"""
        before = op.operands
        yield op
        self.notify_modified(op, before)

    def notify_modified(self, op: Operation, operands_before: Sequence[Value] = ()) -> None:
        """Report an in-place change; values `op` stopped using are reported too, since
        their producers may now be dead."""
        self.listener.on_modified(op)
        if operands_before:
            now = set(op.operands)
            for v in operands_before:
                if v not in now:
                    self.listener.on_operand_dropped(v)

    # ----- moving code --------------------------------------------------------------------

    def inline_block_before(self, block: Block, anchor: Operation,
                            args: Sequence[Value] = ()) -> None:
        """Move every op of `block` before `anchor`, using `args` for the block arguments;
        the emptied block is erased."""
        if len(args) != len(block.args):
            raise ValueError(f"inlining a block with {len(block.args)} arguments "
                             f"given {len(args)} values")
        for a, v in zip(block.args, args):
            self.replace_all_uses_with(a, v)
        dest = anchor.parent
        op = block.first
        while op is not None:
            nxt = op._next
            op.detach()
            dest.insert_before(anchor, op)
            self.listener.on_inserted(op)
            op = nxt
        if block.parent is not None:
            block.parent.blocks.remove(block)
            block.parent = None

    def move_op_before(self, op: Operation, anchor: Operation) -> None:
        op.move_before(anchor)
        self.listener.on_modified(op)


# ---------------------------------------------------------------------------------------------
# Folding
# ---------------------------------------------------------------------------------------------


def constant_value(v: Value) -> Attribute | None:
    """The attribute of the constant that defines `v`, or None (a block argument's owner, a
    `Block`, is no constant: the folder asks this of every operand of every op it tries)."""
    owner = getattr(v, "owner", None)
    if not _is_constant(type(owner)):
        return None
    r = owner.fold([])
    return r[0] if r else None


_CONSTANT_CLASSES: dict[type, bool] = {}


def _is_constant(cls) -> bool:
    c = _CONSTANT_CLASSES.get(cls)
    if c is None:
        c = _CONSTANT_CLASSES[cls] = bool(getattr(cls, "_trait_types", ())) and \
            ConstantLike in cls._trait_types
    return c


#: per op class: whether folding an instance can change anything (`_may_fold`)
_FOLDABLE: dict[type, bool] = {}


def _may_fold(cls) -> bool:
    """Whether `OperationFolder.try_fold` can change an op of class `cls`: it has a folder of
    its own, or is commutative (its constant operand is moved to the right). Most ops of the
    loop level (stores, loads, yields) have neither, and the driver then skips reading
    their operands' constants: a third of a canonicalize sweep's time."""
    c = _FOLDABLE.get(cls)
    if c is None:
        from irkit.opdef import Op
        # (an unregistered op has neither: it is never folded)
        c = _FOLDABLE[cls] = issubclass(cls, Op) and (
            cls.fold is not Op.fold or Commutative in cls._trait_types)
    return c


#: per op class: whether an instance may ever be trivially dead (`_may_die`)
_MAY_DIE: dict[type, bool] = {}


def _may_die(cls) -> bool:
    """Whether an op of class `cls` can be trivially dead at all: not a terminator, and either
    `Pure` or declaring `memory_effects` (which may list none). Stores, yields and
    unregistered ops never are, and the driver asks about every op it pops."""
    c = _MAY_DIE.get(cls)
    if c is None:
        traits = getattr(cls, "_trait_types", ())
        c = _MAY_DIE[cls] = Terminator not in traits and (
            Pure in traits or getattr(cls, "memory_effects", None) is not None)
    return c


def is_trivially_dead(op: Operation) -> bool:
    """No result is used and the op has no effect: it may be erased (MLIR's isOpTriviallyDead).

    "No effect" is the `Pure` trait, which for an op with regions covers what they contain
    only if every nested op is pure too (MLIR's recursive memory effects). Terminators and
    unregistered ops are never dead.
    """
    return _may_die(type(op)) and _unused_and_pure(op)


def _unused_and_pure(op: Operation) -> bool:
    """`is_trivially_dead` of an op whose class `_may_die`."""
    for r in op.results:
        if r._uses:
            return False
    return is_pure(op)


def is_pure(op: Operation) -> bool:
    """Whether `op` has no effect beyond its results (so it may be erased when they are unused,
    or merged with an equal op): it carries `Pure`, or, for ops whose effects depend on their
    operand types (a linalg op on tensors computes values, on memrefs writes them), its
    `memory_effects()` lists none (MLIR's MemoryEffectOpInterface). Either way the ops in its
    regions must be pure too (MLIR's RecursiveMemoryEffects)."""
    if not _has(op, Pure):
        effects = getattr(op, "memory_effects", None)
        if effects is None or effects():
            return False
    for region in op.regions:
        for nested in region.ops:
            if not is_pure(nested) and not _has(nested, Terminator):
                return False
    return True


def _has(op: Operation, trait: type) -> bool:
    t = getattr(type(op), "_trait_types", None)
    return t is not None and trait in t


def insertion_region(op: Operation) -> Region | None:
    """Where folded constants for `op` go: the closest enclosing region whose owner is isolated
    from above (or unregistered, or absent), so one constant serves the whole function."""
    region = op.parent_region
    while region is not None:
        parent = region.parent
        if parent is None or not parent.is_registered or _has(parent, IsolatedFromAbove):
            return region
        nxt = parent.parent_region
        if nxt is None:
            return region
        region = nxt
    return None


class OperationFolder:
    """Folds ops and materializes the resulting constants, one constant per value per region.

    Constants are created at the start of the entry block of the insertion region and kept in
    a table keyed by (region, attribute, type), as MLIR's OperationFolder does, so folding
    twice to the same value and the constants already in the input share one op. (MLIR also
    keys by the folded op's dialect; a `math` fold and an `arith.constant` of the same value
    would then stay two ops. The attribute and type determine the constant, so we do not.)
    """

    def __init__(self, rewriter: PatternRewriter) -> None:
        self.rewriter = rewriter
        self._table: dict[tuple, Operation] = {}
        self._key_of: dict[Operation, tuple] = {}

    def notify_removed(self, op: Operation) -> None:
        key = self._key_of.pop(op, None)
        if key is not None and self._table.get(key) is op:
            del self._table[key]

    def insert_known_constant(self, op: Operation) -> bool:
        """Record a constant already in the IR; if an equal one is known, replace `op` with it
        and return True. Otherwise hoist it to the front of its insertion region."""
        region = insertion_region(op)
        if region is None or not region.blocks:
            return False
        folded = op.fold([])
        if not folded or not isinstance(folded[0], Attribute):
            return False
        key = (region, folded[0], op.results[0].type)
        existing = self._table.get(key)
        if existing is op:
            return False
        if existing is not None and existing.parent is not None:
            self.rewriter.replace_op(op, existing.results)
            return True
        self._table[key] = op
        self._key_of[op] = key
        entry = region.blocks[0]
        if op.parent is not entry:
            op.move_before(entry.first)
        elif op.parent is entry:
            # Keep constants at the top (MLIR's canonical form) without reordering among them.
            first = entry.first
            while first is not None and _is_constant(type(first)) and first is not op:
                first = first._next
            if first is not op:
                op.detach()
                entry.insert_before(first, op)
        return False

    def get_or_create_constant(self, region: Region, dialect, attr: Attribute, type_,
                               location) -> Value | None:
        key = (region, attr, type_)
        existing = self._table.get(key)
        if existing is not None and existing.parent is not None:
            return existing.results[0]
        materialize = getattr(dialect, "constant_materializer", None)
        if materialize is None:
            return None
        op = materialize(attr, type_, location)
        if op is None:
            return None
        entry = region.blocks[0]
        entry.insert_before(entry.first, op)
        self.rewriter.listener.on_inserted(op)
        self._table[key] = op
        self._key_of[op] = key
        return op.results[0]

    def try_fold(self, op: Operation) -> bool:
        """Fold `op`: in place, to existing values, or to constants. True if IR changed."""
        if not _may_fold(type(op)):
            return False
        return self._fold(op)

    def _fold(self, op: Operation) -> bool:
        """`try_fold` of an op that `_may_fold`."""
        operands = op._operands
        before = [o.value for o in operands]
        consts = [constant_value(v) for v in before]
        changed = False
        # Commutative ops keep constants on the right (MLIR's foldCommutative), so patterns
        # and folders only need to look at one side.
        if len(operands) == 2 and consts[0] is not None and consts[1] is None and \
                _has(op, Commutative):
            lhs, rhs = operands[0].value, operands[1].value
            operands[0].set(rhs)
            operands[1].set(lhs)
            consts.reverse()
            changed = True
        results = op.fold(consts)
        if not results:
            if changed:
                self.rewriter.listener.on_modified(op)
            return changed
        if len(results) != len(op.results):
            raise IRError(f"'{op.name}' folder returned {len(results)} values for "
                          f"{len(op.results)} results", op.location)
        if all(r is res for r, res in zip(results, op.results)):
            self.rewriter.notify_modified(op, before)     # folded in place
            return True
        values = []
        region = None
        for r, res in zip(results, op.results):
            if isinstance(r, Value):
                values.append(r)
                continue
            if region is None:
                region = insertion_region(op)
                if region is None or not region.blocks:
                    return changed
            v = self.get_or_create_constant(region, op.dialect, r, res.type, op.location)
            if v is None:
                return changed
            values.append(v)
        self.rewriter.replace_op(op, values)
        return True


# ---------------------------------------------------------------------------------------------
# The greedy driver
# ---------------------------------------------------------------------------------------------


class RewriteNotConverged(IRError):
    """The driver hit its iteration cap while patterns kept changing the IR."""


class FrozenPatternSet:
    """Patterns indexed by the op they match, each list sorted by decreasing benefit."""

    def __init__(self, patterns: Iterable[RewritePattern]) -> None:
        self.by_root: dict[str | None, list[RewritePattern]] = {}
        for p in patterns:
            self.by_root.setdefault(p.root, []).append(p)
        self.any_op = sorted(self.by_root.pop(None, []), key=lambda p: -p.benefit)
        for name, lst in self.by_root.items():
            lst.extend(self.any_op)
            lst.sort(key=lambda p: -p.benefit)

    def for_op(self, name: str) -> list[RewritePattern]:
        return self.by_root.get(name, self.any_op)

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_root.values()) + len(self.any_op)


class GreedyDriver(Listener):
    """Applies folders and patterns to every op under a root until nothing changes.

    Algorithm (MLIR's GreedyPatternRewriteDriver, top-down mode):
      1. Fill the worklist with every op nested under the root, in pre-order.
      2. Pop an op. If it is trivially dead, erase it (its operands' producers are pushed:
         they may have died with it). If it is a constant, deduplicate and hoist it. Else try
         its folder, then its patterns in order of benefit, stopping at the first success.
      3. Every rewrite reports through the rewriter: new and modified ops are pushed, and so
         are the users of replaced results and the producers of erased ops' operands, since
         those are the ops that may now fold or die.
      4. When the worklist is empty, simplify regions if asked (drop unreachable blocks) and
         start over from step 1 if anything changed, at most `max_iterations` times; still
         changing after that is an error naming the last pattern applied.
    """

    def __init__(self, patterns: FrozenPatternSet, *, fold: bool = True,
                 max_iterations: int = 10, region_simplify: bool = True,
                 max_rewrites: int | None = None) -> None:
        self.patterns = patterns
        self.fold = fold
        self.max_iterations = max_iterations
        self.region_simplify = region_simplify
        self.max_rewrites = max_rewrites
        self.rewriter = PatternRewriter(self)
        self.folder = OperationFolder(self.rewriter)
        self.worklist: list[Operation] = []
        #: ops erased during this run: the nested ones of an erased op keep their parent
        self.erased: set[Operation] = set()
        self.on_list: set[Operation] = set()
        self.num_rewrites = 0
        self.last_rewrite = ""
        #: per op class, what popping one may do (`_class_info`)
        self._info: dict[type, tuple] = {}

    # ----- listener -----------------------------------------------------------------------

    def push(self, op: Operation) -> None:
        if op not in self.on_list:
            self.on_list.add(op)
            self.worklist.append(op)

    def on_inserted(self, op: Operation) -> None:
        self.push(op)

    def on_modified(self, op: Operation) -> None:
        self.push(op)

    def on_replaced(self, op: Operation, values) -> None:
        for r in op.results:
            for user in r.users:
                self.push(user)

    def on_operand_dropped(self, value: Value) -> None:
        owner = value.defining_op()
        if owner is not None:
            self.push(owner)

    def on_erased(self, op: Operation) -> None:
        for o in op._operands:
            owner = o.value.defining_op()
            if owner is not None:
                self.push(owner)
        self.on_list.discard(op)
        self.erased.add(op)
        if _is_constant(type(op)):
            self.folder.notify_removed(op)

    # ----- the loop -----------------------------------------------------------------------

    def _class_info(self, cls) -> tuple:
        """(may die, is a constant, may fold, its patterns) for ops of class `cls`: what the
        driver asks of every op it pops, answered once per class (patterns None for
        unregistered ops, whose name is their own)."""
        info = self._info[cls] = (
            _may_die(cls), _is_constant(cls), _may_fold(cls),
            None if cls is UnregisteredOp else self.patterns.for_op(cls.name))
        return info

    def run(self, root: Operation) -> bool:
        """Returns whether anything changed; raises RewriteNotConverged at the cap."""
        changed_any = False
        for _ in range(self.max_iterations):
            # Pre-order, reversed, so popping from the end visits ops top-down.
            ops: list[Operation] = []
            _nested_pre_order(root, ops)
            ops.reverse()
            self.worklist = ops
            self.on_list = set(ops)
            self.erased = set()
            changed = self._drain()
            if self.max_rewrites is not None and self.num_rewrites >= self.max_rewrites:
                return True                     # the caller's budget, not a divergence
            if self.region_simplify:
                changed |= simplify_regions(root, self.rewriter)
            changed_any |= changed
            if not changed:
                return changed_any
        raise RewriteNotConverged(
            f"pattern application did not converge after {self.max_iterations} iterations "
            f"(last rewrite: {self.last_rewrite or 'none'}); a pattern may undo another",
            root.location)

    def _drain(self) -> bool:
        changed = False
        worklist, on_list, erased = self.worklist, self.on_list, self.erased
        patterns = self.patterns
        folder = self.folder
        fold = self.fold
        infos = self._info
        # A pattern that keeps changing one op (a -> b -> a) would keep it on the worklist
        # forever; a converging sweep visits each op a bounded number of times.
        budget = 16 * len(worklist) + 1024
        while worklist:
            budget -= 1
            if budget < 0:
                raise RewriteNotConverged(
                    f"pattern application did not converge: one sweep revisited ops more than "
                    f"16 times each on average (last rewrite: {self.last_rewrite}); a pattern "
                    f"may undo itself or another", worklist[-1].location)
            op = worklist.pop()
            on_list.discard(op)
            if op.parent is None or op in erased:
                continue                        # erased (maybe nested in an erased op)
            info = infos.get(type(op))
            if info is None:
                info = self._class_info(type(op))
            may_die, constant, may_fold, op_patterns = info
            if may_die and _unused_and_pure(op):
                self.rewriter.erase_op(op)
                changed = True
                continue
            if fold:
                if constant:
                    if folder.insert_known_constant(op):
                        changed = True
                    continue
                if may_fold and folder._fold(op):
                    changed = True
                    self.last_rewrite = f"folder of '{op.name}'"
                    continue
            if op_patterns is None:
                op_patterns = patterns.for_op(op.name)
            for pattern in op_patterns:
                self.rewriter.set_insertion_point_before(op)
                self.rewriter.location = op.location
                if pattern.match_and_rewrite(op, self.rewriter):
                    changed = True
                    self.num_rewrites += 1
                    self.last_rewrite = f"{pattern.label} on '{op.name}'"
                    if self.max_rewrites is not None and self.num_rewrites >= self.max_rewrites:
                        worklist.clear()
                        on_list.clear()
                        return True
                    break
        return changed


def _nested_pre_order(op: Operation, out: list[Operation]) -> None:
    """Append every op nested in `op` to `out`, in pre-order (`op.walk(post_order=False)`
    without `op` itself, and without a generator per op: a sweep starts with it)."""
    for region in op.regions:
        for block in region.blocks:
            nested = block.first
            while nested is not None:
                out.append(nested)
                if nested.regions:
                    _nested_pre_order(nested, out)
                nested = nested._next


def _region_holders(op: Operation, out: list[Operation]) -> None:
    """Append `op` and every op nested in it that has regions to `out`, in post-order (the
    ops `simplify_regions` looks at; the others, most of them, are not visited one by one)."""
    for region in op.regions:
        for block in region.blocks:
            nested = block.first
            while nested is not None:
                if nested.regions:
                    _region_holders(nested, out)
                nested = nested._next
    out.append(op)


def apply_patterns_greedily(root: Operation, patterns: Iterable[RewritePattern] |
                            FrozenPatternSet, *, fold: bool = True, max_iterations: int = 10,
                            region_simplify: bool = True,
                            max_rewrites: int | None = None) -> bool:
    """Run `patterns` (and op folders) on everything nested in `root` to a fixpoint.

    Returns whether the IR changed. Raises `RewriteNotConverged` if it still changes after
    `max_iterations` sweeps.
    """
    if not isinstance(patterns, FrozenPatternSet):
        patterns = FrozenPatternSet(patterns)
    driver = GreedyDriver(patterns, fold=fold, max_iterations=max_iterations,
                          region_simplify=region_simplify, max_rewrites=max_rewrites)
    return driver.run(root)


# ---------------------------------------------------------------------------------------------
# Region simplification
# ---------------------------------------------------------------------------------------------


def simplify_regions(root: Operation, rewriter: PatternRewriter) -> bool:
    """Erase blocks unreachable from their region's entry (MLIR's eraseUnreachableBlocks).

    Graph regions and regions of unregistered ops are left alone: their blocks have no
    control-flow order to be unreachable in.
    """
    changed = False
    holders: list[Operation] = []
    _region_holders(root, holders)
    for op in holders:
        if op.parent is None and op is not root:
            continue
        if not op.is_registered:
            continue
        for region in op.regions:
            if len(region.blocks) < 2:
                continue
            reachable = {region.blocks[0]}
            stack = [region.blocks[0]]
            while stack:
                for s in stack.pop().successors:
                    if s not in reachable:
                        reachable.add(s)
                        stack.append(s)
            dead = [b for b in region.blocks if b not in reachable]
            if not dead:
                continue
            # Drop references first: dead blocks may use each other's values.
            for b in dead:
                for nested in b.ops:
                    nested.drop_all_references()
            for b in dead:
                for nested in list(b.ops):
                    for r in nested.results:
                        for use in r.uses:
                            use.drop()
                rewriter.erase_block(b)
            changed = True
    return changed

