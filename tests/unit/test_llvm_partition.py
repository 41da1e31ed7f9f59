"""Parallel LLVM (`backends/llvm_partition.py`, `llvm_cpu.compile_object`): a module split
into partitions compiled side by side must run as the interpreter does, in process and as
a shared library; the split keeps every function once (identical outlined loops merged),
and the long LLVM calls of a partition's thread do not hold llvmlite's global lock."""

from __future__ import annotations

import re
import time
from pathlib import Path

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

import irkit
from irkit.backends import llvm_cpu, llvm_partition
from irkit.backends.llvm_cpu import ObjectCode
from irkit.frontend.dsl import compile_source, model_modules
from irkit.runtime.compiled import compile_models, lower_model_with_graph
from irkit.runtime.engines import JitEngine
from irkit.runtime.model import Model
from irkit.tools.compile import main as irkit_compile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def logreg():
    return model_modules(compile_source((EXAMPLES / "logreg.irk").read_text(),
                                        str(EXAMPLES / "logreg.irk")))["logreg"]


def _batch(seed: int = 0, n: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]
    return {"x": x, "y": y}


def _steps(model: Model) -> list[dict]:
    """Two training steps and a forward pass on fixed batches."""
    return [model.train_step(**_batch(0)), model.train_step(**_batch(1)),
            model.forward(**_batch(2))]


def _assert_runs_as_interpreter(model: Model, module) -> None:
    want = _steps(Model(module))
    for got, ref in zip(_steps(model), want):
        assert got.keys() == ref.keys()
        for k in ref:
            np.testing.assert_allclose(got[k], ref[k], rtol=2e-5, atol=2e-6, err_msg=k)


@pytest.mark.parametrize("parts", [2, 3])
@pytest.mark.parametrize("opt_level", [2, 3])
def test_partitioned_jit_runs_as_the_interpreter(logreg, monkeypatch, parts, opt_level):
    monkeypatch.setattr(llvm_cpu, "compile_partitions", lambda: parts)
    compiled = compile_models({"logreg": logreg}, opt_level=opt_level)
    code = compiled.entry_object("logreg", "train_step")
    if opt_level == 3:  # up to `parts` of the host functions (cold) and `parts` of the loops
        assert parts < len(code.objects) == code.timings["partitions"] <= 2 * parts
    else:               # every function at LLVM's -O1: up to `parts` in all
        assert 1 < len(code.objects) == code.timings["partitions"] <= parts
    _assert_runs_as_interpreter(Model.from_engine("logreg", JitEngine(compiled, "logreg")),
                                logreg)


def test_partitioned_library_runs_as_the_interpreter(logreg, monkeypatch, tmp_path):
    monkeypatch.setattr(llvm_cpu, "compile_partitions", lambda: 2)
    path = tmp_path / "logreg.irk"
    path.write_text((EXAMPLES / "logreg.irk").read_text())
    assert irkit_compile([str(path), "-o", str(tmp_path / "l.so"), "--no-cache"]) == 0
    _assert_runs_as_interpreter(irkit.load(tmp_path / "l.so"), logreg)


def test_objects_linked_into_one_run_as_the_interpreter(logreg, monkeypatch):
    """`ObjectCode.data`, the partitions linked into one relocatable object (what
    `--emit=obj` writes), is whole: loaded alone, it runs as the interpreter does."""
    monkeypatch.setattr(llvm_cpu, "compile_partitions", lambda: 2)
    compiled = compile_models({"logreg": logreg})
    parts = []
    for entry in ("forward", "train_step"):
        code = compiled.entry_object("logreg", entry)
        parts.append(len(code.objects))
        compiled.entry_code[entry] = ObjectCode((code.data,), code.externals, {})
    assert max(parts) > 1           # train_step's; logreg's forward is too small to split
    _assert_runs_as_interpreter(Model.from_engine("logreg", JitEngine(compiled, "logreg")),
                                logreg)


def _translated(module):
    return llvm_cpu.translate(lower_model_with_graph(module)[1], verify=False)


