"""Run-time checks in compiled code (issue 12: defect 2, and the compiled half of defect 5).

What the interpreter raises on while running a model, compiled code reports too: a label of
cross_entropy or an index of gather / scatter_add out of range, a split whose parts do not
fit the axis, a reshape whose element counts differ. Each becomes a `memory.check` writing
the function's status argument (docs/lowering.md); then

- from Python (the JIT, and a `.so` loaded with `irkit.load`), a `ValueError` whose text is
  the interpreter's error for the same op (file:line:col, the op, the bad value, the source
  line and a caret) after `model.function: `;
- from C, the `_checked` and `_run` entry points return nonzero and `irkit_last_error()`
  holds `model_function: file:line:col: error: 'graph.op' failed: ...` (skipped without cc).

In-range inputs still give the interpreter's results. Expected messages are the
interpreter's own (numpy's text), never built from the compiled code's tables.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from thread_switches import run_switching

pytest.importorskip("llvmlite")

import irkit  # noqa: E402
from irkit.backends.llvm_cpu import find_c_compiler  # noqa: E402
from irkit.interpreter import InterpreterError  # noqa: E402
from irkit.runtime.model import Model  # noqa: E402
from irkit.parser import parse_module  # noqa: E402
from irkit.runtime.compiled import (  # noqa: E402
    CompiledRunner, lower_model, lower_model_with_graph,
)
from irkit.runtime.engines import CompiledEngine  # noqa: E402
from irkit.tools.compile import main as compile_main  # noqa: E402

CE = """\
model ce {
  input x: f32[N, 4]
  input labels: i32[N]
  loss = cross_entropy(x, labels)
  output loss
}
"""

GATHER = """\
model ga {
  input t: f32[R, 3]
  input i: i32[K]
  r = gather(t, i)
  output r
}
"""

#: scatter_add has no DSL builtin (it is gather's transpose, behind gather's own check)
SCATTER = """\
module @sc {
  func.func @forward(%d: tensor<?x3xf32> {graph.name = "d"},
                     %i: tensor<?xi32> {graph.name = "i"},
                     %u: tensor<?x3xf32> {graph.name = "u"})
      -> (tensor<?x3xf32> {graph.name = "r"}) {
    %0 = graph.scatter_add %d, %i, %u
        : (tensor<?x3xf32>, tensor<?xi32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    return %0 : tensor<?x3xf32>
  }
}
"""

SPLIT = """\
model sp {
  input x: f32[N, 4]
  a, b = split(x, 2)
  output a, b
}
"""

RESHAPE = """\
model rs {
  input x: f32[N, 4]
  y = reshape(x, [-1, 3])
  output y
}
"""

RNG = np.random.default_rng(12)
X = RNG.normal(size=(3, 4)).astype(np.float32)
TABLE = RNG.normal(size=(4, 3)).astype(np.float32)
UPD = RNG.normal(size=(3, 3)).astype(np.float32)

#: case -> (file name, source, in-range inputs, bad inputs, the bad value and its bound)
CASES = {
    "cross_entropy": ("ce.irk", CE, {"x": X, "labels": np.array([3, 0, 2], np.int32)},
                      {"x": X, "labels": np.array([1, 7, -1], np.int32)}, (7, 4)),
    "gather": ("ga.irk", GATHER, {"t": TABLE, "i": np.array([3, -4, 0], np.int32)},
               {"t": TABLE, "i": np.array([1, -5, 9], np.int32)}, (-5, 4)),
    "scatter_add": ("sc.mlir", SCATTER,
                    {"d": TABLE, "i": np.array([0, -1, 0], np.int32), "u": UPD},
                    {"d": TABLE, "i": np.array([0, 4, 9], np.int32), "u": UPD}, (4, 4)),
}


def _module(path):
    """The model module of `path` (a DSL file, or graph IR holding one model)."""
    if path.suffix == ".mlir":
        return parse_module(path.read_text(), str(path))
    from irkit.frontend.dsl import compile_file, model_modules
    return next(iter(model_modules(compile_file(str(path))).values()))


def _interpreter_error(module, inputs) -> str:
    with pytest.raises(InterpreterError) as e:
        Model(module).forward(**inputs)
    return str(e.value)


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    """case -> (dev model, JIT model, .so model or None without cc, the .so's path)."""
    d = tmp_path_factory.mktemp("runtime_checks")
    out = {}
    for case, (name, src, *_) in CASES.items():
        path = d / name
        path.write_text(src)
        module = _module(path)
        so = None
        if find_c_compiler() is not None:
            so = d / f"{path.stem}.so"
            if path.suffix == ".irk":
                assert compile_main([str(path), "-o", str(so)]) == 0
            else:
                from irkit.exporters.library import write_library
                graph, lowered = lower_model_with_graph(module)
                write_library({path.stem: lowered}, str(so), graphs={path.stem: graph})
        out[case] = (module, Model(module, engine="jit"),
                     irkit.load(so) if so is not None else None, so)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_index_is_the_interpreters_error(engines, case):
    module, jit, shared, _ = engines[case]
    _, _, _, bad, (value, bound) = CASES[case]
    want = _interpreter_error(module, bad)
    assert str(value) in want and str(bound) in want        # the interpreter names them
    fn = f"{jit.name}.forward"
    for model in (jit, shared):
        if model is None:
            continue
        with pytest.raises(ValueError) as e:
            model.forward(**bad)
        assert str(e.value) == f"{fn}: {want}", model.engine


@pytest.mark.parametrize("case", sorted(CASES))
def test_in_range_indices_give_the_interpreters_results(engines, case):
    module, jit, shared, _ = engines[case]
    good = CASES[case][2]
    want = Model(module).forward(**good)
    for model in (jit, shared):
        if model is None:
            continue
        got = model.forward(**good)
        for k, w in want.items():
            np.testing.assert_allclose(got[k], w, rtol=1e-5, atol=1e-6, err_msg=k)


def test_the_first_failing_index_wins_and_the_next_call_is_clean(engines):
    _, jit, _, _ = engines["gather"]
    with pytest.raises(ValueError, match=r"index -5 is out of bounds .* size 4\n"):
        jit.forward(t=TABLE, i=np.array([-5, 9, 7], np.int32))
    np.testing.assert_array_equal(jit.forward(t=TABLE, i=np.array([2], np.int32))["r"],
                                  TABLE[[2]])


def test_each_thread_has_its_own_status(engines):
    """The runner keeps one status array per thread (`CompiledRunner._status`): a thread
    whose calls fail (gather indices out of range) never makes another thread's good calls
    fail, nor misses its own error, with thread switches as frequent as Python allows."""
    _, jit, _, _ = engines["gather"]
    good, bad = np.array([2, 0, 3], np.int32), np.array([1, 7], np.int32)
    errors: list = []

    def work(failing: bool) -> None:
        for _ in range(300):
            try:
                r = jit.forward(t=TABLE, i=bad if failing else good)["r"]
            except ValueError as e:
                if not failing or "index 7 is out of bounds" not in str(e):
                    errors.append(("raised", failing, str(e)[:80]))
                continue
            if failing or not np.array_equal(r, TABLE[good]):
                errors.append(("returned", failing))

    run_switching(work, [(k % 2 == 0,) for k in range(4)])
    assert errors == []


# ---------------------------------------------------------------------------------------------
# split and reshape: the runtime's shape functions reject most bad sizes before the call;
# compiled code checks them itself for a caller that has none (C, or a runner built without
# the graph module)
# ---------------------------------------------------------------------------------------------

STATIC_PARTS = """\
module @sp2 {
  func.func @forward(%x: tensor<?x4xf32> {graph.name = "x"})
      -> (tensor<2x4xf32> {graph.name = "a"}, tensor<2x4xf32> {graph.name = "b"}) {
    %0:2 = graph.split %x {axis = 0 : i64, sections = 2 : i64}
        : (tensor<?x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
    return %0#0, %0#1 : tensor<2x4xf32>, tensor<2x4xf32>
  }
}
"""

STATIC_RESHAPE = """\
module @rs2 {
  func.func @forward(%x: tensor<?x4xf32> {graph.name = "x"})
      -> (tensor<2x4xf32> {graph.name = "y"}) {
    %0 = graph.reshape %x {shape = array<i64: 2, 4>} : (tensor<?x4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}
"""


@pytest.mark.parametrize("name,src,rows,words", [
    ("split.mlir", STATIC_PARTS, 4, ["'graph.split' failed: array split", "axis 0 of size 3"]),
    ("reshape.mlir", STATIC_RESHAPE, 2, ["'graph.reshape' failed: cannot reshape array of size",
                                         "12 into shape (2, 4) of 8 elements"]),
])
def test_compiled_split_and_reshape_check_their_sizes(name, src, rows, words):
    """Outputs of static shape need no shape function, so the call runs: x has 3 rows where
    the result types want `rows`, and the failing op, its line and the sizes are reported,
    where unchecked code read past x."""
    module = parse_module(src, name)
    model = Model.from_engine("m", CompiledEngine(CompiledRunner.jit(lower_model(module)), "jit"))
    good = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
    want = Model(module).forward(x=good)
    for k, w in model.forward(x=good).items():
        np.testing.assert_array_equal(w, want[k])
    with pytest.raises(ValueError) as e:
        model.forward(x=np.zeros((3, 4), np.float32))
    msg = str(e.value)
    # Located at the op's name, as MLIR locates ops (not at its results).
    line, col = next((k, text.index("graph.") + 1) for k, text in enumerate(src.splitlines(), 1)
                     if "= graph." in text)
    assert msg.startswith(f"m.forward: {name}:{line}:{col}: error: "), msg
    assert all(w in msg for w in words), msg
    assert msg.endswith("\n" + " " * (col - 1) + "^"), msg    # the source line and caret


TRAIN = """\
model tr {
  input x: f32[N, 4]
  input labels: i32[N]
  param w: f32[4, 4] = normal(std=0.1, seed=1)
  loss = cross_entropy(x @ w, labels)
  output loss
  train loss with adam(lr=0.1)
}
"""


def test_a_failed_training_step_leaves_the_variables_as_they_were(tmp_path):
    """The interpreter raises before any assign; the compiled step records the error and
    must not write the updated weights, Adam's moments or its step count either: the next
    good step then gives the interpreter's loss and variables, bit for bit as dev mode."""
    path = tmp_path / "tr.irk"
    path.write_text(TRAIN)
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    models = {e: irkit.load_model(path, engine=e) for e in ("interpreter", "jit")}
    for engine, m in models.items():
        before = {k: np.array(v) for k, v in m.variables.items()}
        with pytest.raises((ValueError, InterpreterError), match="label 7 is out of range"):
            m.train_step(x=x, labels=np.array([7, 1], np.int32))
        for k, v in before.items():
            np.testing.assert_array_equal(np.asarray(m.variables[k]), v, err_msg=engine)
    good = np.array([3, 1], np.int32)
    losses = {e: m.train_step(x=x, labels=good)["loss"] for e, m in models.items()}
    np.testing.assert_allclose(losses["jit"], losses["interpreter"], rtol=1e-6)
    for k, v in models["interpreter"].variables.items():
        np.testing.assert_allclose(np.asarray(models["jit"].variables[k]), v, rtol=1e-5,
                                   atol=1e-7, err_msg=k)


# ---------------------------------------------------------------------------------------------
# C: `_checked` and `_run` return nonzero with the message
# ---------------------------------------------------------------------------------------------

_C_ELEM = {"float32": ("float", "f32"), "int32": ("int32_t", "i32")}


def _c_arg(name: str, a: np.ndarray) -> list[str]:
    """A static array and its descriptor `name` in C."""
    ctype, irtype = _C_ELEM[a.dtype.name]
    values = ", ".join(repr(float(v)) if a.dtype.kind == "f" else str(int(v))
                       for v in a.reshape(-1)) or "0"
    strides = [int(np.prod(a.shape[k + 1:], dtype=np.int64)) for k in range(a.ndim)]
    arrays = (f", {{{', '.join(map(str, a.shape))}}}, {{{', '.join(map(str, strides))}}}"
              if a.ndim else "")
    return [f"static {ctype} {name}_data[{max(a.size, 1)}] = {{{values}}};",
            f"static irkit_memref_{irtype}_{a.ndim}d {name} = "
            f"{{{name}_data, {name}_data, 0{arrays}}};"]


def _c_program(model: str, header: str, args: list[tuple[str, np.ndarray]]) -> str:
    """Calls `model_forward_checked` and `model_forward_run` on `args` (inputs then outputs),
    printing each return value and irkit_last_error() on a line."""
    lines = ["#include <stdio.h>", f'#include "{header}"']
    for name, a in args:
        lines += _c_arg(name, a)
    call = ", ".join(f"&{name}" for name, _ in args)
    lines += ["int main(void) {",
              f"  int rc = {model}_forward_checked({call});",
              '  printf("%d|%s\\n", rc, irkit_last_error());',
              f"  rc = {model}_forward_run({call});",
              '  printf("%d|%s\\n", rc, irkit_last_error());',
              "  return 0;", "}", ""]
    return "\n".join(lines)


#: case -> (file, source, inputs then outputs (bad inputs), the message after `model_forward: `)
C_CASES = {
    "cross_entropy": ("ce.irk", CE, [("x", X), ("labels", np.array([1, 7, -1], np.int32)),
                                     ("loss", np.zeros((), np.float32))],
                      "ce.irk:4:10: error: 'graph.cross_entropy' failed: label 7 is out of "
                      "range for 4 classes"),
    "gather": ("ga.irk", GATHER, [("t", TABLE), ("i", np.array([1, 9], np.int32)),
                                  ("r", np.zeros((2, 3), np.float32))],
               "ga.irk:4:7: error: 'graph.gather' failed: index 9 is out of bounds for axis 0 "
               "with size 4"),
    "split": ("sp.irk", SPLIT, [("x", X), ("a", np.zeros((1, 4), np.float32)),
                                ("b", np.zeros((1, 4), np.float32))],
              "sp.irk:3:10: error: 'graph.split' failed: array split does not result in an "
              "equal division (axis 0 of size 3 into 2 sections)"),
    "reshape": ("rs.irk", RESHAPE, [("x", X[:2]), ("y", np.zeros((2, 3), np.float32))],
                "rs.irk:3:7: error: 'graph.reshape' failed: cannot reshape array of size 8 "
                "into shape (-1, 3)"),
}


@pytest.mark.parametrize("case", sorted(C_CASES))
def test_c_checked_and_run_report_run_time_errors(tmp_path, case):
    cc = find_c_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    name, src, args, message = C_CASES[case]
    path = tmp_path / name
    path.write_text(src)
    model = path.stem
    so = tmp_path / f"{model}.so"
    assert compile_main([str(path), "-o", str(so)]) == 0
    (tmp_path / "main.c").write_text(_c_program(model, f"{model}.h", args))
    exe = tmp_path / "main"
    proc = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", f"-I{tmp_path}",
                           str(tmp_path / "main.c"), str(so), "-o", str(exe),
                           f"-Wl,-rpath,{tmp_path}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    want = f"1|{model}_forward: {tmp_path / name}:{message.split(':', 1)[1]}"
    assert proc.stdout.splitlines() == [want, want]


SLICE = """\
model sl {
  input x: f32[N]
  y = concat([x, x[1:]])
  output y
}
"""

_SLICE_MAIN = r"""#include <stdio.h>
#include "sl.h"
static float x_data[5] = {1, 2, 3, 4, 5};
static float y_data[16];
int main(void) {
  irkit_memref_f32_1d x = {x_data, x_data, 0, {5}, {1}};
  int64_t n[1] = {-1};
  irkit_memref_i64_1d sizes = {n, n, 0, {1}, {1}};
  sl_forward_output_sizes(&x, &sizes);
  printf("%lld\n", (long long)n[0]);
  irkit_memref_f32_1d small = {y_data, y_data, 0, {4}, {1}};
  int rc = sl_forward_checked(&x, &small);
  printf("%d|%s\n", rc, irkit_last_error());
  irkit_memref_f32_1d y = {y_data, y_data, 0, {n[0]}, {1}};
  rc = sl_forward_checked(&x, &y);
  printf("%d|", rc);
  for (int64_t i = 0; i < n[0]; i++) printf("%g ", y_data[i]);
  printf("\n");
  return 0;
}
"""


def test_c_output_sizes_no_symbol_names_are_computed_and_checked(tmp_path):
    """`concat([x, x[1:]])` has 2N - 1 rows, which no symbol of the header names: the
    library exports `sl_forward_output_sizes`, which gives it from x's size alone, and the
    checked entry point refuses a buffer of another size instead of writing past it."""
    cc = find_c_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    path = tmp_path / "sl.irk"
    path.write_text(SLICE)
    so = tmp_path / "sl.so"
    assert compile_main([str(path), "-o", str(so)]) == 0
    header = (tmp_path / "sl.h").read_text()
    assert "output 0  y: f32[?] (the ? sizes: sl_forward_output_sizes)" in header
    (tmp_path / "main.c").write_text(_SLICE_MAIN)
    exe = tmp_path / "main"
    proc = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", f"-I{tmp_path}",
                           str(tmp_path / "main.c"), str(so), "-o", str(exe),
                           f"-Wl,-rpath,{tmp_path}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = subprocess.run([str(exe)], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    x = np.arange(1, 6, dtype=np.float32)
    want = np.concatenate([x, x[1:]])
    assert lines[0] == str(want.size)
    assert lines[1] == "1|sl_forward: output 'y' axis 0 is 4, the inputs give 9"
    assert lines[2] == "0|" + "".join(f"{v:g} " for v in want)


def test_c_output_whose_size_depends_on_the_data_is_refused_by_the_checked_entry(tmp_path):
    """Which branch runs decides the size: no function of the inputs' sizes gives it, so
    the header says so and `_checked` refuses (before writing anything) rather than risk
    a buffer too small."""
    cc = find_c_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    path = tmp_path / "rg.irk"
    path.write_text("model rg {\n  input x: f32[N]\n"
                    "  y = if sum(x) > 0.0 { x[1:] } else { x[2:] }\n  output y\n}\n")
    assert compile_main([str(path), "-o", str(tmp_path / "rg.so")]) == 0
    header = (tmp_path / "rg.h").read_text()
    assert "y: f32[?] (shape not derived, it depends on the data" in header
    assert "rg_forward_output_sizes" not in header
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "rg.h"\nstatic float d[8];\nint main(void) {\n'
        "  irkit_memref_f32_1d x = {d, d, 0, {4}, {1}}, y = {d + 4, d + 4, 0, {3}, {1}};\n"
        '  int rc = rg_forward_checked(&x, &y);\n  printf("%d|%s\\n", rc, irkit_last_error());\n'
        "  return 0;\n}\n")
    exe = tmp_path / "main"
    subprocess.run([cc, "-std=c11", f"-I{tmp_path}", str(tmp_path / "main.c"),
                    str(tmp_path / "rg.so"), "-o", str(exe), f"-Wl,-rpath,{tmp_path}"],
                   check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert out.startswith("1|rg_forward: the size of output 'y' (axis 0) depends on the data")
