"""Adding an elementwise op is one declaration (docs/adding_an_elementwise_op.md): this test
declares `softsign` as the docs do, in a dialect of its own (unregistered afterwards, so the
registry-driven tests never see it), and checks that nothing else is needed for it to parse
and print, run in the interpreter, convert to a linalg.generic whose body is its formula
(and run through MLIR's own pipeline where that is installed), and differentiate in both
modes.
"""

from __future__ import annotations

import numpy as np
import pytest

import irkit
from irkit.dialects.graph import elementwise_op
from irkit.interpreter import Interpreter
from irkit.opdef import Dialect
from irkit.pass_manager import PassManager
from irkit.printer import print_op
from irkit.registry import unregister_dialect
from irkit.symbols import lookup_symbol_in
from irkit.passes.lower_graph_to_linalg import LowerGraphToLinalg

from mlir_oracle import missing_tools, run_mlir


def softsign(s, x):
    """x / (1 + |x|)"""
    return s.div(x, s.add(s.const(1.0, x), s.abs(x)))


def d_softsign(m, x, y, g):
    """dy = dx / (1 + |x|)^2"""
    d = m.add(m.c(1.0, x), m.abs(x))
    return m.div(g, m.mul(d, d))


@pytest.fixture(scope="module")
def op_class():
    dialect = Dialect("testew", "elementwise ops declared by a test")
    try:
        yield elementwise_op("softsign", softsign, kind="float",
                             summary="Softsign, x / (1 + |x|).", derivative=d_softsign,
                             dialect=dialect)
    finally:
        unregister_dialect("testew")


SRC = """
func.func @f(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = testew.softsign %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
"""


def _run(m, fn, *args):
    f = lookup_symbol_in(m, fn)
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in Interpreter(m).call(f, list(args))]


def _expected(x):
    with np.errstate(invalid="ignore"):                     # inf / inf
        return x / (x.dtype.type(1.0) + np.abs(x))


X = np.array([[0.0, -0.0, 1.5], [-3.0, np.inf, np.nan], [1e30, -2.5, 0.25]], np.float32)


def test_the_declaration_parses_prints_and_interprets(op_class):
    assert op_class.name == "testew.softsign"
    doc_example = op_class.__doc__.strip().splitlines()[-1].strip()
    m = irkit.parse_module(f"func.func @g(%x: tensor<4xf32>) {{\n  {doc_example}\n  return\n}}")
    irkit.verify(m)
    text = str(m)
    assert "testew.softsign %" in text and str(irkit.parse_module(text)) == text
    m = irkit.parse_module(SRC)
    irkit.verify(m)
    (got,) = _run(m, "f", X)
    np.testing.assert_array_equal(got, _expected(X))


def test_the_declaration_converts_to_linalg(op_class):
    m = irkit.parse_module(SRC)
    PassManager().add(LowerGraphToLinalg(full=True)).run(m)
    generics = [op for op in m.walk() if op.name == "linalg.generic"]
    assert len(generics) == 1
    body = [op.name for op in generics[0].regions[0].blocks[0].ops]
    assert body == ["arith.constant", "math.absf", "arith.addf", "arith.divf", "linalg.yield"]
    assert "testew.softsign" not in [op.name for op in m.walk()]
    (got,) = _run(m, "f", X)
    np.testing.assert_array_equal(got, _expected(X))
    if missing_tools():
        pytest.skip(f"MLIR toolchain missing: {missing_tools()}")
    (mlir,) = run_mlir(print_op(m, generic=True), "f", [X])
    np.testing.assert_allclose(mlir, _expected(X), rtol=1e-6, equal_nan=True)


def test_the_declaration_differentiates(op_class):
    src = """
    func.func @f(%x: tensor<5xf64>, %s: tensor<5xf64>, %v: tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>) {
      %r = testew.softsign %x : (tensor<5xf64>) -> tensor<5xf64>
      %g = autodiff.grad %r seed %s wrt %x : (tensor<5xf64>, tensor<5xf64>) -> (tensor<5xf64>)
      %t = autodiff.jvp %r wrt %x along %v : (tensor<5xf64>) -> tensor<5xf64>
      return %g, %t : tensor<5xf64>, tensor<5xf64>
    }"""
    m = irkit.parse_module(src)
    PassManager.parse("autodiff,canonicalize,cse").run(m)
    irkit.verify(m)
    rng = np.random.default_rng(3)
    x = rng.uniform(-3, 3, 5)
    x[np.abs(x) < 0.1] = 0.5                                # away from the kink at 0
    s, v = rng.standard_normal(5), rng.standard_normal(5)
    g, t = _run(m, "f", x, s, v)
    h = 1e-6
    slope = (_expected(x + h) - _expected(x - h)) / (2 * h)
    np.testing.assert_allclose(g, s * slope, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(t, v * slope, rtol=1e-6, atol=1e-9)
