// RUN: irkit-opt %s -p bufferize | FileCheck %s

// Views: slices are subviews, reshapes views of raw bytes, casts the same buffer; a view
// keeps its source alive, and a source is not overwritten while a view of it is read.

// A slice is a subview of its source's buffer, which is freed only after the slice's last
// reader.
// CHECK-LABEL: func.func @slice(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x3xf32>, %[[OUT:[^:]*]]: memref<2x3xf32> {graph.output = 0 : i64})
// CHECK:         %[[A:.*]] = memory.alloc(%{{.*}}) : memref<?x3xf32>
// CHECK-NEXT:    linalg.map { math.exp } ins(%[[X]] : memref<?x3xf32>) outs(%[[A]] : memref<?x3xf32>)
// CHECK-NEXT:    %[[S:.*]] = memory.subview %[[A]][1, 0] [2, 3] [1, 1] : memref<?x3xf32> to memref<2x3xf32, strided<[3, 1], offset: 3>>
// CHECK-NEXT:    linalg.map { math.sqrt } ins(%[[S]] : memref<2x3xf32, strided<[3, 1], offset: 3>>) outs(%[[OUT]] : memref<2x3xf32>)
// CHECK-NEXT:    memory.dealloc %[[A]] : memref<?x3xf32>
// CHECK-NOT:     memory.copy
func.func @slice(%x: tensor<?x3xf32>) -> tensor<2x3xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %a = linalg.map { math.exp } ins(%x : tensor<?x3xf32>) outs(%e : tensor<?x3xf32>)
  %s = tensor.extract_slice %a[1, 0] [2, 3] [1, 1] : tensor<?x3xf32> to tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %r = linalg.map { math.sqrt } ins(%s : tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>)
  return %r : tensor<2x3xf32>
}

// The slice is read after the op that could have updated %a in place: %a's buffer is left
// alone, and the update goes to its own buffer (its output here).
// CHECK-LABEL: func.func @slice_outlives_update(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4x3xf32>, %[[B:[^:]*]]: memref<4x3xf32> {graph.output = 0 : i64}, %[[R:[^:]*]]: memref<2x3xf32> {graph.output = 1 : i64})
// CHECK:         %[[A:.*]] = memory.alloc() : memref<4x3xf32>
// CHECK:         %[[S:.*]] = memory.subview %[[A]]
// CHECK-NEXT:    linalg.map { arith.addf } ins(%[[X]], %[[X]] : memref<4x3xf32>, memref<4x3xf32>) outs(%[[B]] : memref<4x3xf32>)
// CHECK-NEXT:    linalg.map { math.sqrt } ins(%[[S]] : {{.*}}) outs(%[[R]] : memref<2x3xf32>)
// CHECK-NEXT:    memory.dealloc %[[A]]
func.func @slice_outlives_update(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>) {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.map { math.exp } ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>)
  %s = tensor.extract_slice %a[1, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
  %b = linalg.map { arith.addf } ins(%x, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%a : tensor<4x3xf32>)
  %e2 = tensor.empty() : tensor<2x3xf32>
  %r = linalg.map { math.sqrt } ins(%s : tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>)
  return %b, %r : tensor<4x3xf32>, tensor<2x3xf32>
}