def test_split_defines_each_function_once_and_declares_the_rest(logreg):
    irmod = _translated(logreg)
    names = {f.name for f in irmod.functions if not f.is_declaration}
    parts = llvm_partition.split_module(irmod, 3)
    assert len(parts) == 3
    defined = [name for p in parts for name in p.functions]
    assert len(defined) == len(set(defined))
    merged = names - set(defined)
    for name in merged:          # what was merged away is identical to a function kept
        assert name.startswith("__irkit_parallel_")
    for p in parts:
        mod = llvm.parse_assembly(p.text, llvm.create_context())
        mod.verify()
        mine = {f.name for f in mod.functions if not f.is_declaration}
        assert mine == set(p.functions)
        for f in mod.functions:   # nothing refers to a merged-away function
            assert f.name not in merged
    sizes = [p.lines for p in parts]    # dealt largest first to the lightest partition
    assert max(sizes) - min(sizes) <= max(_function_lines(irmod).values())


def test_cold_functions_have_partitions_of_their_own(logreg):
    """The functions named cold (the host functions, optimized at `COLD_OPT_LEVEL`) are
    dealt to partitions of their own, at most `parts` of them, and the others to at most
    `parts` more."""
    irmod = _translated(logreg)
    defined = set(_function_lines(irmod))
    cold = frozenset(n for n in defined if not n.startswith("__irkit_parallel_"))
    assert cold and cold != defined
    for parts in (1, 2, 3):
        split = llvm_partition.split_module(irmod, parts, cold)
        if parts == 1:          # one partition, optimized at the level asked for
            assert len(split) == 1 and not split[0].cold
            continue
        for kind in (True, False):
            mine = [p for p in split if p.cold == kind]
            assert 1 <= len(mine) <= parts
            assert all((name in cold) == kind for p in mine for name in p.functions)
        assert {n for p in split if p.cold for n in p.functions} == cold


def test_cold_partitions_are_optimized_less(logreg, monkeypatch):
    """At -O3, `_compile_partition` runs LLVM's -O1 pipeline on a cold partition and -O3 on
    the others; at -O2 (LLVM's -O1 for every function: `llvm_level`) nothing is cold and the
    functions are dealt to partitions regardless of kind."""
    if llvm_cpu.openmp_library() is None:
        pytest.skip("without OpenMP the host functions keep their loops: none is cold")
    levels = []
    real = llvm_cpu.llvm.create_pipeline_tuning_options

    def recorded(speed_level, **kw):
        levels.append(speed_level)
        return real(speed_level=speed_level, **kw)

    monkeypatch.setattr(llvm_cpu.llvm, "create_pipeline_tuning_options", recorded)
    monkeypatch.setattr(llvm_cpu, "compile_partitions", lambda: 2)
    lowered = lower_model_with_graph(logreg)[1]
    split = llvm_cpu.compile_object(lowered, 3, jit=True)
    assert len(split.objects) == len(levels) and sorted(set(levels)) == [1, 3]
    levels.clear()
    split = llvm_cpu.compile_object(lowered, 2, jit=True)
    assert len(split.objects) == len(levels) <= 2 and set(levels) == {1}


def test_llvm_levels():
    """irkit's -O2 is LLVM's -O1 (irkit vectorized the loops); cold functions stay at -O1 at
    most; a level outside 0..3 is refused."""
    assert [llvm_cpu.llvm_level(n) for n in range(4)] == [0, 1, 1, 3]
    assert [llvm_cpu.llvm_level(n, cold=True) for n in range(4)] == [0, 1, 1, 1]
    with pytest.raises(ValueError, match="opt_level must be 0, 1, 2 or 3"):
        llvm_cpu.llvm_level(4)


def test_free_functions_weigh_nothing_in_the_deal(logreg):
    """The Python entries (`free`: left unoptimized, long in lines) count no lines: each
    partition weighs the lines of its other functions, and those are dealt evenly."""
    irmod = _translated(logreg)
    lines = _function_lines(irmod)
    free = frozenset(n for n in lines if n.startswith(("_irkit_py_", "_irkit_call_")))
    assert {"_irkit_py_train_step", "_irkit_call_train_step"} <= free
    split = llvm_partition.split_module(irmod, 2, free=free)
    weights = [sum(lines[n] for n in p.functions if n not in free) for p in split]
    assert [p.lines for p in split] == weights
    assert max(weights) - min(weights) <= max(v for n, v in lines.items() if n not in free)


def _function_lines(irmod) -> dict[str, int]:
    return {f.name: str(f).count("\n") for f in irmod.functions if not f.is_declaration}


