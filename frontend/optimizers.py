"""Optimizers as graph ops appended after the backward graph.

A `train L with adam(lr=1e-3)` clause becomes a function `@train_step` whose body is the
forward graph, the backward graph (`autodiff.grad` of L with respect to every param), and
then the update that one optimizer class emits here: ordinary elementwise graph ops on the
gradients, `graph.read` / `graph.assign` of the state it keeps between steps, and a
`graph.assign` of each param. Nothing is special about an update: canonicalize, CSE, fusion
and code generation treat it like any other graph, and the interpreter runs it op by op.

State lives in `graph.variable`s next to the params, zeros-initialized and named after the
param (`w1.adam_m`), so a checkpoint of the module's variables is a checkpoint of training.
The names contain a dot, which no DSL identifier does, so they cannot clash with a param.

The formulas are PyTorch's (`torch.optim`, default flags: no weight decay, no Nesterov, no
AMSGrad, no dampening), so a model trained here and the same model trained with PyTorch
take the same steps up to floating-point rounding:

- `SGD`:      p <- p - lr * g
- `Momentum`: v <- beta * v + g;  p <- p - lr * v               (`SGD(momentum=beta)`)
- `Adam`:     t <- t + 1;  m <- beta1 * m + (1 - beta1) * g;  v <- beta2 * v + (1 - beta2) * g^2
              p <- p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from irkit.attributes import DictionaryAttr, FloatAttr, StringAttr, SymbolRefAttr
from irkit.ad_rules import ADBuilder
from irkit.builder import Builder
from irkit.dialects.graph import AssignOp, ReadOp, VariableOp
from irkit.ir import Operation, Value
from irkit.types import F64, RankedTensorType


@dataclass
class Slot:
    """One param the optimizer updates: its variable's name, its value as read at the start
    of the step, and its gradient (same type)."""

    name: str
    value: Value
    grad: Value


class UpdateBuilder(ADBuilder):
    """Creates the update's graph ops at one insertion point, and its state variables in the
    model module (before `anchor`, the first function, so variables stay together)."""

    def __init__(self, builder: Builder, module: Operation, anchor: Operation) -> None:
        super().__init__(builder)
        self.module = module
        self.anchor = anchor
        self._scalars: dict = {}

    def scalar(self, value: float, like: Value) -> Value:
        """A 0-d constant of `like`'s element type, made once per value and type (the update
        is one straight-line block, so the first one dominates every later use)."""
        key = (float(value), like.type.element)
        if key not in self._scalars:
            self._scalars[key] = super().scalar(value, like)
        return self._scalars[key]

    def state(self, name: str, type: RankedTensorType) -> Value:
        """Declare a zeros-initialized variable `name` of `type`; return its current value."""
        var = VariableOp.create(name, type, "zeros", location=self.location)
        self.module.regions[0].blocks[0].insert_before(self.anchor, var)
        return self.read(name, type)

    def read(self, name: str, type: RankedTensorType) -> Value:
        op = ReadOp.build(variable=SymbolRefAttr(name), result_types=[type],
                          location=self.location)
        self.builder.insert(op)
        return op.results[0]

    def assign(self, name: str, value: Value) -> None:
        self.builder.insert(AssignOp.build(value, variable=SymbolRefAttr(name), result_types=[],
                                           location=self.location))

    def axpy(self, a: float, x: Value, y: Value) -> Value:
        """a * x + y, with `a` a constant of x's element type."""
        return self.op("graph.add", self.op("graph.mul", self.scalar(a, x), x), y)

    def lerp(self, a: Value, b: Value, w: float) -> Value:
        """a + w (b - a), rounded as PyTorch's `lerp` kernel: from the nearer end, so w = 1
        gives b exactly (b - (1 - w) (b - a) when w >= 0.5)."""
        diff = self.op("graph.sub", b, a)
        if w < 0.5:
            return self.axpy(w, diff, a)
        return self.op("graph.sub", b, self.op("graph.mul", self.scalar(1.0 - w, diff), diff))

    def step(self, p: Value, lr: float, d: Value) -> Value:
        """p - lr * d (PyTorch's p + (-lr) * d, rounded the same: negation is exact)."""
        return self.op("graph.sub", p, self.op("graph.mul", self.scalar(lr, d), d))


class Optimizer:
    """One update rule. Subclasses name their hyperparameters (with defaults; None means
    required) in the order the DSL takes them positionally, and emit the update in `apply`."""

    name: ClassVar[str]
    hyperparameters: ClassVar[dict]

    def __init__(self, **hyper: float) -> None:
        unknown = [k for k in hyper if k not in self.hyperparameters]
        if unknown:
            raise TypeError(f"optimizer '{self.name}' has no hyperparameter '{unknown[0]}'")
        self.hyper = {}
        for k, default in self.hyperparameters.items():
            v = hyper.get(k, default)
            if v is None:
                raise TypeError(f"optimizer '{self.name}' needs '{k}'")
            self.hyper[k] = float(v)

    def attribute(self) -> DictionaryAttr:
        """The optimizer and its hyperparameters, for the `graph.optimizer` attribute of
        `@train_step` (a reader of the IR sees the settings without decoding constants)."""
        out = {"name": StringAttr(self.name)}
        out.update({k: FloatAttr(v, F64) for k, v in self.hyper.items()})
        return DictionaryAttr(out)

    def invalid(self) -> dict[str, str]:
        """Hyperparameters out of range, with why (PyTorch rejects the same values)."""
        out = {k: "must be finite" for k, v in self.hyper.items() if not math.isfinite(v)}
        if not out and self.hyper["lr"] < 0:
            out["lr"] = "must not be negative"
        return out

    def apply(self, ub: UpdateBuilder, slots: list[Slot]) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v:g}" for k, v in self.hyper.items())
        return f"{self.name}({args})"


