// Regions and locations: graph regions with uses before definitions, ops with several
// regions and successors at once, empty regions, nested symbol tables, odd SSA names,
// and every location kind.
#loc_file = loc("model.irk":12:7)
module @top {
  module @nested attributes {sym_visibility = "private"} {
    func.func private @leaf(%arg0: f32) -> f32 attributes {passthrough = ["noinline"]}
  }
  func.func @names(%x.y: f32, %_tmp$1: f32, %0: f32) -> f32 {
    %sum.1 = arith.addf %x.y, %_tmp$1 : f32 loc("a.mlir":1:2)
    %r = arith.addf %sum.1, %0 : f32 loc(#loc_file)
    %n = arith.mulf %r, %r : f32 loc("named"("inner.py":3:4))
    %c = arith.subf %n, %r : f32 loc(callsite("callee"("f.py":1:1) at "caller.py":9:9))
    %f = arith.divf %c, %r : f32 loc(fused["a.py":1:1, "b.py":2:2])
    %g = arith.negf %f : f32 loc(fused<"irkit">["a.py":1:1, unknown])
    %h = arith.negf %g : f32 loc(unknown)
    %i = arith.negf %h : f32 loc("just a name")
    %j = arith.negf %i : f32 loc("range.py":4:5 to 6:7)
    %k = arith.negf %j : f32 loc("line.py":4:5 to :9)
    return %k : f32 loc(callsite("x" at callsite("y" at "z.py":1:1)))
  }
  "xt.graph_region"() ({
    %b = "xt.use"(%a) : (i32) -> i32
    %a = "xt.def"() : () -> i32
    "xt.cycle"(%b, %d) : (i32, i64) -> ()
    %d = "xt.late"(%a) : (i32) -> i64
  }) : () -> ()
  "xt.multi_region"() ({
  ^bb0(%arg0: i32, %arg1: tensor<2xf32>):
    "xt.br"(%arg0)[^bb1] : (i32) -> ()
  ^bb1:
    "xt.ret"() : () -> ()
  }, {
  }, {
    "xt.in_second"() : () -> ()
  }) {region_note = "three regions"} : () -> ()
  func.func @succ_and_region(%p: i1, %v: i64) {
    "xt.branchy"(%p, %v)[^a, ^b] ({
      "xt.inside"() : () -> ()
    }) {weights = array<i32: 3, 1>} : (i1, i64) -> ()
  ^a:
    "xt.terminator"() : () -> ()
  ^b:
    %r:4 = "xt.four"() : () -> (i8, i16, i32, i64)
    "xt.consume"(%r#3, %r#0, %r#2) : (i64, i8, i32) -> ()
    cf.br ^a
  }
  "xt.isolated"() ({
    "xt.nested"() ({
      "xt.deeper"() ({
        %z = "xt.make"() : () -> index
        "xt.done"(%z) : (index) -> ()
      }) : () -> ()
    }) : () -> ()
  }) : () -> ()
}