// A slice that drops a unit dimension cannot be a subview (memory.subview keeps the rank):
// the window is copied by a generic whose map puts 0 on the dropped dimension.
// CHECK-LABEL: func.func @row(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4x3xf32>, %[[I:[^:]*]]: index, %[[OUT:[^:]*]]: memref<3xf32> {graph.output = 0 : i64})
// CHECK:         %[[W:.*]] = memory.subview %[[X]][%[[I]], 0] [1, 3] [1, 1] : memref<4x3xf32> to memref<1x3xf32, strided<[3, 1], offset: ?>>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (0, d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK-SAME:        ins(%[[W]] : memref<1x3xf32, strided<[3, 1], offset: ?>>) outs(%[[OUT]] : memref<3xf32>)
func.func @row(%x: tensor<4x3xf32>, %i: index) -> tensor<3xf32> {
  %s = tensor.extract_slice %x[%i, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
  return %s : tensor<3xf32>
}

// insert_slice copies the source into a subview of the destination: in place into a fresh
// buffer nothing reads afterwards, else into a copy (an argument: into the output).
// CHECK-LABEL: func.func @insert(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4x3xf32>, %[[Y:[^:]*]]: memref<2x3xf32>, %[[C:[^:]*]]: memref<4x3xf32> {graph.output = 0 : i64}, %[[D:[^:]*]]: memref<4x3xf32> {graph.output = 1 : i64})
// CHECK:         %[[A:.*]] = memory.alloc() : memref<4x3xf32>
// CHECK-NEXT:    linalg.map { math.exp } ins(%[[X]] : memref<4x3xf32>) outs(%[[A]] : memref<4x3xf32>)
// CHECK-NEXT:    %[[W:.*]] = memory.subview %[[A]][1, 0] [2, 3] [1, 1]
// CHECK-NEXT:    memory.copy %[[Y]], %[[W]]
// CHECK-NEXT:    linalg.map { math.sqrt } ins(%[[A]] : memref<4x3xf32>) outs(%[[C]] : memref<4x3xf32>)
// CHECK-NEXT:    memory.dealloc %[[A]]
// CHECK-NEXT:    memory.copy %[[X]], %[[D]] : memref<4x3xf32> to memref<4x3xf32>
// CHECK-NEXT:    %[[W2:.*]] = memory.subview %[[D]][0, 0] [2, 3] [1, 1]
// CHECK-NEXT:    memory.copy %[[Y]], %[[W2]]
func.func @insert(%x: tensor<4x3xf32>, %y: tensor<2x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.map { math.exp } ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>)
  %b = tensor.insert_slice %y into %a[1, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x3xf32>
  %c = linalg.map { math.sqrt } ins(%b : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>)
  %d = tensor.insert_slice %y into %x[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x3xf32>
  return %c, %d : tensor<4x3xf32>, tensor<4x3xf32>
}

// concat: each input copied into its subview of one destination (here the output, of size
// n + 2); pad: the destination filled with the padding value, the source copied into its
// interior.
// CHECK-LABEL: func.func @concat_pad(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x3xf32>, %[[Y:[^:]*]]: memref<2x3xf32>, %[[V:[^:]*]]: f32, %[[CAT:[^:]*]]: memref<?x3xf32> {graph.output = 0 : i64}, %[[P:[^:]*]]: memref<?x5xf32> {graph.output = 1 : i64})
// CHECK-NOT:     memory.alloc
// CHECK:         %[[N:.*]] = memory.dim %[[X]], 0 : memref<?x3xf32>
// CHECK:         %[[W1:.*]] = memory.subview %[[CAT]][0, 0] [%[[N]], 3] [1, 1]
// CHECK-NEXT:    memory.copy %[[X]], %[[W1]]
// CHECK-NEXT:    %[[W2:.*]] = memory.subview %[[CAT]][%[[N]], 0] [2, 3] [1, 1]
// CHECK-NEXT:    memory.copy %[[Y]], %[[W2]]
// CHECK:         linalg.fill ins(%[[V]] : f32) outs(%[[P]] : memref<?x5xf32>)
// CHECK-NEXT:    %[[W3:.*]] = memory.subview %[[P]][1, 0] [%[[N]], 3] [1, 1] : memref<?x5xf32> to memref<?x3xf32, strided<[5, 1], offset: 5>>
// CHECK-NEXT:    memory.copy %[[X]], %[[W3]]
func.func @concat_pad(%x: tensor<?x3xf32>, %y: tensor<2x3xf32>, %v: f32)
    -> (tensor<?x3xf32>, tensor<?x5xf32>) {
  %cat = tensor.concat dim(0) %x, %y : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  %p = tensor.pad %x low[1, 0] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<?x3xf32> to tensor<?x5xf32>
  return %cat, %p : tensor<?x3xf32>, tensor<?x5xf32>
}

// A fresh value that is reshaped is allocated as bytes with a typed view, and the reshape
// is one more view of the same bytes. An argument is not bytes: it is copied into fresh
// bytes first (the view of which is copied into the output at the return).
// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x6xf32>, %[[C:[^:]*]]: memref<?x2x3xf32> {graph.output = 0 : i64}, %[[D:[^:]*]]: memref<?xf32> {graph.output = 1 : i64})
// CHECK:         %[[N:.*]] = memory.dim %[[X]], 0
// CHECK:         %[[RAW:.*]] = memory.alloc(%{{.*}}) : memref<?xi8>
// CHECK-NEXT:    %[[A:.*]] = memory.view %[[RAW]][%{{.*}}][%[[N]]] : memref<?xi8> to memref<?x6xf32>
// CHECK-NEXT:    linalg.map { math.exp } ins(%[[X]] : memref<?x6xf32>) outs(%[[A]] : memref<?x6xf32>)
// CHECK-NEXT:    %[[B:.*]] = memory.view %[[RAW]][%{{.*}}][%[[N]]] : memref<?xi8> to memref<?x2x3xf32>
// CHECK-NEXT:    linalg.map { math.sqrt } ins(%[[B]] : memref<?x2x3xf32>) outs(%[[C]] : memref<?x2x3xf32>)
// CHECK-NEXT:    memory.dealloc %[[RAW]] : memref<?xi8>
// CHECK:         %[[RAW2:.*]] = memory.alloc(%{{.*}}) : memref<?xi8>
// CHECK-NEXT:    %[[XB:.*]] = memory.view %[[RAW2]]
// CHECK-NEXT:    memory.copy %[[X]], %[[XB]] : memref<?x6xf32> to memref<?x6xf32>
// CHECK-NEXT:    %[[FLAT:.*]] = memory.view %[[RAW2]][%{{.*}}][%{{.*}}] : memref<?xi8> to memref<?xf32>
// CHECK-NEXT:    memory.copy %[[FLAT]], %[[D]] : memref<?xf32> to memref<?xf32>
// CHECK-NEXT:    memory.dealloc %[[RAW2]] : memref<?xi8>
func.func @reshape(%x: tensor<?x6xf32>) -> (tensor<?x2x3xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6xf32>
  %e = tensor.empty(%n) : tensor<?x6xf32>
  %a = linalg.map { math.exp } ins(%x : tensor<?x6xf32>) outs(%e : tensor<?x6xf32>)
  %b = tensor.expand_shape %a [[0], [1, 2]] output_shape [%n, 2, 3] : tensor<?x6xf32> into tensor<?x2x3xf32>
  %e3 = tensor.empty(%n) : tensor<?x2x3xf32>
  %c = linalg.map { math.sqrt } ins(%b : tensor<?x2x3xf32>) outs(%e3 : tensor<?x2x3xf32>)
  %d = tensor.collapse_shape %x [[0, 1]] : tensor<?x6xf32> into tensor<?xf32>
  return %c, %d : tensor<?x2x3xf32>, tensor<?xf32>
}

// A cast to a more static shape: a subview of the whole buffer with that shape.
// CHECK-LABEL: func.func @cast(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x3xf32>
// CHECK:         %[[T:.*]] = memory.subview %[[X]][0, 0] [4, 3] [1, 1] : memref<?x3xf32> to memref<4x3xf32, strided<[3, 1]>>
// CHECK-NEXT:    linalg.map { math.exp } ins(%[[T]] : memref<4x3xf32, strided<[3, 1]>>)
func.func @cast(%x: tensor<?x3xf32>) -> tensor<4x3xf32> {
  %t = tensor.cast %x : tensor<?x3xf32> to tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.map { math.exp } ins(%t : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>)
  return %r : tensor<4x3xf32>
}

// The tiling pattern: a window sliced out of %acc, updated, and inserted back at the same
// place, with nothing reading %acc in between. An update that reads its init (the generic)
// is computed straight into the window, and the insert copies nothing; one that also reads
// the window as an input (the map) is computed apart and copied in.
// CHECK-LABEL: func.func @taps(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4x2xf32>, %[[Y:[^:]*]]: memref<4x2xf32>, %[[OUT:[^:]*]]: memref<4x6xf32> {graph.output = 0 : i64})
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<4x6xf32>)
// CHECK-NEXT:    %[[S:.*]] = memory.subview %[[OUT]][0, 1] [4, 2] [1, 2]
// CHECK-NEXT:    %[[S2:.*]] = memory.alloc() : memref<4x2xf32>
// CHECK-NEXT:    linalg.map { arith.addf } ins(%[[X]], %[[S]] : {{.*}}) outs(%[[S2]] : memref<4x2xf32>)
// CHECK-NEXT:    %[[W:.*]] = memory.subview %[[OUT]][0, 1] [4, 2] [1, 2]
// CHECK-NEXT:    memory.copy %[[S2]], %[[W]]
// CHECK-NEXT:    memory.dealloc %[[S2]]
// CHECK-NEXT:    %[[T:.*]] = memory.subview %[[OUT]][0, 0] [4, 2] [1, 2]
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[Y]] : memref<4x2xf32>) outs(%[[T]] : memref<4x2xf32, strided<[6, 2]>>)
// CHECK:         }
// CHECK-NEXT:    return
func.func @taps(%x: tensor<4x2xf32>, %y: tensor<4x2xf32>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = tensor.extract_slice %acc[0, 1] [4, 2] [1, 2] : tensor<4x6xf32> to tensor<4x2xf32>
  %s2 = linalg.map { arith.addf } ins(%x, %s : tensor<4x2xf32>, tensor<4x2xf32>) outs(%s : tensor<4x2xf32>)
  %acc2 = tensor.insert_slice %s2 into %acc[0, 1] [4, 2] [1, 2] : tensor<4x2xf32> into tensor<4x6xf32>
  %t = tensor.extract_slice %acc2[0, 0] [4, 2] [1, 2] : tensor<4x6xf32> to tensor<4x2xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x2xf32>) outs(%t : tensor<4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.addf %o, %a : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %acc3 = tensor.insert_slice %t2 into %acc2[0, 0] [4, 2] [1, 2] : tensor<4x2xf32> into tensor<4x6xf32>
  return %acc3 : tensor<4x6xf32>
}

