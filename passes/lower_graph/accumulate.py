"""Float sums that do not lose precision: the one accumulator every lowering that adds up
floats uses (reductions, softmax, the losses, normalization, matmul's K loop, convolution,
pooling and their gradients).

A sequential sum in the element type loses O(n) ulps: 3*10^7 float32 ones add up to
16,777,216, where the first ulp of the sum exceeds 1. numpy sums pairwise (O(log n) ulps);
the compiled code does better, at the same loop structure (one `loop.for` nest carrying the
accumulator, no blocking to undo when loops are tiled or vectorized later):

- **f16, bf16, f32 elements: widened to f64.** Each term is `arith.extf`ed (exact) and
  added in f64; the sum is `arith.truncf`ed once, at the end. A sequential f64 sum of n
  terms is off by at most (n - 1) * 2^-53 * sum|x_i|, which for n < 2^29 is below
  2^-24 * sum|x_i|, half a float32 ulp of sum|x_i|; the final rounding adds half an ulp of
  |S| (S the exact sum). So |error| <= 2^-24 * (|S| + sum|x_i|): about one float32 ulp,
  against log2(n) ulps for pairwise float32 summation (numpy) and n ulps for a sequential
  float32 sum. 2^29 elements are 2 GiB of float32: the bound holds for every array that
  fits in memory today. Dot products (matmul, conv2d) multiply two float32 factors in
  float32 and widen the product (`product`): one more rounding per term, 2^-24 * |x_i y_i|,
  so their bound is 2^-24 * (|S| + 2 * sum|x_i y_i|), still about one ulp of sum|x_i y_i|.
  Widening both factors instead (the product of two float32 is exact in f64) costs a second
  conversion in the K loop, measured at +20-27% on the MLP training step against +3-8% for
  this. f16 and bf16 factors are widened first: their product may overflow or lose more
  than the accumulation saves.
- **f64 elements: compensated (Neumaier's improved Kahan) summation.** The carried values
  are (sum, compensation); each addition `t = sum + x` loses exactly `(big - t) + small`
  (Fast2Sum, `big` the operand of larger magnitude), which the compensation collects. The
  result `sum + compensation` is off by at most 2 * 2^-53 * |S| + O(n * 2^-106) * sum|x_i|:
  the exact sum S correctly rounded up to a factor 2, as long as n * 2^-53 stays far below 1.
  A non-finite sum (an inf or NaN term, or overflow) makes the compensation NaN or infinite:
  the result is then the plain sum, which is what numpy gives.
- **Integers** add in the element type and wrap, as `np.sum(x, dtype=x.dtype)` does: exact
  modulo 2^width, nothing to compensate.

`result` is the sum in the accumulation type, so that a mean divides before rounding and a
softmax takes its logarithm before rounding; `round` converts back to the element type.
Only the carried sum is widened: terms are computed as the lowering's op computes them
(an `exp` in float32 stays float32) unless it widens them itself (`widen`).

The compensation survives code generation because nothing asks LLVM to reassociate: the ops
built here carry no `fastmath` flags, and the backend passes on only the flags an op carries
(backends/llvm_arith.py), so `(big - t) + small` is not folded to 0.
"""

from __future__ import annotations

from typing import Callable

from irkit.builder import Builder
from irkit.ir import Value
from irkit.types import F64, FloatType, Type
from irkit.passes.lower_graph.core import FunctionLowering
from irkit.passes.lower_graph.scalar import Scalars, is_float


def accumulation_type(t: Type) -> Type:
    """The type a sum of elements of type `t` is carried in: f64 for every float type."""
    return F64 if isinstance(t, FloatType) else t


class Accumulator:
    """A sum of values of element type `element` (see the module docstring for the bound).

    In a loop: `inits()` are the carried values' initial values, `add(s, carried, x)` the
    next carried values, `result(s, carried)` the sum in `type`, `round(s, v)` it back in the
    element type. `sum(sizes, term)` builds that loop nest in one call."""

    def __init__(self, lw: FunctionLowering, element: Type) -> None:
        self.lw = lw
        self.element = element
        self.type = accumulation_type(element)
        #: f64 elements: (sum, compensation) are carried; else just the sum
        self.compensated = element is F64

    def inits(self) -> list[Value]:
        zero = self.lw.constant(0, self.type)
        return [zero, zero] if self.compensated else [zero]

    def widen(self, s: Scalars, x: Value) -> Value:
        """`x` in the accumulation type (exact: a wider float, or `x` itself)."""
        return s.cast(x, self.type)

    def product(self, s: Scalars, x: Value, y: Value) -> Value:
        """x * y as a term of a dot product, in the accumulation type: float32 factors are
        multiplied in float32 and the product widened (one conversion per term in the K
        loop, one rounding of 2^-24 * |x * y|); narrower floats are widened first (exact)."""
        if isinstance(self.element, FloatType) and self.element.width < 32:
            return s.mul(self.widen(s, x), self.widen(s, y))
        return self.widen(s, s.mul(x, y))

    def add(self, s: Scalars, carried: list[Value], x: Value) -> list[Value]:
        """The carried values after adding `x` (of the element or accumulation type)."""
        x = self.widen(s, x)
        if not self.compensated:
            return [s.add(carried[0], x)]
        total, comp = carried
        t = s.add(total, x)
        keep = s.cmp("ge", s.math("absf", total), s.math("absf", x))
        big, small = s.select(keep, total, x), s.select(keep, x, total)
        return [t, s.add(comp, s.add(s.sub(big, t), small))]     # Fast2Sum's error term

    def result(self, s: Scalars, carried: list[Value]) -> Value:
        """The sum, in the accumulation type."""
        if not self.compensated:
            return carried[0]
        total, comp = carried
        return s.select(s.math("isfinite", total), s.add(total, comp), total)

    def round(self, s: Scalars, v: Value) -> Value:
        """`v` (of the accumulation type) rounded once to the element type."""
        return s.cast(v, self.element) if is_float(self.element) else v

    def sum(self, sizes: list[Value], term: Callable[[Builder, list[Value]], Value],
            b: Builder | None = None) -> Value:
        """The sum of `term(builder, ivs)` over the points of `sizes` (a `loop.for` nest
        at `b`), in the accumulation type."""
        def step(ib: Builder, ivs: list[Value], carried: list[Value]) -> list[Value]:
            return self.add(Scalars(self.lw, ib), carried, term(ib, ivs))

        b = b or self.lw.b
        return self.result(Scalars(self.lw, b), self.lw.for_nest(sizes, self.inits(), step, b))
