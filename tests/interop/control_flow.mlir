// Unstructured (cf) and structured (scf) control flow: many blocks with arguments, loops
// with iteration arguments, nested regions, and switch tables.
func.func @blocks(%arg0: i32, %arg1: i1, %arg2: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %cf = arith.constant 2.0 : f32
  cf.cond_br %arg1, ^bb1(%arg2 : f32), ^bb2(%arg0, %arg2 : i32, f32)
^bb1(%x: f32):
  %0 = arith.mulf %x, %cf : f32
  cf.br ^bb3(%0 : f32)
^bb2(%n: i32, %y: f32):
  cf.switch %n : i32, [
    default: ^bb3(%y : f32),
    0: ^bb1(%y : f32),
    5: ^bb4
  ]
^bb3(%r: f32):
  cf.assert %arg1, "must be \"true\"\n"
  return %r : f32
^bb4:
  %1 = arith.negf %arg2 : f32
  cf.br ^bb3(%1 : f32)
}

func.func @loop_back_edge(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  cf.br ^header(%c0, %c0 : index, index)
^header(%i: index, %acc: index):
  %done = arith.cmpi sge, %i, %n : index
  cf.cond_br %done, ^exit, ^body
^body:
  %acc2 = arith.addi %acc, %i : index
  %i2 = arith.addi %i, %c1 : index
  cf.br ^header(%i2, %acc2 : index, index)
^exit:
  return %acc : index
}

func.func @structured(%lb: index, %ub: index, %t: tensor<?xf32>, %p: i1) -> (f32, i32) {
  %c1 = arith.constant 1 : index
  %f0 = arith.constant 0.0 : f32
  %sum = scf.for %i = %lb to %ub step %c1 iter_args(%acc = %f0) -> (f32) {
    %e = tensor.extract %t[%i] : tensor<?xf32>
    %inner = scf.for %j = %lb to %i step %c1 iter_args(%a2 = %acc) -> (f32) {
      %s = arith.addf %a2, %e : f32
      scf.yield %s : f32
    }
    %r = scf.if %p -> (f32) {
      scf.yield %inner : f32
    } else {
      %neg = arith.negf %inner : f32
      scf.yield %neg : f32
    }
    scf.yield %r : f32
  }
  %c0_i32 = arith.constant 0 : i32
  %c10 = arith.constant 10 : i32
  %w:2 = scf.while (%k = %c0_i32, %v = %sum) : (i32, f32) -> (i32, f32) {
    %cond = arith.cmpi slt, %k, %c10 : i32
    scf.condition(%cond) %k, %v : i32, f32
  } do {
  ^bb0(%k2: i32, %v2: f32):
    %one = arith.constant 1 : i32
    %k3 = arith.addi %k2, %one : i32
    scf.yield %k3, %v2 : i32, f32
  }
  scf.if %p {
    "xt.side_effect"() : () -> ()
  }
  %e = scf.execute_region -> i32 {
    cf.br ^bb1
  ^bb1:
    scf.yield %w#0 : i32
  }
  %idx = arith.index_cast %e : i32 to index
  %sw = scf.index_switch %idx -> i32
  case 2 {
    %c2 = arith.constant 2 : i32
    scf.yield %c2 : i32
  }
  default {
    scf.yield %e : i32
  }
  scf.parallel (%a, %b) = (%lb, %lb) to (%ub, %ub) step (%c1, %c1) {
    "xt.use"(%a, %b) : (index, index) -> ()
    scf.reduce
  }
  return %w#1, %sw : f32, i32
}
