"""MLIR as an independent oracle for every example model at the `linalg` stage.

irkit's structured level is MLIR's own `linalg` / `tensor` / `arith` / `math` / `func`, so
MLIR 22 can read it and run it. These tests hold irkit to that on its real output, the
example models' `irkit-compile M.irk --emit=linalg`:

1. Interop. The generic output is accepted by the real `mlir-opt`, and what `mlir-opt`
   prints of it (custom and generic form) reads back into irkit as the same module. The
   `--allow-unregistered-dialect` flag is passed only where irkit-specific ops remain, which
   must be among those `lower-graph-to-linalg` keeps by design (`KEPT`): at the time of
   writing `graph.variable` / `graph.read` (attention, cnn, logreg, mlp), `graph.assign`
   (the training steps of cnn, logreg, mlp), `graph.check` (the label checks of
   `cross_entropy` in cnn and mlp), `graph.if` / `graph.yield` (gate), and the fusion
   level's `fusion.group` / `fusion.yield` (all but gate and seed_ad); seed_ad has none, and
   its custom form is accepted too. "The same module" is compared on irkit's
   generic printing, modulo one thing MLIR legitimately canonicalizes: affine expressions
   are uniqued in a simplified form, so `d5 + d2` comes back as `d2 + d5` (cnn's
   convolution maps). Maps are compared as the affine functions they are (`_canonical`).
2. The oracle. Each model's `forward` and `train_step` at the linalg stage, made MLIR-only
   by `linalg_export.export_function` (fusion groups replaced by their bodies, parameters
   as arguments, assigned variables as extra results, checks dropped, `graph.if` as
   `scf.if`), is lowered and run by MLIR's own
   pipeline (`mlir_oracle`) and compared with irkit's interpreter on the graph-level model
   and with irkit's JIT-compiled code: forward on two input sets from the initial
   parameters, one training step, forward again from the state each engine reached.
3. Random graph programs (`graph_programs`, tests/property/test_lower_graph_programs.py)
   through the pipeline table's `linalg` row, run by MLIR, compared with the interpreter;
   programs with run-time checks included (their checks dropped, inputs valid).

Tolerances (`_assert_close`: |got - want| <= rel * (|want| + max|want|), integers exact).
All three engines compute in f32 with every sum accumulated in f64 and rounded once, so each
output is a chain of at most a few dozen f32 roundings (unit roundoff 6e-8):

- MLIR vs irkit's JIT, `COMPILED_REL = 1e-6`: both run the same linalg kernels (irkit's
  lowering of them, MLIR's `convert-linalg-to-loops`) with sums in the same order; they
  were measured bit-identical on every model, and 1e-6 (16 f32 ulps) leaves room for a
  backend that reorders an f64 sum or another math library, nothing more;
- anything vs irkit's interpreter, `INTERPRETER_REL = 1e-5`: numpy's f32 `exp`/`log`/`tanh`
  differ from the C library's by a few ulps and numpy sums pairwise, not in order; the
  worst measured here was 3e-7 (5 ulps; a `logits` output), and 1e-5 (~170 ulps) leaves a
  wide margin for other inputs while a wrong kernel is off by far more (an input scaled by
  1.001 on the interpreter's side fails, and the mutated kernel below is off by O(1)).

Every reference must be finite, so a NaN on both sides cannot pass as agreement. The JIT
runs at -O0 to keep this file under a minute (its -O2 code, compiled in about four times
the time, gave bit-identical results on every model when checked by hand).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

import irkit
from irkit.affine import AffineBinary, AffineConst, AffineDim, AffineExpr, AffineMap
from irkit.attributes import AffineMapAttr, ArrayAttr, DictionaryAttr
from irkit.interpreter import Interpreter
from irkit.ir import Operation
from irkit.parser import parse_attribute, parse_module
from irkit.pass_manager import PassManager
from irkit.passes import pipeline
from irkit.passes.lower_graph_to_linalg import KEPT

#: the fusion level's own ops, at the linalg stage by design (`linalg-fuse`'s groups)
FUSION = frozenset({"fusion.group", "fusion.yield"})
from irkit.printer import print_op
from irkit.symbols import lookup_symbol_in
from irkit.frontend.dsl import model_modules
from irkit.tools.compile import main as irkit_compile

import mlir_oracle
from linalg_export import ExportedFunction, export_function, initial_state, non_mlir_ops
from mlir_oracle import require_toolchain, run_mlir

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODELS = sorted(p.stem for p in EXAMPLES.glob("*.irk"))

COMPILED_REL = 1e-6
INTERPRETER_REL = 1e-5


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _mlir_opt() -> str:
    """The real mlir-opt (MLIR 22's copy first); skips the test where there is none."""
    pinned = os.path.join(mlir_oracle.LLVM_ROOT, "bin", "mlir-opt")
    found = pinned if os.access(pinned, os.X_OK) else shutil.which("mlir-opt")
    if found is None:
        pytest.skip("mlir-opt not installed (MLIR 22: /usr/lib/llvm-22/bin)")
    return found


def _run_mlir_opt(text: str, *flags: str) -> str:
    proc = subprocess.run([_mlir_opt(), *flags, "-"], input=text, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, f"mlir-opt {' '.join(flags)} rejected it:\n{proc.stderr}"
    return proc.stdout


@functools.cache
def _emit(stem: str, generic: bool = True) -> str:
    """`irkit-compile examples/STEM.irk --emit=linalg [--mlir-print-op-generic]`'s output."""
    with tempfile.TemporaryDirectory(prefix="linalg-oracle-") as tmp:
        out = os.path.join(tmp, f"{stem}.mlir")
        argv = [str(EXAMPLES / f"{stem}.irk"), "--emit=linalg", "-o", out]
        code = irkit_compile(argv + (["--mlir-print-op-generic"] if generic else []))
        assert code == 0, f"irkit-compile {' '.join(argv)} failed (exit {code})"
        return Path(out).read_text()


def _linear(e: AffineExpr) -> dict:
    """`e` as {term: coefficient}, the constant under the key 1: a dim or symbol is its own
    term, a product by a constant scales, and anything else (mod, floordiv, ceildiv, a
    product of two non-constants) is one term, its operands made canonical first."""
    if isinstance(e, AffineConst):
        return {1: e.value} if e.value else {}
    if not isinstance(e, AffineBinary):
        return {e: 1}
    lhs, rhs = _linear(e.lhs), _linear(e.rhs)
    if e.kind == "add":
        out = dict(lhs)
        for k, c in rhs.items():
            out[k] = out.get(k, 0) + c
        return {k: c for k, c in out.items() if c}
    if e.kind == "mul" and (set(lhs) <= {1} or set(rhs) <= {1}):
        scale, other = (lhs.get(1, 0), rhs) if set(lhs) <= {1} else (rhs.get(1, 0), lhs)
        return {k: c * scale for k, c in other.items() if c * scale}
    return {AffineBinary(e.kind, _rebuild(lhs), _rebuild(rhs)): 1}


def _rebuild(terms: dict) -> AffineExpr:
    """The canonical expression of `_linear`'s terms: dims and symbols by position, other
    terms by their text, the constant last."""
    def order(k):
        return (2, 0, str(k)) if k == 1 else (0 if isinstance(k, AffineDim) else 1,
                                              getattr(k, "position", 0), str(k))
    out = None
    for k in sorted(terms, key=order):
        c = terms[k]
        if k == 1:
            term = AffineConst(c)
        elif c == 1:
            term = k
        else:
            term = AffineBinary("mul", k, AffineConst(c))
        out = term if out is None else AffineBinary("add", out, term)
    return out if out is not None else AffineConst(0)


def _canonical(attr):
    """`attr` with every affine map in it (nested in arrays and dictionaries too) rewritten
    into the canonical form of the same affine function."""
    if isinstance(attr, AffineMapAttr):
        m = attr.value
        return AffineMapAttr(AffineMap(m.num_dims, m.num_symbols,
                                       tuple(_rebuild(_linear(r)) for r in m.results)))
    if isinstance(attr, ArrayAttr):
        return ArrayAttr(_canonical(a) for a in attr.value)
    if isinstance(attr, DictionaryAttr):
        return DictionaryAttr({k: _canonical(v) for k, v in attr.value.items()})
    return attr


def _normalized(text: str) -> str:
    """irkit's generic printing of the module `text`, affine maps canonical."""
    module = parse_module(text)
    module.verify()
    for op in module.walk():
        op.properties = {k: _canonical(v) for k, v in op.properties.items()}
        op.attributes = {k: _canonical(v) for k, v in op.attributes.items()}
    return print_op(module, generic=True)


def _assert_close(got, want, rel: float, what: str) -> None:
    """Same shape and dtype; integers equal; floats within `rel` of the value and of the
    array's largest magnitude (see the module docstring), the reference finite."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{what}: got {got.dtype}{got.shape}, want {want.dtype}{want.shape}"
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    assert np.all(np.isfinite(want)), f"{what}: the reference is not finite"
    scale = float(np.abs(want).max(initial=0.0))
    np.testing.assert_allclose(got, want, rtol=rel, atol=rel * scale, err_msg=what)


# ---------------------------------------------------------------------------------------------
# 1. mlir-opt reads irkit's --emit=linalg output, and irkit reads mlir-opt's
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stem", MODELS)
def test_emit_linalg_round_trips_through_mlir_opt(stem):
    text = _emit(stem)
    ours = _normalized(text)
    assert _normalized(_emit(stem, generic=False)) == ours, "custom and generic forms differ"
    left = set(non_mlir_ops(parse_module(text)))
    assert left <= KEPT | FUSION, \
        f"irkit-specific ops beyond those kept by design: {left - KEPT - FUSION}"
    flags = ["--allow-unregistered-dialect"] if left else []
    if not left:                                 # nothing of irkit's: the custom form too
        _run_mlir_opt(_emit(stem, generic=False))
    for printing in ([], ["--mlir-print-op-generic"]):
        theirs = _run_mlir_opt(text, *flags, *printing)
        assert _normalized(theirs) == ours, \
            f"mlir-opt {' '.join(flags + printing)} printed a different module"


def test_affine_maps_compare_as_functions():
    """The map comparison forgives only MLIR's rewriting of the same function."""
    def norm(s):
        return _canonical(parse_attribute(f"affine_map<{s}>"))
    assert norm("(d0, d1) -> (d1 + d0 * 2 + 3)") == norm("(d0, d1) -> (d0 * 2 + 3 + d1)")
    assert norm("(d0, d1) -> (d1 + d0)") != norm("(d0, d1) -> (d1 + d0 * 2)")
    assert norm("(d0, d1) -> (d0 floordiv 2)") != norm("(d0, d1) -> (d1 floordiv 2)")
    assert norm("(d0) -> (d0 - d0)") == norm("(d0) -> (0)")


@pytest.mark.parametrize("stem", MODELS)
def test_exported_functions_mean_the_same_in_custom_and_generic_form(stem):
    """MLIR reads irkit's custom form of every op the oracle runs as it reads the generic
    one: mlir-opt prints the same generic module from both."""
    (model,) = model_modules(parse_module(_emit(stem))).values()
    for fn in ("forward", "train_step"):
        if lookup_symbol_in(model, fn) is None:
            continue
        module = export_function(model, fn).module
        generic = _run_mlir_opt(print_op(module, generic=True), "--mlir-print-op-generic")
        custom = _run_mlir_opt(print_op(module), "--mlir-print-op-generic")
        assert custom == generic, f"@{fn}: irkit's custom form means something else to MLIR"


# ---------------------------------------------------------------------------------------------
# 2. The oracle on every example model
# ---------------------------------------------------------------------------------------------

#: run-time sizes of the models' symbolic dimensions
SIZES = {"B": 3, "T": 4, "N": 5}
#: integer inputs are class labels; both models that take them (cnn, mlp) have 10 classes
#: (a label out of range would make the interpreter raise: a wrong guess fails loudly)
CLASSES = 10
#: float inputs that must be positive (seed_ad takes log(x1))
POSITIVE = {("seed_ad", "x1")}


def _input_sets(stem: str, model) -> list[dict]:
    """Two valid input sets: a random draw and its negation (which flips gate's branch and
    every ReLU; inputs that must be positive keep their sign)."""
    rng = np.random.default_rng(0)
    first, second = {}, {}
    for s in model.inputs:
        shape = tuple(SIZES[d] if isinstance(d, str) else d for d in s.dims)
        if s.dtype.kind != "f":
            first[s.name] = second[s.name] = rng.integers(0, CLASSES, shape).astype(s.dtype)
        elif (stem, s.name) in POSITIVE:
            first[s.name] = second[s.name] = rng.uniform(0.5, 2.0, shape).astype(s.dtype)
        else:
            first[s.name] = rng.normal(size=shape).astype(s.dtype)
            second[s.name] = -first[s.name]
    return [first, second]


class _Oracle:
    """One model run three ways, each engine with its own variables: MLIR (the exported
    functions, the state a dict this class keeps), irkit's interpreter and its JIT."""

    def __init__(self, stem: str):
        path = EXAMPLES / f"{stem}.irk"
        (self.linalg,) = model_modules(parse_module(_emit(stem))).values()
        self.interp = irkit.load_model(path)
        self.jit = irkit.load_model(path, engine="jit", opt_level=0)
        self.state = initial_state(self.linalg)
        self.exported: dict[str, ExportedFunction] = {}

    def function(self, fn: str) -> ExportedFunction:
        if fn not in self.exported:
            self.exported[fn] = export_function(self.linalg, fn)
        return self.exported[fn]

    def step(self, fn: str, given: dict) -> None:
        """Run `fn` on `given` in all three and compare every output and every variable it
        assigns."""
        e = self.function(fn)
        assert e.inputs == tuple(s.name for s in self.interp.inputs), e.inputs
        args = [given[n] for n in e.inputs] + [self.state[n] for n in e.variables]
        got = run_mlir(e.text(), fn, args)
        assert len(got) == len(e.outputs) + len(e.assigned)
        self.state.update(zip(e.assigned, got[len(e.outputs):]))
        want = getattr(self.interp, fn)(**given)
        compiled = getattr(self.jit, fn)(**given)
        assert set(want) == set(compiled) == set(e.outputs), (set(want), e.outputs)
        for name, value in zip(e.outputs, got):
            self._check(f"@{fn} output {name}", value, compiled[name], want[name])
        for name in e.assigned:
            self._check(f"@{fn} variable {name}", self.state[name],
                        self.jit.variables[name], self.interp.variables[name])

    @staticmethod
    def _check(what: str, mlir, compiled, interpreted) -> None:
        _assert_close(mlir, compiled, COMPILED_REL, f"{what}: MLIR vs irkit's JIT")
        _assert_close(mlir, interpreted, INTERPRETER_REL, f"{what}: MLIR vs the interpreter")
        _assert_close(compiled, interpreted, INTERPRETER_REL,
                      f"{what}: irkit's JIT vs the interpreter")


@pytest.mark.parametrize("stem", MODELS)
def test_mlir_runs_every_model_as_irkit_does(stem):
    require_toolchain()
    o = _Oracle(stem)
    # the state MLIR starts from is the one both engines start from
    assert list(o.state) == list(o.interp.variables) == list(o.jit.variables)
    for name, value in o.state.items():
        np.testing.assert_array_equal(value, o.interp.variables[name], err_msg=name)
        np.testing.assert_array_equal(value, o.jit.variables[name], err_msg=name)
    inputs = _input_sets(stem, o.interp)
    for given in inputs:
        o.step("forward", given)
    if o.interp.trainable:
        o.step("train_step", inputs[0])
        assert o.function("train_step").assigned, "a training step that assigns nothing"
        for given in inputs:                     # from the state each engine reached
            o.step("forward", given)


def test_gate_inputs_take_both_branches():
    """The oracle's inputs for gate (`if sum(x) < sum(y)`) run both of its branches."""
    model = irkit.load_model(EXAMPLES / "gate.irk")
    taken = {bool(g["x"].sum() < g["y"].sum()) for g in _input_sets("gate", model)}
    assert taken == {True, False}


def test_the_oracle_catches_a_wrong_kernel():
    """A comparison that cannot fail proves nothing: one `mulf` of seed_ad's forward made an
    `addf` (in the exported IR, after irkit is done) must be reported."""
    require_toolchain()
    o = _Oracle("seed_ad")
    e = o.function("forward")
    mul = next(op for op in e.module.walk() if op.name == "arith.mulf")
    bad = Operation.create("arith.addf", mul.operands, [r.type for r in mul.results],
                           dict(mul.properties))
    mul.parent.insert_before(mul, bad)
    mul.replace_all_uses_with(bad.results)
    mul.erase()
    with pytest.raises(AssertionError, match="MLIR vs irkit's JIT"):
        o.step("forward", _input_sets("seed_ad", o.interp)[0])


# ---------------------------------------------------------------------------------------------
# 3. Random graph programs
# ---------------------------------------------------------------------------------------------


def _graph_programs():
    """tests/property's generator of graph programs (imported when first drawn, so that this
    file does not depend on the property tests' imports to be collected)."""
    folder = str(Path(__file__).resolve().parents[1] / "property")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        from programs import graph_programs             # if it has moved to the generators
    except ImportError:
        from test_lower_graph_programs import graph_programs
    return graph_programs()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.deferred(_graph_programs))
def test_mlir_runs_random_graph_programs_as_the_interpreter_does(case):
    require_toolchain()
    module, args = case
    f = lookup_symbol_in(module, "f")
    with np.errstate(all="ignore"):
        want = Interpreter(module).call(f, [np.array(a) for a in args])
    lowered = module.clone()
    PassManager.parse(pipeline.passes_between(pipeline.DEV_STAGE, "linalg")).run(lowered)
    e = export_function(lowered, "f")
    if e.dropped_checks:
        event("run-time checks dropped")   # --hypothesis-show-statistics counts them
    got = run_mlir(e.text(), "f", [np.array(a, order="C") for a in args])
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        _assert_close(g, w, INTERPRETER_REL, f"result {i}\n{e.text()}")


def test_broadcast_to_of_a_dynamic_size_one_axis():
    """The smallest program the random test found: `tensor<?xf32>` (size 1 at run time)
    broadcast to [1, 1]. The rule once fed the `?` axis to `linalg.broadcast` against a
    static init axis, which MLIR's verifier rejects (sizes must match exactly); the input is
    now cast to the init's sizes first."""
    require_toolchain()
    module = parse_module(
        "func.func @f(%x: tensor<?xf32>) -> tensor<1x1xf32> {\n"
        "  %0 = graph.broadcast_to %x {shape = array<i64: 1, 1>} : (tensor<?xf32>) -> "
        "tensor<1x1xf32>\n"
        "  return %0 : tensor<1x1xf32>\n}")
    x = np.array([0.5], np.float32)
    want = Interpreter(module).call(lookup_symbol_in(module, "f"), [x])
    PassManager.parse(pipeline.passes_between(pipeline.DEV_STAGE, "linalg")).run(module)
    got = run_mlir(export_function(module, "f").text(), "f", [x])
    _assert_close(got[0], want[0], INTERPRETER_REL, "broadcast_to")
