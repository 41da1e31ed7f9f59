// RUN: irkit-opt %s -p lower-linalg-to-loop | FileCheck %s
// RUN: irkit-opt %s -p 'lower-linalg-to-loop{parallel=false}' | FileCheck %s --check-prefix=SEQ
// RUN: irkit-opt %s -p lower-linalg-to-loop --verify-each=numeric | FileCheck %s --check-prefix=NONE

// Structured ops on memrefs become loop nests: a `loop.parallel` over the parallel dims,
// `loop.for`s over the reduction dims inside it, loads at the maps' indices, the body
// cloned, stores of what it yields. Index constants are made once per function, at its top.
// No linalg op is left.
// NONE-NOT: linalg.

// An elementwise generic with a broadcast operand: %b is read at d1 only.
// CHECK-LABEL: func.func @broadcast_add(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?x4xf32>, %[[B:[^:]*]]: memref<4xf32>, %[[O:[^:]*]]: memref<?x4xf32>)
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[N:.*]] = memory.dim %[[A]], 0 : memref<?x4xf32>
// CHECK-NEXT:    loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]]) = (%[[C0]], %[[C0]]) to (%[[N]], %[[C4]]) step (%[[C1]], %[[C1]]) {
// CHECK-NEXT:      %[[X:.*]] = memory.load %[[A]][%[[I]], %[[J]]] : memref<?x4xf32>
// CHECK-NEXT:      %[[Y:.*]] = memory.load %[[B]][%[[J]]] : memref<4xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      memory.store %[[S]], %[[O]][%[[I]], %[[J]]] : memref<?x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// SEQ-LABEL:   func.func @broadcast_add(
// SEQ-NOT:       loop.parallel
// SEQ:           loop.for %[[I:[^ ]*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// SEQ-NEXT:        loop.for %[[J:[^ ]*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// SEQ-NEXT:          memory.load %{{.*}}[%[[I]], %[[J]]] : memref<?x4xf32>
// SEQ-NEXT:          memory.load %{{.*}}[%[[J]]] : memref<4xf32>
// SEQ-NEXT:          arith.addf
// SEQ-NEXT:          memory.store
// SEQ-NEXT:        }
// SEQ-NEXT:      }
// SEQ-NEXT:      return
func.func @broadcast_add(%a: memref<?x4xf32>, %b: memref<4xf32>, %o: memref<?x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<?x4xf32>, memref<4xf32>) outs(%o : memref<?x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// A row sum: the output element is loaded once per row, carried through the reduction
// loop as iter_args (a register accumulator) and stored once.
// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME:      %[[A:[^:]*]]: memref<4x8xf32>, %[[O:[^:]*]]: memref<4xf32>)
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         loop.parallel (%[[I:[^)]*]]) = (%[[C0]]) to (%[[C4]]) step (%[[C1]]) {
// CHECK-NEXT:      %[[INIT:.*]] = memory.load %[[O]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %[[SUM:.*]] = loop.for %[[K:[^ ]*]] = %[[C0]] to %[[C8]] step %[[C1]] iter_args(%[[ACC:[^ ]*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[X:.*]] = memory.load %[[A]][%[[I]], %[[K]]] : memref<4x8xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[X]], %[[ACC]] : f32
// CHECK-NEXT:        loop.yield %[[S]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memory.store %[[SUM]], %[[O]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     memory.store
// CHECK:         return
// SEQ-LABEL:   func.func @row_sum(
// SEQ:           loop.for %[[I:[^ ]*]] = {{.*}} {
// SEQ-NEXT:        %[[INIT:.*]] = memory.load %{{.*}}[%[[I]]] : memref<4xf32>
// SEQ-NEXT:        %[[SUM:.*]] = loop.for %{{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (f32) {
// SEQ:             memory.store %[[SUM]], %{{.*}}[%[[I]]] : memref<4xf32>
func.func @row_sum(%a: memref<4x8xf32>, %o: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x8xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A column sum, the reduction dim first in the maps: the parallel dim is still the outer
// loop, the reduction loop runs down the column inside it.
// CHECK-LABEL: func.func @column_sum(
// CHECK-SAME:      %[[A:[^:]*]]: memref<5x3xf32>, %[[O:[^:]*]]: memref<3xf32>)
// CHECK:         loop.parallel (%[[J:[^)]*]]) = (%{{.*}}) to (%[[C3:[^)]*]]) step
// CHECK-NEXT:      %[[INIT:.*]] = memory.load %[[O]][%[[J]]] : memref<3xf32>
// CHECK-NEXT:      %[[SUM:.*]] = loop.for %[[I:[^ ]*]] = %{{.*}} to %[[C5:[^ ]*]] step %{{.*}} iter_args(%[[ACC:[^ ]*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[X:.*]] = memory.load %[[A]][%[[I]], %[[J]]] : memref<5x3xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[X]], %[[ACC]] : f32
// CHECK-NEXT:        loop.yield %[[S]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memory.store %[[SUM]], %[[O]][%[[J]]] : memref<3xf32>
func.func @column_sum(%a: memref<5x3xf32>, %o: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<5x3xf32>) outs(%o : memref<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A named matmul is lowered through its generalization (its own body: C + A * B, in that
// order); sizes of `?` axes are one memory.dim each.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?x8xf32>, %[[B:[^:]*]]: memref<8x?xf32>, %[[C:[^:]*]]: memref<?x?xf32>)
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[M:.*]] = memory.dim %[[A]], 0 : memref<?x8xf32>
// CHECK-NEXT:    %[[N:.*]] = memory.dim %[[B]], 1 : memref<8x?xf32>
// CHECK-NEXT:    loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]]) = (%[[C0]], %[[C0]]) to (%[[M]], %[[N]]) step (%[[C1]], %[[C1]]) {
// CHECK-NEXT:      %[[INIT:.*]] = memory.load %[[C]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT:      %[[DOT:.*]] = loop.for %[[K:[^ ]*]] = %[[C0]] to %[[C8]] step %[[C1]] iter_args(%[[ACC:[^ ]*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[X:.*]] = memory.load %[[A]][%[[I]], %[[K]]] : memref<?x8xf32>
// CHECK-NEXT:        %[[Y:.*]] = memory.load %[[B]][%[[K]], %[[J]]] : memref<8x?xf32>
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT:        loop.yield %[[S]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memory.store %[[DOT]], %[[C]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @matmul(%a: memref<?x8xf32>, %b: memref<8x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x8xf32>, memref<8x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// Two outputs carried together (argmax: the best value and its index); `linalg.index 1`
// is the reduction loop's induction variable.
// CHECK-LABEL: func.func @argmax(
// CHECK-SAME:      %[[A:[^:]*]]: memref<4x6xf32>, %[[V:[^:]*]]: memref<4xf32>, %[[IDX:[^:]*]]: memref<4xi64>)
// CHECK:         loop.parallel (%[[I:[^)]*]]) =
// CHECK-NEXT:      %[[V0:.*]] = memory.load %[[V]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %[[I0:.*]] = memory.load %[[IDX]][%[[I]]] : memref<4xi64>
// CHECK-NEXT:      %[[R:.*]]:2 = loop.for %[[K:[^ ]*]] = {{.*}} iter_args(%[[BEST:[^ ]*]] = %[[V0]], %[[AT:[^ ]*]] = %[[I0]]) -> (f32, i64) {
// CHECK-NEXT:        %[[X:.*]] = memory.load %[[A]][%[[I]], %[[K]]] : memref<4x6xf32>
// CHECK-NEXT:        %[[KI:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT:        %[[GT:.*]] = arith.cmpf ogt, %[[X]], %[[BEST]] : f32
// CHECK-NEXT:        %[[NV:.*]] = arith.select %[[GT]], %[[X]], %[[BEST]] : f32
// CHECK-NEXT:        %[[NI:.*]] = arith.select %[[GT]], %[[KI]], %[[AT]] : i64
// CHECK-NEXT:        loop.yield %[[NV]], %[[NI]] : f32, i64
// CHECK-NEXT:      }
// CHECK-NEXT:      memory.store %[[R]]#0, %[[V]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      memory.store %[[R]]#1, %[[IDX]][%[[I]]] : memref<4xi64>
// CHECK-NEXT:    }
func.func @argmax(%a: memref<4x6xf32>, %v: memref<4xf32>, %i: memref<4xi64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x6xf32>) outs(%v, %i : memref<4xf32>, memref<4xi64>) {
  ^bb0(%x: f32, %best: f32, %at: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %gt = arith.cmpf ogt, %x, %best : f32
    %nv = arith.select %gt, %x, %best : f32
    %ni = arith.select %gt, %ki, %at : i64
    linalg.yield %nv, %ni : f32, i64
  }
  return
}

// `linalg.index` of parallel dims, also inside a region of a body op; an output the body
// does not read is not loaded.
// CHECK-LABEL: func.func @iota(
// CHECK-SAME:      %[[O:[^:]*]]: memref<3x4xi64>)
// CHECK:         loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]]) =
// CHECK-NOT:       memory.load
// CHECK-NEXT:      %[[BIG:.*]] = arith.cmpi sgt, %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[R:.*]] = loop.if %[[BIG]] -> (i64) {
// CHECK-NEXT:        %[[JI:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:        loop.yield %[[JI]] : i64
// CHECK-NEXT:      } else {
// CHECK:           memory.store %[[R]], %[[O]][%[[I]], %[[J]]] : memref<3x4xi64>
// CHECK-NOT:     linalg.index
func.func @iota(%o: memref<3x4xi64>) {
  %c1 = arith.constant 1 : index
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%o : memref<3x4xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %big = arith.cmpi sgt, %i, %c1 : index
    %r = loop.if %big -> (i64) {
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      loop.yield %ji : i64
    } else {
      %z = arith.constant -1 : i64
      loop.yield %z : i64
    }
    linalg.yield %r : i64
  }
  return
}

// A 0-d input is loaded once, before the nest.
// CHECK-LABEL: func.func @scale(
// CHECK-SAME:      %[[A:[^:]*]]: memref<3x4xf32>, %[[S:[^:]*]]: memref<f32>, %[[O:[^:]*]]: memref<3x4xf32>)
// CHECK:         %[[F:.*]] = memory.load %[[S]][] : memref<f32>
// CHECK-NEXT:    loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]]) =
// CHECK-NEXT:      %[[X:.*]] = memory.load %[[A]][%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[X]], %[[F]] : f32
// CHECK-NEXT:      memory.store %[[M]], %[[O]][%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:    }
func.func @scale(%a: memref<3x4xf32>, %s: memref<f32>, %o: memref<3x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %s : memref<3x4xf32>, memref<f32>) outs(%o : memref<3x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  }
  return
}

// Inputs that use only parallel dims are loaded above the reduction loops.
// CHECK-LABEL: func.func @row_dot_bias(
// CHECK-SAME:      %[[A:[^:]*]]: memref<4x8xf32>, %[[W:[^:]*]]: memref<4xf32>, %[[O:[^:]*]]: memref<4xf32>)
// CHECK:         loop.parallel (%[[I:[^)]*]]) =
// CHECK-NEXT:      %[[INIT:.*]] = memory.load %[[O]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %[[WI:.*]] = memory.load %[[W]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      loop.for %[[K:[^ ]*]] = {{.*}} iter_args(%[[ACC:[^ ]*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[X:.*]] = memory.load %[[A]][%[[I]], %[[K]]] : memref<4x8xf32>
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[X]], %[[WI]] : f32
func.func @row_dot_bias(%a: memref<4x8xf32>, %w: memref<4xf32>, %o: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a, %w : memref<4x8xf32>, memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// fill: a parallel loop of stores of the scalar.
// CHECK-LABEL: func.func @fill(
// CHECK-SAME:      %[[O:[^:]*]]: memref<?x4xf32>, %[[V:[^:]*]]: f32)
// CHECK:         %[[N:.*]] = memory.dim %[[O]], 0 : memref<?x4xf32>
// CHECK-NEXT:    loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]]) = (%{{.*}}, %{{.*}}) to (%[[N]], %{{.*}}) step
// CHECK-NEXT:      memory.store %[[V]], %[[O]][%[[I]], %[[J]]] : memref<?x4xf32>
// CHECK-NEXT:    }
func.func @fill(%o: memref<?x4xf32>, %v: f32) {
  linalg.fill ins(%v : f32) outs(%o : memref<?x4xf32>)
  return
}

// transpose: the loops run over the output, the input is read permuted.
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:      %[[A:[^:]*]]: memref<3x5xf32>, %[[O:[^:]*]]: memref<5x3xf32>)
// CHECK-DAG:     %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]]) = (%{{.*}}, %{{.*}}) to (%[[C5]], %[[C3]]) step
// CHECK-NEXT:      %[[X:.*]] = memory.load %[[A]][%[[J]], %[[I]]] : memref<3x5xf32>
// CHECK-NEXT:      memory.store %[[X]], %[[O]][%[[I]], %[[J]]] : memref<5x3xf32>
// CHECK-NEXT:    }
func.func @transpose(%a: memref<3x5xf32>, %o: memref<5x3xf32>) {
  linalg.transpose ins(%a : memref<3x5xf32>) outs(%o : memref<5x3xf32>) permutation = [1, 0]
  return
}

// conv_2d_nchw_fchw: four parallel loops (n, f, oh, ow), three reduction loops (c, kh, kw)
// inside; the input index `d2 + d5` is an arith.addi computed in the kh loop, above the kw
// loop, and `oh * 2` (stride 2) in the parallel body.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME:      %[[X:[^:]*]]: memref<1x2x9x9xf32>, %[[K:[^:]*]]: memref<3x2x3x3xf32>, %[[O:[^:]*]]: memref<1x3x4x4xf32>)
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         loop.parallel (%[[N:[^,)]*]], %[[F:[^,)]*]], %[[OH:[^,)]*]], %[[OW:[^,)]*]]) =
// CHECK-NEXT:      %[[INIT:.*]] = memory.load %[[O]][%[[N]], %[[F]], %[[OH]], %[[OW]]] : memref<1x3x4x4xf32>
// CHECK-NEXT:      %[[H0:.*]] = arith.muli %[[OH]], %[[C2]] : index
// CHECK-NEXT:      %[[W0:.*]] = arith.muli %[[OW]], %[[C2]] : index
// CHECK-NEXT:      %[[R:.*]] = loop.for %[[C:[^ ]*]] = %{{.*}} to %[[C2]] step %{{.*}} iter_args(%[[A0:[^ ]*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[R1:.*]] = loop.for %[[KH:[^ ]*]] = %{{.*}} to %[[C3]] step %{{.*}} iter_args(%[[A1:[^ ]*]] = %[[A0]]) -> (f32) {
// CHECK-NEXT:          %[[H:.*]] = arith.addi %[[H0]], %[[KH]] : index
// CHECK-NEXT:          %[[R2:.*]] = loop.for %[[KW:[^ ]*]] = %{{.*}} to %[[C3]] step %{{.*}} iter_args(%[[A2:[^ ]*]] = %[[A1]]) -> (f32) {
// CHECK-NEXT:            %[[W:.*]] = arith.addi %[[W0]], %[[KW]] : index
// CHECK-NEXT:            %[[XV:.*]] = memory.load %[[X]][%[[N]], %[[C]], %[[H]], %[[W]]] : memref<1x2x9x9xf32>
// CHECK-NEXT:            %[[KV:.*]] = memory.load %[[K]][%[[F]], %[[C]], %[[KH]], %[[KW]]] : memref<3x2x3x3xf32>
// CHECK-NEXT:            %[[P:.*]] = arith.mulf %[[XV]], %[[KV]] : f32
// CHECK-NEXT:            %[[S:.*]] = arith.addf %[[A2]], %[[P]] : f32
// CHECK-NEXT:            loop.yield %[[S]] : f32
// CHECK-NEXT:          }
// CHECK-NEXT:          loop.yield %[[R2]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.yield %[[R1]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memory.store %[[R]], %[[O]][%[[N]], %[[F]], %[[OH]], %[[OW]]] : memref<1x3x4x4xf32>
func.func @conv(%x: memref<1x2x9x9xf32>, %k: memref<3x2x3x3xf32>, %o: memref<1x3x4x4xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %k : memref<1x2x9x9xf32>, memref<3x2x3x3xf32>) outs(%o : memref<1x3x4x4xf32>)
  return
}