// %acc is read after the insert (returned): the window of its buffer is left alone, the
// update goes to a fresh buffer (after a copy of the window: the body reads it) and the
// insert writes a copy of %acc.
// CHECK-LABEL: func.func @window_read_later(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4x2xf32>, %[[NEW:[^:]*]]: memref<4x6xf32> {graph.output = 0 : i64}, %[[ACC:[^:]*]]: memref<4x6xf32> {graph.output = 1 : i64})
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[ACC]] : memref<4x6xf32>)
// CHECK-NEXT:    %[[S:.*]] = memory.subview %[[ACC]][0, 1] [4, 2] [1, 2]
// CHECK-NEXT:    %[[S2:.*]] = memory.alloc() : memref<4x2xf32>
// CHECK-NEXT:    memory.copy %[[S]], %[[S2]]
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[X]] : memref<4x2xf32>) outs(%[[S2]] : memref<4x2xf32>)
// CHECK:         memory.copy %[[ACC]], %[[NEW]]
// CHECK-NEXT:    %[[W:.*]] = memory.subview %[[NEW]][0, 1] [4, 2] [1, 2]
// CHECK-NEXT:    memory.copy %[[S2]], %[[W]]
func.func @window_read_later(%x: tensor<4x2xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %zero = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = tensor.extract_slice %acc[0, 1] [4, 2] [1, 2] : tensor<4x6xf32> to tensor<4x2xf32>
  %s2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x2xf32>) outs(%s : tensor<4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.addf %o, %a : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %acc2 = tensor.insert_slice %s2 into %acc[0, 1] [4, 2] [1, 2] : tensor<4x2xf32> into tensor<4x6xf32>
  return %acc2, %acc : tensor<4x6xf32>, tensor<4x6xf32>
}
