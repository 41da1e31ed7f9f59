// RUN: irkit-opt %s -p canonicalize,cse | FileCheck %s

// A linalg op on tensors only computes its results: unused, it is erased. On memrefs it
// writes its outputs, and stays.

// CHECK-LABEL: func.func @dead_on_tensors
// CHECK-NOT:     linalg.
// CHECK:         return %arg0
func.func @dead_on_tensors(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// CHECK-LABEL: func.func @kept_on_memrefs
// CHECK:         linalg.add
func.func @kept_on_memrefs(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {
  linalg.add ins(%a, %b : memref<4xf32>, memref<4xf32>) outs(%c : memref<4xf32>)
  return
}
