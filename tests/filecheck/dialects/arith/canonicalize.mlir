// RUN: irkit-opt %s -p canonicalize | FileCheck %s

// One function per folder or pattern of the arith dialect, with a negative case where a
// look-alike must stay (float identities that NaN, inf or -0.0 would break, poison, flags).
// Every function here was also run through MLIR 22's `mlir-opt --canonicalize`; irkit
// simplifies at least as much, except where noted (MLIR rewrites that are unsound).

// ----- addi / subi / muli ------------------------------------------------------------------------

// CHECK-LABEL: func.func @addi_zero
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK-NEXT: return %[[X]] : i32
func.func @addi_zero(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %r = arith.addi %c0, %x : i32
  return %r : i32
}

// CHECK-LABEL: func.func @addi_sub_cancel
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
// CHECK-NEXT: return %[[A]], %[[A]] : i32, i32
func.func @addi_sub_cancel(%a: i32, %b: i32) -> (i32, i32) {
  %s = arith.subi %a, %b : i32
  %r0 = arith.addi %s, %b : i32
  %r1 = arith.addi %b, %s : i32
  return %r0, %r1 : i32, i32
}

// (x + 1) + 2 -> x + 3; the nsw flags are dropped: (x + a) + b not overflowing says nothing
// about a + b (MLIR keeps their intersection).
// CHECK-LABEL: func.func @addi_add_const
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[R:.*]] = arith.addi %[[X]], %[[C]] : i32
// CHECK-NEXT: return %[[R]]
func.func @addi_add_const(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %a = arith.addi %x, %c1 overflow<nsw> : i32
  %r = arith.addi %a, %c2 overflow<nsw> : i32
  return %r : i32
}

// Splat constants combine too (MLIR matches scalar constants only).
// CHECK-LABEL: func.func @addi_add_const_vector
// CHECK: arith.constant dense<3> : vector<4xi32>
// CHECK-NEXT: arith.addi
// CHECK-NOT: arith.addi
func.func @addi_add_const_vector(%x: vector<4xi32>) -> vector<4xi32> {
  %c1 = arith.constant dense<1> : vector<4xi32>
  %c2 = arith.constant dense<2> : vector<4xi32>
  %a = arith.addi %x, %c1 : vector<4xi32>
  %r = arith.addi %a, %c2 : vector<4xi32>
  return %r : vector<4xi32>
}

// CHECK-LABEL: func.func @addi_sub_const_rhs
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[R:.*]] = arith.addi %[[X]], %[[C]] : i32
// CHECK-NEXT: return %[[R]]
func.func @addi_sub_const_rhs(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %a = arith.subi %x, %c1 : i32
  %r = arith.addi %a, %c3 : i32
  return %r : i32
}

// CHECK-LABEL: func.func @addi_sub_const_lhs
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 4 : i32
// CHECK-NEXT: %[[R:.*]] = arith.subi %[[C]], %[[X]] : i32
// CHECK-NEXT: return %[[R]]
func.func @addi_sub_const_lhs(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %a = arith.subi %c1, %x : i32
  %r = arith.addi %a, %c3 : i32
  return %r : i32
}

// CHECK-LABEL: func.func @addi_mul_neg_one
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32, %[[Y:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[R0:.*]] = arith.subi %[[X]], %[[Y]] : i32
// CHECK-NEXT: %[[R1:.*]] = arith.subi %[[Y]], %[[X]] : i32
// CHECK-NEXT: return %[[R0]], %[[R1]]
func.func @addi_mul_neg_one(%x: i32, %y: i32) -> (i32, i32) {
  %m1 = arith.constant -1 : i32
  %m = arith.muli %y, %m1 : i32
  %r0 = arith.addi %x, %m : i32
  %n = arith.muli %m1, %x : i32
  %r1 = arith.addi %n, %y : i32
  return %r0, %r1 : i32, i32
}

// CHECK-LABEL: func.func @subi_self_and_zero
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: return %[[Z]], %[[X]] : i32, i32
func.func @subi_self_and_zero(%x: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %r0 = arith.subi %x, %x : i32
  %r1 = arith.subi %x, %c0 : i32
  return %r0, %r1 : i32, i32
}

// 0 - x is not x.
// CHECK-LABEL: func.func @subi_zero_lhs_kept
// CHECK: arith.subi
func.func @subi_zero_lhs_kept(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %r = arith.subi %c0, %x : i32
  return %r : i32
}

// CHECK-LABEL: func.func @subi_add_cancel
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
// CHECK-NEXT: return %[[A]], %[[B]] : i32, i32
func.func @subi_add_cancel(%a: i32, %b: i32) -> (i32, i32) {
  %s = arith.addi %a, %b : i32
  %r0 = arith.subi %s, %b : i32
  %r1 = arith.subi %s, %a : i32
  return %r0, %r1 : i32, i32
}

// (x + 5) - 2 -> x + 3
// CHECK-LABEL: func.func @subi_rhs_add_const
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[R:.*]] = arith.addi %[[X]], %[[C]] : i32
// CHECK-NEXT: return %[[R]]
func.func @subi_rhs_add_const(%x: i32) -> i32 {
  %c5 = arith.constant 5 : i32
  %c2 = arith.constant 2 : i32
  %a = arith.addi %x, %c5 : i32
  %r = arith.subi %a, %c2 : i32
  return %r : i32
}

// 5 - (x + 2) -> 3 - x
// CHECK-LABEL: func.func @subi_lhs_add_const
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[R:.*]] = arith.subi %[[C]], %[[X]] : i32
// CHECK-NEXT: return %[[R]]
func.func @subi_lhs_add_const(%x: i32) -> i32 {
  %c5 = arith.constant 5 : i32
  %c2 = arith.constant 2 : i32
  %a = arith.addi %x, %c2 : i32
  %r = arith.subi %c5, %a : i32
  return %r : i32
}

// (x - 5) - 2 -> x - 7
// CHECK-LABEL: func.func @subi_rhs_sub_const_rhs
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 7 : i32
// CHECK-NEXT: %[[R:.*]] = arith.subi %[[X]], %[[C]] : i32
// CHECK-NEXT: return %[[R]]
func.func @subi_rhs_sub_const_rhs(%x: i32) -> i32 {
  %c5 = arith.constant 5 : i32
  %c2 = arith.constant 2 : i32
  %a = arith.subi %x, %c5 : i32
  %r = arith.subi %a, %c2 : i32
  return %r : i32
}

// (5 - x) - 2 -> 3 - x
// CHECK-LABEL: func.func @subi_rhs_sub_const_lhs
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[R:.*]] = arith.subi %[[C]], %[[X]] : i32
// CHECK-NEXT: return %[[R]]
func.func @subi_rhs_sub_const_lhs(%x: i32) -> i32 {
  %c5 = arith.constant 5 : i32
  %c2 = arith.constant 2 : i32
  %a = arith.subi %c5, %x : i32
  %r = arith.subi %a, %c2 : i32
  return %r : i32
}

// 5 - (x - 2) -> 7 - x
// CHECK-LABEL: func.func @subi_lhs_sub_const_rhs
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 7 : i32
// CHECK-NEXT: %[[R:.*]] = arith.subi %[[C]], %[[X]] : i32
// CHECK-NEXT: return %[[R]]
func.func @subi_lhs_sub_const_rhs(%x: i32) -> i32 {
  %c5 = arith.constant 5 : i32
  %c2 = arith.constant 2 : i32
  %a = arith.subi %x, %c2 : i32
  %r = arith.subi %c5, %a : i32
  return %r : i32
}

