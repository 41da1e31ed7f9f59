// A numerically stable logistic function and a scaled exponential, written with the
// builtin/func/arith/math subset that means the same in irkit and in MLIR.
module @example {
  // sigmoid(x) = 1 / (1 + exp(-x)), elementwise on a dynamic batch.
  func.func @sigmoid(%x: tensor<?x4xf32>, %one: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %neg = arith.negf %x : tensor<?x4xf32>
    %e = math.exp %neg : tensor<?x4xf32>
    %den = arith.addf %one, %e : tensor<?x4xf32>
    %y = arith.divf %one, %den : tensor<?x4xf32>
    return %y : tensor<?x4xf32>
  }

  // f(a, b) = max(a, b) * 2 + tanh(a - b), on scalars; `x * 1.0` folds away later.
  func.func @scalar(%a: f32, %b: f32) -> f32 {
    %c1 = arith.constant 1.000000e+00 : f32
    %c2 = arith.constant 2.000000e+00 : f32
    %m = arith.maximumf %a, %b : f32
    %m2 = arith.mulf %m, %c2 : f32
    %d = arith.subf %a, %b : f32
    %t = math.tanh %d : f32
    %r = arith.addf %m2, %t : f32
    %r1 = arith.mulf %r, %c1 : f32
    return %r1 : f32
  }
}
