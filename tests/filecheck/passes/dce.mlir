// RUN: irkit-opt %s -p dce --allow-unregistered-dialect | FileCheck %s

// A whole dead chain goes in one pass, users before producers.
// CHECK-LABEL: func.func @dead_chain
func.func @dead_chain(%a: f32) -> f32 {
  // CHECK-NEXT: return %arg0
  %0 = math.exp %a : f32
  %1 = math.log %0 : f32
  %2 = arith.addf %1, %0 : f32
  return %a : f32
}

// Live ops and ops with effects stay; dce does not fold (x + 0 stays).
// CHECK-LABEL: func.func @keeps_live
func.func @keeps_live(%a: i32) -> i32 {
  // CHECK: [[Z:%.*]] = arith.constant 0 : i32
  // CHECK: [[S:%.*]] = arith.addi %arg0, [[Z]]
  // CHECK: "test.effect"([[S]])
  // CHECK-NOT: arith.muli
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  %1 = arith.muli %0, %0 : i32
  "test.effect"(%0) : (i32) -> ()
  return %0 : i32
}

// An unreachable block's ops are the only users of nothing; the block goes.
// CHECK-LABEL: func.func @unreachable_block
// CHECK-NOT: ^bb2
func.func @unreachable_block(%a: i32) -> i32 {
  "test.br"()[^bb1] : () -> ()
^bb1:
  return %a : i32
^bb2:
  %0 = arith.addi %a, %a : i32
  "test.br"()[^bb1] : () -> ()
}
