"""bufferize: each function on tensors is run by the interpreter before and after the pass,
and the bufferized function (output buffers allocated here and filled with garbage that must
be overwritten, variables bound to numpy arrays) must give the same results, leave its
inputs untouched, and free every buffer it allocates (the memory dialect's interpreter also
rejects reads of freed memory, indices out of bounds and copies between overlapping
buffers). Where the pass promises a shape of code (in place, no copy, a view) the test
counts the ops.

Programs come three ways: hand-written linalg/tensor IR (every rule, with the in-place
decisions on both sides), graph programs taken through `lower-graph-to-linalg,bufferize`,
and the same through `lower-linalg-to-loop` compiled by the CPU backend.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.attributes import numpy_dtype
from irkit.diagnostics import IRError
from irkit.interpreter import Interpreter, to_value
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in
from irkit.types import MemRefType, RankedTensorType
from irkit.passes.bufferize import Bufferize
from output_buffers import garbage

F32 = np.float32


# ---------------------------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------------------------


def bufferize(src: str, **options):
    """Parse `src`, bufferize it (verified after the pass) and return the module, whose text
    must read back as itself."""
    m = parse_module(src)
    PassManager().add(Bufferize(**options)).run(m)
    text = str(m)
    assert str(parse_module(text)) == text
    return m


def run_tensors(m, fn: str, args):
    f = lookup_symbol_in(m, fn)
    ftype = f.properties["function_type"].value
    interp = Interpreter(m)
    with np.errstate(all="ignore"):
        out = interp.call(f, [to_value(a, t) for a, t in zip(args, ftype.inputs)])
    return [np.asarray(o) for o in out], interp.state.get("graph.variables", {})


def run_buffers(m, fn: str, args, out_likes, variables: dict, status=None):
    """Call bufferized `fn`: inputs, output buffers shaped like `out_likes`, the variable
    buffers its arguments name, its status buffer if it has one. Returns the outputs, then
    the non-tensor results."""
    f = lookup_symbol_in(m, fn)
    ftype = f.properties["function_type"].value
    attrs = f.properties.get("arg_attrs")
    outs = [garbage(o.shape, o.dtype) for o in out_likes]
    expect_ok = status is None
    status = np.zeros(3, np.int64) if status is None else status
    vals, inputs = [], []
    for i, t in enumerate(ftype.inputs):
        if i < len(args):
            a = args[i]
            v = np.array(a, numpy_dtype(t.element), order="C") \
                if isinstance(t, MemRefType) else to_value(a, t)
            vals.append(v)
            inputs.append((v, np.array(v, copy=True)))
        elif i < len(args) + len(outs):
            vals.append(outs[i - len(args)])
        elif "graph.status" in attrs[i].value:
            vals.append(status)
        else:
            vals.append(variables[attrs[i].value["graph.variable"].value])
    interp = Interpreter(m)
    with np.errstate(all="ignore"):
        scalars = interp.call(f, vals)
    leaked = interp.state.get("memory.allocated", {})
    assert not leaked, f"{len(leaked)} buffers allocated and never freed"
    assert not (expect_ok and status[0]), f"a run-time check failed: status {status}"
    for now, before in inputs:
        np.testing.assert_array_equal(now, before, err_msg="an input was written")
    return outs + [np.asarray(v) for v in scalars]


def same(got, want, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got, want)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _initial_variables(m) -> dict:
    return {op.properties["sym_name"].value: op.initial_value()
            for op in m.walk() if op.name == "graph.variable"}


def check(src: str, *arg_sets, fn: str = "f", **options):
    """Bufferize `src` and compare `fn` with the tensor program on each tuple of arguments;
    returns the bufferized module."""
    before = parse_module(src)
    before.verify()
    initial = _initial_variables(before)
    after = bufferize(src, **options)
    for args in arg_sets:
        want, want_vars = run_tensors(before, fn, args)
        variables = {k: np.array(v, copy=True) for k, v in initial.items()}
        results = lookup_symbol_in(before, fn).properties["function_type"].value.results
        tensors = [w for w, t in zip(want, results) if isinstance(t, RankedTensorType)]
        others = [w for w, t in zip(want, results) if not isinstance(t, RankedTensorType)]
        got = run_buffers(after, fn, args, tensors, variables)
        for i, (g, w) in enumerate(zip(got, tensors + others)):
            same(g, w, f"result #{i}")
        for name, w in want_vars.items():
            same(variables[name], w, f"variable @{name}")
    return after


def count(m, name: str) -> int:
    return sum(1 for op in m.walk() if op.name == name)


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).normal(size=shape).astype(F32)


ID2 = "affine_map<(d0, d1) -> (d0, d1)>"
ROW = "affine_map<(d0, d1) -> (d0)>"
PAR2 = '["parallel", "parallel"]'


DYN, MAT4 = "tensor<?x3xf32>", "tensor<4x3xf32>"


def mapped(out: str, fn: str, ins: list[str], init: str, t: str = DYN) -> str:
    """`out = fn(ins...)` elementwise by `linalg.map` into `init`, whose value it ignores."""
    return (f"{out} = linalg.map {{ {fn} }} ins({', '.join(ins)} : "
            f"{', '.join([t] * len(ins))}) outs({init} : {t})")


def update(out: str, fn: str, x: str, init: str, t: str = DYN) -> str:
    """`out = fn(init, x)` elementwise by a `linalg.generic` reading its init."""
    return f"""{out} = linalg.generic {{indexing_maps = [{ID2}, {ID2}], iterator_types = {PAR2}}}
      ins({x} : {t}) outs({init} : {t}) {{
  ^bb0(%a: f32, %o: f32):
    %u = {fn} %o, %a : f32
    linalg.yield %u : f32
  }} -> {t}"""


# ---------------------------------------------------------------------------------------------
# Structured ops: destinations, in place, copies
# ---------------------------------------------------------------------------------------------

CHAIN = f"""
func.func @f(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?xf32>) {{
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  {mapped("%r", "arith.addf", ["%x", "%y"], "%e")}
  %e2 = tensor.empty(%n) : tensor<?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?xf32>) -> tensor<?xf32>
  %s = linalg.generic {{indexing_maps = [{ID2}, {ROW}],
                        iterator_types = ["parallel", "reduction"]}}
      ins(%r : tensor<?x3xf32>) outs(%f : tensor<?xf32>) {{
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  }} -> tensor<?xf32>
  {update("%r2", "arith.mulf", "%y", "%r")}
  return %r2, %s : tensor<?x3xf32>, tensor<?xf32>
}}"""


def test_values_computed_in_their_outputs():
    """The fill, the reduction into it, the sum that a later op overwrites in place, and
    that op: all in the two outputs, with no buffer of their own and no copy."""
    m = check(CHAIN, (rand(4, 3), rand(4, 3, seed=1)), (rand(0, 3), rand(0, 3)))
    assert count(m, "memory.alloc") == 0 and count(m, "memory.copy") == 0
    assert count(m, "linalg.generic") == 2 and count(m, "linalg.fill") == 1


INPLACE = f"""
func.func @f(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {{
  %e = tensor.empty() : tensor<4x3xf32>
  {mapped("%a", "math.exp", ["%x"], "%e", MAT4)}
  {update("%b", "arith.addf", "%x", "%a", MAT4)}
  {mapped("%c", "arith.mulf", ["%b", "%b"], "%e", MAT4)}
  RETURN
}}"""


def test_dead_init_overwritten_in_place():
    """%a is read by nothing after %b's op: %b is computed in %a's buffer, which %b then
    owns and frees after %c."""
    m = check(INPLACE.replace("RETURN", "return %c : tensor<4x3xf32>"), (rand(4, 3),))
    assert count(m, "memory.alloc") == 1 and count(m, "memory.copy") == 0
    assert count(m, "memory.dealloc") == 1


def test_live_init_copied():
    """%a is still read after the op that updates it: that op writes a copy."""
    src = INPLACE.replace("RETURN", f"""{mapped("%d", "arith.subf", ["%a", "%c"], "%e", MAT4)}
  return %d : tensor<4x3xf32>""")
    m = check(src, (rand(4, 3),))
    assert count(m, "memory.copy") == 1


def test_init_read_in_the_body_is_not_overwritten():
    """The op gathers from its own init (a `tensor.extract` in the body, reversed rows):
    writing in place would read elements it already overwrote."""
    src = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%a : tensor<4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %c3 = arith.constant 3 : index
    %j = arith.subi %c3, %i : index
    %v = tensor.extract %a[%j] : tensor<4xf32>
    %s = arith.subf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %b : tensor<4xf32>
}"""
    m = check(src, (np.arange(4, dtype=F32),))
    assert count(m, "memory.copy") == 1


def test_argument_init_is_copied_not_written():
    """An argument is the caller's: the update goes to the output, after a copy."""
    src = f"""
func.func @f(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {{
  {update("%r", "arith.addf", "%y", "%x")}
  return %r : tensor<?x3xf32>
}}"""
    m = check(src, (rand(2, 3), rand(2, 3, seed=3)))
    assert count(m, "memory.copy") == 1 and count(m, "memory.alloc") == 0


def test_init_not_read_by_the_body_is_not_copied():
    src = f"""
func.func @f(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {{
  {mapped("%r", "arith.addf", ["%y", "%y"], "%x")}
  return %r : tensor<?x3xf32>
}}"""
    m = check(src, (rand(2, 3), rand(2, 3, seed=3)))
    assert count(m, "memory.copy") == 0


def test_named_ops_and_splat_inputs():
    """Named ops keep their class and body on buffers; a splat input of a generic is read
    as its scalar, so the constant needs no buffer."""
    src = """
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant dense<2.0> : tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>)
                     outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %two : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  } -> tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<4x2xf32>
  %t = linalg.transpose ins(%s : tensor<2x4xf32>) outs(%e2 : tensor<4x2xf32>)
                        permutation = [1, 0]
  return %t : tensor<4x2xf32>
}"""
    m = check(src, (rand(2, 3), rand(3, 4, seed=1)))
    assert count(m, "linalg.matmul") == 1 and count(m, "linalg.transpose") == 1
    assert count(m, "memory.alloc") == 2          # the matmul's and the product's


# ---------------------------------------------------------------------------------------------
# tensor ops
# ---------------------------------------------------------------------------------------------


def test_slices_are_views():
    """extract_slice is a subview of its source, which lives as long as the slice."""
    src = f"""
func.func @f(%x: tensor<?x3xf32>) -> tensor<2x3xf32> {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  {mapped("%a", "math.exp", ["%x"], "%e")}
  %s = tensor.extract_slice %a[1, 0] [2, 3] [1, 1] : tensor<?x3xf32> to tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  {mapped("%r", "arith.mulf", ["%s", "%s"], "%e2", "tensor<2x3xf32>")}
  return %r : tensor<2x3xf32>
}}"""
    m = check(src, (rand(4, 3),))
    assert count(m, "memory.subview") == 1 and count(m, "memory.copy") == 0


def test_slice_of_an_init_overwritten_later_keeps_its_value():
    """The slice is read after the op that would overwrite its source in place: that op
    writes a new buffer instead."""
    src = f"""
func.func @f(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>) {{
  %e = tensor.empty() : tensor<4x3xf32>
  {mapped("%a", "math.exp", ["%x"], "%e", MAT4)}
  %s = tensor.extract_slice %a[1, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
  {update("%b", "arith.mulf", "%x", "%a", MAT4)}
  %e2 = tensor.empty() : tensor<2x3xf32>
  {mapped("%r", "math.sqrt", ["%s"], "%e2", "tensor<2x3xf32>")}
  return %b, %r : tensor<4x3xf32>, tensor<2x3xf32>
}}"""
    check(src, (rand(4, 3),))


TAPS = """
func.func @f(%x: tensor<4x2xf32>, %y: tensor<4x2xf32>) -> (tensor<4x6xf32>, tensor<4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = tensor.extract_slice %acc[0, 1] [4, 2] [1, 2] : tensor<4x6xf32> to tensor<4x2xf32>
  %s2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                         affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x2xf32>) outs(%s : tensor<4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.subf %o, %a : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %acc2 = tensor.insert_slice %s2 into %acc[0, 1] [4, 2] [1, 2]
      : tensor<4x2xf32> into tensor<4x6xf32>
  %t = tensor.extract_slice %acc2[0, 0] [4, 2] [1, 2] : tensor<4x6xf32> to tensor<4x2xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                         affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x2xf32>) outs(%t : tensor<4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.addf %o, %a : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %acc3 = tensor.insert_slice %t2 into %acc2[0, 0] [4, 2] [1, 2]
      : tensor<4x2xf32> into tensor<4x6xf32>
  RETURN
}"""


def test_window_updated_in_place_and_put_back():
    """The tiling pattern (pooling gradients are written so): each window of the
    accumulator is updated where it lies and the insert copies nothing."""
    m = check(TAPS.replace("RETURN", "return %acc3, %x : tensor<4x6xf32>, tensor<4x2xf32>"),
              (rand(4, 2), rand(4, 2, seed=1)))
    assert count(m, "memory.copy") == 1 and count(m, "memory.alloc") == 0   # %x returned
    # The first window is still read after its update (returned): %acc keeps a buffer of
    # its own, and the update is computed apart from it.
    m = check(TAPS.replace("RETURN", "return %acc3, %s : tensor<4x6xf32>, tensor<4x2xf32>"),
              (rand(4, 2), rand(4, 2, seed=1)))
    assert count(m, "memory.alloc") == 2


def test_rank_reducing_slice_is_copied():
    src = """
func.func @f(%x: tensor<4x3xf32>, %i: index) -> tensor<3xf32> {
  %s = tensor.extract_slice %x[%i, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
  return %s : tensor<3xf32>
}"""
    check(src, (rand(4, 3), 2))


def test_insert_slice_concat_pad():
    src = """
func.func @f(%x: tensor<?x3xf32>, %y: tensor<2x3xf32>, %v: f32)
    -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x5xf32>) {
  %c1 = arith.constant 1 : index
  %ins = tensor.insert_slice %y into %x[%c1, 0] [2, 3] [1, 1]
      : tensor<2x3xf32> into tensor<?x3xf32>
  %cat = tensor.concat dim(0) %x, %y, %x : (tensor<?x3xf32>, tensor<2x3xf32>, tensor<?x3xf32>)
      -> tensor<?x3xf32>
  %p = tensor.pad %x low[1, 0] high[%c1, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<?x3xf32> to tensor<?x5xf32>
  return %ins, %cat, %p : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x5xf32>
}"""
    m = check(src, (rand(4, 3), rand(2, 3, seed=1), np.float32(7.0)))
    assert count(m, "memory.alloc") == 0            # each op writes its output


def test_pad_value_from_the_position():
    src = """
func.func @f(%x: tensor<2x2xf32>) -> tensor<4x3xf32> {
  %p = tensor.pad %x low[1, 0] high[1, 1] {
  ^bb0(%i: index, %j: index):
    %k = arith.addi %i, %j : index
    %ki = arith.index_cast %k : index to i32
    %f = arith.sitofp %ki : i32 to f32
    tensor.yield %f : f32
  } : tensor<2x2xf32> to tensor<4x3xf32>
  return %p : tensor<4x3xf32>
}"""
    check(src, (rand(2, 2),))


RESHAPES = f"""
func.func @f(%x: tensor<?x6xf32>) -> (tensor<?x2x3xf32>, tensor<?xf32>) {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6xf32>
  %e = tensor.empty(%n) : tensor<?x6xf32>
  {mapped("%a", "math.exp", ["%x"], "%e", "tensor<?x6xf32>")}
  %b = tensor.expand_shape %a [[0], [1, 2]] output_shape [%n, 2, 3]
      : tensor<?x6xf32> into tensor<?x2x3xf32>
  %e3 = tensor.empty(%n) : tensor<?x2x3xf32>
  %c = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                         affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%b : tensor<?x2x3xf32>) outs(%e3 : tensor<?x2x3xf32>) {{
  ^bb0(%v: f32, %o: f32):
    %s = arith.negf %v : f32
    linalg.yield %s : f32
  }} -> tensor<?x2x3xf32>
  %d = tensor.collapse_shape %x [[0, 1]] : tensor<?x6xf32> into tensor<?xf32>
  return %c, %d : tensor<?x2x3xf32>, tensor<?xf32>
}}"""


def test_reshapes_are_views_of_bytes():
    """A fresh value that is reshaped is made as bytes with a typed view, and the reshape
    is one more view; an argument is copied into fresh bytes first."""
    m = check(RESHAPES, (rand(3, 6),), (rand(0, 6),))
    assert count(m, "memory.view") == 4            # %a, %b; the copy of %x and %d
    assert count(m, "memory.copy") == 2            # %x into bytes; %d into its output


def test_reshape_of_a_slice_copies():
    src = """
func.func @f(%x: tensor<4x6xf32>) -> tensor<12xf32> {
  %s = tensor.extract_slice %x[0, 0] [2, 6] [2, 1] : tensor<4x6xf32> to tensor<2x6xf32>
  %d = tensor.collapse_shape %s [[0, 1]] : tensor<2x6xf32> into tensor<12xf32>
  return %d : tensor<12xf32>
}"""
    check(src, (rand(4, 6),))


def test_elements_and_casts():
    src = """
func.func @f(%x: tensor<?x3xf32>, %v: f32, %i: index) -> (tensor<4x3xf32>, tensor<2xf32>,
    tensor<?x3xf32>, tensor<2x2xi32>, f32, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.cast %x : tensor<?x3xf32> to tensor<4x3xf32>
  %a = tensor.extract %x[%i, %c1] : tensor<?x3xf32>
  %fe = tensor.from_elements %a, %v : tensor<2xf32>
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %sp = tensor.splat %v[%n] : tensor<?x3xf32>
  %ins = tensor.insert %a into %sp[%c0, %c0] : tensor<?x3xf32>
  %g = tensor.generate {
  ^bb0(%p: index, %q: index):
    %s = arith.muli %p, %q : index
    %si = arith.index_cast %s : index to i32
    tensor.yield %si : i32
  } : tensor<2x2xi32>
  return %t, %fe, %ins, %g, %a, %n : tensor<4x3xf32>, tensor<2xf32>, tensor<?x3xf32>,
      tensor<2x2xi32>, f32, index
}"""
    check(src, (rand(4, 3), np.float32(2.5), 3))


def test_constants():
    src = """
func.func @f(%x: tensor<2x2xi32>) -> (tensor<2x2xi32>, tensor<2x2xi32>) {
  %k = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %s = arith.constant dense<5> : tensor<2x2xi32>
  %e = tensor.empty() : tensor<2x2xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %k : tensor<2x2xi32>, tensor<2x2xi32>) outs(%e : tensor<2x2xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %p = arith.muli %a, %b : i32
    linalg.yield %p : i32
  } -> tensor<2x2xi32>
  return %r, %s : tensor<2x2xi32>, tensor<2x2xi32>
}"""
    m = check(src, (np.arange(4, dtype=np.int32).reshape(2, 2),))
    assert count(m, "memory.store") == 4 and count(m, "linalg.fill") == 1
    with pytest.raises(IRError, match="max-constant-elements=3"):
        bufferize(src, max_constant_elements=3)


# ---------------------------------------------------------------------------------------------
# Variables, conditionals, checks, graph ops lowered straight to loops
# ---------------------------------------------------------------------------------------------

VARIABLES = """
graph.variable @w : tensor<4x3xf32> init zeros
func.func @f(%x: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %w = graph.read @w : tensor<4x3xf32>
  %s = tensor.extract_slice %w[1, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.addf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x3xf32>
  graph.assign @w, %n : tensor<4x3xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %r = linalg.copy ins(%s : tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %w2 = graph.read @w : tensor<4x3xf32>
  return %r, %w2 : tensor<2x3xf32>, tensor<4x3xf32>
}"""


def _copy_generic(t: str) -> str:
    return (f"linalg.generic {{indexing_maps = [{ID2}, {ID2}], iterator_types = {PAR2}}} "
            f"ins(%s : {t}) outs(%e2 : {t}) {{\n  ^bb0(%a: f32, %o: f32):\n"
            f"    linalg.yield %a : f32\n  }} -> {t}")


def test_variable_read_copied_when_overwritten_while_a_view_is_live():
    """The slice of @w is read after @w is assigned: the read copies @w first (the slice
    means the old @w). The second read is @w's buffer itself, copied into the output at
    the return."""
    src = VARIABLES.replace(
        "linalg.copy ins(%s : tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>",
        _copy_generic("tensor<2x3xf32>"))
    m = check(src, (rand(4, 3),))
    assert count(m, "memory.copy") == 3     # the snapshot, the assign, the second read


def test_variable_read_without_copy():
    src = """
graph.variable @w : tensor<4x3xf32> init zeros
func.func @f(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = graph.read @w : tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.subf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x3xf32>
  graph.assign @w, %n : tensor<4x3xf32>
  return %n : tensor<4x3xf32>
}"""
    m = check(src, (rand(4, 3),))
    assert count(m, "memory.copy") == 1     # the assign only: %n is computed in the output


CONDITIONALS = f"""
func.func @f(%p: tensor<i1>, %x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  {mapped("%a", "math.exp", ["%x"], "%e")}
  %r = graph.if %p -> (tensor<?x3xf32>) {{
    {update("%b", "arith.mulf", "%x", "%a")}
    graph.yield %b : tensor<?x3xf32>
  }} else {{
    %e2 = tensor.empty(%n) : tensor<?x3xf32>
    {mapped("%c", "math.sqrt", ["%x"], "%e2")}
    {update("%c2", "arith.subf", "%x", "%c")}
    graph.yield %c2 : tensor<?x3xf32>
  }}
  %t = graph.if %p -> (tensor<?x3xf32>) {{
    graph.yield %a : tensor<?x3xf32>
  }} else {{
    {mapped("%d", "arith.mulf", ["%a", "%a"], "%e")}
    graph.yield %d : tensor<?x3xf32>
  }}
  {mapped("%u", "arith.subf", ["%t", "%a"], "%e")}
  return %r, %u : tensor<?x3xf32>, tensor<?x3xf32>
}}"""


def test_conditionals():
    """`graph.if` branches bufferize with the same rules: the returned result is computed
    in its output (the then branch after a copy of %a, which is read after the if; the
    else branch in place of its own fresh value), the dynamic one is yielded."""
    for p in (True, False):
        m = check(CONDITIONALS, (np.array(p), rand(4, 3)), (np.array(p), rand(0, 3)))
    assert count(m, "loop.if") == 2


CHECKS = """
func.func @f(%x: tensor<?xi64>, %n: index) -> tensor<?xi64> {
  %c0 = arith.constant 0 : index
  %pos = arith.cmpi sgt, %n, %c0 : index
  graph.check %pos, %n, %c0
      {message = "'graph.foo' failed: {value} classes, need more than {bound}"} : index, index
  %m = tensor.dim %x, %c0 : tensor<?xi64>
  %e = tensor.empty(%m) : tensor<?xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<?xi64>) outs(%e : tensor<?xi64>) {
  ^bb0(%v: i64, %o: i64):
    %ni = arith.index_cast %n : index to i64
    %ok = arith.cmpi slt, %v, %ni : i64
    graph.check %ok, %v, %n
        {message = "'graph.foo' failed: label {value} out of range for {bound} classes"}
        : i64, index
    linalg.yield %v : i64
  } -> tensor<?xi64>
  return %r : tensor<?xi64>
}"""


def test_checks_report_through_the_status_buffer():
    """graph.check, at function level and in a body, is a memory.check with codes 1, 2
    into the status argument: zero when all is well, else the first failure's code, value
    and bound (the interpreter raised on the tensor program)."""
    m = check(CHECKS, (np.array([0, 2, 1]), 3))
    f = lookup_symbol_in(m, "f")
    assert "graph.status" in f.properties["arg_attrs"][-1].value
    status = np.zeros(3, np.int64)
    run_buffers(m, "f", [np.array([0, 5, 1]), 3], [np.zeros(3, np.int64)], {}, status)
    assert list(status) == [2, 5, 3]
    status = np.zeros(3, np.int64)
    run_buffers(m, "f", [np.array([0]), 0], [np.zeros(1, np.int64)], {}, status)
    assert list(status[:1]) == [1]
    with pytest.raises(IRError, match="label 5 out of range for 3 classes"):
        run_tensors(parse_module(CHECKS), "f", [np.array([0, 5, 1]), 3])


def test_graph_ops_without_a_structured_form_use_their_loop_rule():
    """graph.scatter_add (indirect writes) is lowered straight to loops, reading the
    buffer the generic before it wrote and writing the output."""
    src = f"""
func.func @f(%d: tensor<?x3xf32>, %i: tensor<?xi64>, %u: tensor<?x3xf32>) -> tensor<?x3xf32> {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %d, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  {mapped("%a", "math.exp", ["%d"], "%e")}
  %s = graph.scatter_add %a, %i, %u : (tensor<?x3xf32>, tensor<?xi64>, tensor<?x3xf32>)
      -> tensor<?x3xf32>
  return %s : tensor<?x3xf32>
}}"""
    m = check(src, (rand(4, 3), np.array([1, 3, 1]), rand(3, 3, seed=2)))
    assert count(m, "graph.scatter_add") == 0 and count(m, "loop.for") >= 1


@pytest.mark.parametrize("src, line, message", [
    ("""func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}""", 2, "cannot bufferize 'arith.addf': no rule for it"),
    ("""func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}""", 5, "cannot bufferize 'func.call' of '@g'"),
    ("""func.func @f(%x: tensor<?x4xf32>, %k: index) -> index {
  %0 = tensor.dim %x, %k : tensor<?x4xf32>
  return %0 : index
}""", 2, "'tensor.dim' of a dimension that is not a constant"),
])
def test_errors_are_located(src, line, message):
    with pytest.raises(IRError, match=message) as info:
        bufferize(src)
    assert f":{line}:8: error:" in str(info.value)


# ---------------------------------------------------------------------------------------------
# Graph programs through the new ladder
# ---------------------------------------------------------------------------------------------

LINALG = "lower-graph-to-linalg,bufferize"
LOOPS = "lower-graph-to-linalg,bufferize,lower-linalg-to-loop"


def _through(src: str, pipeline: str):
    m = parse_module(src)
    PassManager.parse(f"builtin.module({pipeline})").run(m)
    return m


GRAPH_PROGRAMS = {
    "broadcast_reduce_argmax": ("""
func.func @f(%x: tensor<?x4xf32>, %y: tensor<4xf32>, %z: tensor<?x4xi32>)
    -> (tensor<?xf32>, tensor<?xi64>, tensor<4x?xf32>, tensor<?x4xi32>, tensor<f32>) {
  %0 = graph.add %x, %y : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = graph.gelu %0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = graph.reduce_max %1 {axes = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?xf32>
  %3 = graph.argmax %x {axis = 1 : i64} : (tensor<?x4xf32>) -> tensor<?xi64>
  %4 = graph.log_softmax %0 {axis = 0 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %5 = graph.transpose %4 : (tensor<?x4xf32>) -> tensor<4x?xf32>
  %6 = graph.relu %z : (tensor<?x4xi32>) -> tensor<?x4xi32>
  %7 = graph.reduce_mean %1 : (tensor<?x4xf32>) -> tensor<f32>
  return %2, %3, %5, %6, %7
      : tensor<?xf32>, tensor<?xi64>, tensor<4x?xf32>, tensor<?x4xi32>, tensor<f32>
}""", lambda: (rand(5, 4), rand(4), np.arange(-10, 10, dtype=np.int32).reshape(5, 4))),
    "matmul_reshape_slices": ("""
func.func @f(%a: tensor<?x3x4xf32>, %b: tensor<4x2xf32>)
    -> (tensor<?x6xf32>, tensor<?x2x3xf32>, tensor<?x6xf32>) {
  %0 = graph.matmul %a, %b : (tensor<?x3x4xf32>, tensor<4x2xf32>) -> tensor<?x3x2xf32>
  %1 = graph.reshape %0 {shape = array<i64: -1, 6>} : (tensor<?x3x2xf32>) -> tensor<?x6xf32>
  %2 = graph.transpose %0 {perm = array<i64: 0, 2, 1>} : (tensor<?x3x2xf32>) -> tensor<?x2x3xf32>
  %3 = graph.concat %1, %1 {axis = 0 : i64} : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
  %4 = graph.slice %3 {starts = array<i64: 1, 0>, stops = array<i64: -1, 6>,
                       steps = array<i64: 1, 1>} : (tensor<?x6xf32>) -> tensor<?x6xf32>
  return %1, %2, %4 : tensor<?x6xf32>, tensor<?x2x3xf32>, tensor<?x6xf32>
}""", lambda: (rand(3, 3, 4), rand(4, 2))),
    "softmax_cross_entropy": ("""
func.func @f(%x: tensor<?x5xf32>, %l: tensor<?xi64>) -> (tensor<?x5xf32>, tensor<f32>) {
  %0 = graph.softmax %x {axis = 1 : i64} : (tensor<?x5xf32>) -> tensor<?x5xf32>
  %1 = graph.cross_entropy %x, %l : (tensor<?x5xf32>, tensor<?xi64>) -> tensor<f32>
  return %0, %1 : tensor<?x5xf32>, tensor<f32>
}""", lambda: (rand(4, 5), np.array([0, 4, 2, 1]))),
}


def _graph_case(name: str, pipeline: str):
    src, make_args = GRAPH_PROGRAMS[name]
    graph = parse_module(src)
    args = list(make_args())
    want, _ = run_tensors(graph, "f", args)
    return _through(src, pipeline), args, want


@pytest.mark.parametrize("name", sorted(GRAPH_PROGRAMS))
def test_graph_programs_through_linalg_and_bufferize(name):
    m, args, want = _graph_case(name, LINALG)
    assert not any(op.name.startswith(("tensor.", "graph.")) for op in m.walk()
                   if op.name != "graph.variable")
    got = run_buffers(m, "f", args, want, {})
    for i, (g, w) in enumerate(zip(got, want)):
        same(g, w, f"result #{i}")


def _has_status(m) -> bool:
    attrs = lookup_symbol_in(m, "f").properties.get("arg_attrs")
    return bool(attrs) and "graph.status" in attrs[-1].value


def _backend():
    pytest.importorskip("llvmlite")
    try:
        from irkit.backends.llvm_cpu import compile_module
    except ImportError as e:                            # pragma: no cover - backend absent
        pytest.skip(f"the llvm_cpu backend is not available: {e}")
    return compile_module


@pytest.mark.parametrize("name", sorted(GRAPH_PROGRAMS))
def test_graph_programs_compiled_through_the_new_ladder(name):
    compile_module = _backend()
    m, args, want = _graph_case(name, LOOPS)
    PassManager.parse("builtin.module(canonicalize,cse)").run(m)
    jit = compile_module(m)
    outs = [garbage(w.shape, w.dtype) for w in want]
    status = [np.zeros(3, np.int64)] if _has_status(m) else []
    jit.f(*args, *outs, *status)
    for st in status:
        np.testing.assert_array_equal(st, [0, 0, 0])
    for i, (g, w) in enumerate(zip(outs, want)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"result #{i}")


LOGREG = """model logreg {
  input x: f32[N, 6]
  input y: f32[N, 3]
  param W: f32[6, 3] = normal(std=0.5, seed=3)
  param b: f32[3] = zeros
  probs = softmax(x @ W + b, axis=1)
  loss = mean(-sum(y * log(probs), axis=1))
  output probs, loss
  train loss with sgd(lr=0.5)
}"""


@pytest.mark.parametrize("pipeline", [LINALG, LOOPS])
def test_training_steps_update_the_variables(pipeline):
    """The DSL's logistic regression, differentiated: three SGD steps of the bufferized
    @train_step update the variable buffers as the graph program updates its variables."""
    from irkit.frontend.dsl import compile_source, model_modules
    top = compile_source(LOGREG, "logreg.irk")
    PassManager.parse("builtin.module(autodiff,canonicalize,cse)").run(top)
    graph = model_modules(top)["logreg"]
    m = _through(str(graph), pipeline)
    state: dict = {}
    variables = _initial_variables(graph)
    rng = np.random.default_rng(0)
    for step in range(3):
        n = 5 - step
        x = rng.normal(size=(n, 6)).astype(F32)
        y = np.eye(3, dtype=F32)[rng.integers(0, 3, n)]
        with np.errstate(all="ignore"):
            (want,) = Interpreter(graph, state).call(lookup_symbol_in(graph, "train_step"),
                                                     [x, y])
        (loss,) = run_buffers(m, "train_step", [x, y], [np.asarray(want)], variables)
        same(loss, np.asarray(want), f"loss of step {step}")
        for k, w in state["graph.variables"].items():
            np.testing.assert_allclose(variables[k], w, rtol=1e-5, atol=1e-6,
                                       err_msg=f"@{k} after step {step}")


def test_branch_yielding_a_view_copies_it_into_a_contiguous_buffer():
    src = """
func.func @f(%p: tensor<i1>, %x: tensor<?x3xf32>, %m: index) -> tensor<?x3xf32> {
  %r = graph.if %p -> (tensor<?x3xf32>) {
    %s = tensor.extract_slice %x[1, 0] [%m, 3] [1, 1] : tensor<?x3xf32> to tensor<?x3xf32>
    graph.yield %s : tensor<?x3xf32>
  } else {
    graph.yield %x : tensor<?x3xf32>
  }
  %c0 = arith.constant 0 : index
  %n = tensor.dim %r, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %u = linalg.map { math.exp } ins(%r : tensor<?x3xf32>) outs(%e : tensor<?x3xf32>)
  return %u : tensor<?x3xf32>
}"""
    check(src, (np.array(True), rand(4, 3), 2), (np.array(False), rand(4, 3), 2))


HAND_WRITTEN = {"chain": CHAIN, "reshapes": RESHAPES, "conditionals": CONDITIONALS}
HAND_ARGS = {"chain": lambda: [rand(4, 3), rand(4, 3, seed=1)],
             "reshapes": lambda: [rand(3, 6)],
             "conditionals": lambda: [np.array(False), rand(4, 3)]}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_views_and_in_place_code_compiles_and_plans(name):
    """Bufferized code through the rest of the ladder: loops, memory planning (views of
    raw bytes and buffers that change hands included), the CPU backend."""
    compile_module = _backend()
    src = HAND_WRITTEN[name]
    args = HAND_ARGS[name]()
    want, _ = run_tensors(parse_module(src), "f", args)
    m = _through(src, "bufferize,lower-linalg-to-loop,canonicalize,cse,plan-memory")
    jit = compile_module(m)
    outs = [garbage(w.shape, w.dtype) for w in want]
    jit.f(*args, *outs)
    for i, (g, w) in enumerate(zip(outs, want)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=f"result #{i}")


# ---------------------------------------------------------------------------------------------
# Random programs: the in-place analysis against the interpreter
# ---------------------------------------------------------------------------------------------

MAT, ROW, FLAT = "tensor<4x3xf32>", "tensor<2x3xf32>", "tensor<12xf32>"


@st.composite
def aliasing_programs(draw):
    """A random straight-line program over 4x3 matrices that updates values in place
    (generics reading their init), slices them, inserts slices into them, reshapes them
    and returns some of them (arguments too): everything whose bufferization depends on
    whether a buffer may be overwritten."""
    mats, rows = ["%x0", "%x1"], []
    lines = ["%half = arith.constant 0.5 : f32"]
    for k in range(draw(st.integers(1, 10))):
        v = f"%v{k}"
        kind = draw(st.sampled_from(["map", "map", "update", "update", "update", "slice",
                                     "insert", "reshape", "fill", "tap", "tap"]
                                    + (["rowmap"] if rows else [])))
        if kind == "map":
            a, b = draw(st.sampled_from(mats)), draw(st.sampled_from(mats))
            f = draw(st.sampled_from(["arith.addf", "arith.mulf", "arith.subf"]))
            lines += [f"%e{k} = tensor.empty() : {MAT}",
                      f"{v} = linalg.map {{ {f} }} ins({a}, {b} : {MAT}, {MAT}) "
                      f"outs(%e{k} : {MAT})"]
            mats.append(v)
        elif kind == "update":
            # mostly a value this program made (an argument is never overwritten)
            a, d = draw(st.sampled_from(mats)), draw(st.sampled_from(mats[2:] or mats))
            lines += [f"{v} = linalg.generic {{indexing_maps = [{ID2}, {ID2}], "
                      f"iterator_types = {PAR2}}} ins({a} : {MAT}) outs({d} : {MAT}) {{",
                      "^bb0(%a: f32, %o: f32):",
                      "  %m = arith.mulf %o, %half : f32",
                      "  %s = arith.addf %m, %a : f32",
                      "  linalg.yield %s : f32", f"}} -> {MAT}"]
            mats.append(v)
        elif kind == "slice":
            a, o = draw(st.sampled_from(mats)), draw(st.integers(0, 2))
            lines.append(f"{v} = tensor.extract_slice {a}[{o}, 0] [2, 3] [1, 1] "
                         f": {MAT} to {ROW}")
            rows.append(v)
        elif kind == "insert":
            r, d, o = draw(st.sampled_from(rows or ["%x0"])), draw(st.sampled_from(mats)), \
                draw(st.integers(0, 2))
            if not rows:
                continue
            lines.append(f"{v} = tensor.insert_slice {r} into {d}[{o}, 0] [2, 3] [1, 1] "
                         f": {ROW} into {MAT}")
            mats.append(v)
        elif kind == "reshape":
            a = draw(st.sampled_from(mats))
            lines += [f"%flat{k} = tensor.collapse_shape {a} [[0, 1]] : {MAT} into {FLAT}",
                      f"{v} = tensor.expand_shape %flat{k} [[0, 1]] output_shape [4, 3] "
                      f": {FLAT} into {MAT}"]
            mats.append(v)
        elif kind == "tap":
            # a window of d updated and put back (the tiling pattern), or somewhere else
            a, d = draw(st.sampled_from(mats)), draw(st.sampled_from(mats[2:] or mats))
            o, back = draw(st.integers(0, 1)), draw(st.integers(0, 1))
            window = f"[0, {o}] [4, 2] [1, 1]"
            lines += [f"%w{k} = tensor.extract_slice {d}{window} : {MAT} to tensor<4x2xf32>",
                      f"%a{k} = tensor.extract_slice {a}[0, 0] [4, 2] [1, 1] "
                      f": {MAT} to tensor<4x2xf32>",
                      f"%u{k} = linalg.generic {{indexing_maps = [{ID2}, {ID2}], "
                      f"iterator_types = {PAR2}}} ins(%a{k} : tensor<4x2xf32>) "
                      f"outs(%w{k} : tensor<4x2xf32>) {{",
                      "^bb0(%a: f32, %o: f32):",
                      "  %s = arith.subf %o, %a : f32",
                      "  linalg.yield %s : f32", "} -> tensor<4x2xf32>",
                      f"{v} = tensor.insert_slice %u{k} into {d}[0, {back}] [4, 2] [1, 1] "
                      f": tensor<4x2xf32> into {MAT}"]
            mats.append(v)
        elif kind == "fill":
            lines += [f"%e{k} = tensor.empty() : {MAT}",
                      f"{v} = linalg.fill ins(%half : f32) outs(%e{k} : {MAT}) -> {MAT}"]
            mats.append(v)
        else:
            r = draw(st.sampled_from(rows))
            lines += [f"%e{k} = tensor.empty() : {ROW}",
                      f"{v} = linalg.map {{ math.exp }} ins({r} : {ROW}) outs(%e{k} : {ROW})"]
            rows.append(v)
    made = [v for v in mats + rows if v.startswith("%v")] or mats
    last = max(made, key=lambda v: int(v[2:]) if v.startswith("%v") else -1)
    results = [last] + draw(st.lists(st.sampled_from(mats + rows), max_size=2))
    types = [ROW if r in rows else MAT for r in results]
    body = "\n  ".join(lines)
    return (f"func.func @f(%x0: {MAT}, %x1: {MAT}) -> ({', '.join(types)}) {{\n  {body}\n"
            f"  return {', '.join(results)} : {', '.join(types)}\n}}")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aliasing_programs())
