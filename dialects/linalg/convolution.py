"""Sliding-window ops: `linalg.conv_2d_nchw_fchw`, `linalg.pooling_nchw_max` and
`linalg.pooling_nchw_sum`.

Each output point `(n, c|f, oh, ow)` combines a window of the input: input row
`oh * stride + kh * dilation` for window row `kh` (columns alike). `strides` and `dilations`
are `dense<...> : tensor<2xi64>` (height, width), 1 when absent. The window's extent comes
from the filter (convolution) or from the `window` operand, a tensor whose only use is its
shape (pooling), as in MLIR.

MLIR computes these ops' maps from the attributes and memoizes them on the op as the
discardable attribute `linalg.memoized_indexing_maps`, which its generic form shows; irkit
adds the same attribute when an op is made, so both tools print the same generic text. The
maps irkit uses are always computed afresh from `strides` and `dilations`.
"""

from __future__ import annotations

from irkit.affine import AffineBinary, AffineConst, AffineDim, AffineExpr
from irkit.attributes import DenseElementsAttr
from irkit.ir import Operation
from irkit.opdef import OptProp, attr_constraint
from irkit.types import I64, FloatType, RankedTensorType

from irkit.dialects.linalg import linalg
from irkit.dialects.linalg.contraction import multiply_accumulate
from irkit.dialects.linalg.named import DPSNamedOp, cast
from irkit.dialects.linalg.structured import (
    PARALLEL, REDUCTION, affine_map, dim, maps_attr,
)

MEMOIZED_MAPS = "linalg.memoized_indexing_maps"
_PAIR = RankedTensorType((2,), I64)
Pair = attr_constraint(DenseElementsAttr,
                       "64-bit signless int elements attribute of shape [2]",
                       lambda a: a.type is _PAIR)


def _scaled(d: int, k: int) -> AffineExpr:
    return AffineDim(d) if k == 1 else AffineBinary("mul", AffineDim(d), AffineConst(k))


def window_index(out_dim: int, window_dim: int, stride: int, dilation: int) -> AffineExpr:
    """`out * stride + window * dilation` (a factor of 1 left out, as MLIR simplifies)."""
    return AffineBinary("add", _scaled(out_dim, stride), _scaled(window_dim, dilation))


