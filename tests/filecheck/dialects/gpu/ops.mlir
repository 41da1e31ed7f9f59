// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The gpu dialect in custom form (MLIR's syntax) and in generic form (MLIR 22's: the operand
// segments of launch and launch_func, `sym_name` and `gpu.kernel` as gpu.func attributes).

// CHECK-LABEL: module attributes {gpu.container_module}
module attributes {gpu.container_module} {
  // CHECK-LABEL: func.func @host(
  // CHECK-SAME:      %[[A:.*]]: memref<?xf32>, %[[N:.*]]: index)
  func.func @host(%a: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %bytes = arith.constant 16 : i32
    // CHECK:      gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[N]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) workgroup(%[[W:.*]] : memref<4xf32, #gpu.address_space<workgroup>>) private(%[[P:.*]] : memref<2xf32, #gpu.address_space<private>>) {
    // CHECK-NEXT:   %{{.*}} = gpu.thread_id x
    // CHECK-NEXT:   %{{.*}} = gpu.block_dim y
    // CHECK-NEXT:   gpu.barrier
    // CHECK-NEXT:   %{{.*}} = arith.addi %[[BX]], %[[TX]] : index
    // CHECK-NEXT:   gpu.terminator
    // CHECK-NEXT: }
    // GENERIC:    "gpu.launch"(%{{.*}}) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
    // GENERIC:    }) {workgroup_attributions = 1 : i64} : (index, index, index, index, index, index) -> ()
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1)
               workgroup(%w : memref<4xf32, #gpu.address_space<workgroup>>)
               private(%p : memref<2xf32, #gpu.address_space<private>>) {
      %t = gpu.thread_id x
      %b = gpu.block_dim y
      gpu.barrier
      %i = arith.addi %bx, %tx : index
      gpu.terminator
    }
    // CHECK:      gpu.launch_func @kernels::@k blocks in (%[[N]], %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args(%[[A]] : memref<?xf32>, %[[N]] : index)
    // GENERIC:    "gpu.launch_func"(%{{.*}}) <{kernel = @kernels::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 2, 0>}>
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c4, %c1, %c1)
        dynamic_shared_memory_size %bytes args(%a : memref<?xf32>, %n : index)
    // CHECK:      %[[D:.*]] = gpu.alloc (%[[N]]) : memref<?xf32>
    // CHECK-NEXT: gpu.memcpy %[[D]], %[[A]] : memref<?xf32>, memref<?xf32>
    // CHECK-NEXT: gpu.dealloc %[[D]] : memref<?xf32>
    // GENERIC:    "gpu.alloc"(%{{.*}}) <{operandSegmentSizes = array<i32: 0, 1, 0>}> : (index) -> memref<?xf32>
    %d = gpu.alloc (%n) : memref<?xf32>
    gpu.memcpy %d, %a : memref<?xf32>, memref<?xf32>
    gpu.dealloc %d : memref<?xf32>
    return
  }
  // CHECK-LABEL: gpu.module @kernels {
  // GENERIC:     "gpu.module"() <{sym_name = "kernels"}> ({
  gpu.module @kernels {
    // CHECK:      gpu.func @k(%{{.*}}: memref<?xf32>, %{{.*}}: index) workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>) kernel {
    // CHECK-NEXT:   %{{.*}} = gpu.block_id z
    // CHECK-NEXT:   %{{.*}} = gpu.grid_dim x
    // CHECK-NEXT:   %{{.*}} = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    // CHECK-NEXT:   gpu.return
    // GENERIC:    "gpu.block_id"() <{dimension = #gpu<dim z>}> : () -> index
    // GENERIC:    }) {gpu.kernel, sym_name = "k", workgroup_attributions = 1 : i64} : () -> ()
    gpu.func @k(%a: memref<?xf32>, %n: index)
        workgroup(%w : memref<32xf32, #gpu.address_space<workgroup>>) kernel {
      %b = gpu.block_id z
      %g = gpu.grid_dim x
      %s = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      gpu.return
    }
    // A device function (not a kernel) with a result.
    // CHECK:      gpu.func @twice(%[[X:.*]]: f32) -> f32 {
    // CHECK-NEXT:   %[[Y:.*]] = arith.addf %[[X]], %[[X]] : f32
    // CHECK-NEXT:   gpu.return %[[Y]] : f32
    // GENERIC:    }) {sym_name = "twice", workgroup_attributions = 0 : i64} : () -> ()
    gpu.func @twice(%x: f32) -> f32 {
      %y = arith.addf %x, %x : f32
      gpu.return %y : f32
    }
  }
}
