// Buffers and tensors: layouts, memory spaces, views, reshapes, dynamic sizes.
#map = affine_map<(d0, d1)[s0] -> (d0 * 16 + d1 + s0)>
func.func @buffers(%n: index, %v: f32, %dyn: memref<?x?xf32, strided<[?, 1], offset: ?>>)
    -> memref<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  %b = memref.alloc(%n) : memref<?x16xf32>
  %s = memref.alloca() : memref<f32>
  %g = memref.alloc() : memref<8x8xf16, 3>
  memref.store %v, %a[%c0, %c1] : memref<4x8xf32>
  %x = memref.load %a[%c1, %c0] : memref<4x8xf32>
  memref.store %x, %s[] : memref<f32>
  %sub = memref.subview %a[0, 2] [4, 4] [1, 1]
      : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 2>>
  %cast = memref.cast %b : memref<?x16xf32> to memref<?x?xf32>
  %dim = memref.dim %cast, %c1 : memref<?x?xf32>
  %r = memref.reinterpret_cast %a to offset: [0], sizes: [32], strides: [1]
      : memref<4x8xf32> to memref<32xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %exp = memref.expand_shape %flat [[0, 1]] output_shape [8, 4]
      : memref<32xf32> into memref<8x4xf32>
  %u = memref.cast %a : memref<4x8xf32> to memref<*xf32>
  %m = memref.alloc(%n)[%c1] : memref<4x?xf32, #map>
  memref.copy %r, %flat : memref<32xf32> to memref<32xf32>
  memref.dealloc %b : memref<?x16xf32>
  memref.dealloc %g : memref<8x8xf16, 3>
  return %a : memref<4x8xf32>
}

memref.global "private" constant @table : memref<4xi32> = dense<[1, 2, 3, 4]>
memref.global @zeros : memref<2x2xf32> = uninitialized

func.func @globals() -> i32 {
  %c2 = arith.constant 2 : index
  %t = memref.get_global @table : memref<4xi32>
  %x = memref.load %t[%c2] : memref<4xi32>
  return %x : i32
}

func.func @tensors(%t: tensor<?x784xf32>, %i: index, %f: f32) -> tensor<?x784xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty(%i) : tensor<?x10xf32>
  %x = tensor.extract %t[%c0, %i] : tensor<?x784xf32>
  %y = tensor.insert %f into %t[%c0, %c0] : tensor<?x784xf32>
  %d = tensor.dim %y, %c0 : tensor<?x784xf32>
  %s = tensor.extract_slice %y[0, 0] [%d, 392] [1, 2]
      : tensor<?x784xf32> to tensor<?x392xf32>
  %ins = tensor.insert_slice %s into %y[0, 0] [%d, 392] [1, 1]
      : tensor<?x392xf32> into tensor<?x784xf32>
  %col = tensor.collapse_shape %ins [[0, 1]] : tensor<?x784xf32> into tensor<?xf32>
  %exp = tensor.expand_shape %col [[0, 1]] output_shape [%d, 784]
      : tensor<?xf32> into tensor<?x784xf32>
  %cast = tensor.cast %exp : tensor<?x784xf32> to tensor<*xf32>
  %fe = tensor.from_elements %f, %x : tensor<2xf32>
  %gen = tensor.generate %i {
  ^bb0(%a: index, %b: index):
    %v = arith.index_cast %a : index to i32
    %w = arith.sitofp %v : i32 to f32
    tensor.yield %w : f32
  } : tensor<?x3xf32>
  %pad = tensor.pad %fe low[1] high[%i] {
  ^bb0(%p: index):
    tensor.yield %f : f32
  } : tensor<2xf32> to tensor<?xf32>
  %sp = tensor.splat %f : tensor<4x4xf32>
  %b = bufferization.to_buffer %sp : tensor<4x4xf32> to memref<4x4xf32>
  return %exp : tensor<?x784xf32>
}
