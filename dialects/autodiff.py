"""The `autodiff` dialect: derivatives asked for in the IR, built by the `autodiff` pass.

`autodiff.grad` (reverse mode) and `autodiff.jvp` (forward mode) name values of the block
they sit in: what is differentiated, with respect to what, and the seed (cotangent) or
tangent directions. They stand for graphs the pass has not built yet: the pass replaces
each with ordinary `graph` ops (see `irkit.ad_rules` for the rules, and
`irkit.frontend.ad_engine` for the algorithm), so nothing below the graph level ever sees
them, and differentiating the pass's output again (grad of grad, Hessian-vector products) is
the same operation.

The derivative is taken through the ops of the same block that precede the op; values
defined elsewhere (function arguments, values from enclosing regions) are leaves.
"""

from __future__ import annotations

from irkit.opdef import AnyTensor, Dialect, Op, Pure, VarOperand, VarResult
from irkit.types import FunctionType

autodiff = Dialect("autodiff", "Derivative requests (reverse and forward mode), expanded by "
                               "the autodiff pass into graph ops.")


def _parse_signature(p, n_in: int, n_out: int, ins: str, outs: str) -> tuple[list, list]:
    """`: (T...) -> (U...)` with `n_in` and `n_out` types."""
    p.expect(":")
    tk = p.i
    ftype = p.parse_type()
    if not isinstance(ftype, FunctionType):
        raise p.error("expected a function type `(types) -> result types`", tk)
    if len(ftype.inputs) != n_in:
        raise p.error(f"expected {n_in} types before '->', {ins}", tk)
    if len(ftype.results) != n_out:
        raise p.error(f"expected {n_out} result types, {outs}", tk)
    return list(ftype.inputs), list(ftype.results)


def _types(values) -> str:
    return ", ".join(str(v.type) for v in values)


class _DerivativeOp(Op):
    __slots__ = ()

    def interpret(self, interp, values):
        from irkit.interpreter import InterpreterError
        raise InterpreterError(f"'{self.name}' is expanded by the autodiff pass before it "
                               f"runs (irkit-opt -p autodiff)", self.location)

    def _check_pairs(self, a, b, what: str) -> None:
        if len(a) != len(b):
            raise self.error(f"has {len(a)} {what[0]} but {len(b)} {what[1]}")
        for i, (x, y) in enumerate(zip(a, b)):
            if x.type is not y.type:
                raise self.error(f"{what[1]} #{i} has type {y.type}, but {what[0]} #{i} has "
                                 f"type {x.type}")


@autodiff.op
class GradOp(_DerivativeOp):
    """Reverse mode: the cotangents of `xs` given cotangents `seeds` of `ys`, i.e. the
    vector-Jacobian product seeds^T J. Without seeds every y must be a scalar (one element)
    and is seeded with 1, so the results are the gradients of sum(ys).

        %dw, %db = autodiff.grad %loss wrt %w, %b
            : (tensor<f32>) -> (tensor<4x2xf32>, tensor<2xf32>)
        %dx = autodiff.grad %y seed %s wrt %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    """

    name = "autodiff.grad"
    ys = VarOperand(AnyTensor, doc="the values differentiated")
    seeds = VarOperand(AnyTensor, doc="their cotangents (none: 1 for each scalar y)")
    xs = VarOperand(AnyTensor, doc="the values differentiated against")
    grads = VarResult(AnyTensor, doc="one cotangent per x, of its type")
    traits = (Pure(),)

    def infer_result_types(self):
        return [x.type for x in self.xs]

    def verify_(self):
        if not self.ys:
            raise self.error("needs at least one value to differentiate")
        if self.seeds:
            self._check_pairs(self.ys, self.seeds, ("values", "seeds"))
        else:
            for i, y in enumerate(self.ys):
                if not y.type.has_static_shape or y.type.num_elements != 1:
                    raise self.error(f"value #{i} ({y.type}) is not a scalar: give a seed")
        self._check_pairs(self.xs, self.results, ("xs", "results"))

    @classmethod
    def parse(cls, p, num_results):
        ys = p.parse_operand_refs()
        seeds = p.parse_operand_refs() if p.accept("seed") else []
        p.expect("wrt")
        xs = p.parse_operand_refs()
        attrs = p.parse_optional_attr_dict()
        in_types, out_types = _parse_signature(p, len(ys) + len(seeds), len(xs),
                                               "one per value and seed", "one per 'wrt' value")
        ys_v = [p.resolve(r, t) for r, t in zip(ys, in_types)]
        seeds_v = [p.resolve(r, t) for r, t in zip(seeds, in_types[len(ys):])]
        xs_v = [p.resolve(r, t) for r, t in zip(xs, out_types)]
        return cls.build(ys_v, seeds_v, xs_v, result_types=out_types, attributes=attrs)

    def print(self, p):
        p.write(" " + ", ".join(map(p.value, self.ys)))
        if self.seeds:
            p.write(" seed " + ", ".join(map(p.value, self.seeds)))
        p.write(" wrt " + ", ".join(map(p.value, self.xs)))
        p.attr_dict(self, elided=("operandSegmentSizes",))
        outs = _types(self.results)
        p.write(f" : ({_types([*self.ys, *self.seeds])}) -> "
                f"{outs if len(self.results) == 1 else '(' + outs + ')'}")


@autodiff.op
class JvpOp(_DerivativeOp):
    """Forward mode: the tangents of `ys` when the `xs` move along `tangents`, i.e. the
    Jacobian-vector product J v.

        %ty = autodiff.jvp %y wrt %x along %v : (tensor<3xf32>) -> tensor<f32>
    """

    name = "autodiff.jvp"
    ys = VarOperand(AnyTensor, doc="the values whose tangents are wanted")
    xs = VarOperand(AnyTensor, doc="the values that move")
    tangents = VarOperand(AnyTensor, doc="one direction per x, of its type")
    outs = VarResult(AnyTensor, doc="one tangent per y, of its type")
    traits = (Pure(),)

    def infer_result_types(self):
        return [y.type for y in self.ys]

    def verify_(self):
        if not self.ys:
            raise self.error("needs at least one value to differentiate")
        self._check_pairs(self.xs, self.tangents, ("xs", "tangents"))
        self._check_pairs(self.ys, self.results, ("values", "results"))

    @classmethod
    def parse(cls, p, num_results):
        ys = p.parse_operand_refs()
        p.expect("wrt")
        xs = p.parse_operand_refs()
        p.expect("along")
        ts = p.parse_operand_refs()
        attrs = p.parse_optional_attr_dict()
        if len(ts) != len(xs):
            raise p.error(f"expected {len(xs)} tangents, one per 'wrt' value")
        in_types, out_types = _parse_signature(p, len(xs), len(ys), "one per 'wrt' value",
                                               "one per value")
        return cls.build([p.resolve(r, t) for r, t in zip(ys, out_types)],
                         [p.resolve(r, t) for r, t in zip(xs, in_types)],
                         [p.resolve(r, t) for r, t in zip(ts, in_types)],
                         result_types=out_types, attributes=attrs)

    def print(self, p):
        p.write(" " + ", ".join(map(p.value, self.ys)))
        p.write(" wrt " + ", ".join(map(p.value, self.xs)))
        p.write(" along " + ", ".join(map(p.value, self.tangents)))
        p.attr_dict(self, elided=("operandSegmentSizes",))
        outs = _types(self.results)
        p.write(f" : ({_types(self.xs)}) -> "
                f"{outs if len(self.results) == 1 else '(' + outs + ')'}")