// 5 - (2 - x) -> x + 3
// CHECK-LABEL: func.func @subi_lhs_sub_const_lhs
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[R:.*]] = arith.addi %[[X]], %[[C]] : i32
// CHECK-NEXT: return %[[R]]
func.func @subi_lhs_sub_const_lhs(%x: i32) -> i32 {
  %c5 = arith.constant 5 : i32
  %c2 = arith.constant 2 : i32
  %a = arith.subi %c2, %x : i32
  %r = arith.subi %c5, %a : i32
  return %r : i32
}

// (a - b) - a -> 0 - b
// CHECK-LABEL: func.func @subi_sub_lhs
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
// CHECK: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[R:.*]] = arith.subi %[[Z]], %[[B]] : i32
// CHECK-NEXT: return %[[R]]
func.func @subi_sub_lhs(%a: i32, %b: i32) -> i32 {
  %s = arith.subi %a, %b : i32
  %r = arith.subi %s, %a : i32
  return %r : i32
}

// CHECK-LABEL: func.func @muli_zero_one
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: return %[[Z]], %[[X]] : i32, i32
func.func @muli_zero_one(%x: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r0 = arith.muli %x, %c0 : i32
  %r1 = arith.muli %c1, %x : i32
  return %r0, %r1 : i32, i32
}

// CHECK-LABEL: func.func @muli_mul_const
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 12 : i32
// CHECK-NEXT: %[[R:.*]] = arith.muli %[[X]], %[[C]] : i32
// CHECK-NEXT: return %[[R]]
func.func @muli_mul_const(%x: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %a = arith.muli %x, %c3 : i32
  %r = arith.muli %a, %c4 : i32
  return %r : i32
}

// ----- division and remainder --------------------------------------------------------------------

// CHECK-LABEL: func.func @div_one
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[Z]], %[[Z]]
func.func @div_one(%x: i32) -> (i32, i32, i32, i32, i32, i32, i32) {
  %c1 = arith.constant 1 : i32
  %r0 = arith.divsi %x, %c1 : i32
  %r1 = arith.divui %x, %c1 : i32
  %r2 = arith.ceildivsi %x, %c1 : i32
  %r3 = arith.ceildivui %x, %c1 : i32
  %r4 = arith.floordivsi %x, %c1 : i32
  %r5 = arith.remsi %x, %c1 : i32
  %r6 = arith.remui %x, %c1 : i32
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6 : i32, i32, i32, i32, i32, i32, i32
}

// (a * b) / b -> a when the product cannot wrap (nuw for unsigned, nsw for signed).
// CHECK-LABEL: func.func @div_of_mul
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: return %[[A]], %[[B]], %[[A]], %[[A]], %[[Z]]
func.func @div_of_mul(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32) {
  %u = arith.muli %a, %b overflow<nuw> : i32
  %s = arith.muli %a, %b overflow<nsw> : i32
  %r0 = arith.divui %u, %b : i32
  %r1 = arith.divui %u, %a : i32
  %r2 = arith.divsi %s, %b : i32
  %r3 = arith.floordivsi %s, %b : i32
  %r4 = arith.remsi %s, %b : i32
  return %r0, %r1, %r2, %r3, %r4 : i32, i32, i32, i32, i32
}

// Without the matching flag the product may have wrapped: (16 * 16) / 16 is 0 in i8.
// CHECK-LABEL: func.func @div_of_mul_kept
// CHECK-COUNT-2: arith.muli
// CHECK: arith.divsi
// CHECK: arith.divui
func.func @div_of_mul_kept(%a: i8, %b: i8) -> (i8, i8) {
  %m = arith.muli %a, %b : i8
  %n = arith.muli %a, %b overflow<nsw> : i8
  %r0 = arith.divsi %m, %b : i8
  %r1 = arith.divui %n, %b : i8
  return %r0, %r1 : i8, i8
}

// Division by zero and MIN / -1 are poison: not folded.
// CHECK-LABEL: func.func @div_poison_kept
// CHECK: arith.divsi
// CHECK: arith.remui
// CHECK: arith.ceildivui
// CHECK: arith.divsi
// CHECK: arith.floordivsi
func.func @div_poison_kept() -> (i32, i32, i32, i32, i32) {
  %c7 = arith.constant 7 : i32
  %c0 = arith.constant 0 : i32
  %min = arith.constant -2147483648 : i32
  %m1 = arith.constant -1 : i32
  %r0 = arith.divsi %c7, %c0 : i32
  %r1 = arith.remui %c7, %c0 : i32
  %r2 = arith.ceildivui %c7, %c0 : i32
  %r3 = arith.divsi %min, %m1 : i32
  %r4 = arith.floordivsi %min, %m1 : i32
  return %r0, %r1, %r2, %r3, %r4 : i32, i32, i32, i32, i32
}

// -7 / 2: toward zero -3, ceil -3, floor -4, remainder -1; unsigned 2147483644.
// CHECK-LABEL: func.func @div_fold
// CHECK-DAG: %[[M3:.*]] = arith.constant -3 : i32
// CHECK-DAG: %[[M4:.*]] = arith.constant -4 : i32
// CHECK-DAG: %[[M1:.*]] = arith.constant -1 : i32
// CHECK-DAG: %[[U:.*]] = arith.constant 2147483644 : i32
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NOT: arith.{{.*}}div
// CHECK: return %[[M3]], %[[M3]], %[[M4]], %[[M1]], %[[U]], %[[Z]]
func.func @div_fold() -> (i32, i32, i32, i32, i32, i32) {
  %a = arith.constant -7 : i32
  %b = arith.constant 2 : i32
  %r0 = arith.divsi %a, %b : i32
  %r1 = arith.ceildivsi %a, %b : i32
  %r2 = arith.floordivsi %a, %b : i32
  %r3 = arith.remsi %a, %b : i32
  %r4 = arith.divui %a, %b : i32
  %r5 = arith.remsi %a, %a : i32
  return %r0, %r1, %r2, %r3, %r4, %r5 : i32, i32, i32, i32, i32, i32
}

// ----- bitwise -----------------------------------------------------------------------------------

// CHECK-LABEL: func.func @andi_folds
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: return %[[Z]], %[[X]], %[[X]], %[[Z]], %[[Z]]
func.func @andi_folds(%x: i32) -> (i32, i32, i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %m1 = arith.constant -1 : i32
  %r0 = arith.andi %x, %c0 : i32
  %r1 = arith.andi %m1, %x : i32
  %r2 = arith.andi %x, %x : i32
  %n = arith.xori %x, %m1 : i32
  %r3 = arith.andi %x, %n : i32
  %r4 = arith.andi %n, %x : i32
  return %r0, %r1, %r2, %r3, %r4 : i32, i32, i32, i32, i32
}

// a & (a & b) -> a & b
// CHECK-LABEL: func.func @andi_andi
// CHECK-NEXT: %[[AB:.*]] = arith.andi
// CHECK-NEXT: return %[[AB]], %[[AB]]
func.func @andi_andi(%a: i32, %b: i32) -> (i32, i32) {
  %ab = arith.andi %a, %b : i32
  %r0 = arith.andi %a, %ab : i32
  %r1 = arith.andi %ab, %b : i32
  return %r0, %r1 : i32, i32
}

