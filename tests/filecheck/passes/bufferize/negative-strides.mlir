// RUN: irkit-opt %s -p bufferize | FileCheck %s

// A slice with a negative stride (Python's x[::-2]) walks its window backwards. A memory view
// has no negative stride, so the window is viewed in increasing order (offset start - (n-1)k,
// stride k) and the copy out of it or into it reverses that axis: a linalg.generic over the
// destination whose body loads the element counted from the end (linalg.index).

// Columns 5, 3, 1 of x: the view starts at column 1 with stride 2; element j of the result
// is element 2 - j of the view.
// CHECK-LABEL: func.func @reverse(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x6xf32>, %[[OUT:[^:]*]]: memref<?x3xf32> {graph.output = 0 : i64})
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK:         %[[V:.*]] = memory.subview %[[X]][0, 1] [%{{.*}}, 3] [1, 2] : memref<?x6xf32> to memref<?x3xf32, strided<[6, 2], offset: 1>>
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[OUT]] : memref<?x3xf32>)
// CHECK-NEXT:    ^bb0(%{{.*}}: f32):
// CHECK-NEXT:      %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[K:.*]] = arith.subi %[[TWO]], %[[J]] : index
// CHECK-NEXT:      %[[E:.*]] = memory.load %[[V]][%[[I]], %[[K]]]
// CHECK-NEXT:      linalg.yield %[[E]] : f32
// CHECK-NOT:     memory.copy
// CHECK:         return
func.func @reverse(%x: tensor<?x6xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6xf32>
  %s = tensor.extract_slice %x[0, 5] [%n, 3] [1, -2] : tensor<?x6xf32> to tensor<?x3xf32>
  return %s : tensor<?x3xf32>
}

// Dropping a unit axis too: row 2, columns 5, 3, 1 as a vector.
// CHECK-LABEL: func.func @row(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x6xf32>, %[[OUT:[^:]*]]: memref<3xf32> {graph.output = 0 : i64})
// CHECK:         %[[V:.*]] = memory.subview %[[X]][2, 1] [1, 3] [1, 2]
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[OUT]] : memref<3xf32>)
// CHECK:           %[[J:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[K:.*]] = arith.subi %{{.*}}, %[[J]] : index
// CHECK-NEXT:      memory.load %[[V]][%{{.*}}, %[[K]]]
func.func @row(%x: tensor<?x6xf32>) -> tensor<3xf32> {
  %s = tensor.extract_slice %x[2, 5] [1, 3] [1, -2] : tensor<?x6xf32> to tensor<3xf32>
  return %s : tensor<3xf32>
}

// Inserting: x is copied into the output, then the window (columns 1, 3, 5 in increasing
// order) receives v's columns reversed.
// CHECK-LABEL: func.func @put(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x6xf32>, %[[VAL:[^:]*]]: memref<?x3xf32>, %[[OUT:[^:]*]]: memref<?x6xf32> {graph.output = 0 : i64})
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK:         memory.copy %[[X]], %[[OUT]]
// CHECK-NEXT:    %[[W:.*]] = memory.subview %[[OUT]][0, 1] [%{{.*}}, 3] [1, 2]
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[W]] : memref<?x3xf32, strided<[6, 2], offset: 1>>)
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[K:.*]] = arith.subi %[[TWO]], %[[J]] : index
// CHECK-NEXT:      memory.load %[[VAL]][%[[I]], %[[K]]] : memref<?x3xf32>
func.func @put(%x: tensor<?x6xf32>, %v: tensor<?x3xf32>) -> tensor<?x6xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6xf32>
  %r = tensor.insert_slice %v into %x[0, 5] [%n, 3] [1, -2] : tensor<?x3xf32> into tensor<?x6xf32>
  return %r : tensor<?x6xf32>
}