class SGD(Optimizer):
    """Plain gradient descent: p <- p - lr * g (`torch.optim.SGD(lr=lr)`)."""

    name = "sgd"
    hyperparameters = {"lr": None}

    def apply(self, ub: UpdateBuilder, slots: list[Slot]) -> None:
        for s in slots:
            ub.assign(s.name, ub.step(s.value, self.hyper["lr"], s.grad))


class Momentum(Optimizer):
    """Heavy-ball momentum as PyTorch writes it (`torch.optim.SGD(lr, momentum=beta)`):
    the velocity accumulates undamped gradients, v <- beta * v + g, and p <- p - lr * v.
    The first step gives v = g, as PyTorch's buffer initialized to the first gradient."""

    name = "momentum"
    hyperparameters = {"lr": None, "beta": 0.9}

    def invalid(self) -> dict[str, str]:
        out = super().invalid()
        if not out and self.hyper["beta"] < 0:
            out["beta"] = "must not be negative"
        return out

    def apply(self, ub: UpdateBuilder, slots: list[Slot]) -> None:
        for s in slots:
            key = f"{s.name}.momentum_v"
            v = ub.axpy(self.hyper["beta"], ub.state(key, s.value.type), s.grad)
            ub.assign(key, v)
            ub.assign(s.name, ub.step(s.value, self.hyper["lr"], v))


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015) with PyTorch's bias correction (`torch.optim.Adam` defaults).

    Algorithm, per step:

    1. The step counter t (a scalar f64 variable `adam.step`) goes up by one; the bias
       corrections 1 - beta1^t and 1 - beta2^t are computed once, in f64 as PyTorch computes
       them in Python floats (in f32, 1 - 0.9999^t loses three digits to cancellation), and
       cast to each param's element type.
    2. Per param, the moment estimates m and v (variables `<param>.adam_m`, `.adam_v`)
       move towards g and g^2; m by PyTorch's `lerp`, m + (1 - beta1) (g - m).
    3. p <- p - (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps): eps is added after the
       second moment is corrected, as in PyTorch (the paper adds it to sqrt(v_hat), which
       is the same thing written differently).
    """

    name = "adam"
    hyperparameters = {"lr": None, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}

    def invalid(self) -> dict[str, str]:
        out = super().invalid()
        if out:
            return out
        for k in ("beta1", "beta2"):
            if not 0.0 <= self.hyper[k] < 1.0:
                out[k] = "must be in [0, 1)"
        if self.hyper["eps"] < 0:
            out["eps"] = "must not be negative"
        return out

    def apply(self, ub: UpdateBuilder, slots: list[Slot]) -> None:
        h = self.hyper
        counter = RankedTensorType((), F64)
        t = ub.state("adam.step", counter)
        t = ub.op("graph.add", t, ub.scalar(1.0, t))
        ub.assign("adam.step", t)
        # lr / (1 - beta1^t) and sqrt(1 - beta2^t), per element type of the params
        corrections = {counter.element: self._corrections(ub, t)}
        for s in slots:
            et = s.value.type.element
            if et not in corrections:
                corrections[et] = tuple(ub.op("graph.cast", c, dtype=et)
                                        for c in corrections[counter.element])
            step_size, bc2_sqrt = corrections[et]
            m_key, v_key = f"{s.name}.adam_m", f"{s.name}.adam_v"
            m = ub.state(m_key, s.value.type)
            v = ub.state(v_key, s.value.type)
            m = ub.lerp(m, s.grad, 1.0 - h["beta1"])
            g2 = ub.op("graph.mul", s.grad, s.grad)
            v = ub.op("graph.add", ub.op("graph.mul", ub.scalar(h["beta2"], v), v),
                      ub.op("graph.mul", ub.scalar(1.0 - h["beta2"], g2), g2))
            ub.assign(m_key, m)
            ub.assign(v_key, v)
            denom = ub.op("graph.add", ub.op("graph.div", ub.op("graph.sqrt", v), bc2_sqrt),
                          ub.scalar(h["eps"], v))
            delta = ub.op("graph.mul", step_size, ub.op("graph.div", m, denom))
            ub.assign(s.name, ub.op("graph.sub", s.value, delta))

    def _corrections(self, ub: UpdateBuilder, t: Value) -> tuple[Value, Value]:
        h = self.hyper
        one = ub.scalar(1.0, t)
        bc1 = ub.op("graph.sub", one, ub.op("graph.pow", ub.scalar(h["beta1"], t), t))
        bc2 = ub.op("graph.sub", one, ub.op("graph.pow", ub.scalar(h["beta2"], t), t))
        return ub.op("graph.div", ub.scalar(h["lr"], t), bc1), ub.op("graph.sqrt", bc2)


#: the DSL's optimizer names (`train L with NAME(...)`) -> their classes
OPTIMIZERS: dict[str, type[Optimizer]] = {c.name: c for c in (SGD, Momentum, Adam)}