// CHECK-LABEL: func.func @ori_folds
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[M1:.*]] = arith.constant -1 : i32
// CHECK-NEXT: return %[[X]], %[[M1]], %[[X]], %[[M1]], %[[M1]]
func.func @ori_folds(%x: i32) -> (i32, i32, i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %m1 = arith.constant -1 : i32
  %r0 = arith.ori %x, %c0 : i32
  %r1 = arith.ori %m1, %x : i32
  %r2 = arith.ori %x, %x : i32
  %n = arith.xori %x, %m1 : i32
  %r3 = arith.ori %x, %n : i32
  %r4 = arith.ori %n, %x : i32
  return %r0, %r1, %r2, %r3, %r4 : i32, i32, i32, i32, i32
}

// x ^ 0 -> x, x ^ x -> 0, and (x ^ a) ^ a -> x in all four operand orders.
// CHECK-LABEL: func.func @xori_folds
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32, %[[A:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: return %[[X]], %[[Z]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @xori_folds(%x: i32, %a: i32) -> (i32, i32, i32, i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %r0 = arith.xori %c0, %x : i32
  %r1 = arith.xori %x, %x : i32
  %p = arith.xori %x, %a : i32
  %q = arith.xori %a, %x : i32
  %r2 = arith.xori %p, %a : i32
  %r3 = arith.xori %q, %a : i32
  %r4 = arith.xori %a, %p : i32
  %r5 = arith.xori %a, %q : i32
  return %r0, %r1, %r2, %r3, %r4, %r5 : i32, i32, i32, i32, i32, i32
}

// not(a < b) -> a >= b
// CHECK-LABEL: func.func @xori_cmpi
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[R:.*]] = arith.cmpi sge, %[[A]], %[[B]] : i32
// CHECK-NEXT: return %[[R]]
func.func @xori_cmpi(%a: i32, %b: i32) -> i1 {
  %t = arith.constant true
  %c = arith.cmpi slt, %a, %b : i32
  %r = arith.xori %c, %t : i1
  return %r : i1
}

// Vectors too (MLIR: scalars only).
// CHECK-LABEL: func.func @xori_cmpi_vector
// CHECK-NEXT: %[[R:.*]] = arith.cmpi ugt
// CHECK-NEXT: return %[[R]]
func.func @xori_cmpi_vector(%a: vector<4xi32>, %b: vector<4xi32>) -> vector<4xi1> {
  %t = arith.constant dense<true> : vector<4xi1>
  %c = arith.cmpi ule, %a, %b : vector<4xi32>
  %r = arith.xori %c, %t : vector<4xi1>
  return %r : vector<4xi1>
}

// not(a < b) is `uge` for floats: true where either is NaN (MLIR: not rewritten).
// CHECK-LABEL: func.func @xori_cmpf
// CHECK-NEXT: %[[R0:.*]] = arith.cmpf uge
// CHECK-NEXT: %[[R1:.*]] = arith.cmpf une
// CHECK-NEXT: return %[[R0]], %[[R1]]
func.func @xori_cmpf(%a: f32, %b: f32) -> (i1, i1) {
  %t = arith.constant true
  %c = arith.cmpf olt, %a, %b : f32
  %r0 = arith.xori %c, %t : i1
  %d = arith.cmpf oeq, %a, %b : f32
  %r1 = arith.xori %d, %t : i1
  return %r0, %r1 : i1, i1
}

// op(ext(x), ext(y)) -> ext(op(x, y)) for and/or/xor, both kinds of extension.
// CHECK-LABEL: func.func @bitwise_of_ext
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i8, %[[Y:[a-z0-9]+]]: i8)
// CHECK-NEXT: %[[A:.*]] = arith.andi %[[X]], %[[Y]] : i8
// CHECK-NEXT: arith.extui %[[A]] : i8 to i32
// CHECK-NEXT: %[[O:.*]] = arith.ori %[[X]], %[[Y]] : i8
// CHECK-NEXT: arith.extui %[[O]] : i8 to i32
// CHECK-NEXT: %[[E:.*]] = arith.xori %[[X]], %[[Y]] : i8
// CHECK-NEXT: arith.extui %[[E]] : i8 to i32
// CHECK-NEXT: %[[SA:.*]] = arith.andi %[[X]], %[[Y]] : i8
// CHECK-NEXT: arith.extsi %[[SA]] : i8 to i32
// CHECK-NEXT: %[[SO:.*]] = arith.ori %[[X]], %[[Y]] : i8
// CHECK-NEXT: arith.extsi %[[SO]] : i8 to i32
// CHECK-NEXT: %[[SE:.*]] = arith.xori %[[X]], %[[Y]] : i8
// CHECK-NEXT: arith.extsi %[[SE]] : i8 to i32
func.func @bitwise_of_ext(%x: i8, %y: i8) -> (i32, i32, i32, i32, i32, i32) {
  %xu = arith.extui %x : i8 to i32
  %yu = arith.extui %y : i8 to i32
  %xs = arith.extsi %x : i8 to i32
  %ys = arith.extsi %y : i8 to i32
  %r0 = arith.andi %xu, %yu : i32
  %r1 = arith.ori %xu, %yu : i32
  %r2 = arith.xori %xu, %yu : i32
  %r3 = arith.andi %xs, %ys : i32
  %r4 = arith.ori %xs, %ys : i32
  %r5 = arith.xori %xs, %ys : i32
  return %r0, %r1, %r2, %r3, %r4, %r5 : i32, i32, i32, i32, i32, i32
}

// Mixed extensions differ in the high bits.
// CHECK-LABEL: func.func @bitwise_of_mixed_ext_kept
// CHECK: arith.andi %{{.*}}, %{{.*}} : i32
func.func @bitwise_of_mixed_ext_kept(%x: i8, %y: i8) -> i32 {
  %xu = arith.extui %x : i8 to i32
  %ys = arith.extsi %y : i8 to i32
  %r = arith.andi %xu, %ys : i32
  return %r : i32
}

// ----- shifts and min/max ------------------------------------------------------------------------

// CHECK-LABEL: func.func @shift_zero
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]]
func.func @shift_zero(%x: i32) -> (i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %r0 = arith.shli %x, %c0 : i32
  %r1 = arith.shrui %x, %c0 : i32
  %r2 = arith.shrsi %x, %c0 : i32
  return %r0, %r1, %r2 : i32, i32, i32
}

// A shift by the bit width or more is poison: not folded.
// CHECK-LABEL: func.func @shift_oversized_kept
// CHECK: arith.shli
// CHECK: arith.shrsi
func.func @shift_oversized_kept() -> (i32, i32) {
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %r0 = arith.shli %c1, %c32 : i32
  %r1 = arith.shrsi %c1, %c32 : i32
  return %r0, %r1 : i32, i32
}

// max(x, x) -> x; the type's extreme absorbs (max(x, MAX) -> MAX) or vanishes (max(x, MIN)).
// CHECK-LABEL: func.func @minmax
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i8)
// CHECK-DAG: %[[MAX:.*]] = arith.constant 127 : i8
// CHECK-DAG: %[[MIN:.*]] = arith.constant -128 : i8
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i8
// CHECK-DAG: %[[ONES:.*]] = arith.constant -1 : i8
// CHECK-NOT: arith.m
// CHECK: return %[[X]], %[[MAX]], %[[X]], %[[MIN]], %[[X]], %[[ONES]], %[[X]], %[[Z]], %[[X]]
func.func @minmax(%x: i8) -> (i8, i8, i8, i8, i8, i8, i8, i8, i8) {
  %max = arith.constant 127 : i8
  %min = arith.constant -128 : i8
  %zero = arith.constant 0 : i8
  %ones = arith.constant -1 : i8
  %r0 = arith.maxsi %x, %x : i8
  %r1 = arith.maxsi %x, %max : i8
  %r2 = arith.maxsi %x, %min : i8
  %r3 = arith.minsi %x, %min : i8
  %r4 = arith.minsi %max, %x : i8
  %r5 = arith.maxui %x, %ones : i8
  %r6 = arith.maxui %x, %zero : i8
  %r7 = arith.minui %x, %zero : i8
  %r8 = arith.minui %x, %ones : i8
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8 : i8, i8, i8, i8, i8, i8, i8, i8, i8
}