class _SlidingWindow(DPSNamedOp):
    """The NCHW input, a window operand (the filter, or the pooling window) and the NCHW
    output; loops `(n, c|f, oh, ow, ...)` then the window's."""

    __slots__ = ()
    strides = OptProp(Pair, doc="(height, width) step of the window; 1 when absent")
    dilations = OptProp(Pair, doc="(height, width) spacing of window taps; 1 when absent")
    hidden = ("operandSegmentSizes", MEMOIZED_MAPS)

    def _init(self, operands, result_types, properties, attributes, regions, successors,
              location):
        super()._init(operands, result_types, properties, attributes, regions, successors,
                      location)
        if MEMOIZED_MAPS not in self.attributes and self._valid_window_props():
            self.attributes[MEMOIZED_MAPS] = maps_attr(self.indexing_maps_list())

    def _valid_window_props(self) -> bool:
        return all(a is None or Pair(a) for a in (self.strides, self.dilations))

    def window(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """((stride h, stride w), (dilation h, dilation w))."""
        def pair(a):
            return (1, 1) if a is None else tuple(int(v) for v in a.array)
        return pair(self.strides), pair(self.dilations)

    def verify_(self):
        self.verify_counts()
        self.verify_structured()


@linalg.op
class Conv2DNchwFchwOp(_SlidingWindow):
    """2-D convolution, NCHW input and FCHW filter, accumulated into the NFHW output:
    `O[n, f, oh, ow] += I[n, c, oh * sh + kh * dh, ow * sw + kw * dw] * K[f, c, kh, kw]`.

        %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                       strides = dense<1> : tensor<2xi64>}
            ins(%x, %k : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>)
            outs(%o : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    """

    name = "linalg.conv_2d_nchw_fchw"

    def indexing_maps_list(self):
        (sh, sw), (dh, dw) = self.window()
        # loops: n=d0, f=d1, oh=d2, ow=d3, c=d4, kh=d5, kw=d6
        return [affine_map(7, [dim(0), dim(4), window_index(2, 5, sh, dh),
                               window_index(3, 6, sw, dw)]),
                affine_map(7, [dim(1), dim(4), dim(5), dim(6)]),
                affine_map(7, [dim(0), dim(1), dim(2), dim(3)])]

    def iterator_types_list(self):
        return [PARALLEL] * 4 + [REDUCTION] * 3

    def region_builder(self, b, args):
        return multiply_accumulate(b, self, args)


class _Pooling(_SlidingWindow):
    __slots__ = ()

    def indexing_maps_list(self):
        (sh, sw), (dh, dw) = self.window()
        # loops: n=d0, c=d1, oh=d2, ow=d3, kh=d4, kw=d5
        return [affine_map(6, [dim(0), dim(1), window_index(2, 4, sh, dh),
                               window_index(3, 5, sw, dw)]),
                affine_map(6, [dim(4), dim(5)]),
                affine_map(6, [dim(0), dim(1), dim(2), dim(3)])]

    def iterator_types_list(self):
        return [PARALLEL] * 4 + [REDUCTION] * 2

    def combiner(self, is_float: bool) -> type:
        raise NotImplementedError

    def region_builder(self, b, args):
        x, _window, out = args
        t = out.type
        value = cast(b, x, t)
        return [b.create(self.combiner(isinstance(t, FloatType)), out, value).result]


@linalg.op
class PoolingNchwMaxOp(_Pooling):
    """Max pooling over NCHW: `O[n, c, oh, ow] = max(O[..], I[n, c, oh * sh + kh * dh, ow *
    sw + kw * dw])` over the window, whose extent is the `window` operand's shape.

        %r = linalg.pooling_nchw_max {strides = dense<2> : tensor<2xi64>}
            ins(%x, %w : tensor<1x3x8x8xf32>, tensor<2x2xf32>)
            outs(%o : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
    """

    name = "linalg.pooling_nchw_max"

    def combiner(self, is_float):
        from irkit.dialects import arith
        return arith.MaximumFOp if is_float else arith.MaxSIOp


@linalg.op
class PoolingNchwSumOp(_Pooling):
    """Sum pooling over NCHW: the window's elements added to the output, in order.

        %r = linalg.pooling_nchw_sum ins(%x, %w : tensor<1x3x8x8xf32>, tensor<3x3xf32>)
                                     outs(%o : tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
    """

    name = "linalg.pooling_nchw_sum"

    def combiner(self, is_float):
        from irkit.dialects import arith
        return arith.AddFOp if is_float else arith.AddIOp


def window_attr(values) -> DenseElementsAttr:
    """`dense<[h, w]> : tensor<2xi64>` for `strides` / `dilations`."""
    return DenseElementsAttr(_PAIR, list(values))


def make_conv_2d_nchw_fchw(b, input, filter, output, strides=(1, 1), dilations=(1, 1),
                           location=None) -> Conv2DNchwFchwOp:
    return b.insert(Conv2DNchwFchwOp.create(
        [input, filter], [output], location=location or b.location,
        strides=window_attr(strides), dilations=window_attr(dilations)))


def make_pooling_nchw(b, kind: str, input, window, output, strides=(1, 1),
                      dilations=(1, 1), location=None) -> Operation:
    """`linalg.pooling_nchw_max` (`kind="max"`) or `_sum`; `window`: a tensor of the window's
    shape (its values are never read)."""
    cls = {"max": PoolingNchwMaxOp, "sum": PoolingNchwSumOp}[kind]
    return b.insert(cls.create([input, window], [output], location=location or b.location,
                               strides=window_attr(strides), dilations=window_attr(dilations)))
