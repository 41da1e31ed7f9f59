// Attribute kinds on unregistered ops and on function arguments: the parts of the syntax
// that no dialect in irkit owns but every tool must carry through unchanged.
#alias = {nested = {deep = [1, "two", 3.0 : f64]}}
#layout = affine_map<(d0, d1)[s0, s1] -> (d0 * s0 + d1 * s1)>
!handle = !graph.handle<"weights", 3>
module attributes {test.module_attr = "top", dlti.dl_spec = #dlti.dl_spec<index = 64 : i64>} {
  func.func @attrs(%arg0: f32 {test.arg = unit}, %arg1: !handle) -> (f32 {test.res = 1 : i8}) {
    "xt.ints"() {a = 0 : i1, b = true, c = false, d = -128 : i8, e = 255 : ui8,
                   f = 9223372036854775807 : i64, g = -9223372036854775808 : i64,
                   h = 18446744073709551615 : ui64, i = 7 : index, j = -5 : si32,
                   k = 42, l = 170141183460469231731687303715884105727 : i128} : () -> ()
    "xt.floats"() {a = 1.0 : f32, b = -0.0 : f64, c = 1.0e+300 : f64, d = 3.25 : bf16,
                     e = 0x7F800000 : f32, f = 0xFF800000 : f32, g = 0x7FC00000 : f32,
                     h = 0x0001 : f16, i = 6.1e-5 : f16, j = 1.5 : f8E4M3FN,
                     k = 2.0 : f8E5M2, l = 1.0e-45 : f32, m = 0.1 : f64, n = 3.0e+38 : f32,
                     o = 0.5 : tf32, p = 1.0 : f80, q = -2.0 : f128, r = 4.0} : () -> ()
    "xt.strings"() {a = "", b = "with \"quotes\" and \\ backslash", c = "tab\there",
                      d = "newline\n", e = "\00\FF bytes", f = "unicode: \E2\82\AC €",
                      g = "x" : i32} : () -> ()
    "xt.symbols"() {a = @sym, b = @outer::@inner::@leaf, c = @"quoted name",
                      d = @"with\"quote"} : () -> ()
    "xt.types"() {a = f32, b = tensor<?x4xi8>, c = (i32, f32) -> (),
                    d = !handle, e = !llvm.ptr, f = none} : () -> ()
    "xt.containers"() {a = [], b = [1, [2, [3]], {}], c = {}, d = {x = 1 : i32, y},
                         e = #alias, f = array<i32: 1, 2, 3>, g = array<f64: 1.5, -2.0>,
                         h = array<i1: true, false>, i = array<i64>, j = array<i8: -1>} : () -> ()
    "xt.dense"() {a = dense<1.0> : tensor<4x4xf32>, b = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>,
                    c = dense<[true, false]> : tensor<2xi1>, d = dense<> : tensor<0xf32>,
                    e = dense<"0x0000803F00000040"> : tensor<2xf32>,
                    f = dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>,
                    g = dense<[[1, 2], [3, 4]]> : vector<2x2xi64>, h = dense<7> : tensor<i16>,
                    i = dense<0xFF> : tensor<3xi8>, j = dense<[-1.5, 0x7FC00000]> : tensor<2xf32>,
                    k = dense_resource<blob1> : tensor<2xi32>,
                    l = sparse<[[0, 0], [1, 2]], [1.0, 2.0]> : tensor<3x4xf32>,
                    m = dense<"0x01020304"> : tensor<4xi8>} : () -> ()
    "xt.maps"() {a = affine_map<(d0) -> (d0)>, b = #layout,
                   c = affine_map<()[s0] -> (s0 * 4 + 3, 0)>,
                   d = affine_set<(d0, d1)[s0] : (d0 - s0 >= 0, d1 == 0)>,
                   e = affine_map<(d0, d1) -> ()>,
                   f = strided<[?, 1], offset: ?>, g = strided<[4, 1]>} : () -> ()
    "xt.dialect_attrs"() {a = #mydialect.opaque<"body with <angles> and \"quotes\"">,
                            b = #arith.fastmath<nnan, ninf>, c = #gpu.address_space<workgroup>,
                            d = #foo<bar[baz]>, e = #foo.v<{k = [1, 2]}>} : () -> ()
    %0 = "xt.props"() <{p = 1 : i32, q = [@a, @b]}> {r = 2 : i32} : () -> !handle
    return %arg0 : f32
  }
}

{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000100000002000000"
    }
  }
#-}