// Unit stride: the window index is the plain `d2 + d5`.
// CHECK-LABEL: func.func @conv_unit_stride(
// CHECK:         loop.parallel (%{{[^,)]*}}, %{{[^,)]*}}, %[[OH:[^,)]*]], %[[OW:[^,)]*]]) =
// CHECK:           loop.for
// CHECK-NEXT:        loop.for %[[KH:[^ ]*]] =
// CHECK-NEXT:          %{{.*}} = arith.addi %[[OH]], %[[KH]] : index
func.func @conv_unit_stride(%x: memref<1x2x6x6xf32>, %k: memref<3x2x3x3xf32>, %o: memref<1x3x4x4xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %k : memref<1x2x6x6xf32>, memref<3x2x3x3xf32>)
      outs(%o : memref<1x3x4x4xf32>)
  return
}

// Every dim a reduction, all sizes dynamic: no parallel loop; the 0-d output is loaded
// before the nest and carried through both loops.
// CHECK-LABEL: func.func @sum_all(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?x?xf32>, %[[O:[^:]*]]: memref<f32>)
// CHECK:         %[[M:.*]] = memory.dim %[[A]], 0 : memref<?x?xf32>
// CHECK-NEXT:    %[[N:.*]] = memory.dim %[[A]], 1 : memref<?x?xf32>
// CHECK-NEXT:    %[[INIT:.*]] = memory.load %[[O]][] : memref<f32>
// CHECK-NEXT:    %[[R:.*]] = loop.for %[[I:[^ ]*]] = %{{.*}} to %[[M]] step %{{.*}} iter_args(%[[A0:[^ ]*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:      %[[R1:.*]] = loop.for %[[J:[^ ]*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[A1:[^ ]*]] = %[[A0]]) -> (f32) {
// CHECK-NEXT:        %[[X:.*]] = memory.load %[[A]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[X]], %[[A1]] : f32
// CHECK-NEXT:        loop.yield %[[S]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.yield %[[R1]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    memory.store %[[R]], %[[O]][] : memref<f32>
func.func @sum_all(%a: memref<?x?xf32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<?x?xf32>) outs(%o : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// An output whose map uses a reduction dim is loaded and stored every iteration (a running
// sum along the row); an output map using only the outer reduction dim is carried through
// the inner one.
// CHECK-LABEL: func.func @per_iteration(
// CHECK-SAME:      %[[A:[^:]*]]: memref<3x4x5xf32>, %[[O:[^:]*]]: memref<3x4xf32>)
// CHECK:         loop.parallel (%[[I:[^)]*]]) =
// CHECK-NEXT:      loop.for %[[J:[^ ]*]] = {{.*}} {
// CHECK-NEXT:        %[[INIT:.*]] = memory.load %[[O]][%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:        %[[R:.*]] = loop.for %[[K:[^ ]*]] = {{.*}} iter_args(%[[ACC:[^ ]*]] = %[[INIT]]) -> (f32) {
// CHECK:           }
// CHECK-NEXT:        memory.store %[[R]], %[[O]][%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-LABEL: func.func @running(
// CHECK-SAME:      %[[A:[^:]*]]: memref<3x5xf32>, %[[O:[^:]*]]: memref<3x5xf32>)
// CHECK:           loop.for %[[K:[^ ]*]] = {{.*}} {
// CHECK-NEXT:        %[[X:.*]] = memory.load %[[A]][%[[I:[^,]*]], %[[K]]] : memref<3x5xf32>
// CHECK-NEXT:        %[[OLD:.*]] = memory.load %[[O]][%[[I]], %[[K]]] : memref<3x5xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[X]], %[[OLD]] : f32
// CHECK-NEXT:        memory.store %[[S]], %[[O]][%[[I]], %[[K]]] : memref<3x5xf32>
// CHECK-NEXT:      }
func.func @per_iteration(%a: memref<3x4x5xf32>, %o: memref<3x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%a : memref<3x4x5xf32>) outs(%o : memref<3x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @running(%a: memref<3x5xf32>, %o: memref<3x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<3x5xf32>) outs(%o : memref<3x5xf32>) {
  ^bb0(%x: f32, %old: f32):
    %s = arith.addf %x, %old : f32
    linalg.yield %s : f32
  }
  return
}

// Affine index expressions with MLIR's semantics: `mod` is never negative (the remainder,
// plus the divisor where it is negative), floordiv and ceildiv round down and up;
// `d0 - 2` is a subtraction; constants are folded.
// CHECK-LABEL: func.func @affine_exprs(
// CHECK-SAME:      %[[A:[^:]*]]: memref<4xf32>, %[[B:[^:]*]]: memref<4x3xf32>, %[[O:[^:]*]]: memref<8x4xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]]) =
// CHECK-NEXT:      %[[D:.*]] = arith.subi %[[I]], %[[C2]] : index
// CHECK-NEXT:      %[[REM:.*]] = arith.remsi %[[D]], %[[C4]] : index
// CHECK-NEXT:      %[[NEG:.*]] = arith.cmpi slt, %[[REM]], %[[C0]] : index
// CHECK-NEXT:      %[[UP:.*]] = arith.addi %[[REM]], %[[C4]] : index
// CHECK-NEXT:      %[[MOD:.*]] = arith.select %[[NEG]], %[[UP]], %[[REM]] : index
// CHECK-NEXT:      %[[X:.*]] = memory.load %[[A]][%[[MOD]]] : memref<4xf32>
// CHECK-NEXT:      %[[FD:.*]] = arith.floordivsi %[[I]], %[[C2]] : index
// CHECK-NEXT:      %[[J1:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK-NEXT:      %[[CD:.*]] = arith.ceildivsi %[[J1]], %[[C2]] : index
// CHECK-NEXT:      %[[Y:.*]] = memory.load %[[B]][%[[FD]], %[[CD]]] : memref<4x3xf32>
func.func @affine_exprs(%a: memref<4xf32>, %b: memref<4x3xf32>, %o: memref<8x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ((d0 - 2) mod 4 + (3 - 3) * d1)>,
                                   affine_map<(d0, d1) -> (d0 floordiv 2, (d1 + 1) ceildiv 2)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<4xf32>, memref<4x3xf32>) outs(%o : memref<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// A gather left by bufferize: the body's own memory.load of another buffer is cloned as
// it is, at the index the body computes.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[T:[^:]*]]: memref<10x4xf32>, %[[IX:[^:]*]]: memref<?xi32>, %[[O:[^:]*]]: memref<?x4xf32>)
// CHECK:         loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]]) =
// CHECK-NEXT:      %[[K:.*]] = memory.load %[[IX]][%[[I]]] : memref<?xi32>
// CHECK-NEXT:      %[[KI:.*]] = arith.index_cast %[[K]] : i32 to index
// CHECK-NEXT:      %[[V:.*]] = memory.load %[[T]][%[[KI]], %[[J]]] : memref<10x4xf32>
// CHECK-NEXT:      memory.store %[[V]], %[[O]][%[[I]], %[[J]]] : memref<?x4xf32>
func.func @gather(%t: memref<10x4xf32>, %i: memref<?xi32>, %o: memref<?x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%i : memref<?xi32>) outs(%o : memref<?x4xf32>) {
  ^bb0(%k: i32, %out: f32):
    %ki = arith.index_cast %k : i32 to index
    %j = linalg.index 1 : index
    %v = memory.load %t[%ki, %j] : memref<10x4xf32>
    linalg.yield %v : f32
  }
  return
}

// Two ops on one buffer in one block share its memory.dim; each function has its own
// constants.
// CHECK-LABEL: func.func @shared_dims(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?xf32>, %[[O:[^:]*]]: memref<?xf32>)
// CHECK:         %[[N:.*]] = memory.dim %[[A]], 0 : memref<?xf32>
// CHECK-NEXT:    loop.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]]) step
// CHECK:         loop.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]]) step
// CHECK-NOT:     memory.dim
// CHECK:         return
func.func @shared_dims(%a: memref<?xf32>, %o: memref<?xf32>) {
  linalg.map { math.exp } ins(%a : memref<?xf32>) outs(%o : memref<?xf32>)
  linalg.map { arith.negf } ins(%a : memref<?xf32>) outs(%o : memref<?xf32>)
  return
}
