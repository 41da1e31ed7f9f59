// linalg on tensors and buffers: generic ops with affine maps and iterator types, named ops,
// reductions; a small MLP layer (matmul + bias + relu) as a model would lower to it.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#red = affine_map<(d0, d1) -> (d0)>
func.func @mlp_layer(%x: tensor<?x784xf32>, %w: tensor<784x10xf32>, %b: tensor<10xf32>)
    -> tensor<?x10xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x784xf32>
  %init = tensor.empty(%n) : tensor<?x10xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<?x10xf32>) -> tensor<?x10xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x784xf32>, tensor<784x10xf32>)
                      outs(%fill : tensor<?x10xf32>) -> tensor<?x10xf32>
  %act = linalg.generic {indexing_maps = [#id, #row, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<?x10xf32>, tensor<10xf32>) outs(%init : tensor<?x10xf32>)
      attrs = {test.tag = "bias_relu"} {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x10xf32>
  return %act : tensor<?x10xf32>
}

func.func @row_sum(%m: memref<?x?xf64>, %out: memref<?xf64>) {
  linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%m : memref<?x?xf64>) outs(%out : memref<?xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %s = arith.addf %a, %acc : f64
    linalg.yield %s : f64
  }
  return
}

func.func @named(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>,
                 %img: tensor<1x3x32x32xf32>, %k: tensor<8x3x3x3xf32>,
                 %o: tensor<1x8x30x30xf32>) -> (tensor<4x4xf32>, tensor<1x8x30x30xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>)
                     outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
      ins(%img, %k : tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>)
      outs(%o : tensor<1x8x30x30xf32>) -> tensor<1x8x30x30xf32>
  %t = tensor.empty() : tensor<8x4xf32>
  %2 = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%t : tensor<8x4xf32>) permutation = [1, 0]
  %3 = linalg.add ins(%0, %0 : tensor<4x4xf32>, tensor<4x4xf32>)
                  outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %3, %1 : tensor<4x4xf32>, tensor<1x8x30x30xf32>
}

func.func @affine_loops(%m: memref<16x16xf32>, %n: index) {
  affine.for %i = 0 to 16 {
    affine.for %j = #red(%i, %i) to min affine_map<(d0)[s0] -> (16, d0 + s0)>(%i)[%n] step 2 {
      %v = affine.load %m[%i, %j] : memref<16x16xf32>
      %w = arith.mulf %v, %v : f32
      affine.store %w, %m[%j, %i] : memref<16x16xf32>
    }
    affine.if affine_set<(d0) : (d0 - 4 >= 0, -d0 + 8 == 0)>(%i) {
      %z = affine.apply affine_map<(d0) -> (d0 floordiv 2 + d0 mod 3 - d0 ceildiv 4)>(%i)
    }
  }
  return
}