// ----- cmpi --------------------------------------------------------------------------------------

// CHECK-LABEL: func.func @cmpi_self
// CHECK-DAG: %[[F:.*]] = arith.constant false
// CHECK-DAG: %[[T:.*]] = arith.constant true
// CHECK-NOT: arith.cmpi
// CHECK: return %[[T]], %[[F]], %[[T]], %[[F]]
func.func @cmpi_self(%x: i32) -> (i1, i1, i1, i1) {
  %r0 = arith.cmpi eq, %x, %x : i32
  %r1 = arith.cmpi slt, %x, %x : i32
  %r2 = arith.cmpi uge, %x, %x : i32
  %r3 = arith.cmpi ne, %x, %x : i32
  return %r0, %r1, %r2, %r3 : i1, i1, i1, i1
}

// A constant moves to the right, the predicate mirrored: 5 < x -> x > 5.
// CHECK-LABEL: func.func @cmpi_const_left
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32)
// CHECK: %[[C:.*]] = arith.constant 5 : i32
// CHECK-NEXT: arith.cmpi sgt, %[[X]], %[[C]] : i32
// CHECK-NEXT: arith.cmpi ule, %[[X]], %[[C]] : i32
func.func @cmpi_const_left(%x: i32) -> (i1, i1) {
  %c5 = arith.constant 5 : i32
  %r0 = arith.cmpi slt, %c5, %x : i32
  %r1 = arith.cmpi uge, %c5, %x : i32
  return %r0, %r1 : i1, i1
}

// (x == true) -> x, (x != false) -> x, also with the constant on the left; x == false stays.
// CHECK-LABEL: func.func @cmpi_i1
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i1)
// CHECK: %[[R:.*]] = arith.cmpi eq, %[[X]]
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[R]]
func.func @cmpi_i1(%x: i1) -> (i1, i1, i1, i1) {
  %t = arith.constant true
  %f = arith.constant false
  %r0 = arith.cmpi eq, %x, %t : i1
  %r1 = arith.cmpi ne, %x, %f : i1
  %r2 = arith.cmpi ne, %f, %x : i1
  %r3 = arith.cmpi eq, %x, %f : i1
  return %r0, %r1, %r2, %r3 : i1, i1, i1, i1
}

// ext(b : i1) != 0 -> b
// CHECK-LABEL: func.func @cmpi_ext_i1_ne_zero
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i1)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @cmpi_ext_i1_ne_zero(%x: i1) -> (i1, i1) {
  %c0 = arith.constant 0 : i32
  %u = arith.extui %x : i1 to i32
  %s = arith.extsi %x : i1 to i32
  %r0 = arith.cmpi ne, %u, %c0 : i32
  %r1 = arith.cmpi ne, %s, %c0 : i32
  return %r0, %r1 : i1, i1
}

// Comparing two equal extensions compares the narrow values; zero extension turns a signed
// predicate unsigned (MLIR: eq/ne only).
// CHECK-LABEL: func.func @cmpi_ext
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i8, %[[B:[a-z0-9]+]]: i8)
// CHECK-NEXT: arith.cmpi eq, %[[A]], %[[B]] : i8
// CHECK-NEXT: arith.cmpi ne, %[[A]], %[[B]] : i8
// CHECK-NEXT: arith.cmpi slt, %[[A]], %[[B]] : i8
// CHECK-NEXT: arith.cmpi ult, %[[A]], %[[B]] : i8
// CHECK-NEXT: arith.cmpi ugt, %[[A]], %[[B]] : i8
func.func @cmpi_ext(%a: i8, %b: i8) -> (i1, i1, i1, i1, i1) {
  %as = arith.extsi %a : i8 to i32
  %bs = arith.extsi %b : i8 to i32
  %au = arith.extui %a : i8 to i32
  %bu = arith.extui %b : i8 to i32
  %r0 = arith.cmpi eq, %as, %bs : i32
  %r1 = arith.cmpi ne, %au, %bu : i32
  %r2 = arith.cmpi slt, %as, %bs : i32
  %r3 = arith.cmpi ult, %au, %bu : i32
  %r4 = arith.cmpi sgt, %au, %bu : i32
  return %r0, %r1, %r2, %r3, %r4 : i1, i1, i1, i1, i1
}

// CHECK-LABEL: func.func @cmpi_ext_mixed_kept
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i32
func.func @cmpi_ext_mixed_kept(%a: i8, %b: i8) -> i1 {
  %as = arith.extsi %a : i8 to i32
  %bu = arith.extui %b : i8 to i32
  %r = arith.cmpi eq, %as, %bu : i32
  return %r : i1
}

// -1 < 1 signed, but 255 > 1 unsigned.
// CHECK-LABEL: func.func @cmpi_fold
// CHECK-DAG: %[[T:.*]] = arith.constant true
// CHECK-DAG: %[[F:.*]] = arith.constant false
// CHECK: return %[[T]], %[[F]]
func.func @cmpi_fold() -> (i1, i1) {
  %a = arith.constant -1 : i8
  %b = arith.constant 1 : i8
  %r0 = arith.cmpi slt, %a, %b : i8
  %r1 = arith.cmpi ult, %a, %b : i8
  return %r0, %r1 : i1, i1
}

// ----- cmpf --------------------------------------------------------------------------------------

// A NaN operand decides: ordered predicates false, unordered true; `false`/`true` always.
// CHECK-LABEL: func.func @cmpf_nan
// CHECK-DAG: %[[F:.*]] = arith.constant false
// CHECK-DAG: %[[T:.*]] = arith.constant true
// CHECK-NOT: arith.cmpf
// CHECK: return %[[F]], %[[T]], %[[F]], %[[T]]
func.func @cmpf_nan(%x: f32) -> (i1, i1, i1, i1) {
  %nan = arith.constant 0x7FC00000 : f32
  %r0 = arith.cmpf olt, %x, %nan : f32
  %r1 = arith.cmpf ult, %nan, %x : f32
  %r2 = arith.cmpf false, %x, %x : f32
  %r3 = arith.cmpf true, %x, %x : f32
  return %r0, %r1, %r2, %r3 : i1, i1, i1, i1
}

// x == x is false for NaN x.
// CHECK-LABEL: func.func @cmpf_self_kept
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf une
func.func @cmpf_self_kept(%x: f32) -> (i1, i1) {
  %r0 = arith.cmpf oeq, %x, %x : f32
  %r1 = arith.cmpf une, %x, %x : f32
  return %r0, %r1 : i1, i1
}

// CHECK-LABEL: func.func @cmpf_fold
// CHECK-DAG: %[[T:.*]] = arith.constant true
// CHECK-DAG: %[[F:.*]] = arith.constant false
// CHECK: return %[[T]], %[[F]]
func.func @cmpf_fold() -> (i1, i1) {
  %a = arith.constant 1.0 : f32
  %b = arith.constant 2.0 : f32
  %r0 = arith.cmpf olt, %a, %b : f32
  %r1 = arith.cmpf ueq, %a, %b : f32
  return %r0, %r1 : i1, i1
}