def test_identical_internal_functions_are_merged(logreg):
    """Internal functions whose text differs only in the name are one after the split; the
    MLP-like models outline the same loop in @forward and @train_step."""
    irmod = _translated(logreg)
    texts: dict[str, list[str]] = {}
    for f in irmod.functions:
        if not f.is_declaration and f.linkage == "internal":
            texts.setdefault(re.sub(r'@"[^"]*"', "@", str(f), count=1), []).append(f.name)
    duplicates = sum(len(v) - 1 for v in texts.values())
    assert duplicates > 0
    for parts in (1, 2):
        split = llvm_partition.split_module(irmod, parts)
        kept = sum(len(p.functions) for p in split)
        assert kept == len(_function_lines(irmod)) - duplicates


def test_small_module_is_one_partition(logreg, monkeypatch):
    monkeypatch.setattr(llvm_partition, "MIN_SPLIT_LINES", 10 ** 9)
    assert len(llvm_partition.split_module(_translated(logreg), 4)) == 1


def test_long_llvm_calls_do_not_hold_llvmlites_lock(logreg):
    """llvmlite serializes every call under one lock; a partition's parse, pass pipeline
    and code generation go around it (`llvm_cpu._unlocked`), or the threads would take
    turns: the lock is held for a small part of the LLVM time."""
    lowered = lower_model_with_graph(logreg)[1]
    held = [0.0]
    since = []

    def acquired():
        since.append(time.perf_counter())

    def released():
        held[0] += time.perf_counter() - since.pop()
    llvm.ffi.register_lock_callback(acquired, released)
    try:
        code = llvm_cpu.compile_object(lowered, partitions=2)
    finally:
        llvm.ffi.unregister_lock_callback(acquired, released)
    t = code.timings
    llvm_ms = t["optimize_ms"] + t["codegen_ms"]
    assert held[0] * 1e3 < 0.25 * llvm_ms, (held[0], t)


def _every_instruction() -> ir.Function:
    """A function with each instruction class and option `llvm_partition._FORMATS` prints,
    and some it leaves to llvmlite (metadata, argument attributes, `cmpxchg`), with names
    that need quoting; built anew on each call, so that no printer sees another's caches."""
    mod = ir.Module("zoo")
    i1, i8, i32, i64, f32 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64), \
        ir.FloatType()
    vec, ptr = ir.VectorType(f32, 4), ir.PointerType()
    desc = ir.LiteralStructType([ptr, i64, ir.ArrayType(i64, 2)])
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [i64, f32, ptr, vec]), "zoo")
    fn.linkage = "internal"
    x, y, p, v = fn.args
    callee = ir.Function(mod, ir.FunctionType(f32, [f32, f32]), "callee")
    varargs = ir.Function(mod, ir.FunctionType(i32, [ptr], var_arg=True), "printf")
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop body", "done"))
    b = ir.IRBuilder(entry)
    s = b.add(x, ir.Constant(i64, 3), flags=["nsw"])
    b.sub(s, x, name='quote"d\\name')
    b.fmul(y, ir.Constant(f32, 1.5), flags=["fast"])
    b.fneg(y)
    b.udiv(s, ir.Constant(i64, 7))
    c = b.icmp_signed("<", s, x)
    b.fcmp_ordered("<=", y, y, flags=["nnan"])
    sel = b.select(c, s, x)
    b.select(c, y, y, flags=["fast"])
    slot = b.alloca(desc)
    b.alloca(f32, size=ir.Constant(i64, 4), name="buf")
    slot.align = 16
    ld = b.load(p, typ=f32, align=4)
    b.load(slot, typ=desc)
    b.store(ld, p, align=4)
    b.store(ir.Constant(desc, None), slot)
    g = b.gep(p, [s], inbounds=True, source_etype=f32)
    b.gep(slot, [ir.Constant(i32, 0), ir.Constant(i32, 2), sel], source_etype=desc)
    b.sext(b.trunc(s, i8), i32)
    b.fpext(y, ir.DoubleType())
    b.ptrtoint(g, i64)
    agg = b.insert_value(ir.Constant(desc, ir.Undefined), g, 0)
    agg = b.insert_value(agg, x, [2, 1])
    b.extract_value(agg, [2, 1])
    e = b.extract_element(v, ir.Constant(i32, 1))
    w = b.insert_element(v, e, ir.Constant(i32, 0))
    b.shuffle_vector(w, v, ir.Constant(ir.VectorType(i32, 4), [0, 5, 2, 7]))
    b.call(callee, [y, y])
    b.call(callee, [y, y], tail=True, fastmath=("fast",), cconv="fastcc")
    b.call(callee, [y, y], attrs=("nounwind",), name="named")
    b.call(varargs, [p, x])
    b.call(callee, [y, y], arg_attrs={0: ("noundef",)})
    b.cmpxchg(p, x, s, "monotonic", "monotonic")
    b.add(x, x).set_metadata("irkit", mod.add_metadata([ir.Constant(i32, 1)]))
    b.branch(loop)
    b.position_at_end(loop)
    phi = b.phi(i64, name="iv")
    phi.add_incoming(x, entry)
    nxt = b.add(phi, ir.Constant(i64, 1))
    phi.add_incoming(nxt, loop)
    b.cbranch(b.icmp_unsigned("==", nxt, x), done, loop)
    b.position_at_end(done)
    b.ret_void()
    return fn


