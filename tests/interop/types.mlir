// Builtin types in every position a type can take: block arguments, results, nested in
// other types, in function types; plus dialect types kept verbatim.
!act = tensor<?x784xf32>
!pair = tuple<i32, tuple<f32, index>>
func.func @types(
    %a: i1, %b: i4, %c: i8, %d: i16, %e: i32, %f: i64, %g: i128, %h: si8, %i: ui32,
    %j: index, %k: f16, %l: bf16, %m: f32, %n: f64, %o: f80, %p: f128, %q: tf32,
    %r: f8E4M3FN, %s: f8E5M2, %t: f8E4M3FNUZ, %u: f8E5M2FNUZ, %v: f8E4M3B11FNUZ,
    %w: f8E3M4, %x: f8E8M0FNU, %y: f6E2M3FN, %z: f4E2M1FN, %aa: complex<f64>,
    %ab: complex<i32>, %ac: none, %ad: !pair, %ae: tuple<>,
    %t0: tensor<f32>, %t1: tensor<4xi8>, %t2: !act, %t3: tensor<*xf32>,
    %t4: tensor<?x?x?xcomplex<f32>>, %t5: tensor<0x4xf32>,
    %t6: tensor<8xf32, "encoding">, %t7: tensor<2x!mydialect.elt>,
    %v0: vector<4xf32>, %v1: vector<2x3x4xi1>, %v2: vector<[4]xf32>, %v3: vector<2x[8]xi16>,
    %v4: vector<index>, %v5: vector<1xf8E5M2>,
    %m0: memref<f32>, %m1: memref<4x?xf32>, %m2: memref<8x8xf16, 3>,
    %m3: memref<?x?xf32, strided<[?, 1], offset: ?>>, %m4: memref<4x4xf32, strided<[4, 1]>>,
    %m5: memref<16x16xi8, affine_map<(d0, d1) -> (d1, d0)>>, %m6: memref<*xf32>,
    %m7: memref<*xi32, 1>, %m8: memref<2xf32, #gpu.address_space<workgroup>>,
    %m9: memref<4xvector<8xf32>>, %m10: memref<2x2xf32, "space">,
    %x0: !llvm.ptr, %x1: !llvm.struct<(i32, f64)>, %x2: !mydialect.t<"q", [1, 2], <nested>>,
    %x3: !mydialect.simple,
    %fn: (i32, f32) -> (), %fn2: () -> ((i1) -> i1), %fn3: (tensor<4xf32>) -> (i8, i16))
    -> (i1, !act, (i32, f32) -> ()) {
  %0 = "xt.make"() : () -> !pair
  %1:3 = "xt.multi"(%ad, %t2, %fn) : (!pair, !act, (i32, f32) -> ()) -> (i1, !act, i32)
  return %1#0, %1#1, %fn : i1, !act, (i32, f32) -> ()
}
