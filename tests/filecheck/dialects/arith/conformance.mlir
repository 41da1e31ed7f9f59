// RUN: irkit-opt %s | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s
// RUN: irkit-opt %s -p canonicalize | FileCheck %s --check-prefix=CANON

// arith ops MLIR has and irkit once rejected: the extended ops, whose two results are the
// full sum or product split in two. The folds and rewrites are MLIR's: CANON lines hold what
// `mlir-opt -canonicalize` makes of this file (values named by capture, since irkit names
// constants %N where MLIR says %c3_i32). tests/unit/test_mlir_conformance.py has mlir-opt
// read irkit's output and compares the interpreter with MLIR's compiled code.

// CHECK-LABEL: func.func @extended(
// CHECK-SAME:      %[[A:.*]]: i32, %[[B:.*]]: i32, %[[V:.*]]: vector<4xi64>, %[[T:.*]]: tensor<2xindex>)
// CHECK-NEXT:    %[[S:.*]]:2 = arith.addui_extended %[[A]], %[[B]] : i32, i1
// CHECK-NEXT:    %[[M:.*]]:2 = arith.mulsi_extended %[[A]], %[[B]] : i32
// CHECK-NEXT:    %[[U:.*]]:2 = arith.mului_extended %[[A]], %[[B]] : i32
// CHECK-NEXT:    arith.addui_extended %[[V]], %[[V]] : vector<4xi64>, vector<4xi1>
// CHECK-NEXT:    arith.mulsi_extended %[[T]], %[[T]] : tensor<2xindex>
// CHECK-NEXT:    return %[[S]]#0, %[[S]]#1, %[[M]]#0, %[[M]]#1, %[[U]]#0, %[[U]]#1
// CANON-LABEL: func.func @extended(
// CANON-NEXT:    arith.addui_extended
// CANON-NEXT:    arith.mulsi_extended
// CANON-NEXT:    arith.mului_extended
// CANON-NEXT:    return
func.func @extended(%a: i32, %b: i32, %v: vector<4xi64>, %t: tensor<2xindex>) -> (i32, i1, i32, i32, i32, i32) {
  %sum, %overflow = arith.addui_extended %a, %b : i32, i1
  %low, %high = arith.mulsi_extended %a, %b : i32
  %ulow, %uhigh = arith.mului_extended %a, %b : i32
  %vs, %vo = arith.addui_extended %v, %v : vector<4xi64>, vector<4xi1>
  %tl, %th = arith.mulsi_extended %t, %t : tensor<2xindex>
  return %sum, %overflow, %low, %high, %ulow, %uhigh : i32, i1, i32, i32, i32, i32
}

// -1 + -3 = 2^33 - 4: sum -4, carry. -1 * -3 = 3 signed (high 0); unsigned
// (2^32 - 1)(2^32 - 3) = 2^64 - 4 * 2^32 + 3: low 3, high 2^32 - 4 = -4.
// CANON-LABEL: func.func @fold_constants(
// CANON-DAG:     %[[M4:.*]] = arith.constant -4 : i32
// CANON-DAG:     %[[T:.*]] = arith.constant true
// CANON-DAG:     %[[C3:.*]] = arith.constant 3 : i32
// CANON-DAG:     %[[C0:.*]] = arith.constant 0 : i32
// CANON:         return %[[M4]], %[[T]], %[[C3]], %[[C0]], %[[C3]], %[[M4]]
func.func @fold_constants() -> (i32, i1, i32, i32, i32, i32) {
  %a = arith.constant -1 : i32
  %b = arith.constant -3 : i32
  %sum, %overflow = arith.addui_extended %a, %b : i32, i1
  %low, %high = arith.mulsi_extended %a, %b : i32
  %ulow, %uhigh = arith.mului_extended %a, %b : i32
  return %sum, %overflow, %low, %high, %ulow, %uhigh : i32, i1, i32, i32, i32, i32
}

// x + 0 has no carry, x * 0 is 0 in both halves, unsigned x * 1 has a zero high half.
// CANON-LABEL: func.func @fold_identities(
// CANON-SAME:      %[[X:.*]]: i32)
// CANON-DAG:     %[[F:.*]] = arith.constant false
// CANON-DAG:     %[[Z:.*]] = arith.constant 0 : i32
// CANON:         return %[[X]], %[[F]], %[[Z]], %[[Z]], %[[X]], %[[Z]]
func.func @fold_identities(%x: i32) -> (i32, i1, i32, i32, i32, i32) {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %sum, %overflow = arith.addui_extended %zero, %x : i32, i1
  %low, %high = arith.mulsi_extended %x, %zero : i32
  %ulow, %uhigh = arith.mului_extended %x, %one : i32
  return %sum, %overflow, %low, %high, %ulow, %uhigh : i32, i1, i32, i32, i32, i32
}

// The high half of a signed product by one is the sign of x.
// CANON-LABEL: func.func @signed_times_one(
// CANON-SAME:      %[[X:.*]]: i32)
// CANON:         %[[Z:.*]] = arith.constant 0 : i32
// CANON-NEXT:    %[[N:.*]] = arith.cmpi slt, %[[X]], %[[Z]] : i32
// CANON-NEXT:    %[[H:.*]] = arith.extsi %[[N]] : i1 to i32
// CANON-NEXT:    return %[[X]], %[[H]]
func.func @signed_times_one(%x: i32) -> (i32, i32) {
  %one = arith.constant 1 : i32
  %low, %high = arith.mulsi_extended %x, %one : i32
  return %low, %high : i32, i32
}

// Only the low part used: the plain op.
// CANON-LABEL: func.func @low_part_only(
// CANON-SAME:      %[[X:.*]]: i32, %[[Y:.*]]: i32)
// CANON-NEXT:    %[[S:.*]] = arith.addi %[[X]], %[[Y]] : i32
// CANON-NEXT:    %[[M:.*]] = arith.muli %[[X]], %[[Y]] : i32
// CANON-NEXT:    %[[U:.*]] = arith.muli %[[X]], %[[Y]] : i32
// CANON-NEXT:    return %[[S]], %[[M]], %[[U]]
func.func @low_part_only(%x: i32, %y: i32) -> (i32, i32, i32) {
  %sum, %overflow = arith.addui_extended %x, %y : i32, i1
  %low, %high = arith.mulsi_extended %x, %y : i32
  %ulow, %uhigh = arith.mului_extended %x, %y : i32
  return %sum, %low, %ulow : i32, i32, i32
}

// cmpi's i1 result has the operands' shape, encoding and scalable dimensions included.
// CHECK-LABEL: func.func @cmpi_encoding(
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<4xi32, "enc">
// CHECK:         arith.cmpi ne, %{{.*}}, %{{.*}} : vector<[4]xi32>
// CANON-LABEL: func.func @cmpi_encoding(
// CANON-DAG:     arith.constant dense<false> : tensor<4xi1, "enc">
// CANON-DAG:     arith.constant dense<false> : vector<[4]xi1>
func.func @cmpi_encoding(%a: tensor<4xi32, "enc">, %b: vector<[4]xi32>) -> (tensor<4xi1, "enc">, vector<[4]xi1>) {
  %0 = arith.cmpi slt, %a, %a : tensor<4xi32, "enc">
  %1 = arith.cmpi ne, %b, %b : vector<[4]xi32>
  return %0, %1 : tensor<4xi1, "enc">, vector<[4]xi1>
}