def test_function_text_prints_as_llvmlite():
    """The split prints each function with `function_text`, which must print what
    llvmlite's `str()` does, instruction by instruction (its own formats, and llvmlite's for
    what it leaves to it)."""
    ours = llvm_partition.function_text(_every_instruction())
    theirs = str(_every_instruction())
    assert ours.splitlines() == theirs.splitlines()
    assert ours == theirs
    assert 'cmpxchg' in ours and '!irkit' in ours and 'quote\\22d\\5cname' in ours


def test_function_text_prints_a_cached_text_as_llvmlite():
    """An instruction llvmlite has printed keeps that text (its cache) even if changed
    afterwards; `function_text` prints the same."""
    def built():
        fn = _every_instruction()
        phi = next(i for blk in fn.blocks for i in blk.instructions
                   if isinstance(i, ir.PhiInstr))
        str(phi)
        phi.add_incoming(fn.args[0], fn.blocks[0])
        return fn
    assert llvm_partition.function_text(built()) == str(built())


def test_split_of_a_model_prints_what_llvmlite_prints(logreg, monkeypatch):
    """A model's split text (one partition, nothing merged) is llvmlite's `str()` of the
    module, translated twice so that neither printer sees the other's caches."""
    monkeypatch.setattr(llvm_partition, "_merge_identical", lambda items: items)
    lowered = lower_model_with_graph(logreg)[1]
    text = llvm_partition.split_module(llvm_cpu.translate(lowered, verify=False), 1)[0].text
    assert text == str(llvm_cpu.translate(lowered, verify=False))


def test_function_names_are_llvmlites():
    """The translation names a function's values with `llvm_lowering._Names`, which must
    give the names llvmlite's own `NameScope` gives, in any order of requests: unnamed
    values, repeated names, and explicit names that collide with generated ones."""
    from llvmlite.ir._utils import DuplicatedNameError, NameScope
    from irkit.backends.llvm_lowering import _Names
    requests = ["", "", "x", "x", "x.1", "", ".4", "", "", "x", "loop.body", "loop.body",
                "loop.body.1", "loop.body", "", "x.2"]
    theirs, ours = NameScope(), _Names(NameScope())
    assert [theirs.register(n, deduplicate=True) for n in requests] == \
        [ours.register(n, deduplicate=True) for n in requests]
    assert ours.register("fresh") == theirs.register("fresh") == "fresh"
    with pytest.raises(DuplicatedNameError):
        ours.register("x")
    taken = [NameScope(), NameScope()]  # a function's scope after its arguments were named
    for scope in taken:
        [scope.register("", deduplicate=True) for _ in range(3)]
    assert _Names(taken[0]).register("", deduplicate=True) == \
        taken[1].register("", deduplicate=True) == ".4"


def test_a_printer_that_disagrees_with_llvmlite_is_not_used(logreg, monkeypatch):
    """The first function a process prints is printed both ways; where `function_text`
    disagrees (another llvmlite), every function is printed by llvmlite itself."""
    monkeypatch.setattr(llvm_partition, "_same_as_llvmlite", None)
    monkeypatch.setattr(llvm_partition, "function_text", lambda fn: "wrong\n")
    irmod = _translated(logreg)
    parts = llvm_partition.split_module(irmod, 1)
    assert llvm_partition._same_as_llvmlite is False
    assert "wrong" not in parts[0].text
    llvm.parse_assembly(parts[0].text).verify()
