"""inline: inline `func.call` sites bottom-up over the call graph, as MLIR's inliner does."""

from __future__ import annotations

from irkit.attributes import CallSiteLoc, Location, SymbolRefAttr, UnknownLoc
from irkit.dialects.func import CallOp, FuncOp, ReturnOp
from irkit.ir import BlockArgument, Operation, Region, Value
from irkit.pass_manager import Pass, PassManager, PassPipelineError, register_pass
from irkit.passes import register_all
from irkit.rewrite import PatternRewriter
from irkit.symbols import SymbolTable, nearest_symbol_table, symbol_uses


@register_pass
class Inline(Pass):
    """Inline calls to functions with bodies, callees first, then simplify the callers.

    Algorithm:
      1. Build the call graph of the op: a node per `func.func` with a body, an edge per
         direct `func.call` that resolves to one. (`func.constant` references are not calls;
         they only keep a callee alive in step 5.)
      2. Split the graph into strongly connected components with Tarjan's algorithm. Tarjan
         emits a component only after every component it reaches, so visiting them in that
         order is bottom-up: a callee is already inlined into and simplified when its
         callers copy it.
      3. In each component, up to `max-iterations` rounds: inline every call present at the
         start of the round whose callee is legal to inline (below). The callee's body is
         cloned before the call with its arguments mapped to the call operands; the
         `func.return` operands replace the call results; each cloned op's location becomes
         `callsite(<its location> at <call location>)` (unless the call's is unknown). Calls
         the cloned bodies bring along are candidates of the next round, but never for a
         callee whose inlining brought them in (MLIR's inline history): a recursive function
         called from outside its component is inlined once, not unrolled each round.
      4. After a round that inlined something, run `default-pipeline` (parsed anchored on
         `func.func`; `canonicalize` by default, empty to disable) on each function that
         changed, so that e.g. constants passed as arguments fold into the inlined code.
      5. Erase private functions with bodies that nothing live references any more: calls,
         `func.constant` and any other symbol reference keep a function alive; public ones
         always stay. As in MLIR, this also removes private functions that were dead
         before, and (unlike MLIR) cycles of private functions that only call each other.

    A call is not inlined when:
      - its callee is in the caller's component: self-recursion and mutual recursion are
        left alone, which also bounds how much the inliner can grow the IR. (MLIR only
        refuses the 1- and 2-cycles and inlines along longer cycles; we refuse them all.)
      - the callee is a declaration, lies outside the op the pass runs on, or either the
        call or the callee carries `no_inline`.
      - the callee's body has several blocks: splicing it into the caller would need an
        unstructured branch (`cf.br`) to the continuation, and irkit has no `cf` dialect
        yet. Such callees are kept as calls.
      - the callee contains an unregistered op, or the call sits in an unregistered op's
        region: as in MLIR, nothing is known about whether their semantics survive being
        moved (MLIR asks each dialect's inliner interface; unregistered ones have none).
      - the callee references symbols and the call resolves symbols in another table: the
        references would then name different symbols.

    Unlike MLIR, which simplifies every function of a component before each round, only
    functions that inlining changed are simplified, so IR without inlinable calls is left
    as it was (except for dead private functions).
    """

    name = "inline"
    default_pipeline: str = "canonicalize"
    max_iterations: int = 4

    def __post_init__(self) -> None:
        # Parse the simplification pipeline now, so that a bad one fails when the pipeline
        # naming this pass is parsed rather than halfway through the run. It names passes of
        # irkit, which must be known by name for that.
        if self.max_iterations < 0:
            raise PassPipelineError(f"'inline' option 'max-iterations' must be >= 0, got "
                                    f"{self.max_iterations}")
        register_all()
        self._simplify = PassManager.parse(self.default_pipeline, anchor="func.func")

    def run(self, op: Operation) -> None:
        resolver = _Resolver()
        nodes = [f for f in op.walk(post_order=False)
                 if isinstance(f, FuncOp) and not f.is_declaration]
        edges = {f: _callees(f, resolver) for f in nodes}
        sccs = strongly_connected_components(nodes, edges)
        inliner = _Inliner(resolver, {f: i for i, scc in enumerate(sccs) for f in scc})
        for scc in sccs:
            for _ in range(self.max_iterations):
                changed = inliner.inline_round(scc)
                if not changed:
                    break
                if len(self._simplify):
                    for f in scc:
                        if f in changed:
                            self._simplify.run(f)
        _erase_dead_functions(op, nodes, resolver)


