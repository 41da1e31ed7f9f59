// RUN: irkit-opt %s | irkit-opt | FileCheck %s

// The mpi dialect's ops round-trip in their custom form.

// CHECK-LABEL: func.func @collectives
// CHECK: mpi.allreduce %[[G:.*]], %[[G]] : memref<64x128xf32>, memref<64x128xf32>
// CHECK: mpi.allgather %[[X:.*]], %[[ALL:.*]] : memref<?x10xf32>, memref<?x10xf32>
// CHECK: %[[R:.*]] = mpi.comm_rank : index
// CHECK: return %[[R]] : index
func.func @collectives(%g: memref<64x128xf32>, %x: memref<?x10xf32>,
                       %all: memref<?x10xf32>) -> index {
  mpi.allreduce %g, %g : memref<64x128xf32>, memref<64x128xf32>
  mpi.allgather %x, %all : memref<?x10xf32>, memref<?x10xf32>
  %r = mpi.comm_rank : index
  return %r : index
}

// CHECK-LABEL: func.func @blocks
// CHECK: mpi.reduce_scatter %[[A:.*]], %[[MINE:.*]] : memref<8x10xf32>, memref<4x10xf32>
// CHECK: mpi.alltoall %[[A]], %[[B:.*]] : memref<8x10xf32>, memref<8x10xf32>
// CHECK: mpi.bcast %[[MINE]] {root = 1 : i64} : memref<4x10xf32>
func.func @blocks(%a: memref<8x10xf32>, %b: memref<8x10xf32>, %mine: memref<4x10xf32>) {
  mpi.reduce_scatter %a, %mine : memref<8x10xf32>, memref<4x10xf32>
  mpi.alltoall %a, %b : memref<8x10xf32>, memref<8x10xf32>
  mpi.bcast %mine {root = 1 : i64} : memref<4x10xf32>
  return
}

// CHECK-LABEL: func.func @point_to_point
// CHECK: mpi.send %[[H:.*]], %[[P:.*]] : memref<?x128xf32>
// CHECK: %[[N:.*]] = mpi.probe %[[P]] : index
// CHECK: mpi.recv %[[H]], %[[P]] : memref<?x128xf32>
// CHECK: return %[[N]] : index
func.func @point_to_point(%h: memref<?x128xf32>, %peer: index) -> index {
  mpi.send %h, %peer : memref<?x128xf32>
  %n = mpi.probe %peer : index
  mpi.recv %h, %peer : memref<?x128xf32>
  return %n : index
}
