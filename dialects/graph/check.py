"""`graph.check`: a run-time error of the graph program, as a scalar op.

Some errors show only in a program's values: a label out of range in `cross_entropy`, the
maximum of an empty axis. The graph ops raise them from their numpy semantics; once an op is
lowered to structured kernels, the kernel states the condition with a `graph.check`, at the
op's location, with the interpreter's message. `bufferize` turns it into a `memory.check`
(the status buffer compiled code reports through: dialects/memory/access.py); until then the
interpreter raises the error itself, so a converted program fails exactly where and how the
graph program did.
"""

from __future__ import annotations

import numpy as np

from irkit.interpreter import InterpreterError
from irkit.opdef import Bool, Constraint, Elementwise, Op, Operand, Prop, StrAttr
from irkit.types import I1, IndexType, IntegerType
from irkit.dialects.graph.base import graph

#: what `value` and `bound` may be: integers (any width) or indices
IntegerOrIndex = Constraint(lambda t: isinstance(t, (IntegerType, IndexType)),
                            "integer or index")


@graph.op
class CheckOp(Op):
    """Fails the program with `message` when `ok` is false; `{value}` and `{bound}` in the
    message stand for the two integers it reports (the offending value and what it was
    checked against). Usable in a function and in the body of a `linalg.generic`, where it
    checks every point of the iteration space.

        graph.check %ok, %label, %n {message = "label {value} is not below {bound}"} : i64, index

    The location is the failing op's (the source line to blame). Interpreted, a failure is
    an `InterpreterError` with the rendered message; over many points at once (a vectorized
    body), the first failing point in row-major order is the one reported. The op is not
    `Pure` (failing is its effect), so nothing erases or merges it.
    """

    name = "graph.check"
    ok = Operand(Bool, doc="the condition that holds when all is well")
    value = Operand(IntegerOrIndex, doc="the offending value")
    bound = Operand(IntegerOrIndex, doc="what it was checked against")
    message = Prop(StrAttr, doc="the error's text, with {value} and {bound} placeholders")
    #: acts on each point alone: a linalg body holding it still runs vectorized
    traits = (Elementwise(),)

    def infer_result_types(self):
        return []

    def render(self, value: int, bound: int) -> str:
        """The message with `value` and `bound` in place of the placeholders."""
        return self.message.value.replace("{value}", str(value)).replace("{bound}", str(bound))

    @classmethod
    def parse(cls, p, num_results):
        refs = p.parse_operand_refs()
        if len(refs) != 3:
            raise p.error(f"expected 3 operands (ok, value, bound), got {len(refs)}")
        attrs = p.parse_optional_attr_dict()
        props = {k: attrs.pop(k) for k in list(attrs) if k in cls.spec.prop_names}
        p.expect(":")
        value_type = p.parse_type()
        p.expect(",")
        bound_type = p.parse_type()
        ok, value, bound = refs
        return cls.build(p.resolve(ok, I1), p.resolve(value, value_type),
                         p.resolve(bound, bound_type), attributes=attrs, **props)

    def print(self, p):
        p.write(" " + ", ".join(map(p.value, (self.ok, self.value, self.bound))))
        p.attr_dict(self)
        p.write(f" : {self.value.type}, {self.bound.type}")

    def interpret(self, interp, values):
        ok, value, bound = (np.asarray(v) for v in values)
        if bool(np.all(ok)):
            return []
        shape = np.broadcast_shapes(ok.shape, value.shape, bound.shape)
        first = int(np.flatnonzero(~np.broadcast_to(ok, shape))[0])
        at = np.unravel_index(first, shape) if shape else ()
        v = int(np.broadcast_to(value, shape)[at])
        n = int(np.broadcast_to(bound, shape)[at])
        raise InterpreterError(self.render(v, n), self.location)


__all__ = ["CheckOp"]