// Comparing a converted small integer with a constant compares the integers: x < 4.0 is
// x < 4, x == 4.5 is false, 1e10 is beyond i16, x < 4.5 is x <= 4, and no NaN can appear.
// CHECK-LABEL: func.func @cmpf_int_to_fp
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i8, %[[Y:[a-z0-9]+]]: i16)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : i8
// CHECK-DAG: %[[F:.*]] = arith.constant false
// CHECK-DAG: %[[T:.*]] = arith.constant true
// CHECK-NOT: arith.cmpf
// CHECK: %[[R0:.*]] = arith.cmpi slt, %[[X]], %[[C4]] : i8
// CHECK-NEXT: %[[R3:.*]] = arith.cmpi sle, %[[X]], %[[C4]] : i8
// CHECK-NEXT: return %[[R0]], %[[F]], %[[F]], %[[R3]], %[[T]], %[[T]]
func.func @cmpf_int_to_fp(%x: i8, %y: i16) -> (i1, i1, i1, i1, i1, i1) {
  %c = arith.constant 4.0 : f32
  %frac = arith.constant 4.5 : f32
  %big = arith.constant 1.0e10 : f32
  %neg = arith.constant -4.5 : f32
  %fx = arith.sitofp %x : i8 to f32
  %fy = arith.uitofp %y : i16 to f32
  %r0 = arith.cmpf olt, %fx, %c : f32
  %r1 = arith.cmpf oeq, %fx, %frac : f32
  %r2 = arith.cmpf ogt, %fy, %big : f32
  %r3 = arith.cmpf ult, %fx, %frac : f32
  %r4 = arith.cmpf oge, %fy, %neg : f32
  %r5 = arith.cmpf ord, %fx, %c : f32
  return %r0, %r1, %r2, %r3, %r4, %r5 : i1, i1, i1, i1, i1, i1
}

// An i64 does not fit f32's significand and 4e17 is where it rounds: kept.
// CHECK-LABEL: func.func @cmpf_int_to_fp_wide_kept
// CHECK: arith.sitofp
// CHECK: arith.cmpf olt
func.func @cmpf_int_to_fp_wide_kept(%x: i64) -> i1 {
  %c = arith.constant 4.0e17 : f32
  %fx = arith.sitofp %x : i64 to f32
  %r = arith.cmpf olt, %fx, %c : f32
  return %r : i1
}

// ----- select ------------------------------------------------------------------------------------

// CHECK-LABEL: func.func @select_folds
// CHECK-SAME: (%[[C:[a-z0-9]+]]: i1, %[[X:[a-z0-9]+]]: i32, %[[Y:[a-z0-9]+]]: i32)
// CHECK-NEXT: return %[[X]], %[[X]], %[[Y]]
func.func @select_folds(%c: i1, %x: i32, %y: i32) -> (i32, i32, i32) {
  %t = arith.constant true
  %f = arith.constant false
  %r0 = arith.select %c, %x, %x : i32
  %r1 = arith.select %t, %x, %y : i32
  %r2 = arith.select %f, %x, %y : i32
  return %r0, %r1, %r2 : i32, i32, i32
}

// select(c, true, false) -> c; select(c, false, true) -> c ^ true
// CHECK-LABEL: func.func @select_i1
// CHECK-SAME: (%[[C:[a-z0-9]+]]: i1)
// CHECK: %[[T:.*]] = arith.constant true
// CHECK-NEXT: %[[N:.*]] = arith.xori %[[C]], %[[T]] : i1
// CHECK-NEXT: return %[[C]], %[[N]]
func.func @select_i1(%c: i1) -> (i1, i1) {
  %t = arith.constant true
  %f = arith.constant false
  %r0 = arith.select %c, %t, %f : i1
  %r1 = arith.select %c, %f, %t : i1
  return %r0, %r1 : i1, i1
}

// select(c, 1, 0) -> extui(c); select(c, 0, 1) -> extui(c ^ true)
// CHECK-LABEL: func.func @select_to_extui
// CHECK-SAME: (%[[C:[a-z0-9]+]]: i1)
// CHECK: %[[T:.*]] = arith.constant true
// CHECK-NEXT: %[[R0:.*]] = arith.extui %[[C]] : i1 to i32
// CHECK-NEXT: %[[N:.*]] = arith.xori %[[C]], %[[T]] : i1
// CHECK-NEXT: %[[R1:.*]] = arith.extui %[[N]] : i1 to i32
// CHECK-NEXT: return %[[R0]], %[[R1]]
func.func @select_to_extui(%c: i1) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r0 = arith.select %c, %c1, %c0 : i32
  %r1 = arith.select %c, %c0, %c1 : i32
  return %r0, %r1 : i32, i32
}

// A scalar condition choosing between vectors cannot become an elementwise extui.
// CHECK-LABEL: func.func @select_to_extui_kept
// CHECK: arith.select
func.func @select_to_extui_kept(%c: i1) -> vector<2xi32> {
  %c0 = arith.constant dense<0> : vector<2xi32>
  %c1 = arith.constant dense<1> : vector<2xi32>
  %r = arith.select %c, %c1, %c0 : vector<2xi32>
  return %r : vector<2xi32>
}

// select(not c, x, y) -> select(c, y, x)
// CHECK-LABEL: func.func @select_not_cond
// CHECK-SAME: (%[[C:[a-z0-9]+]]: i1, %[[X:[a-z0-9]+]]: i32, %[[Y:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[R:.*]] = arith.select %[[C]], %[[Y]], %[[X]] : i32
// CHECK-NEXT: return %[[R]]
func.func @select_not_cond(%c: i1, %x: i32, %y: i32) -> i32 {
  %t = arith.constant true
  %n = arith.xori %c, %t : i1
  %r = arith.select %n, %x, %y : i32
  return %r : i32
}

// CHECK-LABEL: func.func @select_redundant
// CHECK-SAME: (%[[C:[a-z0-9]+]]: i1, %[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32,
// CHECK-SAME: %[[D:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[R0:.*]] = arith.select %[[C]], %[[A]], %[[D]] : i32
// CHECK-NEXT: %[[R1:.*]] = arith.select %[[C]], %[[D]], %[[B]] : i32
// CHECK-NEXT: return %[[R0]], %[[R1]]
func.func @select_redundant(%c: i1, %a: i32, %b: i32, %d: i32) -> (i32, i32) {
  %s = arith.select %c, %a, %b : i32
  %r0 = arith.select %c, %s, %d : i32
  %r1 = arith.select %c, %d, %s : i32
  return %r0, %r1 : i32, i32
}

// select(a == b, a, b) -> b; select(a != b, a, b) -> a
// CHECK-LABEL: func.func @select_cmpi
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
// CHECK-NEXT: return %[[B]], %[[A]], %[[A]]
func.func @select_cmpi(%a: i32, %b: i32) -> (i32, i32, i32) {
  %eq = arith.cmpi eq, %a, %b : i32
  %ne = arith.cmpi ne, %a, %b : i32
  %r0 = arith.select %eq, %a, %b : i32
  %r1 = arith.select %ne, %a, %b : i32
  %r2 = arith.select %eq, %b, %a : i32
  return %r0, %r1, %r2 : i32, i32, i32
}

