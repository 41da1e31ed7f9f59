// RUN: mlir-opt %s -split-input-file -allow-unregistered-dialect
//
// builtin: modules (named, nested, with attributes), aliases, locations, attributes and types
// of every builtin kind on unregistered ops, blocks and successors, unrealized casts.
// Input of bench/mlir_conformance.py.

#map = affine_map<(d0, d1) -> (d1, d0)>
!pair = tuple<i32, f32>

module @outer attributes {ext.version = 3 : i64} {
  module @inner {
    func.func private @leaf() -> !pair
  }
  func.func @uses(%x: !pair) -> !pair {
    "ext.attrs"() {map = #map, arr = [1, "two", 3.0 : f32], dict = {a = unit, b = @outer::@inner},
                    dense = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>,
                    str = "esc\"aped\n", ty = memref<4x?xf32, strided<[?, 1], offset: 2>>,
                    cplx = complex<f64>, opq = #ext.opaque<"blob">} : () -> ()
    return %x : !pair
  }
}

// -----

func.func @locations(%a: i32 loc("in.mlir":3:9)) -> i32 {
  %0 = arith.addi %a, %a : i32 loc(fused["x.py":1:2, "y.py":3:4])
  %1 = arith.muli %0, %a : i32 loc(callsite("f"("a.c":1:1) at "b.c":2:2))
  return %1 : i32 loc(unknown)
}

// -----

func.func @blocks(%c: i1, %a: i32) -> i32 {
  "ext.cond_br"(%c, %a)[^then, ^else] : (i1, i32) -> ()
^then:
  "ext.br"(%a)[^join] : (i32) -> ()
^else:
  %0 = arith.addi %a, %a : i32
  "ext.br"(%0)[^join] : (i32) -> ()
^join(%r: i32):
  "ext.return"(%r) : (i32) -> ()
}

// -----

func.func @casts(%a: i32) -> i32 {
  %0 = builtin.unrealized_conversion_cast %a : i32 to !ext.opaque
  %1 = builtin.unrealized_conversion_cast %0 : !ext.opaque to i32
  return %1 : i32
}

// -----

func.func @regions(%a: i32) -> i32 {
  %0 = "ext.region"(%a) ({
  ^bb0(%x: i32):
    %1 = arith.muli %x, %x : i32
    "ext.yield"(%1) : (i32) -> ()
  }) : (i32) -> i32
  return %0 : i32
}

// -----

func.func @types(%a: tensor<?x4xf32>, %b: vector<[4]x2xi1>, %c: memref<*xf16>, %d: tensor<*xi64>,
                 %e: i0, %f: vector<4 x i32>) {
  return
}
