"""Graph control flow: deadness in the interpreter (switch/merge), graph.if, and the pass
graph-raise-control-flow, which must keep every program's results (checked on hand-written
programs, on the gate model taking both branches, and on random nested conditionals written
in the DSL's dataflow form, against a numpy evaluation of the same expression)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from irkit.diagnostics import capture
from irkit.interpreter import DEAD, Interpreter, InterpreterError, interpret
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.printer import print_op
from irkit.symbols import lookup_symbol_in

T3 = "tensor<3xf32>"
SWITCH3 = f"({T3}, tensor<i1>) -> ({T3}, {T3})"
MERGE3 = f"({T3}, {T3}) -> ({T3}, tensor<i32>)"


def module(text: str):
    m = parse_module(textwrap.dedent(text))
    m.verify()
    return m


def after(text_or_module, pipeline: str):
    m = module(text_or_module) if isinstance(text_or_module, str) else text_or_module
    PassManager.parse(pipeline).run(m)
    m.verify()
    return m


def names(m) -> set[str]:
    return {op.name for op in m.walk()}


def run_env(m, fn: str, *args) -> tuple[dict, list]:
    """Run `fn` keeping the value environment of its body, to look at dead values."""
    f = lookup_symbol_in(m, fn)
    env: dict = {}
    out = Interpreter(m).run_region(f.regions[0], list(args), env)
    return env, out


def value_named(m, fn: str, op_name: str, index: int = 0, result: int = 0):
    f = lookup_symbol_in(m, fn)
    return [op for op in f.walk() if op.name == op_name][index].results[result]


def f32(*xs) -> np.ndarray:
    return np.array(xs, dtype=np.float32)


# ----- interpreter deadness ------------------------------------------------------------------

CHAIN = f"""
func.func @chain(%x: {T3}, %p: tensor<i1>) -> {T3} {{
  %f, %t = graph.switch %x, %p : {SWITCH3}
  %n = graph.neg %t : ({T3}) -> {T3}
  %e = graph.exp %n : ({T3}) -> {T3}
  %v, %i = graph.merge %f, %e : {MERGE3}
  return %v : {T3}
}}
"""


@pytest.mark.parametrize("pred", [False, True])
def test_ops_fed_by_a_dead_value_are_dead(pred):
    m = module(CHAIN)
    x = f32(1, -2, 3)
    env, out = run_env(m, "chain", x, np.array(pred))
    neg, exp = value_named(m, "chain", "graph.neg"), value_named(m, "chain", "graph.exp")
    if pred:
        np.testing.assert_array_equal(env[exp], np.exp(-x))
        np.testing.assert_array_equal(out[0], np.exp(-x))
    else:
        assert env[neg] is DEAD and env[exp] is DEAD
        np.testing.assert_array_equal(out[0], x)
    index = value_named(m, "chain", "graph.merge", result=1)
    assert env[index].dtype == np.int32 and int(env[index]) == int(pred)


UPDATE = f"""
graph.variable @v : {T3} init zeros
func.func @update(%x: {T3}, %p: tensor<i1>) -> {T3} {{
  %f, %t = graph.switch %x, %p : {SWITCH3}
  %d = graph.add %t, %t : ({T3}, {T3}) -> {T3}
  graph.assign @v, %d : {T3}
  %r = graph.read @v : {T3}
  return %r : {T3}
}}
"""


@pytest.mark.parametrize("raised", [False, True])
def test_assign_of_a_dead_value_leaves_the_variable(raised):
    m = module(UPDATE)
    if raised:
        m = after(m, "graph-raise-control-flow")
        assert "graph.switch" not in names(m) and "graph.if" in names(m)
    f = lookup_symbol_in(m, "update")
    interp = Interpreter(m)
    x = f32(1, 2, 3)
    np.testing.assert_array_equal(interp.call(f, [x, np.array(False)])[0], np.zeros(3))
    np.testing.assert_array_equal(interp.call(f, [x, np.array(True)])[0], 2 * x)
    # state persists across calls: a later untaken update keeps the last written value
    np.testing.assert_array_equal(interp.call(f, [x + 1, np.array(False)])[0], 2 * x)
    np.testing.assert_array_equal(interp.state["graph.variables"]["v"], 2 * x)


NESTED = f"""
func.func @nested(%x: {T3}, %p: tensor<i1>, %q: tensor<i1>) -> {T3} {{
  %xf, %xt = graph.switch %x, %p : {SWITCH3}
  %qf, %qt = graph.switch %q, %p : (tensor<i1>, tensor<i1>) -> (tensor<i1>, tensor<i1>)
  %yf, %yt = graph.switch %xt, %qt : {SWITCH3}
  %s = graph.sin %yt : ({T3}) -> {T3}
  %c = graph.cos %yf : ({T3}) -> {T3}
  %in, %ii = graph.merge %c, %s : {MERGE3}
  %n = graph.neg %xf : ({T3}) -> {T3}
  %r, %ri = graph.merge %n, %in : {MERGE3}
  return %r : {T3}
}}
"""


def nested_ref(x, p, q):
    return (np.sin(x) if q else np.cos(x)) if p else -x


@pytest.mark.parametrize("p,q", [(False, False), (False, True), (True, False), (True, True)])
def test_merge_of_dead_inputs_is_dead(p, q):
    m = module(NESTED)
    x = f32(0.5, 1, 2)
    env, out = run_env(m, "nested", x, np.array(p), np.array(q))
    inner = value_named(m, "nested", "graph.merge")
    assert (env[inner] is DEAD) == (not p)
    np.testing.assert_array_equal(out[0], nested_ref(x, p, q))
    raised = after(NESTED, "graph-raise-control-flow")
    assert names(raised) & {"graph.switch", "graph.merge"} == set()
    np.testing.assert_array_equal(interpret(raised, "nested", x, p, q), nested_ref(x, p, q))


def test_merge_of_two_live_inputs_is_an_error():
    m = module(f"""
    func.func @both(%a: {T3}, %b: {T3}) -> {T3} {{
      %v, %i = graph.merge %a, %b : {MERGE3}
      return %v : {T3}
    }}
    """)
    with pytest.raises(InterpreterError, match="'graph.merge' got 2 live inputs") as e:
        interpret(m, "both", f32(1, 2, 3), f32(4, 5, 6))
    assert e.value.diagnostic.location.file_line_col()[1] == 3


def test_returning_a_dead_value_is_an_error():
    m = module(f"""
    func.func @leak(%x: {T3}, %p: tensor<i1>) -> {T3} {{
      %f, %t = graph.switch %x, %p : {SWITCH3}
      return %t : {T3}
    }}
    """)
    np.testing.assert_array_equal(interpret(m, "leak", f32(1, 2, 3), True), f32(1, 2, 3))
    with pytest.raises(InterpreterError, match="dead value"):
        interpret(m, "leak", f32(1, 2, 3), False)


# ----- graph.if ------------------------------------------------------------------------------

IF_UPDATE = f"""
graph.variable @v : {T3} init ones
func.func @f(%p: tensor<i1>, %x: {T3}) -> {T3} {{
  %r = graph.if %p -> ({T3}) {{
    graph.yield %x : {T3}
  }} else {{
    graph.assign @v, %x : {T3}
    %n = graph.neg %x : ({T3}) -> {T3}
    graph.yield %n : {T3}
  }}
  return %r : {T3}
}}
"""


@pytest.mark.parametrize("pred", [False, True])
def test_if_runs_only_the_taken_region(pred):
    m = module(IF_UPDATE)
    interp = Interpreter(m)
    x = f32(1, 2, 3)
    out = interp.call(lookup_symbol_in(m, "f"), [np.array(pred), x])[0]
    np.testing.assert_array_equal(out, x if pred else -x)
    written = "v" in interp.state.get("graph.variables", {})
    assert written == (not pred)


def test_if_with_a_dead_predicate_is_dead():
    m = module(f"""
    func.func @f(%x: {T3}, %p: tensor<i1>, %q: tensor<i1>) -> {T3} {{
      %qf, %qt = graph.switch %q, %p : (tensor<i1>, tensor<i1>) -> (tensor<i1>, tensor<i1>)
      %xf, %xt = graph.switch %x, %p : {SWITCH3}
      %r = graph.if %qt -> ({T3}) {{
        graph.yield %xt : {T3}
      }} else {{
        %n = graph.neg %xt : ({T3}) -> {T3}
        graph.yield %n : {T3}
      }}
      %v, %i = graph.merge %xf, %r : {MERGE3}
      return %v : {T3}
    }}
    """)
    x = f32(1, 2, 3)
    env, out = run_env(m, "f", x, np.array(False), np.array(True))
    assert env[value_named(m, "f", "graph.if")] is DEAD
    np.testing.assert_array_equal(out[0], x)
    np.testing.assert_array_equal(interpret(m, "f", x, True, False), -x)


def test_if_yielding_a_dead_capture_is_dead():
    # A raised conditional nested in a dataflow one: the if's predicate is live, but the
    # value it yields comes from an untaken branch, so its result is dead, not an error.
    m = module(f"""
    func.func @f(%x: {T3}, %p: tensor<i1>, %q: tensor<i1>) -> {T3} {{
      %xf, %xt = graph.switch %x, %p : {SWITCH3}
      %r = graph.if %q -> ({T3}) {{
        %n = graph.neg %xt : ({T3}) -> {T3}
        graph.yield %n : {T3}
      }} else {{
        graph.yield %xt : {T3}
      }}
      %v, %i = graph.merge %xf, %r : {MERGE3}
      return %v : {T3}
    }}
    """)
    x = f32(1, 2, 3)
    for q in (False, True):
        np.testing.assert_array_equal(interpret(m, "f", x, False, q), x)
        np.testing.assert_array_equal(interpret(m, "f", x, True, q), -x if q else x)


# ----- the gate model ------------------------------------------------------------------------

GATE = """
func.func @gate(%x: tensor<?xf32>, %y: tensor<?xf32>, %z: tensor<?xf32>) -> tensor<?xf32> {
  %sx = graph.reduce_sum %x : (tensor<?xf32>) -> tensor<f32>
  %sy = graph.reduce_sum %y : (tensor<?xf32>) -> tensor<f32>
  %p = graph.cmp %sx, %sy {predicate = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %xf, %xt = graph.switch %x, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %zf, %zt = graph.switch %z, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %yf, %yt = graph.switch %y, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %a = graph.add %xt, %zt : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %b = graph.mul %yf, %yf : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %r, %i = graph.merge %b, %a : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<i32>)
  return %r : tensor<?xf32>
}
"""


def gate_ref(x, y, z):
    return x + z if np.sum(x) < np.sum(y) else y * y


@pytest.mark.parametrize("stage", ["", "graph-raise-control-flow",
                                   "graph-raise-control-flow,canonicalize"])
def test_gate_takes_both_branches(stage):
    m = after(GATE, stage) if stage else module(GATE)
    if stage:
        assert names(m) & {"graph.switch", "graph.merge"} == set()
    x, y, z = f32(1, 2, 3, 4), f32(5, 6, 7, 8), f32(10, 20, 30, 40)
    np.testing.assert_array_equal(interpret(m, "gate", x, y, z), x + z)       # 10 < 26
    np.testing.assert_array_equal(interpret(m, "gate", y, x, z), x * x)       # 26 > 10
    for n in (0, 1, 5):
        rng = np.random.default_rng(n)
        a, b, c = (rng.normal(size=n).astype(np.float32) for _ in range(3))
        np.testing.assert_array_equal(interpret(m, "gate", a, b, c), gate_ref(a, b, c))


GATE_STAGES = [module(GATE), after(GATE, "graph-raise-control-flow"),
               after(GATE, "graph-raise-control-flow,canonicalize")]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 6).flatmap(lambda n: st.tuples(*[
    st.lists(st.floats(-100, 100, width=32), min_size=n, max_size=n) for _ in range(3)])))
def test_gate_raising_keeps_results(xyz):
    x, y, z = (np.array(v, dtype=np.float32) for v in xyz)
    want = gate_ref(x, y, z)
    for m in GATE_STAGES:
        np.testing.assert_array_equal(interpret(m, "gate", x, y, z), want)


# ----- the pass on what it must leave alone --------------------------------------------------

def test_unraisable_subgraph_is_left_with_a_remark():
    text = f"""
    func.func @f(%x: {T3}, %p: tensor<i1>) -> {T3} {{
      %xf, %xt = graph.switch %x, %p : {SWITCH3}
      %a = graph.add %xf, %xt : ({T3}, {T3}) -> {T3}
      %v, %i = graph.merge %a, %xt : {MERGE3}
      return %v : {T3}
    }}
    """
    before = print_op(module(text))
    with capture() as diags:
        m = after(text, "graph-raise-control-flow")
    assert print_op(m) == before
    assert [d.severity for d in diags] == ["remark"]
    assert "'graph.add' uses values of both branches" in diags[0].message


def test_side_effects_are_not_reordered():
    # Moving the assign to where the merge is would put it after the read.
    text = f"""
    graph.variable @v : {T3} init zeros
    func.func @f(%x: {T3}, %p: tensor<i1>) -> ({T3}, {T3}) {{
      %xf, %xt = graph.switch %x, %p : {SWITCH3}
      graph.assign @v, %xt : {T3}
      %r = graph.read @v : {T3}
      %n = graph.neg %xt : ({T3}) -> {T3}
      %v, %i = graph.merge %xf, %n : {MERGE3}
      return %v, %r : {T3}, {T3}
    }}
    """
    with capture() as diags:
        m = after(text, "graph-raise-control-flow")
    assert "graph.switch" in names(m)
    assert "would reorder it with 'graph.read'" in diags[0].message


def test_merge_index_becomes_the_predicate():
    text = f"""
    func.func @f(%x: {T3}, %p: tensor<i1>) -> (tensor<i32>, tensor<i32>) {{
      %xf, %xt = graph.switch %x, %p : {SWITCH3}
      %n = graph.neg %xt : ({T3}) -> {T3}
      %v, %i = graph.merge %xf, %n : {MERGE3}
      %w, %j = graph.merge %n, %xf : {MERGE3}
      return %i, %j : tensor<i32>, tensor<i32>
    }}
    """
    m = after(text, "graph-raise-control-flow")
    assert names(m) & {"graph.switch", "graph.merge"} == set()
    for p in (False, True):
        i, j = interpret(m, "f", f32(1, 2, 3), p)
        assert (int(i), int(j)) == (int(p), int(not p))


# ----- random nested conditionals in the DSL's dataflow form ---------------------------------

VEC = "tensor<4xf32>"
SCALAR = "tensor<f32>"
_UNARY = {"neg": np.negative, "sin": np.sin, "tanh": np.tanh}
_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum}
_CMP = {"lt": np.less, "gt": np.greater}


def expressions(depth: int):
    """Expressions over vectors x, y and scalars a, b, c: ("var", v), ("const", k),
    ("un", op, e), ("bin", op, e, e), ("if", (s, cmp, s), then, else, order, use_index)."""
    leaf = st.one_of(st.sampled_from([("var", "x"), ("var", "y")]),
                     st.integers(-3, 3).map(lambda k: ("const", float(k))))
    if depth == 0:
        return leaf
    sub = expressions(depth - 1)
    pred = st.tuples(st.sampled_from("abc"), st.sampled_from(sorted(_CMP)),
                     st.sampled_from("abc"))
    return st.one_of(
        leaf,
        st.tuples(st.just("un"), st.sampled_from(sorted(_UNARY)), sub),
        st.tuples(st.just("bin"), st.sampled_from(sorted(_BINARY)), sub, sub),
        st.tuples(st.just("if"), pred, sub, sub, st.sampled_from(["ft", "tf"]), st.booleans()),
    )


def reference(e, env: dict) -> np.ndarray:
    """numpy evaluation of an expression (the independent oracle)."""
    kind = e[0]
    if kind == "var":
        return env[e[1]]
    if kind == "const":
        return np.full(4, e[1], np.float32)
    if kind == "un":
        return _UNARY[e[1]](reference(e[2], env))
    if kind == "bin":
        return _BINARY[e[1]](reference(e[2], env), reference(e[3], env))
    (l, cmp, r), then, other, order, use_index = e[1:]
    taken = bool(_CMP[cmp](env[l], env[r]))
    value = reference(then if taken else other, env)
    if use_index:
        index = (1 if taken else 0) if order == "ft" else (0 if taken else 1)
        value = value + np.float32(index)
    return value


class _Emitter:
    """Writes an expression as the DSL's frontend would: every outer value a branch reads goes
    through one graph.switch on the branch predicate, a branch result that reads no switch
    output of its conditional is itself switched, and each result is a graph.merge."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0
        self.deps: dict[str, set] = {}          # SSA name -> predicates it was switched by

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def op(self, text: str, deps: set) -> str:
        name = self.fresh()
        self.lines.append(f"  {name} = {text}")
        self.deps[name] = deps
        return name

    def switch(self, value: str, pred: str, t: str) -> tuple[str, str]:
        name = self.fresh()
        self.lines.append(f"  {name}:2 = graph.switch {value}, {pred} : ({t}, tensor<i1>) -> "
                          f"({t}, {t})")
        # switched values depend on the predicate and on whatever the predicate depends on
        deps = self.deps[value] | {pred} | self.deps[pred]
        for side in ("#0", "#1"):
            self.deps[name + side] = deps
        return name + "#0", name + "#1"

    def emit(self, e, scope: "_Scope") -> str:
        kind = e[0]
        if kind == "var":
            return scope.view(e[1], self)
        if kind == "const":
            return self.op(f"graph.constant dense<{e[1]:.1f}> : {VEC}", set())
        if kind == "un":
            a = self.emit(e[2], scope)
            return self.op(f"graph.{e[1]} {a} : ({VEC}) -> {VEC}", set(self.deps[a]))
        if kind == "bin":
            a, b = self.emit(e[2], scope), self.emit(e[3], scope)
            return self.op(f"graph.{e[1]} {a}, {b} : ({VEC}, {VEC}) -> {VEC}",
                           self.deps[a] | self.deps[b])
        (l, cmp, r), then, other, order, use_index = e[1:]
        lv, rv = scope.view(l, self), scope.view(r, self)
        p = self.op(f'graph.cmp {lv}, {rv} {{predicate = "{cmp}"}} : ({SCALAR}, {SCALAR}) -> '
                    "tensor<i1>", self.deps[lv] | self.deps[rv])
        shared: dict = {}
        results = []
        for side, branch in ((1, then), (0, other)):
            value = self.emit(branch, _Scope(scope, p, side, shared))
            if p not in self.deps[value]:
                value = self.switch(value, p, VEC)[side]
            results.append(value)
        t, f = results
        ins = (f, t) if order == "ft" else (t, f)
        m = self.fresh()
        self.lines.append(f"  {m}:2 = graph.merge {ins[0]}, {ins[1]} : ({VEC}, {VEC}) -> "
                          f"({VEC}, tensor<i32>)")
        deps = (self.deps[t] | self.deps[f]) - {p}
        self.deps[m + "#0"] = self.deps[m + "#1"] = deps
        if not use_index:
            return m + "#0"
        c = self.op(f"graph.cast {m}#1 : (tensor<i32>) -> {SCALAR}", deps)
        return self.op(f"graph.add {m}#0, {c} : ({VEC}, {SCALAR}) -> {VEC}", deps)