// CHECK-LABEL: func.func @select_dense_cond
// CHECK: %[[R:.*]] = arith.constant dense<[1, 4]> : vector<2xi32>
// CHECK-NEXT: return %[[R]]
func.func @select_dense_cond() -> vector<2xi32> {
  %c = arith.constant dense<[true, false]> : vector<2xi1>
  %a = arith.constant dense<[1, 2]> : vector<2xi32>
  %b = arith.constant dense<[3, 4]> : vector<2xi32>
  %r = arith.select %c, %a, %b : vector<2xi1>, vector<2xi32>
  return %r : vector<2xi32>
}

// ----- floating point ----------------------------------------------------------------------------

// x + -0.0 -> x
// CHECK-LABEL: func.func @addf_neg_zero
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32)
// CHECK-NEXT: return %[[X]]
func.func @addf_neg_zero(%x: f32) -> f32 {
  %m0 = arith.constant -0.0 : f32
  %r = arith.addf %x, %m0 : f32
  return %r : f32
}

// x + 0.0 is not x for x = -0.0.
// CHECK-LABEL: func.func @addf_pos_zero_kept
// CHECK: arith.addf
func.func @addf_pos_zero_kept(%x: f32) -> f32 {
  %p0 = arith.constant 0.0 : f32
  %r = arith.addf %x, %p0 : f32
  return %r : f32
}

// x - 0.0 -> x
// CHECK-LABEL: func.func @subf_pos_zero
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32)
// CHECK-NEXT: return %[[X]]
func.func @subf_pos_zero(%x: f32) -> f32 {
  %p0 = arith.constant 0.0 : f32
  %r = arith.subf %x, %p0 : f32
  return %r : f32
}

// x - -0.0 is not x for x = -0.0; x - x is NaN for inf and NaN.
// CHECK-LABEL: func.func @subf_kept
// CHECK: arith.subf
// CHECK: arith.subf
func.func @subf_kept(%x: f32) -> (f32, f32) {
  %m0 = arith.constant -0.0 : f32
  %r0 = arith.subf %x, %m0 : f32
  %r1 = arith.subf %x, %x : f32
  return %r0, %r1 : f32, f32
}

// x * 1.0 -> x; x * 0.0 -> 0.0 only under fastmath nnan and nsz.
// CHECK-LABEL: func.func @mulf_folds
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32)
// CHECK: %[[Z:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[R1:.*]] = arith.mulf %[[X]], %[[Z]] : f32
// CHECK-NEXT: %[[R3:.*]] = arith.mulf %[[X]], %[[Z]] fastmath<nnan> : f32
// CHECK-NEXT: return %[[X]], %[[R1]], %[[Z]], %[[R3]]
func.func @mulf_folds(%x: f32) -> (f32, f32, f32, f32) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %r0 = arith.mulf %one, %x : f32
  %r1 = arith.mulf %x, %zero : f32
  %r2 = arith.mulf %x, %zero fastmath<nnan,nsz> : f32
  %r3 = arith.mulf %x, %zero fastmath<nnan> : f32
  return %r0, %r1, %r2, %r3 : f32, f32, f32, f32
}

// x / 1.0 -> x, not 1.0 / x.
// CHECK-LABEL: func.func @divf_folds
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32)
// CHECK: %[[R:.*]] = arith.divf
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @divf_folds(%x: f32) -> (f32, f32) {
  %one = arith.constant 1.0 : f32
  %r0 = arith.divf %x, %one : f32
  %r1 = arith.divf %one, %x : f32
  return %r0, %r1 : f32, f32
}

// -(-x) -> x; (-x) * (-y) -> x * y; (-x) / (-y) -> x / y
// CHECK-LABEL: func.func @negf_negf
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32, %[[Y:[a-z0-9]+]]: f32)
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[X]], %[[Y]] : f32
// CHECK-NEXT: return %[[X]], %[[M]], %[[D]]
func.func @negf_negf(%x: f32, %y: f32) -> (f32, f32, f32) {
  %nx = arith.negf %x : f32
  %ny = arith.negf %y : f32
  %r0 = arith.negf %nx : f32
  %r1 = arith.mulf %nx, %ny : f32
  %r2 = arith.divf %nx, %ny : f32
  return %r0, %r1, %r2 : f32, f32, f32
}

// maximumf(x, x), maximumf(x, -inf), minimumf(+inf, x), maxnumf/minnumf(x, NaN) -> x.
// maxnumf(x, -inf) is -inf for NaN x, and maximumf(x, NaN) is NaN: kept.
// CHECK-LABEL: func.func @minmaxf
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32)
// CHECK: %[[R5:.*]] = arith.maxnumf %[[X]]
// CHECK-NEXT: %[[R6:.*]] = arith.minnumf %[[X]]
// CHECK-NEXT: %[[R7:.*]] = arith.maximumf %[[X]]
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[R5]], %[[R6]], %[[R7]]
func.func @minmaxf(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %r0 = arith.maximumf %x, %x : f32
  %r1 = arith.maximumf %x, %ninf : f32
  %r2 = arith.minimumf %pinf, %x : f32
  %r3 = arith.maxnumf %x, %nan : f32
  %r4 = arith.minnumf %x, %nan : f32
  %r5 = arith.maxnumf %x, %ninf : f32
  %r6 = arith.minnumf %x, %pinf : f32
  %r7 = arith.maximumf %x, %nan : f32
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7 : f32, f32, f32, f32, f32, f32, f32, f32
}

// 1.5 + -2.25 and fmod(-2.25, 1.5) are both -0.75: one constant.
// CHECK-LABEL: func.func @float_fold
// CHECK-DAG: arith.constant -7.500000e-01 : f32
// CHECK-DAG: arith.constant -3.375000e+00 : f32
// CHECK-DAG: arith.constant -1.500000e+00 : f32
// CHECK-DAG: arith.constant 1.000000e+00 : f16
// CHECK-NOT: arith.{{(add|mul|rem|neg|div)}}f
func.func @float_fold() -> (f32, f32, f32, f32, f16) {
  %a = arith.constant 1.5 : f32
  %b = arith.constant -2.25 : f32
  %h = arith.constant 1.5 : f16
  %r0 = arith.addf %a, %b : f32
  %r1 = arith.mulf %a, %b : f32
  %r2 = arith.remf %b, %a : f32
  %r3 = arith.negf %a : f32
  %r4 = arith.divf %h, %h : f16
  return %r0, %r1, %r2, %r3, %r4 : f32, f32, f32, f32, f16
}

// ----- integer casts -----------------------------------------------------------------------------

// ext(ext(x)) -> ext(x); extsi(extui(x)) -> extui(x) (the zero extension left a 0 sign bit).
// CHECK-LABEL: func.func @ext_ext
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i8)
// CHECK-NEXT: %[[U:.*]] = arith.extui %[[X]] : i8 to i64
// CHECK-NEXT: %[[S:.*]] = arith.extsi %[[X]] : i8 to i64
// CHECK-NEXT: %[[SU:.*]] = arith.extui %[[X]] : i8 to i64
// CHECK-NEXT: return %[[U]], %[[S]], %[[SU]]
func.func @ext_ext(%x: i8) -> (i64, i64, i64) {
  %a = arith.extui %x : i8 to i16
  %r0 = arith.extui %a : i16 to i64
  %b = arith.extsi %x : i8 to i16
  %r1 = arith.extsi %b : i16 to i64
  %r2 = arith.extsi %a : i16 to i64
  return %r0, %r1, %r2 : i64, i64, i64
}

