"""Elementwise named ops: `linalg.add`, `sub`, `mul`, `div`, `max`, `min` (two inputs) and
`linalg.exp`, `log`, `abs`, `ceil`, `floor`, `negf`, `sqrt`, `rsqrt`, `tanh`, `erf` (one).

All loops parallel, every map the identity: `out[i] = f(in0[i], in1[i])`, `f` one arith or
math op on the output's element type (the float op for floats; for integers the signed
one, as MLIR picks). The inputs are not cast: their element type must be the output's.
One table row per op; `_declare` makes the class with its docstring example.
"""

from __future__ import annotations

from irkit.types import FloatType

from irkit.dialects.linalg import linalg
from irkit.dialects.linalg.named import DPSNamedOp, rank_of
from irkit.dialects.linalg.structured import PARALLEL, affine_map, dim


class _Elementwise(DPSNamedOp):
    __slots__ = ()
    #: (float op class name, integer op class name or None), looked up in arith / math
    payload: tuple = ()

    def indexing_maps_list(self):
        n = rank_of(self.outputs[0]) if self.outputs else 0
        identity = affine_map(n, [dim(i) for i in range(n)])
        return [identity if rank_of(v) else affine_map(n, ())
                for v in self.structured_operands()]

    def iterator_types_list(self):
        return [PARALLEL] * (rank_of(self.outputs[0]) if self.outputs else 0)

    def payload_class(self) -> type:
        from irkit.dialects import arith, math
        float_name, int_name = self.payload
        is_float = isinstance(self.body_element_type(), FloatType)
        name = float_name if is_float or int_name is None else int_name
        return getattr(arith, name, None) or getattr(math, name)

    def body_element_type(self):
        t = self.outputs[0].type
        return t.element

    def region_builder(self, b, args):
        return [b.create(self.payload_class(), *args[:self.num_inputs]).result]


def _declare(cls_name: str, short: str, num_inputs: int, float_op: str, int_op: str | None,
             what: str):
    name = f"linalg.{short}"
    ins = "%a, %b" if num_inputs == 2 else "%a"
    types = ", ".join(["tensor<8xf32>"] * num_inputs)
    doc = (f"{what}\n\n"
           f"        %r = {name} ins({ins} : {types}) outs(%o : tensor<8xf32>)\n"
           f"            -> tensor<8xf32>\n    ")
    cls = type(cls_name, (_Elementwise,), {
        "__slots__": (), "__doc__": doc, "name": name, "num_inputs": num_inputs,
        "payload": (float_op, int_op), "__module__": __name__})
    return linalg.op(cls)


# class, name, inputs, float op, integer op, what it computes (docstring)
AddOp = _declare("AddOp", "add", 2, "AddFOp", "AddIOp", "Elementwise sum `out = a + b`.")
SubOp = _declare("SubOp", "sub", 2, "SubFOp", "SubIOp", "Elementwise difference `out = a - b`.")
MulOp = _declare("MulOp", "mul", 2, "MulFOp", "MulIOp", "Elementwise product `out = a * b`.")
DivOp = _declare("DivOp", "div", 2, "DivFOp", "DivSIOp",
                 "Elementwise quotient `out = a / b` (signed for integers).")
MaxOp = _declare("MaxOp", "max", 2, "MaximumFOp", "MaxSIOp",
                 "Elementwise maximum (`arith.maximumf`: NaN propagates; signed integers).")
MinOp = _declare("MinOp", "min", 2, "MinimumFOp", "MinSIOp",
                 "Elementwise minimum (`arith.minimumf`: NaN propagates; signed integers).")
ExpOp = _declare("ExpOp", "exp", 1, "ExpOp", None, "Elementwise `math.exp`.")
LogOp = _declare("LogOp", "log", 1, "LogOp", None, "Elementwise `math.log`.")
AbsOp = _declare("AbsOp", "abs", 1, "AbsFOp", None, "Elementwise `math.absf`.")
CeilOp = _declare("CeilOp", "ceil", 1, "CeilOp", None, "Elementwise `math.ceil`.")
FloorOp = _declare("FloorOp", "floor", 1, "FloorOp", None, "Elementwise `math.floor`.")
NegFOp = _declare("NegFOp", "negf", 1, "NegFOp", None, "Elementwise `arith.negf`.")
SqrtOp = _declare("SqrtOp", "sqrt", 1, "SqrtOp", None, "Elementwise `math.sqrt`.")
RsqrtOp = _declare("RsqrtOp", "rsqrt", 1, "RsqrtOp", None, "Elementwise `math.rsqrt`.")
TanhOp = _declare("TanhOp", "tanh", 1, "TanhOp", None, "Elementwise `math.tanh`.")
ErfOp = _declare("ErfOp", "erf", 1, "ErfOp", None, "Elementwise `math.erf`.")