class _Scope:
    """The values of the variables as one branch sees them (switched from the outer scope)."""

    def __init__(self, parent=None, pred=None, side=None, shared=None) -> None:
        self.parent, self.pred, self.side, self.shared = parent, pred, side, shared
        self.views: dict = {}

    def view(self, var: str, em: _Emitter) -> str:
        if var in self.views:
            return self.views[var]
        if self.parent is None:
            em.deps.setdefault(f"%{var}", set())
            return f"%{var}"
        outer = self.parent.view(var, em)
        if var not in self.shared:
            self.shared[var] = em.switch(outer, self.pred, VEC if var in "xy" else SCALAR)
        self.views[var] = self.shared[var][self.side]
        return self.views[var]


def dataflow_program(e) -> str:
    em = _Emitter()
    out = em.emit(e, _Scope())
    body = "\n".join(em.lines)
    return (f"func.func @f(%x: {VEC}, %y: {VEC}, %a: {SCALAR}, %b: {SCALAR}, %c: {SCALAR}) "
            f"-> {VEC} {{\n{body}\n  return {out} : {VEC}\n}}\n")


@settings(max_examples=120, deadline=None)
@given(expressions(3), st.lists(st.floats(-2, 2, width=32), min_size=11, max_size=11))
def test_random_conditionals_raise_and_keep_results(e, values):
    v = np.array(values, dtype=np.float32)
    env = {"x": v[0:4], "y": v[4:8], "a": v[8].reshape(()), "b": v[9].reshape(()),
           "c": v[10].reshape(())}
    with np.errstate(all="ignore"):
        want = reference(e, env)
    text = dataflow_program(e)
    args = [env[k] for k in "xyabc"]
    stages = [module(text)]
    with capture() as diags:
        stages.append(after(text, "graph-raise-control-flow"))
    assert not diags, [d.message for d in diags]
    assert names(stages[1]) & {"graph.switch", "graph.merge"} == set(), print_op(stages[1])
    stages.append(after(stages[1], "canonicalize"))
    for m in stages:
        np.testing.assert_array_equal(interpret(m, "f", *args), want)