// extui(extsi(x)) zero-extends the copied sign bits: kept.
// CHECK-LABEL: func.func @extui_extsi_kept
// CHECK: arith.extsi
// CHECK: arith.extui
func.func @extui_extsi_kept(%x: i8) -> i64 {
  %a = arith.extsi %x : i8 to i16
  %r = arith.extui %a : i16 to i64
  return %r : i64
}

// trunci(ext(x)) -> x, trunci(x), or ext(x) by the widths; trunci(trunci(x)) -> trunci(x).
// CHECK-LABEL: func.func @trunci_of_ext
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i8, %[[B:[a-z0-9]+]]: i32, %[[C:[a-z0-9]+]]: i64)
// CHECK-NEXT: %[[T0:.*]] = arith.trunci %[[B]] : i32 to i8
// CHECK-NEXT: %[[T1:.*]] = arith.trunci %[[B]] : i32 to i8
// CHECK-NEXT: %[[E0:.*]] = arith.extsi %[[A]] : i8 to i16
// CHECK-NEXT: %[[E1:.*]] = arith.extui %[[A]] : i8 to i16
// CHECK-NEXT: %[[T2:.*]] = arith.trunci %[[C]] : i64 to i8
// CHECK-NEXT: return %[[A]], %[[A]], %[[T0]], %[[T1]], %[[E0]], %[[E1]], %[[T2]]
func.func @trunci_of_ext(%a: i8, %b: i32, %c: i64) -> (i8, i8, i8, i8, i16, i16, i8) {
  %as = arith.extsi %a : i8 to i32
  %au = arith.extui %a : i8 to i32
  %r0 = arith.trunci %as : i32 to i8
  %r1 = arith.trunci %au : i32 to i8
  %bs = arith.extsi %b : i32 to i64
  %bu = arith.extui %b : i32 to i64
  %r2 = arith.trunci %bs : i64 to i8
  %r3 = arith.trunci %bu : i64 to i8
  %aw = arith.extsi %a : i8 to i64
  %av = arith.extui %a : i8 to i64
  %r4 = arith.trunci %aw : i64 to i16
  %r5 = arith.trunci %av : i64 to i16
  %ct = arith.trunci %c : i64 to i32
  %r6 = arith.trunci %ct : i32 to i8
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6 : i8, i8, i8, i8, i16, i16, i8
}

// Both truncations must promise nuw for the merged one to keep it.
// CHECK-LABEL: func.func @trunci_trunci_flags
// CHECK-NEXT: arith.trunci %{{.*}} overflow<nuw> : i64 to i8
// CHECK-NEXT: arith.trunci %{{.*}} : i64 to i8
func.func @trunci_trunci_flags(%c: i64) -> (i8, i8) {
  %a = arith.trunci %c overflow<nuw> : i64 to i32
  %r0 = arith.trunci %a overflow<nuw> : i32 to i8
  %b = arith.trunci %c : i64 to i32
  %r1 = arith.trunci %b overflow<nuw> : i32 to i8
  return %r0, %r1 : i8, i8
}

// Keeping only the bits an arithmetic shift brought down: a logical shift does the same.
// CHECK-LABEL: func.func @trunci_shrsi
// CHECK: %[[S:.*]] = arith.shrui
// CHECK-NEXT: arith.trunci %[[S]] : i32 to i16
func.func @trunci_shrsi(%x: i32) -> i16 {
  %c16 = arith.constant 16 : i32
  %s = arith.shrsi %x, %c16 : i32
  %r = arith.trunci %s : i32 to i16
  return %r : i16
}

// A shorter shift keeps copied sign bits in the result.
// CHECK-LABEL: func.func @trunci_shrsi_kept
// CHECK: arith.shrsi
func.func @trunci_shrsi_kept(%x: i32) -> i16 {
  %c8 = arith.constant 8 : i32
  %s = arith.shrsi %x, %c8 : i32
  %r = arith.trunci %s : i32 to i16
  return %r : i16
}

// CHECK-LABEL: func.func @int_cast_fold
// CHECK-DAG: %[[S:.*]] = arith.constant -3 : i32
// CHECK-DAG: %[[U:.*]] = arith.constant 253 : i32
// CHECK-DAG: %[[T:.*]] = arith.constant 44 : i8
// CHECK-DAG: %[[I:.*]] = arith.constant -3 : i64
// CHECK-NOT: arith.{{ext|trunc|index_cast}}
// CHECK: return %[[S]], %[[U]], %[[T]], %[[I]]
func.func @int_cast_fold() -> (i32, i32, i8, i64) {
  %a = arith.constant -3 : i8
  %b = arith.constant 300 : i32
  %r0 = arith.extsi %a : i8 to i32
  %r1 = arith.extui %a : i8 to i32
  %r2 = arith.trunci %b : i32 to i8
  %r3 = arith.index_cast %a : i8 to index
  %r4 = arith.index_cast %r3 : index to i64
  return %r0, %r1, %r2, %r4 : i32, i32, i8, i64
}

// A -> B -> A is the identity when B is at least as wide as A; index -> i32 -> index
// truncates (MLIR 22 folds it anyway).
// CHECK-LABEL: func.func @index_cast_chain
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32, %[[I:[a-z0-9]+]]: index)
// CHECK-NEXT: %[[T:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK-NEXT: %[[R2:.*]] = arith.index_cast %[[T]] : i32 to index
// CHECK-NEXT: %[[U:.*]] = arith.index_castui %[[I]] : index to i32
// CHECK-NEXT: %[[R4:.*]] = arith.index_castui %[[U]] : i32 to index
// CHECK-NEXT: return %[[X]], %[[I]], %[[R2]], %[[X]], %[[R4]]
func.func @index_cast_chain(%x: i32, %i: index) -> (i32, index, index, i32, index) {
  %a = arith.index_cast %x : i32 to index
  %r0 = arith.index_cast %a : index to i32
  %b = arith.index_cast %i : index to i64
  %r1 = arith.index_cast %b : i64 to index
  %c = arith.index_cast %i : index to i32
  %r2 = arith.index_cast %c : i32 to index
  %d = arith.index_castui %x : i32 to index
  %r3 = arith.index_castui %d : index to i32
  %e = arith.index_castui %i : index to i32
  %r4 = arith.index_castui %e : i32 to index
  return %r0, %r1, %r2, %r3, %r4 : i32, index, index, i32, index
}

// index_cast(extsi(x)) -> index_cast(x); index_castui(extui(x)) -> index_castui(x)
// CHECK-LABEL: func.func @index_cast_of_ext
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i8)
// CHECK-NEXT: %[[R0:.*]] = arith.index_cast %[[X]] : i8 to index
// CHECK-NEXT: %[[R1:.*]] = arith.index_castui %[[X]] : i8 to index
// CHECK-NEXT: return %[[R0]], %[[R1]]
func.func @index_cast_of_ext(%x: i8) -> (index, index) {
  %a = arith.extsi %x : i8 to i32
  %r0 = arith.index_cast %a : i32 to index
  %b = arith.extui %x : i8 to i32
  %r1 = arith.index_castui %b : i32 to index
  return %r0, %r1 : index, index
}

// Mixed signedness changes the value: kept.
// CHECK-LABEL: func.func @index_cast_of_extui_kept
// CHECK: arith.extui
// CHECK: arith.index_cast
func.func @index_cast_of_extui_kept(%x: i8) -> index {
  %a = arith.extui %x : i8 to i32
  %r = arith.index_cast %a : i32 to index
  return %r : index
}

