// RUN: irkit-opt %s -p math-polynomial-approximation | FileCheck %s

// A target without a fused multiply-add (`fma = false`: x86-64's baseline) gets a multiply
// and an add wherever the expansion has an fma, and ln 2 split for exact plain products:
// 355/512 (9 bits), so that k times it needs no fma to be exact.
// CHECK-LABEL: func.func @exp_scalar
// CHECK-NOT: math.fma
// CHECK: [[LOG2E:%.*]] = arith.constant 1.44269502 : f32
// CHECK: [[MAGIC:%.*]] = arith.constant 0x4B4000FE : f32
// CHECK: [[XL:%.*]] = arith.mulf [[X:%.*]], [[LOG2E]] : f32
// CHECK-NEXT: [[SHIFTED:%.*]] = arith.addf [[XL]], [[MAGIC]] : f32
// CHECK-NEXT: [[NK:%.*]] = arith.subf [[MAGIC]], [[SHIFTED]] : f32
// CHECK-NEXT: [[HI:%.*]] = arith.constant 0.693359375 : f32
// CHECK-NEXT: [[KHI:%.*]] = arith.mulf [[NK]], [[HI]] : f32
// CHECK-NEXT: [[R:%.*]] = arith.addf [[KHI]], [[X]] : f32
// CHECK-NEXT: [[LO:%.*]] = arith.constant -2.12194442E-4 : f32
// CHECK-NEXT: [[KLO:%.*]] = arith.mulf [[NK]], [[LO]] : f32
// CHECK-NEXT: arith.addf [[KLO]], [[R]] : f32
// CHECK-NOT: math.fma
// CHECK: return
module attributes {irkit.target = {fma = false, llc_bytes = 1048576 : i64, name = "x86-64", vector_bits = 128 : i64, vector_registers = 16 : i64}} {
  func.func @exp_scalar(%x: f32) -> f32 {
    %r = math.exp %x : f32
    return %r : f32
  }

// log's big part, k ln2_hi + f, as a product and a sum; the small part carries k ln2_lo.
// CHECK-LABEL: func.func @log_vector
// CHECK-NOT: math.fma
// CHECK: arith.constant dense<-2.12194442E-4> : vector<4xf32>
// CHECK: [[HI:%.*]] = arith.constant dense<0.693359375> : vector<4xf32>
// CHECK-NEXT: [[KHI:%.*]] = arith.mulf [[K:%.*]], [[HI]] : vector<4xf32>
// CHECK-NEXT: [[BIG:%.*]] = arith.addf [[KHI]], [[F:%.*]] : vector<4xf32>
// CHECK-NEXT: arith.addf [[BIG]], {{.*}} : vector<4xf32>
// CHECK-NOT: math.fma
// CHECK: return
  func.func @log_vector(%x: vector<4xf32>) -> vector<4xf32> {
    %r = math.log %x : vector<4xf32>
    return %r : vector<4xf32>
  }
}