# ---------------------------------------------------------------------------------------------
# Call graph
# ---------------------------------------------------------------------------------------------


class _Resolver:
    """Symbol lookups through one name -> op table per symbol-table op.

    `irkit.symbols.lookup_symbol` scans the table on every lookup, quadratic over a module
    of many calls. The inliner adds no symbols and erases them only at the very end, so the
    tables it builds stay right for the whole run.
    """

    def __init__(self) -> None:
        self._tables: dict[Operation, SymbolTable] = {}

    def _lookup_in(self, table: Operation, ref: SymbolRefAttr) -> Operation | None:
        cur: Operation | None = table
        for name in ref.path:
            if cur is None:
                return None
            symbols = self._tables.get(cur)
            if symbols is None:
                symbols = self._tables[cur] = SymbolTable(cur)
            cur = symbols.lookup(name)
        return cur

    def resolve(self, user: Operation, ref: SymbolRefAttr) -> Operation | None:
        """What `ref` names, searched from the table nearest `user` outwards."""
        table = nearest_symbol_table(user)
        while table is not None:
            found = self._lookup_in(table, ref)
            if found is not None:
                return found
            table = nearest_symbol_table(table)
        return None


def _calls(fn: FuncOp) -> list[CallOp]:
    return [op for op in fn.walk() if isinstance(op, CallOp)]


def _callees(fn: FuncOp, resolver: _Resolver) -> list[FuncOp]:
    """The functions with bodies that `fn` calls directly, each once, in call order."""
    out: dict[FuncOp, None] = {}
    for call in _calls(fn):
        callee = resolver.resolve(call, call.callee)
        if isinstance(callee, FuncOp) and not callee.is_declaration:
            out[callee] = None
    return list(out)


def strongly_connected_components(nodes: list[FuncOp], edges: dict[FuncOp, list[FuncOp]]
                                  ) -> list[list[FuncOp]]:
    """Strongly connected components, each emitted after every component it reaches.

    Iterative, so that a call chain thousands of functions deep does not hit Python's
    recursion limit. Members of a component keep the order of `nodes`.
    """
    position = {f: i for i, f in enumerate(nodes)}
    index: dict[FuncOp, int] = {}
    low: dict[FuncOp, int] = {}
    stack: list[FuncOp] = []
    on_stack: set[FuncOp] = set()
    out: list[list[FuncOp]] = []

    def visit(v: FuncOp) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        work.append((v, iter(edges.get(v, ()))))

    for root in nodes:
        if root in index:
            continue
        work: list = []
        visit(root)
        while work:
            v, successors = work[-1]
            for w in successors:
                if w not in position:
                    continue            # a callee outside the op: not a node
                if w not in index:
                    visit(w)            # descend; v resumes from its iterator later
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index[v]:
                    scc = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        scc.append(w)
                        if w is v:
                            break
                    out.append(sorted(scc, key=position.__getitem__))
    return out


# ---------------------------------------------------------------------------------------------
# Inlining
# ---------------------------------------------------------------------------------------------


