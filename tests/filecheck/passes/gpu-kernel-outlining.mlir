// RUN: irkit-opt %s -p gpu-kernel-outlining | FileCheck %s

// Each launch body becomes a kernel of the module's `gpu.module @kernels`: what it used from
// above becomes its arguments, in first-use order, except constants, which are cloned in;
// the ids it used become id ops; the launch becomes a gpu.launch_func with the same sizes.

// CHECK-LABEL: module attributes {gpu.container_module} {
// CHECK-LABEL: func.func @f(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?xf32>, %[[N:[^:]*]]: index)
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[C4:.*]] = arith.constant 4 : index
// CHECK:         gpu.launch_func @kernels::@f_kernel_0 blocks in (%[[N]], %[[C1]], %[[C1]]) threads in (%[[C4]], %[[C1]], %[[C1]]) args(%[[N]] : index, %[[A]] : memref<?xf32>)
// CHECK-NEXT:    gpu.launch_func @kernels::@f_kernel_1 blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C1]], %[[C1]], %[[C1]]) args(%[[A]] : memref<?xf32>)
// CHECK-NOT:     gpu.launch blocks
// CHECK:         return
// CHECK:       gpu.module @kernels {
// CHECK-NEXT:    gpu.func @f_kernel_0(%[[KN:.*]]: index, %[[KA:.*]]: memref<?xf32>) workgroup(%[[W:.*]] : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
// CHECK-NEXT:      %[[BX:.*]] = gpu.block_id x
// CHECK-NEXT:      %[[TX:.*]] = gpu.thread_id x
// CHECK-NEXT:      %[[SX:.*]] = gpu.block_dim x
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.muli %[[BX]], %[[SX]] : index
// CHECK-NEXT:      %[[I:.*]] = arith.addi %[[M]], %[[TX]] : index
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[KN]] : index
// CHECK-NEXT:      loop.if %[[IN]] {
// CHECK-NEXT:        %[[X:.*]] = memory.load %[[KA]][%[[I]]]
// CHECK-NEXT:        %[[Y:.*]] = arith.mulf %[[X]], %[[TWO]] : f32
// CHECK-NEXT:        memory.store %[[Y]], %[[W]][%[[TX]]]
// CHECK-NEXT:        gpu.barrier
// CHECK-NEXT:        memory.store %[[Y]], %[[KA]][%[[I]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.return
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.func @f_kernel_1(%{{.*}}: memref<?xf32>) kernel {
module {
  func.func @f(%a: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %two = arith.constant 2.0 : f32
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1)
               workgroup(%w : memref<4xf32, #gpu.address_space<workgroup>>) {
      %m = arith.muli %bx, %sx : index
      %i = arith.addi %m, %tx : index
      %in = arith.cmpi ult, %i, %n : index
      loop.if %in {
        %x = memory.load %a[%i] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memory.store %y, %w[%tx] : memref<4xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        memory.store %y, %a[%i] : memref<?xf32>
      }
      gpu.terminator
    }
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      memory.store %two, %a[%c0] : memref<?xf32>
      gpu.terminator
    }
    return
  }
}