def test_random_aliasing_programs_match_the_interpreter(src):
    check(src, (rand(4, 3), rand(4, 3, seed=5)))


# ---------------------------------------------------------------------------------------------
# The example models
# ---------------------------------------------------------------------------------------------

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.irk"))


def _inputs(ftype, rng, size: int = 4) -> list:
    """Inputs of the function type: `?` sizes `size`, floats normal, integers 0 or 1 (labels
    and indices in range for every example)."""
    args = []
    for t in ftype.inputs:
        shape = tuple(size if d is None else d for d in t.shape)
        dtype = numpy_dtype(t.element)
        if np.dtype(dtype).kind == "f":
            args.append(rng.normal(size=shape).astype(dtype))
        else:
            args.append(rng.integers(0, 2, size=shape).astype(dtype))
    return args


@pytest.mark.parametrize("pipeline", [
    LINALG, "lower-graph-to-linalg,bufferize{output-sizes=true},lower-linalg-to-loop,canonicalize,"
    "cse,plan-memory"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_models(path, pipeline):
    """Every function of every example model (forward passes, training steps with their
    variable updates) after autodiff, through the new ladder, against the interpreter."""
    from irkit.frontend.dsl import compile_file, model_modules
    top = compile_file(str(path))
    PassManager.parse("builtin.module(graph-raise-control-flow,autodiff,canonicalize,cse)") \
        .run(top)
    for graph in model_modules(top).values():
        m = _through(str(graph), pipeline)
        for f in [op for op in graph.walk() if op.name == "func.func"]:
            name = f.properties["sym_name"].value
            ftype = f.properties["function_type"].value
            args = _inputs(ftype, np.random.default_rng(0))
            state: dict = {}
            with np.errstate(all="ignore"):
                want = [np.asarray(v) for v in Interpreter(graph, state).call(f, list(args))]
            variables = _initial_variables(graph)
            got = run_buffers(m, name, args, want, variables)
            for i, (g, w) in enumerate(zip(got, want)):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True,
                                           err_msg=f"@{name} result #{i}")
            for k, w in state.get("graph.variables", {}).items():
                np.testing.assert_allclose(variables[k], w, rtol=1e-4, atol=1e-5,
                                           err_msg=f"@{name} variable @{k}")