// bitcast(bitcast(x)) -> x or one bitcast; an identity bitcast folds.
// CHECK-LABEL: func.func @bitcast_chain
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32, %[[Y:[a-z0-9]+]]: i32, %[[H:[a-z0-9]+]]: f16)
// CHECK-NEXT: %[[B:.*]] = arith.bitcast %[[H]] : f16 to bf16
// CHECK-NEXT: return %[[X]], %[[Y]], %[[B]]
func.func @bitcast_chain(%x: f32, %y: i32, %h: f16) -> (f32, i32, bf16) {
  %a = arith.bitcast %x : f32 to i32
  %r0 = arith.bitcast %a : i32 to f32
  %r1 = arith.bitcast %y : i32 to i32
  %c = arith.bitcast %h : f16 to i16
  %r2 = arith.bitcast %c : i16 to bf16
  return %r0, %r1, %r2 : f32, i32, bf16
}

// CHECK-LABEL: func.func @bitcast_fold
// CHECK-DAG: %[[I:.*]] = arith.constant 1065353216 : i32
// CHECK-DAG: %[[F:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: return %[[I]], %[[F]]
func.func @bitcast_fold() -> (i32, f32) {
  %a = arith.constant 1.0 : f32
  %b = arith.constant 1065353216 : i32
  %r0 = arith.bitcast %a : f32 to i32
  %r1 = arith.bitcast %b : i32 to f32
  return %r0, %r1 : i32, f32
}

// ----- float casts -------------------------------------------------------------------------------

// extf(truncf(x)) rounds, so it is x only when both allow `contract`; truncf(extf(x)) -> x.
// CHECK-LABEL: func.func @extf_truncf
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f64, %[[Y:[a-z0-9]+]]: f32)
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[X]] : f64 to f32
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : f32 to f64
// CHECK-NEXT: return %[[E]], %[[X]], %[[Y]]
func.func @extf_truncf(%x: f64, %y: f32) -> (f64, f64, f32) {
  %a = arith.truncf %x : f64 to f32
  %r0 = arith.extf %a : f32 to f64
  %b = arith.truncf %x fastmath<contract> : f64 to f32
  %r1 = arith.extf %b fastmath<contract> : f32 to f64
  %c = arith.extf %y : f32 to f64
  %r2 = arith.truncf %c : f64 to f32
  return %r0, %r1, %r2 : f64, f64, f32
}

// truncf(extf(x)) -> truncf(x): the extension is exact.
// CHECK-LABEL: func.func @truncf_extf_narrower
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32)
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[X]] : f32 to f16
// CHECK-NEXT: return %[[R]]
func.func @truncf_extf_narrower(%x: f32) -> f16 {
  %a = arith.extf %x : f32 to f64
  %r = arith.truncf %a : f64 to f16
  return %r : f16
}

// truncf(itofp(x)) -> itofp(x) where the first conversion is exact (i16 in f64); an i64 in f64
// rounds, and rounding twice can differ from rounding once (MLIR rewrites it anyway).
// CHECK-LABEL: func.func @truncf_itofp
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i16, %[[Y:[a-z0-9]+]]: i16, %[[Z:[a-z0-9]+]]: i64)
// CHECK-NEXT: %[[R0:.*]] = arith.sitofp %[[X]] : i16 to f32
// CHECK-NEXT: %[[R1:.*]] = arith.uitofp %[[Y]] : i16 to f32
// CHECK-NEXT: %[[W:.*]] = arith.sitofp %[[Z]] : i64 to f64
// CHECK-NEXT: %[[R2:.*]] = arith.truncf %[[W]] : f64 to f32
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]]
func.func @truncf_itofp(%x: i16, %y: i16, %z: i64) -> (f32, f32, f32) {
  %a = arith.sitofp %x : i16 to f64
  %r0 = arith.truncf %a : f64 to f32
  %b = arith.uitofp %y : i16 to f64
  %r1 = arith.truncf %b : f64 to f32
  %c = arith.sitofp %z : i64 to f64
  %r2 = arith.truncf %c : f64 to f32
  return %r0, %r1, %r2 : f32, f32, f32
}

// A directed rounding mode is not what the direct conversion does: kept.
// CHECK-LABEL: func.func @truncf_itofp_rounding_kept
// CHECK: arith.truncf %{{.*}} downward
func.func @truncf_itofp_rounding_kept(%x: i16) -> f32 {
  %a = arith.sitofp %x : i16 to f64
  %r = arith.truncf %a downward : f64 to f32
  return %r : f32
}

// itofp(ext(x)) converts x's own value (MLIR 22: not rewritten).
// CHECK-LABEL: func.func @itofp_of_ext
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i8)
// CHECK-NEXT: %[[R0:.*]] = arith.sitofp %[[X]] : i8 to f32
// CHECK-NEXT: %[[R1:.*]] = arith.uitofp %[[X]] : i8 to f32
// CHECK-NEXT: %[[R2:.*]] = arith.uitofp %[[X]] : i8 to f32
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]]
func.func @itofp_of_ext(%x: i8) -> (f32, f32, f32) {
  %a = arith.extsi %x : i8 to i32
  %r0 = arith.sitofp %a : i32 to f32
  %b = arith.extui %x : i8 to i32
  %r1 = arith.uitofp %b : i32 to f32
  %r2 = arith.sitofp %b : i32 to f32
  return %r0, %r1, %r2 : f32, f32, f32
}

// CHECK-LABEL: func.func @float_cast_fold
// CHECK-DAG: arith.constant 1.500000e+00 : f32
// CHECK-DAG: arith.constant -2 : i32
// CHECK-DAG: arith.constant 0 : i32
// CHECK-DAG: arith.constant -3.000000e+00 : f32
// CHECK-DAG: arith.constant 4.2949673E+9 : f32
// CHECK-DAG: arith.constant 2.000000e+00 : f16
// CHECK-NOT: arith.{{extf|truncf|fpto|itofp}}
func.func @float_cast_fold() -> (f32, i32, i32, f32, f32, f16) {
  %a = arith.constant 1.5 : f16
  %b = arith.constant 0.1 : f32
  %c = arith.constant -2.5 : f32
  %d = arith.constant -3 : i32
  %h = arith.constant 2.0 : f32
  %r0 = arith.extf %a : f16 to f32
  %r1 = arith.fptosi %c : f32 to i32
  %r2 = arith.fptoui %b : f32 to i32
  %r3 = arith.sitofp %d : i32 to f32
  %r4 = arith.uitofp %d : i32 to f32
  %r5 = arith.truncf %h : f32 to f16
  return %r0, %r1, %r2, %r3, %r4, %r5 : f32, i32, i32, f32, f32, f16
}

// Out of range and NaN conversions to integers are poison: not folded.
// CHECK-LABEL: func.func @fpto_poison_kept
// CHECK: arith.fptosi
// CHECK: arith.fptoui
func.func @fpto_poison_kept() -> (i8, i32) {
  %a = arith.constant 300.0 : f32
  %b = arith.constant 0x7FC00000 : f32
  %r0 = arith.fptosi %a : f32 to i8
  %r1 = arith.fptoui %b : f32 to i32
  return %r0, %r1 : i8, i32
}

// f8 formats fold in software, as MLIR folds them with APFloat (more in float-types.mlir).
// CHECK-LABEL: func.func @f8_folded
// CHECK: arith.constant 2.000000e+00 : f8E4M3FN
// CHECK-NOT: arith.addf
func.func @f8_folded() -> f8E4M3FN {
  %a = arith.constant 1.0 : f8E4M3FN
  %r = arith.addf %a, %a : f8E4M3FN
  return %r : f8E4M3FN
}
