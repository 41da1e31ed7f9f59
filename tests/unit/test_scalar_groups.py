"""Scalar fusion groups (`linalg-fuse`, `outer_dims = 0`) in the MLP training step.

Issue 13 asks that every elementwise op of the MLP training step (forward, backward, Adam
update) land in a matmul epilogue, a reduction group or an elementwise group. What used to
be left out is scalar work: the loss (a full reduction over the batch and the 0-d generic
that scales it) and Adam's bias-correction scalars (0-d generics). These tests compile
examples/mlp.irk to the linalg stage and look at what is left outside groups, and at the
loop stage check that the loss's sum no longer has a buffer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from irkit.dialects.fusion import GroupOp
from irkit.dialects.linalg import REDUCTION, FillOp, StructuredOp
from irkit.dialects.loop import ForOp
from irkit.dialects.memory import AllocOp, StoreOp
from irkit.frontend.dsl import compile_file, model_modules
from irkit.passes import pipeline

MLP = Path(__file__).resolve().parents[2] / "examples" / "mlp.irk"


def train_step(stage: str):
    module = model_modules(compile_file(str(MLP)))["mlp"]
    pipeline.pass_manager(None, stage).run(module)
    return next(o for o in module.walk() if o.name == "func.func"
                and o.properties["sym_name"].value == "train_step")


@pytest.fixture(scope="module")
def linalg_step():
    return train_step("linalg")


def _in_group(op) -> bool:
    return isinstance(op.parent_op, GroupOp)


def _inits_a_reduction(fill: FillOp) -> bool:
    return all(isinstance(u, StructuredOp) and REDUCTION in u.iterator_types_list()
               for u in fill.result.users) and fill.result.has_uses()


def test_every_elementwise_op_of_the_step_is_in_a_group(linalg_step):
    outside = [o for o in linalg_step.walk() if isinstance(o, StructuredOp)
               and o.parent_op is not None and not isinstance(o.parent_op, StructuredOp)
               and REDUCTION not in o.iterator_types_list() and not _in_group(o)
               and not (isinstance(o, FillOp) and _inits_a_reduction(o))]
    assert not outside, [(o.name, o.iterator_types_list(), str(o.location)) for o in outside]


def test_loss_and_adam_scalars_are_scalar_groups(linalg_step):
    groups = [g for g in linalg_step.walk() if isinstance(g, GroupOp)
              and g.kind.value == "scalar"]
    assert [g.num_outer_dims for g in groups] == [0, 0]
    loss, adam = ([o for o in g.body.ops if isinstance(o, StructuredOp)] for g in groups)
    # the loss: fill, the sum over the batch (one reduction loop), the 0-d mean
    assert [o.iterator_types_list() for o in loss] == [[], [REDUCTION], []]
    # Adam: the step count and the two bias corrections
    assert [o.iterator_types_list() for o in adam] == [[], [], []]


def test_no_scalar_group_holds_parallel_work(linalg_step):
    for g in linalg_step.walk():
        if isinstance(g, GroupOp) and not g.num_outer_dims:
            for o in g.body.ops:
                if isinstance(o, StructuredOp):
                    assert set(o.iterator_types_list()) <= {REDUCTION}, str(o.location)


def test_the_loss_sum_has_no_buffer():
    """At the loop stage the loss is one loop over the batch carrying an f64 sum whose
    value goes straight into the 0-d epilogue: no 0-d f64 buffer is left in the step but
    the Adam step counter's."""
    step = train_step("loop")
    f64_scalars = [a for a in step.walk() if isinstance(a, AllocOp)
                   and a.memref.type.rank == 0 and str(a.memref.type.element) == "f64"]
    assert len(f64_scalars) == 1          # the new step count, copied to the variable
    sums = [f for f in step.walk() if isinstance(f, ForOp) and f.parent_op is step
            and [str(r.type) for r in f.results] == ["f64"]]
    assert sums and all(not isinstance(u, StoreOp) for f in sums for r in f.results
                        for u in r.users)
