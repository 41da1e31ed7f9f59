// RUN: irkit-opt %s -p 'lower-graph-to-loop{parallel=false max-constant-elements=400}' | FileCheck %s
// RUN: not irkit-opt %s -p lower-graph-to-loop 2>&1 | FileCheck %s --check-prefix=DEFAULT

// The options reach the passes they belong to: parallel=false makes every loop a loop.for,
// those lower-linalg-to-loop emits for the kernels and those bufferize writes itself for
// scatter_add; max-constant-elements is bufferize's (400 distinct elements are stored one
// by one instead of being an error).

// CHECK-LABEL: func.func @f(
// CHECK-NOT:     loop.parallel
// CHECK:         memory.alloc() : memref<2x200xi32>
// CHECK-COUNT-400: memory.store
// CHECK:         loop.for
// CHECK:           loop.for
// CHECK:             math.exp
// CHECK:         loop.for
// CHECK:           memory.check
// CHECK:           loop.if
// CHECK-NEXT:        loop.for
// CHECK-NOT:     loop.parallel
// CHECK:         return

// DEFAULT:       error: cannot bufferize a constant of 400 distinct elements
func.func @f(%x: tensor<2x200xi32>, %d: tensor<?x3xf32>, %i: tensor<?xi64>, %u: tensor<?x3xf32>)
    -> (tensor<2x200xi32>, tensor<?x3xf32>) {
  %c = graph.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199]]> : tensor<2x200xi32>
  %s = graph.add %x, %c : (tensor<2x200xi32>, tensor<2x200xi32>) -> tensor<2x200xi32>
  %e = graph.exp %d : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %r = graph.scatter_add %e, %i, %u : (tensor<?x3xf32>, tensor<?xi64>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %s, %r : tensor<2x200xi32>, tensor<?x3xf32>
}
