"""The pass manager: pipeline syntax, options, nesting, verification and instrumentation."""

import pytest

from irkit.diagnostics import IRError
from irkit.ir import Operation
from irkit.parser import parse_module
from irkit.pass_manager import (
    Instrumentation, Pass, PassCrash, PassManager, PassPipelineError, Timing, lookup_pass,
    register_pass,
)

MODULE = """
func.func @f(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  %1 = arith.addf %a, %a : f32
  %2 = arith.mulf %0, %1 : f32
  return %2 : f32
}
func.func @g(%a: i32) -> i32 {
  return %a : i32
}
"""


@register_pass
class RecordOps(Pass):
    """Test pass: appends the name of each op it runs on to a shared log."""

    name = "test-record-ops"
    tag: str = "x"
    count: int = 1
    flag: bool = False
    items: list[int] = None

    log = []

    def run(self, op: Operation) -> None:
        RecordOps.log.append((self.tag, op.name, op.properties.get("sym_name")))


@register_pass
class Crash(Pass):
    """Test pass with a bug."""

    name = "test-crash"

    def run(self, op: Operation) -> None:
        raise KeyError("oops")


def setup_function():
    RecordOps.log.clear()


def test_options_are_typed_and_kebab_case():
    pm = PassManager.parse("test-record-ops{tag=hi count=3 flag=true items=1,2}")
    (p,) = list(pm.passes())
    assert (p.tag, p.count, p.flag, p.items) == ("hi", 3, True, [1, 2])
    assert p.pipeline_text() == "test-record-ops{tag=hi count=3 flag=true items=1,2}"


def test_flag_option_without_value_is_true():
    (p,) = list(PassManager.parse("test-record-ops{flag}").passes())
    assert p.flag is True


def test_nested_pipeline_runs_on_each_function_in_order():
    m = parse_module(MODULE)
    pm = PassManager.parse("builtin.module(test-record-ops{tag=a},"
                           "func.func(test-record-ops{tag=b},test-record-ops{tag=c}))")
    pm.run(m)
    names = [(t, n, s.value if s else None) for t, n, s in RecordOps.log]
    # The whole nested pipeline runs on @f before it runs on @g, as in MLIR.
    assert names == [("a", "builtin.module", None), ("b", "func.func", "f"),
                     ("c", "func.func", "f"), ("b", "func.func", "g"), ("c", "func.func", "g")]


def test_pipeline_text_round_trips():
    text = "builtin.module(func.func(canonicalize{max-iterations=3 region-simplify=true},cse))"
    pm = PassManager.parse(text)
    assert pm.pipeline_text() == text
    assert PassManager.parse(pm.pipeline_text()).pipeline_text() == text


def test_any_anchor_and_flat_form():
    m = parse_module(MODULE)
    PassManager.parse("builtin.module(any(test-record-ops))").run(m)
    assert [n for _, n, _ in RecordOps.log] == ["func.func", "func.func"]


@pytest.mark.parametrize("text, message", [
    ("nope", "no pass named 'nope'"),
    ("cse{x=1}", "'cse' has no option 'x' (options: none)"),
    ("canonicalize{max-iterations=}", "cannot read '' as int"),
    ("test-record-ops{flag=maybe}", "cannot read 'maybe' as bool"),
    ("builtin.module(cse", "unbalanced"),
    ("cse,,dce", "empty element"),
    ("func.func(cse)", "cannot run on 'builtin.module'"),
])
def test_pipeline_errors(text, message):
    with pytest.raises(PassPipelineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        PassManager.parse(text)


def test_anchored_pass_cannot_be_scheduled_on_other_op():
    from irkit.pass_manager import OpPassManager

    class OnFunc(Pass):
        name = "test-on-func"
        anchor = "func.func"

    with pytest.raises(PassPipelineError, match="runs on 'func.func' ops"):
        OpPassManager("builtin.module").add(OnFunc())


def test_verify_each_names_the_breaking_pass():
    @register_pass
    class Break(Pass):
        name = "test-break-return"

        def run(self, op):
            for o in op.walk():
                if o.name == "func.return":
                    o.set_operands([])

    m = parse_module(MODULE)
    with pytest.raises(IRError) as e:
        PassManager.parse("test-break-return").run(m)
    text = e.value.render()
    assert "'func.return' op has 0 operands" in text
    assert "the IR does not verify after pass 'test-break-return'" in text

    m = parse_module(MODULE)
    PassManager.parse("test-break-return", verify_each=False).run(m)   # no check: no error


def test_crash_is_reported_as_a_pass_bug():
    m = parse_module(MODULE)
    with pytest.raises(PassCrash) as e:
        PassManager.parse("test-crash").run(m)
    text = e.value.render()
    assert "pass 'test-crash' crashed on 'builtin.module': KeyError: 'oops'" in text
    assert "this is a bug in the pass" in text


def test_instrumentation_sees_every_pass_in_order():
    events = []

    class Spy(Instrumentation):
        def before_pass(self, p, op):
            events.append(("before", p.name, op.name))

        def after_pass(self, p, op):
            events.append(("after", p.name, op.name))

    m = parse_module(MODULE)
    pm = PassManager.parse("builtin.module(cse,func.func(canonicalize))")
    pm.add_instrumentation(Spy())
    pm.run(m)
    assert events == [("before", "cse", "builtin.module"), ("after", "cse", "builtin.module"),
                      ("before", "canonicalize", "func.func"),
                      ("after", "canonicalize", "func.func"),
                      ("before", "canonicalize", "func.func"),
                      ("after", "canonicalize", "func.func")]


def test_timing_report_has_nested_rows():
    m = parse_module(MODULE)
    pm = PassManager.parse("builtin.module(func.func(cse),dce)")
    t = Timing()
    pm.add_instrumentation(t)
    pm.run(m)
    report = t.report()
    assert "'func.func' Pipeline" in report
    assert "    CSE (cse)" in report
    assert "  DCE (dce)" in report
    assert report.rstrip().endswith("(100.0%)  Total")


def test_registry_knows_the_default_passes():
    for name in ("canonicalize", "cse", "dce", "symbol-dce", "inline",
                 "loop-invariant-code-motion", "strip-debuginfo"):
        cls = lookup_pass(name)
        assert cls is not None and cls.name == name
        assert "Algorithm:" in cls.__doc__, name
        module = cls.__module__.rsplit(".", 1)[1]
        assert module == name.replace("-", "_"), "a pass lives in the file named after its flag"
