"""The inline pass: programs compute the same before and after, on hand-written modules and on
random call trees (hypothesis); plus what must stay a call, the call graph's SCC order,
locations, the inline history and the options."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import irkit
from irkit.attributes import CallSiteLoc, NameLoc
from irkit.parser import parse_module
from irkit.pass_manager import PassManager, PassPipelineError, lookup_pass
from irkit.passes.inline import strongly_connected_components
from irkit.printer import print_op
from irkit.symbols import lookup_symbol_in


def run_inline(text: str, pipeline: str = "inline", **parse_kwargs):
    """(module before, module after) for `text`; the after-module has been verified."""
    before = parse_module(textwrap.dedent(text), **parse_kwargs)
    after = parse_module(textwrap.dedent(text), **parse_kwargs)
    PassManager.parse(pipeline).run(after)
    after.verify()
    return before, after


def calls_in(module, fname: str) -> list[str]:
    fn = lookup_symbol_in(module, fname)
    return [op.callee.root for op in fn.walk() if op.name == "func.call"]


def functions(module) -> list[str]:
    return [op.sym_name.value for op in module.walk() if op.name == "func.func"]


# ----- hand-written programs ------------------------------------------------------------------

PROGRAMS = {
    "chain": ("""
        func.func private @sq(%x: i64) -> i64 {
          %0 = arith.muli %x, %x : i64
          return %0 : i64
        }
        func.func private @sq_plus(%x: i64, %y: i64) -> i64 {
          %0 = func.call @sq(%x) : (i64) -> i64
          %1 = arith.addi %0, %y : i64
          return %1 : i64
        }
        func.func @main(%a: i64, %b: i64) -> i64 {
          %0 = func.call @sq_plus(%a, %b) : (i64, i64) -> i64
          %1 = func.call @sq_plus(%0, %a) : (i64, i64) -> i64
          %2 = func.call @sq(%1) : (i64) -> i64
          return %2 : i64
        }
        """, [(3, 4), (-7, 11), (2**40, 5)]),
    # Several results, one of them an argument passed straight through; constants as args.
    "multi_result": ("""
        func.func private @divmod(%x: i32, %y: i32) -> (i32, i32, i32) {
          %c1 = arith.constant 1 : i32
          %d = arith.ori %y, %c1 : i32
          %q = arith.divui %x, %d : i32
          %r = arith.remui %x, %d : i32
          return %q, %r, %x : i32, i32, i32
        }
        func.func @main(%a: i32, %b: i32) -> i32 {
          %c10 = arith.constant 10 : i32
          %q, %r, %x = func.call @divmod(%a, %c10) : (i32, i32) -> (i32, i32, i32)
          %q2:3 = func.call @divmod(%b, %q) : (i32, i32) -> (i32, i32, i32)
          %s = arith.addi %q, %r : i32
          %t = arith.muli %s, %x : i32
          %u = arith.xori %t, %q2#1 : i32
          return %u : i32
        }
        """, [(123, 7), (0, 0), (-5, 1000)]),
    "floats_public_callee": ("""
        func.func @poly(%x: f64) -> f64 {
          %c3 = arith.constant 3.0 : f64
          %c1 = arith.constant -1.5 : f64
          %0 = arith.mulf %x, %x : f64
          %1 = arith.mulf %0, %c3 : f64
          %2 = arith.addf %1, %c1 : f64
          return %2 : f64
        }
        func.func @main(%a: f64, %b: f64) -> f64 {
          %0 = func.call @poly(%a) : (f64) -> f64
          %c2 = arith.constant 2.0 : f64
          %1 = func.call @poly(%c2) : (f64) -> f64
          %2 = arith.subf %0, %1 : f64
          %3 = math.sqrt %b : f64
          %4 = arith.addf %2, %3 : f64
          return %4 : f64
        }
        """, [(1.5, 4.0), (-2.0, 0.25), (0.0, 9.0)]),
    "no_results": ("""
        func.func private @nothing(%x: i64) {
          return
        }
        func.func @main(%a: i64, %b: i64) -> i64 {
          func.call @nothing(%a) : (i64) -> ()
          %0 = arith.subi %a, %b : i64
          return %0 : i64
        }
        """, [(1, 2), (-3, 3)]),
}


@pytest.mark.parametrize("pipeline", ["inline", "inline{default-pipeline=}"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_compute_the_same(name, pipeline):
    text, inputs = PROGRAMS[name]
    before, after = run_inline(text, pipeline)
    assert calls_in(after, "main") == []
    for args in inputs:
        want = irkit.interpret(before, "main", *args)
        got = irkit.interpret(after, "main", *args)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # Private callees went with their calls; public ones stay.
    assert all(lookup_symbol_in(after, f).sym_visibility is None for f in functions(after))
    if name == "floats_public_callee":
        assert "poly" in functions(after)


def test_canonicalize_runs_on_changed_functions_only():
    text = """
        func.func private @id(%x: i32) -> i32 {
          return %x : i32
        }
        func.func @caller() -> i32 {
          %c = arith.constant 4 : i32
          %0 = func.call @id(%c) : (i32) -> i32
          %1 = arith.addi %0, %c : i32
          return %1 : i32
        }
        func.func @untouched(%x: i32) -> i32 {
          %c0 = arith.constant 0 : i32
          %0 = arith.addi %x, %c0 : i32
          return %0 : i32
        }
    """
    _, after = run_inline(text)
    caller = print_op(lookup_symbol_in(after, "caller"))
    assert "arith.constant 8" in caller and "addi" not in caller
    assert "arith.addi" in print_op(lookup_symbol_in(after, "untouched"))


# ----- what stays a call ----------------------------------------------------------------------

def test_recursion_is_not_inlined_and_does_not_unroll():
    # @rec doubles its calls each time it is inlined; the inline history must stop that.
    text = """
        func.func @rec(%x: i64) -> i64 {
          %0 = func.call @rec(%x) : (i64) -> i64
          %1 = func.call @rec(%0) : (i64) -> i64
          return %1 : i64
        }
        func.func @a(%x: i64) -> i64 {
          %0 = func.call @b(%x) : (i64) -> i64
          return %0 : i64
        }
        func.func @b(%x: i64) -> i64 {
          %0 = func.call @a(%x) : (i64) -> i64
          return %0 : i64
        }
        func.func @outside(%x: i64) -> i64 {
          %0 = func.call @rec(%x) : (i64) -> i64
          return %0 : i64
        }
    """
    _, after = run_inline(text, "inline{max-iterations=8}")
    assert calls_in(after, "rec") == ["rec", "rec"]
    assert calls_in(after, "a") == ["b"]
    assert calls_in(after, "b") == ["a"]
    assert calls_in(after, "outside") == ["rec", "rec"]


def test_calls_that_stay_calls():
    text = """
        func.func private @decl(i32) -> i32
        func.func private @sq(%x: i32) -> i32 {
          %0 = arith.muli %x, %x : i32
          return %0 : i32
        }
        func.func private @opaque(%x: i32) -> i32 {
          %0 = "test.opaque"(%x) : (i32) -> i32
          return %0 : i32
        }
        func.func private @never(%x: i32) -> i32 attributes {no_inline} {
          return %x : i32
        }
        func.func @main(%x: i32) -> i32 {
          %0 = func.call @decl(%x) : (i32) -> i32
          %1 = func.call @opaque(%0) : (i32) -> i32
          %2 = func.call @never(%1) : (i32) -> i32
          %3 = func.call @sq(%2) {no_inline} : (i32) -> i32
          %4 = "test.region"() ({
            %5 = func.call @sq(%3) : (i32) -> i32
            "test.yield"(%5) : (i32) -> ()
          }) : () -> i32
          return %4 : i32
        }
    """
    _, after = run_inline(text, allow_unregistered=True)
    assert calls_in(after, "main") == ["decl", "opaque", "never", "sq", "sq"]
    assert functions(after) == ["decl", "sq", "opaque", "never", "main"]


def test_callee_naming_symbols_of_another_table_is_not_inlined():
    # Inlined into @inner::@h, @f's `call @g` would name the inner @g instead of the outer.
    text = """
        func.func private @g() -> i32
        func.func private @f() -> i32 {
          %0 = func.call @g() : () -> i32
          return %0 : i32
        }
        func.func @same_table() -> i32 {
          %0 = func.call @f() : () -> i32
          return %0 : i32
        }
        module @inner {
          func.func private @g() -> i32
          func.func @h() -> i32 {
            %0 = func.call @f() : () -> i32
            return %0 : i32
          }
        }
    """
    _, after = run_inline(text)
    assert calls_in(after, "same_table") == ["g"]
    inner = lookup_symbol_in(after, "inner")
    h = lookup_symbol_in(inner, "h")
    assert [op.callee.root for op in h.walk() if op.name == "func.call"] == ["f"]
    assert "f" in functions(after)


def test_dead_private_functions_are_erased():
    text = """
        func.func private @dead() {
          return
        }
        func.func private @cycle_a() {
          func.call @cycle_b() : () -> ()
          return
        }
        func.func private @cycle_b() {
          func.call @cycle_a() : () -> ()
          return
        }
        func.func private @by_attr() {
          return
        }
        func.func private @decl()
        func.func @main() attributes {keep = @by_attr} {
          return
        }
    """
    _, after = run_inline(text)
    assert functions(after) == ["by_attr", "decl", "main"]


# ----- call graph, locations, options ---------------------------------------------------------

def test_tarjan_is_bottom_up_and_iterative():
    # 0 -> 1 -> 2 -> 1 (cycle {1, 2}), 2 -> 3, plus a 5000-deep chain 4 -> 5 -> ...
    edges = {0: [1], 1: [2], 2: [1, 3], 3: []}
    chain = list(range(4, 5004))
    edges.update({n: [n + 1] for n in chain[:-1]})
    edges[chain[-1]] = []
    sccs = strongly_connected_components(list(edges), edges)
    assert sccs[:3] == [[3], [1, 2], [0]]
    assert sccs[3:] == [[n] for n in reversed(chain)]


def test_locations_become_callsites():
    text = """
        func.func private @sq(%x: i32) -> i32 {
          %0 = arith.muli %x, %x : i32 loc("sq_mul")
          return %0 : i32
        }
        func.func @main(%x: i32) -> i32 {
          %0 = func.call @sq(%x) : (i32) -> i32 loc("the_call")
          %1 = func.call @sq(%0) : (i32) -> i32 loc(unknown)
          return %1 : i32
        }
    """
    _, after = run_inline(text, "inline{default-pipeline=}")
    first, second = [op for op in lookup_symbol_in(after, "main").walk()
                     if op.name == "arith.muli"]
    assert isinstance(first.location, CallSiteLoc)
    assert first.location.callee == NameLoc("sq_mul")
    assert first.location.caller == NameLoc("the_call")
    # An unknown call location adds nothing: the op keeps its own.
    assert second.location == NameLoc("sq_mul")


def test_max_iterations_zero_inlines_nothing():
    text, _ = PROGRAMS["chain"]
    _, after = run_inline(text, "inline{max-iterations=0}")
    assert calls_in(after, "main") == ["sq_plus", "sq_plus", "sq"]


def test_options():
    cls = lookup_pass("inline")
    p = cls.from_options({"default-pipeline": "canonicalize,cse", "max-iterations": "2"})
    assert p.pipeline_text() == "inline{default-pipeline=canonicalize,cse max-iterations=2}"
    assert PassManager.parse("inline{default-pipeline=}").elements[0].default_pipeline == ""
    with pytest.raises(PassPipelineError, match="no-such-pass"):
        PassManager.parse("inline{default-pipeline=no-such-pass}")
    with pytest.raises(PassPipelineError, match="max-iterations"):
        PassManager.parse("inline{max-iterations=-1}")


# ----- random call trees ----------------------------------------------------------------------

BINOPS = ["addi", "subi", "muli", "xori", "andi", "ori", "maxsi", "minui"]


@st.composite
def call_trees(draw):
    """(module text, public function names): functions f0..fn over i64, where fk calls only
    fj with j > k (a DAG, so a tree of calls once unfolded), with random constants, one to
    three results, results sometimes returned arguments, private or public at random."""
    n = draw(st.integers(1, 6))
    nres = [draw(st.integers(1, 3)) for _ in range(n)]
    public = [k == 0 or draw(st.booleans()) for k in range(n)]
    funcs = []
    for k in range(n):
        lines, values, counter = [], ["%a", "%b"], 0
        for _ in range(draw(st.integers(0, 8))):
            kind = draw(st.sampled_from(["const", "binop", "call", "call"]))
            name = f"%v{counter}"
            counter += 1
            if kind == "const":
                c = draw(st.integers(-2**63, 2**63 - 1))
                lines.append(f"{name} = arith.constant {c} : i64")
                values.append(name)
            elif kind == "binop" or k == n - 1:
                op = draw(st.sampled_from(BINOPS))
                x, y = draw(st.sampled_from(values)), draw(st.sampled_from(values))
                lines.append(f"{name} = arith.{op} {x}, {y} : i64")
                values.append(name)
            else:
                j = draw(st.integers(k + 1, n - 1))
                x, y = draw(st.sampled_from(values)), draw(st.sampled_from(values))
                r = nres[j]
                res = ", ".join(["i64"] * r)
                lines.append(f"{name}:{r} = func.call @f{j}({x}, {y}) : (i64, i64) -> ({res})")
                values.extend(f"{name}#{i}" for i in range(r))
        rets = [draw(st.sampled_from(values)) for _ in range(nres[k])]
        rtypes = ", ".join(["i64"] * nres[k])
        vis = "" if public[k] else "private "
        body = "\n".join(f"  {line}" for line in lines)
        funcs.append(f"func.func {vis}@f{k}(%a: i64, %b: i64) -> ({rtypes}) {{\n{body}\n"
                     f"  return {', '.join(rets)} : {rtypes}\n}}")
    return "\n".join(funcs), [f"f{k}" for k in range(n) if public[k]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call_trees(), st.lists(st.tuples(st.integers(-2**63, 2**63 - 1),
                                        st.integers(-2**63, 2**63 - 1)), min_size=1, max_size=3),
       st.sampled_from(["inline", "inline{default-pipeline=}"]))
def test_random_call_trees(program, inputs, pipeline):
    text, entries = program
    before, after = run_inline(text, pipeline)
    # Bottom-up, every callee is call-free before it is copied: one round inlines it all,
    # and every private function is then dead.
    for name in functions(after):
        assert calls_in(after, name) == [], text
    assert sorted(functions(after)) == sorted(entries), text
    for args in inputs:
        for name in entries:
            want = irkit.interpret(before, name, *args)
            got = irkit.interpret(after, name, *args)
            assert np.array_equal(np.asarray(got), np.asarray(want)), \
                f"{name}{args}: {got} != {want}\n{text}\n---\n{print_op(after)}"
