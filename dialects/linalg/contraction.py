"""Contractions: `linalg.matmul` and `linalg.batch_matmul`.

`C[m, n] += cast(A[m, k]) * cast(B[k, n])` (and per batch `b`): the inputs are converted to
the output's element type (`cast = #linalg.type_fn<cast_signed>` by default, or
`cast_unsigned`), multiplied and added to the output element, in order over `k`.

MLIR 22 stores the indexing maps on the op (the generic form always shows them), so an
operand may be read transposed or broadcast without a copy:

    %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                        affine_map<(d0, d1, d2) -> (d2, d1)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%at, %b : tensor<8x4xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>)
        -> tensor<4x16xf32>

Each map may only use the dims of its default map, and the output keeps all of its own
(MLIR's messages); a matmul input that drops dims is a broadcast, allowed only along the
reduction dim (`(d2)`); a batch_matmul input may drop the batch dim. The custom form shows
the maps only when they differ from the default.
"""

from __future__ import annotations

from irkit.attributes import OpaqueAttr
from irkit.opdef import OptProp, Prop, attr_constraint
from irkit.types import FloatType

from irkit.dialects.linalg import linalg
from irkit.dialects.linalg.named import DPSNamedOp, cast
from irkit.dialects.linalg.structured import (
    PARALLEL, REDUCTION, IndexingMaps, affine_map, dim, maps_attr,
)

CAST_SIGNED = OpaqueAttr("linalg.type_fn<cast_signed>")
CAST_UNSIGNED = OpaqueAttr("linalg.type_fn<cast_unsigned>")
TypeFn = attr_constraint(OpaqueAttr, "#linalg.type_fn<cast_signed|cast_unsigned>",
                         lambda a: a in (CAST_SIGNED, CAST_UNSIGNED))


def multiply_accumulate(b, op, args):
    """`out + cast(lhs) * cast(rhs)` in the output's element type: the body of matmul,
    batch_matmul and convolutions."""
    from irkit.dialects import arith
    lhs, rhs, out = args
    unsigned = getattr(op, "cast", None) == CAST_UNSIGNED
    t = out.type
    x, y = cast(b, lhs, t, unsigned), cast(b, rhs, t, unsigned)
    mul, add = (arith.MulFOp, arith.AddFOp) if isinstance(t, FloatType) else \
        (arith.MulIOp, arith.AddIOp)
    return [b.create(add, out, b.create(mul, x, y).result).result]


_MATMUL_MAPS = maps_attr([affine_map(3, [dim(0), dim(2)]), affine_map(3, [dim(2), dim(1)]),
                          affine_map(3, [dim(0), dim(1)])])
_BATCH_MATMUL_MAPS = maps_attr([affine_map(4, [dim(0), dim(1), dim(3)]),
                                affine_map(4, [dim(0), dim(3), dim(2)]),
                                affine_map(4, [dim(0), dim(1), dim(2)])])


class _Contraction(DPSNamedOp):
    __slots__ = ()
    cast = OptProp(TypeFn, doc="how the inputs become the output's element type "
                               "(cast_signed when absent)")
    keyword_props = ("indexing_maps",)
    defaults: object = None

    def default_props(self):
        return {"indexing_maps": self.defaults}

    def indexing_maps_list(self):
        return [m.value for m in self.indexing_maps]

    def region_builder(self, b, args):
        return multiply_accumulate(b, self, args)

    def verify_(self):
        self.verify_counts()
        maps = self.indexing_maps_list()
        defaults = [m.value for m in self.defaults]
        if len(maps) == len(defaults):
            self.verify_maps(maps, defaults)
        self.verify_structured()

    def verify_maps(self, maps, defaults) -> None:
        """MLIR's rules for user-given maps (before the structured ones)."""
        raise NotImplementedError


@linalg.op
class MatmulOp(_Contraction):
    """Matrix product accumulated into the output: `C[m, n] += A[m, k] * B[k, n]`, the
    inputs cast to C's element type. Optional `indexing_maps` read A or B transposed or
    broadcast (see the module docstring).

        %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                           outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
    """

    name = "linalg.matmul"
    indexing_maps = Prop(IndexingMaps, default=_MATMUL_MAPS,
                         doc="A, B and C's maps over (m, n, k)")
    defaults = _MATMUL_MAPS

    def iterator_types_list(self):
        return [PARALLEL, PARALLEL, REDUCTION]

    def verify_maps(self, maps, defaults):
        # Each map uses its default map's dims; C keeps both of its own; A or B may drop
        # all but the reduction dim (a broadcast operand).
        for k, (m, d) in enumerate(zip(maps, defaults)):
            if any(e not in d.results for e in m.results) or \
                    (k == 2 and len(m.results) != len(d.results)):
                raise self.error("Unexpected dim expression in map result.")
            if len(m.results) < len(d.results) and list(m.results) != [dim(2)]:
                raise self.error("Invalid broadcast requested, should be (d2).")


@linalg.op
class BatchMatmulOp(_Contraction):
    """One matrix product per batch: `C[b, m, n] += A[b, m, k] * B[b, k, n]`.

        %r = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32>)
                                 outs(%c : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
    """

    name = "linalg.batch_matmul"
    indexing_maps = Prop(IndexingMaps, default=_BATCH_MATMUL_MAPS,
                         doc="A, B and C's maps over (b, m, n, k)")
    defaults = _BATCH_MATMUL_MAPS

    def iterator_types_list(self):
        return [PARALLEL, PARALLEL, PARALLEL, REDUCTION]

    def verify_maps(self, maps, defaults):
        # C keeps all three of its dims; every map uses only its default map's dims (A or B
        # may drop the batch dim).
        if len(maps[2].results) != 3:
            raise self.error(f"expects 3 dims, but got ({len(maps[2].results)}).")
        for m, d in zip(maps, defaults):
            if any(e not in d.results for e in m.results):
                raise self.error("Unexpected result dim expression (outside the set of "
                                 "default result dims).")


def make_matmul(b, lhs, rhs, output, indexing_maps=None, location=None) -> MatmulOp:
    """`linalg.matmul` at builder `b`; `indexing_maps` (three `AffineMap`s) to read an
    operand transposed or broadcast."""
    props = {"indexing_maps": maps_attr(indexing_maps)} if indexing_maps else {}
    return b.insert(MatmulOp.create([lhs, rhs], [output], location=location or b.location,
                                    **props))


def make_batch_matmul(b, lhs, rhs, output, indexing_maps=None, location=None) -> BatchMatmulOp:
    props = {"indexing_maps": maps_attr(indexing_maps)} if indexing_maps else {}
    return b.insert(BatchMatmulOp.create([lhs, rhs], [output],
                                         location=location or b.location, **props))