class _Inliner:
    """Decides which calls may be inlined and splices callee bodies into callers."""

    def __init__(self, resolver: _Resolver, scc_of: dict[FuncOp, int]) -> None:
        self.resolver = resolver
        self.scc_of = scc_of
        self.rewriter = PatternRewriter()
        # Per callee: whether its body can be spliced at all, and whether it names symbols.
        # Both are asked only once the callee's component is done, so its body is final.
        self._body_ok: dict[FuncOp, bool] = {}
        self._has_refs: dict[FuncOp, bool] = {}
        # Per call that inlining created: the callees whose inlining brought it in.
        self._history: dict[CallOp, frozenset[FuncOp]] = {}

    def inline_round(self, scc: list[FuncOp]) -> set[FuncOp]:
        """Inline the legal calls of `scc`'s functions; returns the functions changed."""
        changed: set[FuncOp] = set()
        for fn in scc:
            for call in _calls(fn):
                callee = self.legal_callee(call, fn)
                if callee is not None and callee not in self._history.get(call, ()):
                    self.inline_call(call, callee)
                    changed.add(fn)
        return changed

    def legal_callee(self, call: CallOp, caller: FuncOp) -> FuncOp | None:
        """The function `call` may be replaced with, or None (see the pass docstring)."""
        if call.no_inline is not None:
            return None
        callee = self.resolver.resolve(call, call.callee)
        if not isinstance(callee, FuncOp) or callee.is_declaration or \
                callee.no_inline is not None:
            return None
        scc = self.scc_of.get(callee)
        if scc is None or scc == self.scc_of.get(caller):
            return None
        parent = call.parent_op
        if parent is None or not parent.is_registered:
            return None
        if not self._splicable(callee):
            return None
        if self._names_symbols(callee) and \
                nearest_symbol_table(call) is not nearest_symbol_table(callee):
            return None
        return callee

    def _splicable(self, callee: FuncOp) -> bool:
        ok = self._body_ok.get(callee)
        if ok is None:
            blocks = callee.body.blocks
            ok = (len(blocks) == 1 and isinstance(blocks[0].last, ReturnOp)
                  and all(op.is_registered for op in callee.walk()))
            self._body_ok[callee] = ok
        return ok

    def _names_symbols(self, callee: FuncOp) -> bool:
        refs = self._has_refs.get(callee)
        if refs is None:
            refs = self._has_refs[callee] = any(
                user is not callee for user, _, _ in symbol_uses(callee))
        return refs

    def inline_call(self, call: CallOp, callee: FuncOp) -> None:
        """Replace `call` with a copy of `callee`'s single-block body."""
        region = Region()
        callee.body.clone_into(region, {})
        block = region.blocks[0]
        history = self._history.pop(call, frozenset()) | {callee}
        for top in block.ops:
            for op in top.walk():
                if isinstance(op, CallOp):
                    self._history[op] = history
        ret = block.last
        returned = ret.operands
        ret.erase()
        if not isinstance(call.location, UnknownLoc):
            _remap_locations(block, call.location)
        args = call.args
        # A returned block argument is the call operand it stands for once inlined.
        results: list[Value] = [args[v.index] if isinstance(v, BlockArgument) and v.owner is block
                                else v for v in returned]
        self.rewriter.inline_block_before(block, call, args)
        self.rewriter.replace_op(call, results)


def _remap_locations(block, caller: Location) -> None:
    """Wrap every location in `block` (ops, nested ops, nested block arguments) as
    `callsite(loc at caller)`, which is how MLIR says "this code came from that call"."""
    wrapped: dict[int, CallSiteLoc] = {}   # by id: one CallSiteLoc per distinct location

    def remap(loc: Location) -> CallSiteLoc:
        new = wrapped.get(id(loc))
        if new is None:
            new = wrapped[id(loc)] = CallSiteLoc(loc, caller)
        return new

    for top in block.ops:
        for op in top.walk():
            op.location = remap(op.location)
            for region in op.regions:
                for nested in region.blocks:
                    for arg in nested.args:
                        if arg.location is not None:
                            arg.location = remap(arg.location)


# ---------------------------------------------------------------------------------------------
# Dead functions
# ---------------------------------------------------------------------------------------------


def _is_private(fn: FuncOp) -> bool:
    vis = fn.sym_visibility
    return vis is not None and vis.value == "private"


def _erase_dead_functions(root: Operation, nodes: list[FuncOp], resolver: _Resolver) -> None:
    """Erase private functions with bodies that no live op references (step 5).

    Liveness propagates as in symbol-dce, restricted to the call graph's discardable nodes:
    a reference from outside every discardable function makes its target live, and a live
    function's own references make theirs live. A function's references to itself do not.
    """
    discardable = {f for f in nodes if _is_private(f)}
    if not discardable:
        return
    refs_from: dict[FuncOp | None, list[FuncOp]] = {}
    for user, _, ref in symbol_uses(root):
        targets = [resolver.resolve(user, SymbolRefAttr(ref.root)), resolver.resolve(user, ref)]
        targets = [t for t in targets if t in discardable]
        if targets:
            refs_from.setdefault(_enclosing(user, discardable), []).extend(targets)
    live: set[FuncOp] = set()
    work = list(refs_from.get(None, ()))
    while work:
        f = work.pop()
        if f not in live:
            live.add(f)
            work.extend(refs_from.get(f, ()))
    dead = [f for f in nodes if f in discardable and f not in live]
    for f in dead:
        f.drop_all_references()
    for f in dead:
        f.detach()


def _enclosing(op: Operation, functions: set[FuncOp]) -> FuncOp | None:
    """The function of `functions` that `op` is or is nested in, if any."""
    cur: Operation | None = op
    while cur is not None:
        if cur in functions:
            return cur
        cur = cur.parent_op
    return None
