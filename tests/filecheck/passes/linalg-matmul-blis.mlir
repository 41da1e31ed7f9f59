// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=4 nc=32 chunk=16 kc-epilogue=0 direct-b-tiles=0 direct-a=false}' | FileCheck %s
// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=4 nc=32 chunk=16}' | FileCheck %s --check-prefix=TILE
// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=4 nc=32 chunk=16 parallel=false}' | FileCheck %s --check-prefix=SEQ
// RUN: irkit-opt %s -p linalg-matmul-blis | FileCheck %s --check-prefix=DEFAULT
// RUN: irkit-opt %s -p 'linalg-matmul-blis{min-flops=0 epilogue=false}' | FileCheck %s --check-prefix=NOEPI
// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=16 nc=32 dot=false}' | FileCheck %s --check-prefix=BAL
// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=16 nc=32 row-blocks=1 direct-a=false dot=false}' | FileCheck %s --check-prefix=FEW
// RUN: irkit-opt %s -p 'linalg-matmul-blis{lanes=8 min-flops=0}' | FileCheck %s --check-prefix=SKINNY
// RUN: irkit-opt %s -p 'linalg-matmul-blis{lanes=8 min-flops=0 mr=5 nr=32}' | FileCheck %s --check-prefix=BYCOL
// RUN: irkit-opt %s -p 'linalg-matmul-blis{lanes=8 min-flops=0 dot=false transpose=false}' | FileCheck %s --check-prefix=NTILE
// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=4 nc=32 chunk=16 kc-dynamic=64 direct-b-tiles=0}' | FileCheck %s --check-prefix=DYN
// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=4 nc=32 chunk=16 min-flops=0 direct-b-tiles=4}' | FileCheck %s --check-prefix=XW
// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=4 nc=32 chunk=16 kc-dynamic=0 direct-b-tiles=0}' | FileCheck %s --check-prefix=DYN0
// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=4 nc=32 chunk=16 min-flops=0}' | FileCheck %s --check-prefix=SCALED
// RUN: irkit-opt %s -p 'linalg-matmul-blis{min-flops=0 lanes=8}' | FileCheck %s --check-prefix=PERIMG
// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=6 nr=16 lanes=8 kc=64 min-flops=0 direct-b-tiles=0 parallel=false}' | FileCheck %s --check-prefix=THIN
// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=16 nc=128 min-flops=0 dot=false}' | FileCheck %s --check-prefix=PARTS
// RUN: irkit-opt %s -p 'linalg-matmul-blis{lanes=8 chunk=4 min-flops=0}' | FileCheck %s --check-prefix=CHUNK
// RUN: irkit-opt %s -p 'linalg-matmul-blis{lanes=8 min-flops=0 align-start=false}' | FileCheck %s --check-prefix=NOALIGN

// A float32 contraction on memrefs becomes BLIS's nest: B packed into zero-padded
// kc x nr panels (one buffer for the op), a loop.parallel over mc row blocks each packing
// its A block into mr-row panels (with direct-a=false; by default A is read where it lies,
// BAL), and a micro-kernel carrying mr * nr / lanes vector
// accumulators through a k loop of `chunk` steps (broadcast of A, vector loads of packed B,
// math.fma), added into C by vectors for a whole tile; a tile crossing M or N goes through
// a scratch tile: one loop over its valid rows, by vectors up to its last whole vector,
// element by element past it.

// The row blocks the threads split are counted from the dynamic M: ceil(M / mr) tiles (at
// least 1) in the fewest blocks of at most mc rows, rounded up to a multiple of row-blocks
// (8), at most one per tile; block i starts at tile i * tiles / blocks (sizes differ by at
// most one tile) and ends where block i + 1 starts, or at M.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?x?xf32>, %[[B:[^:]*]]: memref<?x?xf32>, %[[C:[^:]*]]: memref<?x?xf32>)
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[M:.*]] = memory.dim %[[A]], 0
// CHECK:         %[[N:.*]] = memory.dim %[[B]], 1
// CHECK:         %[[K:.*]] = memory.dim %[[A]], 1
// CHECK-NEXT:    %[[T0:.*]] = arith.ceildivsi %[[M]], %[[MR:[^ ]*]] : index
// CHECK-NEXT:    %[[TILES:.*]] = arith.maxsi %[[T0]], %{{.*}} : index
// CHECK-NEXT:    %[[ROUNDS:.*]] = arith.ceildivsi %[[TILES]], %{{.*}} : index
// CHECK-NEXT:    %[[R8:.*]] = arith.muli %[[ROUNDS]], %{{.*}} : index
// CHECK-NEXT:    %[[BLOCKS:.*]] = arith.minsi %[[R8]], %[[TILES]] : index
// CHECK:         %[[BP:.*]] = memory.alloc() : memref<2x32x16xf32>
// CHECK:         loop.for %[[JC:.*]] = %{{.*}} to %[[N]] step %[[C32:[^ ]*]] {
// CHECK:           loop.for %[[PC:.*]] = %{{.*}} to %[[K]] step %[[C32]] {
// CHECK:             loop.parallel (%[[P:.*]]) =
// CHECK:               loop.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK:                 loop.for %[[J:[^ ]*]] = %[[N0:[^ ]*]] to %{{.*}} step
// CHECK-NEXT:              %[[X:.*]] = memory.load %[[B]][%{{.*}}, %[[J]]]
// CHECK-NEXT:              %[[JP:.*]] = arith.subi %[[J]], %[[N0]] : index
// CHECK-NEXT:              memory.store %[[X]], %[[BP]][%[[P]], %{{.*}}, %[[JP]]] : memref<2x32x16xf32>
// CHECK:               memory.store %{{.*}}, %[[BP]]
// CHECK:             loop.parallel (%[[BLOCK:.*]]) = (%{{.*}}) to (%[[BLOCKS]]) step (%{{.*}}) {
// CHECK-NEXT:          %[[S0:.*]] = arith.muli %[[BLOCK]], %[[TILES]] : index
// CHECK-NEXT:          %[[T1:.*]] = arith.divui %[[S0]], %[[BLOCKS]] : index
// CHECK-NEXT:          %[[IC:.*]] = arith.muli %[[T1]], %[[MR]] : index
// CHECK-NEXT:          %[[NEXT:.*]] = arith.addi %[[BLOCK]], %{{.*}} : index
// CHECK-NEXT:          %[[S1:.*]] = arith.muli %[[NEXT]], %[[TILES]] : index
// CHECK-NEXT:          %[[T2:.*]] = arith.divui %[[S1]], %[[BLOCKS]] : index
// CHECK-NEXT:          %[[END0:.*]] = arith.muli %[[T2]], %[[MR]] : index
// CHECK-NEXT:          %[[END:.*]] = arith.minsi %[[END0]], %[[M]] : index
// CHECK-NEXT:          %[[ROWS:.*]] = arith.subi %[[END]], %[[IC]] : index
// CHECK:               %[[SCRATCH:.*]] = memory.alloc() : memref<2x16xf32>
// CHECK:               %[[AP:.*]] = memory.alloc() : memref<2x32x2xf32>
// CHECK:               loop.for %[[KA:[^ ]*]] = %[[PC]] to %{{.*}} step
// CHECK-NEXT:            %[[XA:.*]] = memory.load %[[A]][%{{.*}}, %[[KA]]]
// CHECK-NEXT:            %[[KP:.*]] = arith.subi %[[KA]], %[[PC]] : index
// CHECK-NEXT:            memory.store %[[XA]], %[[AP]][%{{.*}}, %[[KP]], %{{.*}}]
// CHECK:               %[[ZERO:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK-NEXT:          %[[ACC:.*]]:4 = loop.for %[[KK:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A0:.*]] = %[[ZERO]], %[[A1:.*]] = %[[ZERO]], %[[A2:.*]] = %[[ZERO]], %[[A3:.*]] = %[[ZERO]]) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:            %[[B0:.*]] = memory.vector_load %[[BP]][%{{.*}}, %[[KK]], %{{.*}}] : memref<2x32x16xf32>, vector<8xf32>
// CHECK-NEXT:            %[[B1:.*]] = memory.vector_load %[[BP]][%{{.*}}, %[[KK]], %{{.*}}] : memref<2x32x16xf32>, vector<8xf32>
// CHECK-NEXT:            %[[X0:.*]] = memory.load %[[AP]][%{{.*}}, %[[KK]], %{{.*}}] : memref<2x32x2xf32>
// CHECK-NEXT:            %[[V0:.*]] = vector.broadcast %[[X0]] : f32 to vector<8xf32>
// CHECK-NEXT:            %[[F0:.*]] = math.fma %[[V0]], %[[B0]], %[[A0]] : vector<8xf32>
// CHECK-NEXT:            %[[F1:.*]] = math.fma %[[V0]], %[[B1]], %[[A1]] : vector<8xf32>
// CHECK-NEXT:            %[[X1:.*]] = memory.load %[[AP]]
// CHECK-NEXT:            %[[V1:.*]] = vector.broadcast %[[X1]]
// CHECK-NEXT:            %[[F2:.*]] = math.fma %[[V1]], %[[B0]], %[[A2]] : vector<8xf32>
// CHECK-NEXT:            %[[F3:.*]] = math.fma %[[V1]], %[[B1]], %[[A3]] : vector<8xf32>
// CHECK-NEXT:            loop.yield %[[F0]], %[[F1]], %[[F2]], %[[F3]]
// CHECK:               loop.if %{{.*}} {
// CHECK-NEXT:            %[[OLD:.*]] = memory.vector_load %[[C]][%{{.*}}] : memref<?x?xf32>, vector<8xf32>
// CHECK-NEXT:            %[[NEW:.*]] = arith.addf %[[OLD]], %[[ACC]]#0 : vector<8xf32>
// CHECK-NEXT:            memory.vector_store %[[NEW]], %[[C]]
// CHECK:               } else {
// CHECK-NEXT:            memory.vector_store %[[ACC]]#0, %[[SCRATCH]]
// CHECK:                 %[[REM:.*]] = arith.remui %[[COLS:.*]], %{{.*}} : index
// CHECK-NEXT:            %[[SPLIT:.*]] = arith.subi %[[COLS]], %[[REM]] : index
// CHECK-NEXT:            loop.for %[[R:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:              loop.for %[[J:.*]] = %{{.*}} to %[[SPLIT]] step
// CHECK-NEXT:                memory.vector_load %[[SCRATCH]][%[[R]], %[[J]]]
// CHECK:                     memory.vector_load %[[C]]
// CHECK:                   loop.for %{{.*}} = %[[SPLIT]] to %[[COLS]] step
// CHECK-NEXT:                memory.load %[[SCRATCH]]
// CHECK:                     memory.load %[[C]]
// CHECK-NEXT:                arith.addf
// CHECK-NEXT:                memory.store %{{.*}}, %[[C]]
// CHECK:               memory.dealloc %[[SCRATCH]]
// CHECK-NEXT:          memory.dealloc %[[AP]]
// CHECK:         memory.dealloc %[[BP]]
// CHECK-NEXT:    return
// SEQ-LABEL:   func.func @matmul(
// SEQ-NOT:       loop.parallel
// SEQ:           return
// DEFAULT-LABEL: func.func @matmul(
// DEFAULT-NOT:     linalg.matmul
// DEFAULT:         math.fma
func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// lower-graph-to-linalg's matmul: f32 products widened into an f64 accumulator, in a
// fusion.group with its truncf epilogue. The zero fill is folded. K (64) is two blocks of
// 32, each two chunks of 16: a block's chunks add up in a per-tile f64 buffer (the first
// stores); its last chunk adds them (where an earlier chunk ran) and the earlier blocks'
// sums in C (where an earlier block ran) to its own, and stores the total into C, or, in
// the last block, applies the epilogue into %c: the epilogue's own nest is gone, and C is
// read and written once per block, not per chunk. Where nothing ran before the last chunk
// (all of K one chunk at run time), the epilogue reads the sums and nothing else.
// CHECK-LABEL: func.func @widened(
// CHECK-SAME:      %[[C:[^:]*]]: memref<?x16xf32>)
// CHECK-NOT:     fusion.group
// CHECK-NOT:     linalg.fill
// CHECK:         %[[ACC:.*]] = memory.alloc(%{{.*}}) : memref<?x16xf64>
// CHECK-NOT:     linalg.generic
// CHECK:         %[[T:.*]] = memory.alloc() : memref<2x16xf64>
// CHECK:         math.fma
// CHECK:         %[[CHUNKS:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[BLOCKS:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[END:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    loop.if %[[END]] {
// CHECK:           %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      loop.if %[[LAST]] {
// CHECK-NEXT:        %[[EARLIER:.*]] = arith.ori %[[CHUNKS]], %[[BLOCKS]] : i1
// CHECK-NEXT:        loop.if %[[EARLIER]] {
// CHECK-NEXT:        memory.vector_store %{{.*}}#0, %[[SCRATCH:[0-9]+]]
// CHECK:             loop.for
// CHECK:               %[[S:.*]] = memory.vector_load %[[SCRATCH]]
// CHECK-NEXT:          %[[WIDE:.*]] = arith.extf %[[S]] : vector<8xf32> to vector<8xf64>
// CHECK-NEXT:          %[[S1:.*]] = loop.if %[[CHUNKS]] -> (vector<8xf64>) {
// CHECK-NEXT:            %[[OLD:.*]] = memory.vector_load %[[T]]
// CHECK-NEXT:            %[[SUM:.*]] = arith.addf %[[OLD]], %[[WIDE]] : vector<8xf64>
// CHECK-NEXT:            loop.yield %[[SUM]]
// CHECK-NEXT:          } else {
// CHECK-NEXT:            loop.yield %[[WIDE]]
// CHECK:               %[[S2:.*]] = loop.if %[[BLOCKS]] -> (vector<8xf64>) {
// CHECK-NEXT:            %[[OLD2:.*]] = memory.vector_load %[[ACC]][%{{.*}}] : memref<?x16xf64>, vector<8xf64>
// CHECK-NEXT:            arith.addf %[[OLD2]], %[[S1]] : vector<8xf64>
// CHECK:               %[[TR:.*]] = arith.truncf %[[S2]] : vector<8xf64> to vector<8xf32>
// CHECK-NEXT:          memory.vector_store %[[TR]], %[[C]]
// CHECK:             } else {
// CHECK-NOT:           loop.if
// CHECK:               %[[ALONE:.*]] = memory.vector_load %[[SCRATCH]]
// CHECK-NEXT:          %[[WIDE1:.*]] = arith.extf %[[ALONE]] : vector<8xf32> to vector<8xf64>
// CHECK-NOT:           loop.if
// CHECK:               %[[TR1:.*]] = arith.truncf %[[WIDE1]] : vector<8xf64> to vector<8xf32>
// CHECK-NEXT:          memory.vector_store %[[TR1]], %[[C]]
// CHECK:           } else {
// CHECK:               loop.if %[[CHUNKS]] -> (vector<8xf64>) {
// CHECK:               %[[S3:.*]] = loop.if %[[BLOCKS]] -> (vector<8xf64>) {
// CHECK-NOT:           arith.truncf
// CHECK:               memory.vector_store %[[S3]], %[[ACC]]
// CHECK:         } else {
// CHECK-NEXT:      loop.if %[[CHUNKS]] {
// CHECK-NOT:         %[[ACC]]
// CHECK:             %[[O:.*]] = memory.vector_load %[[T]][%{{.*}}] : memref<2x16xf64>, vector<8xf64>
// CHECK-NEXT:        %[[N:.*]] = arith.addf %[[O]], %{{.*}} : vector<8xf64>
// CHECK-NEXT:        memory.vector_store %[[N]], %[[T]]
// CHECK:           } else {
// CHECK-NOT:         memory.vector_load
// CHECK:             %[[W:.*]] = arith.extf %{{.*}}#0 : vector<8xf32> to vector<8xf64>
// CHECK-NEXT:        memory.vector_store %[[W]], %[[T]]
// CHECK:         memory.dealloc %[[ACC]]
// CHECK-NOT:     linalg.generic
// With an epilogue at the store, a static K up to kc-epilogue (default 1024) is one K
// block: the sums of its chunks wait in a per-tile f64 buffer, the f64 accumulator is gone.
// TILE-LABEL: func.func @widened(
// TILE-SAME:      %[[C:[^:]*]]: memref<?x16xf32>)
// TILE-NOT:     memref<?x16xf64>
// TILE:         %[[T:.*]] = memory.alloc() : memref<2x16xf64>
// TILE:         math.fma
// TILE:         loop.if
// TILE:           memory.vector_load %[[T]]
// TILE:           arith.truncf
// TILE-NEXT:      memory.vector_store %{{.*}}, %[[C]]
// TILE:         } else {
// TILE:           memory.vector_store %{{.*}}, %[[T]]
// TILE:         memory.dealloc %[[T]]
// TILE-NOT:     memref<?x16xf64>
// TILE:         return
func.func @widened(%a: memref<?x64xf32>, %b: memref<64x16xf32>, %c: memref<?x16xf32>) {
  %zero = arith.constant 0.0 : f64
  %m = memory.dim %a, 0 : memref<?x64xf32>
  fusion.group {kind = "epilogue", outer_dims = 2 : i64} {
    %acc = memory.alloc(%m) : memref<?x16xf64>
    linalg.fill ins(%zero : f64) outs(%acc : memref<?x16xf64>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                     affine_map<(d0, d1, d2) -> (d2, d1)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<?x64xf32>, memref<64x16xf32>) outs(%acc : memref<?x16xf64>) {
    ^bb0(%x: f32, %y: f32, %s: f64):
      %p = arith.mulf %x, %y : f32
      %w = arith.extf %p : f32 to f64
      %t = arith.addf %s, %w : f64
      linalg.yield %t : f64
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%acc : memref<?x16xf64>) outs(%c : memref<?x16xf32>) {
    ^bb0(%x: f64, %y: f32):
      %r = arith.truncf %x : f64 to f32
      linalg.yield %r : f32
    }
    memory.dealloc %acc : memref<?x16xf64>
  }
  return
}

// Below min-flops (default 2^18: 2 * 4 * 16 * 8 here) the op is left to
// lower-linalg-to-loop.
// DEFAULT-LABEL: func.func @small(
// DEFAULT-NEXT:    linalg.matmul
// DEFAULT-NOT:     math.fma
func.func @small(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// A convolution as lower-graph-to-linalg emits it (f64 temporary, zero fill, truncf
// epilogue): M = filters, N = output pixels, K = (channels, window). The temporary's pixel
// dims are collapsed into one row of 8 * 8 (the epilogue reads it at d2 * 8 + d3), the
// filter is packed once before the image loop, and the image's window is read straight
// into B's packed panel (im2col in the pack, no im2col buffer), in runs of a pixel row: the
// panel's columns [n0, n0 + cols) are split into (row, x) once per row they meet; a row the
// panel covers whole is one vector load and store (8 floats), a row it cuts a loop over x,
// with no division per element.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x3x10x10xf32>, %[[K:[^:]*]]: memref<5x3x3x3xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[ACC:.*]] = memory.alloc(%{{.*}}) : memref<?x5x64xf64>
// CHECK:         %[[IMAGES:.*]] = memory.dim %[[X]], 0
// CHECK:         %[[BP:.*]] = memory.alloc() : memref<2x27x16xf32>
// CHECK:         %[[AP:.*]] = memory.alloc() : memref<3x27x2xf32>
// CHECK:         memory.load %[[K]]
// CHECK:         loop.for %[[N:.*]] = %{{.*}} to %[[IMAGES]] step
// CHECK:           loop.parallel (%[[P:.*]]) =
// CHECK:             %[[N0:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:             %[[N1:.*]] = arith.addi %[[N0]], %{{.*}} : index
// CHECK-NEXT:        %[[R0:.*]] = arith.divui %[[N0]], %[[C8:.*]] : index
// CHECK-NEXT:        %[[R1:.*]] = arith.ceildivsi %[[N1]], %[[C8]] : index
// CHECK-NEXT:        loop.for %[[R:[^ ]*]] = %[[R0]] to %[[R1]] step
// CHECK-NEXT:          %[[START:.*]] = arith.muli %[[R]], %[[C8]] : index
// CHECK:               %[[WHOLE:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT:          loop.if %[[WHOLE]] {
// CHECK:                 %[[VX:.*]] = memory.vector_load %[[X]][%[[N]], %{{.*}}, %{{.*}}, %{{.*}}] : memref<?x3x10x10xf32>, vector<8xf32>
// CHECK-NEXT:            %[[VJ:.*]] = arith.subi %[[START]], %[[N0]] : index
// CHECK-NEXT:            memory.vector_store %[[VX]], %[[BP]][%[[P]], %{{.*}}, %[[VJ]]] : memref<2x27x16xf32>, vector<8xf32>
// CHECK-NEXT:          } else {
// CHECK-NEXT:            loop.for %[[XI:[^ ]*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:            %[[COL:.*]] = arith.addi %[[START]], %[[XI]] : index
// CHECK-NEXT:            %[[ROW:.*]] = arith.addi %[[R]], %{{.*}} : index
// CHECK-NEXT:            %[[XX:.*]] = arith.addi %[[XI]], %{{.*}} : index
// CHECK-NEXT:            %[[V:.*]] = memory.load %[[X]][%[[N]], %{{.*}}, %[[ROW]], %[[XX]]]
// CHECK-NEXT:            %[[J:.*]] = arith.subi %[[COL]], %[[N0]] : index
// CHECK-NEXT:            memory.store %[[V]], %[[BP]][%[[P]], %{{.*}}, %[[J]]]
// CHECK-NEXT:          }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK:           math.fma
// CHECK:           memory.vector_store %{{.*}}, %[[ACC]][%[[N]], %{{.*}}, %{{.*}}] : memref<?x5x64xf64>, vector<8xf64>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 8 + d3)>,
// CHECK-SAME:        ins(%[[ACC]] : memref<?x5x64xf64>)
// CHECK:         memory.dealloc %[[ACC]] : memref<?x5x64xf64>
// DEFAULT-LABEL: func.func @conv(
// DEFAULT:         math.fma
func.func @conv(%x: memref<?x3x10x10xf32>, %k: memref<5x3x3x3xf32>, %o: memref<?x5x8x8xf32>) {
  %zero = arith.constant 0.0 : f64
  %n = memory.dim %x, 0 : memref<?x3x10x10xf32>
  %acc = memory.alloc(%n) : memref<?x5x8x8xf64>
  linalg.fill ins(%zero : f64) outs(%acc : memref<?x5x8x8xf64>)
  linalg.generic {indexing_maps = [
      affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>,
      affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>,
      affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel",
                        "reduction", "reduction", "reduction"]}
      ins(%x, %k : memref<?x3x10x10xf32>, memref<5x3x3x3xf32>)
      outs(%acc : memref<?x5x8x8xf64>) {
  ^bb0(%a: f32, %b: f32, %s: f64):
    %p = arith.mulf %a, %b : f32
    %w = arith.extf %p : f32 to f64
    %t = arith.addf %s, %w : f64
    linalg.yield %t : f64
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc : memref<?x5x8x8xf64>) outs(%o : memref<?x5x8x8xf32>) {
  ^bb0(%a: f64, %b: f32):
    %r = arith.truncf %a : f64 to f32
    linalg.yield %r : f32
  }
  memory.dealloc %acc : memref<?x5x8x8xf64>
  return
}

// An epilogue in the group (truncf, bias, relu) is applied at the micro-kernel's store:
// the accumulators, through a scratch tile and one loop over it, go through its ops
// lane-wise (vectors; the bias a vector load, the constant a broadcast) into the group's
// real output. K (16) is one chunk, so no sums
// wait anywhere: the f64 accumulator and the epilogue's own nest are gone.
// CHECK-LABEL: func.func @epilogue(
// CHECK-SAME:      %[[BIAS:[^:]*]]: memref<32xf32>, %[[Y:[^:]*]]: memref<?x32xf32>)
// CHECK-NOT:     fusion.group
// CHECK-NOT:     xf64>
// CHECK:         %[[ACC:.*]]:4 = loop.for
// CHECK:           math.fma
// CHECK:         memory.vector_store %[[ACC]]#0, %[[SCRATCH:[0-9]+]]
// CHECK:         loop.for
// CHECK-NEXT:      loop.for
// CHECK-NEXT:        %[[X:.*]] = memory.vector_load %[[SCRATCH]]
// CHECK-NEXT:        %[[WIDE:.*]] = arith.extf %[[X]] : vector<8xf32> to vector<8xf64>
// CHECK:             %[[B:.*]] = memory.vector_load %[[BIAS]][%{{.*}}] : memref<32xf32>, vector<8xf32>
// CHECK-NEXT:        %[[T:.*]] = arith.truncf %[[WIDE]] : vector<8xf64> to vector<8xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[T]], %[[B]] : vector<8xf32>
// CHECK-NEXT:        %[[Z:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK-NEXT:        %[[R:.*]] = arith.maximumf %[[S]], %[[Z]] : vector<8xf32>
// CHECK-NEXT:        memory.vector_store %[[R]], %[[Y]][%{{.*}}, %{{.*}}] : memref<?x32xf32>, vector<8xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
// With epilogue=false the epilogue stays its own nest, reading the accumulator. K being
// one chunk, its f64 values would be float32 sums widened, which the epilogue truncates:
// the accumulator is made float32 and the truncf goes (the same values, half the bytes).
// NOEPI-LABEL: func.func @epilogue(
// NOEPI-NOT:     xf64>
// NOEPI:         %[[ACC:.*]] = memory.alloc(%{{.*}}) : memref<?x32xf32>
// NOEPI:         math.fma
// NOEPI:         linalg.generic
// NOEPI-SAME:      ins(%[[ACC]], %{{.*}} : memref<?x32xf32>, memref<32xf32>)
// NOEPI-NEXT:    ^bb0(%[[X:.*]]: f32, %[[BV:.*]]: f32, %{{.*}}: f32):
// NOEPI-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[BV]] : f32
// NOEPI-NEXT:      arith.maximumf %[[S]], %{{.*}} : f32
func.func @epilogue(%a: memref<?x16xf32>, %b: memref<16x32xf32>, %bias: memref<32xf32>, %y: memref<?x32xf32>) {
  %zero = arith.constant 0.0 : f64
  %fz = arith.constant 0.0 : f32
  %m = memory.dim %a, 0 : memref<?x16xf32>
  fusion.group {kind = "epilogue", outer_dims = 2 : i64} {
    %acc = memory.alloc(%m) : memref<?x32xf64>
    linalg.fill ins(%zero : f64) outs(%acc : memref<?x32xf64>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                     affine_map<(d0, d1, d2) -> (d2, d1)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<?x16xf32>, memref<16x32xf32>) outs(%acc : memref<?x32xf64>) {
    ^bb0(%x: f32, %w: f32, %s: f64):
      %p = arith.mulf %x, %w : f32
      %e = arith.extf %p : f32 to f64
      %t = arith.addf %s, %e : f64
      linalg.yield %t : f64
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%acc, %bias : memref<?x32xf64>, memref<32xf32>) outs(%y : memref<?x32xf32>) {
    ^bb0(%x: f64, %c: f32, %o: f32):
      %r = arith.truncf %x : f64 to f32
      %u = arith.addf %r, %c : f32
      %v = arith.maximumf %u, %fz : f32
      linalg.yield %v : f32
    }
    memory.dealloc %acc : memref<?x32xf64>
  }
  return
}

// Static M = 64 in row blocks for the threads: 32 tiles of mr = 2, blocks of at most mc = 16
// rows (8 tiles) would be 4; row-blocks (8) makes them 8 (a team of 2, 4 or 8 gets an even
// share), block i starting at tile i * 32 / 8. With row-blocks=1: the 4 blocks of mc rows.
// A (one factor, one M dim, one K dim) is read where it lies by the micro-kernel: no packed
// A panel; with direct-a=false (FEW) each row block packs its A block into one.
// BAL-LABEL:   func.func @balanced(
// BAL-SAME:        %[[A:[^:]*]]: memref<64x64xf32>
// BAL-DAG:       %[[C8:.*]] = arith.constant 8 : index
// BAL-DAG:       %[[C32:.*]] = arith.constant 32 : index
// BAL:           loop.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[C8]]) step
// BAL-NEXT:        %[[S:.*]] = arith.muli %[[I]], %[[C32]] : index
// BAL-NEXT:        arith.divui %[[S]], %[[C8]] : index
// BAL-NOT:         memref<8x32x2xf32>
// BAL:             loop.for %[[K:[^ ]*]] = {{.*}} iter_args(
// BAL:               %[[X0:.*]] = memory.load %[[A]][%{{.*}}, %{{.*}}] : memref<64x64xf32>
// BAL-NEXT:          vector.broadcast %[[X0]]
// BAL-NOT:         memref<8x32x2xf32>
// BAL:           return
// FEW-LABEL:   func.func @balanced(
// FEW-DAG:       %[[C4:.*]] = arith.constant 4 : index
// FEW-DAG:       %[[C32:.*]] = arith.constant 32 : index
// FEW:           loop.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[C4]]) step
// FEW-NEXT:        %[[S:.*]] = arith.muli %[[I]], %[[C32]] : index
// FEW-NEXT:        arith.divui %[[S]], %[[C4]] : index
// FEW:             memory.alloc() : memref<8x32x2xf32>
func.func @balanced(%a: memref<64x64xf32>, %b: memref<64x32xf32>, %c: memref<64x32xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x32xf32>) outs(%c : memref<64x32xf32>)
  return
}

// A dynamic M: the micro-kernel reads A where it lies, each tile row's index, made once
// before the k loop, min(m0 + r, M - 1) (rows past M are computed, never stored, and read
// nothing out of bounds). direct-a=false packs A (FEW).
// BAL-LABEL:   func.func @skinny(
// BAL-SAME:        %[[A:[^:]*]]: memref<?x64xf32>
// BAL-NOT:       memref<8x32x2xf32>
// BAL:           %[[M:.*]] = memory.dim %[[A]], 0
// BAL:           %[[LAST:.*]] = arith.subi %[[M]], %{{[0-9]+}} : index
// BAL-NEXT:      %[[ROW0:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// BAL:           loop.for %[[K:[^ ]*]] = {{.*}} iter_args(
// BAL-NEXT:        memory.vector_load
// BAL-NEXT:        memory.vector_load
// BAL-NEXT:        %[[KA:.*]] = arith.addi %{{.*}}, %[[K]] : index
// BAL-NEXT:        %[[X0:.*]] = memory.load %[[A]][%[[ROW0]], %[[KA]]] : memref<?x64xf32>
// BAL-NEXT:        vector.broadcast %[[X0]]
// BAL-NOT:       memref<8x32x2xf32>
// BAL:           return
// FEW-LABEL:   func.func @skinny(
// FEW:           memory.alloc() : memref<8x32x2xf32>
// With the default tile, N = 10 leaves 6 of 16 lanes idle (10 of 16 with lanes = 8): A is read
// along K at stride 1, so the op runs as dot products along K instead (passes/blis/dot.py).
// K = 64 is a whole number of vectors and every row of A starts at the same place in a vector
// (64 floats a row), so the vector loop starts at S, the first k where A's rows are aligned to
// a vector, computed from A's address at run time (memory.address: the element index into its
// vector, 8 minus that, mod 8). B is transposed into Bt (10 x 64) rotated by S: column m of Bt
// is row S + m of B for the first 56, 8 rows at a time in registers (each row of B one vector
// of its 10 columns, the 8 laid end to end by shuffles, column j every 10th of those 80
// elements from j on, stored as one vector of Bt's row j); its last 8 columns are B's rows
// 0 .. S - 1 and 56 + S .. 63, picked by lane. Each tile of 4 rows (rows past M read row
// M - 1) and each group of 5 columns keeps 20 vector accumulators over A's k = S + m and Bt's
// m in steps of 8, then one more step: A's first vector in the lanes before S, its last in
// the others, against Bt's last 8 columns. Then it sums their lanes (a reassociated
// reduction), and adds each sum into C, rows past M never stored. The threads split the row
// tiles in a team region, each its own Bt (a private buffer it fills before the loop; with
// parallel=false, one Bt and no team). Without dot and transpose the BLIS tile of 16 columns
// stays (NTILE).
// SKINNY-LABEL: func.func @skinny(
// SKINNY-SAME:      %[[A:[^:]*]]: memref<?x64xf32>, %[[B:[^:]*]]: memref<64x10xf32>, %[[C:[^:]*]]: memref<?x10xf32>
// SKINNY:         %[[M:.*]] = memory.dim %[[A]], 0
// SKINNY:         %[[ADDR:.*]] = memory.address %[[A]] : memref<?x64xf32>
// SKINNY-NEXT:    %[[ELEM:.*]] = arith.divui %[[ADDR]], %{{.*}} : index
// SKINNY-NEXT:    %[[INTO:.*]] = arith.remui %[[ELEM]], %[[EIGHT:.*]] : index
// SKINNY-NEXT:    %[[BACK:.*]] = arith.subi %[[EIGHT]], %[[INTO]] : index
// SKINNY-NEXT:    %[[S:.*]] = arith.remui %[[BACK]], %[[EIGHT]] : index
// SKINNY-NEXT:    omp.parallel {
// SKINNY-NEXT:      %[[BT:.*]] = memory.alloc() : memref<10x64xf32>
// SKINNY-NEXT:      loop.for %[[K:[^ ]*]] = %{{[^ ]*}} to %{{[^ ]*}} step %[[EIGHT]] {
// SKINNY-NEXT:        %[[K0:.*]] = arith.addi %[[K]], %[[S]] : index
// SKINNY:             %[[R0:[^ ]*]] = memory.vector_load %[[B]][%[[K0]], %{{[^]]*}}] : memref<64x10xf32>, vector<10xf32>
// SKINNY-COUNT-7:     memory.vector_load %[[B]][{{.*}} : memref<64x10xf32>, vector<10xf32>
// SKINNY-NEXT:        vector.shuffle %[[R0]], %{{[^ ]*}} [0, 1, {{.*}}, 18, 19] : vector<10xf32>, vector<10xf32>
// SKINNY:             %[[ROWS:[^ ]*]] = vector.shuffle {{.*}} : vector<40xf32>, vector<40xf32>
// SKINNY-NEXT:        %[[COL0:[^ ]*]] = vector.shuffle %[[ROWS]], %[[ROWS]] [0, 10, 20, 30, 40, 50, 60, 70] : vector<80xf32>, vector<80xf32>
// SKINNY-NEXT:        memory.vector_store %[[COL0]], %[[BT]][%{{[^,]*}}, %[[K]]] : memref<10x64xf32>, vector<8xf32>
// SKINNY-NEXT:        vector.shuffle %[[ROWS]], %[[ROWS]] [1, 11, 21, 31, 41, 51, 61, 71]
// SKINNY:             vector.shuffle %[[ROWS]], %[[ROWS]] [9, 19, 29, 39, 49, 59, 69, 79]
// SKINNY-NEXT:        memory.vector_store
// SKINNY-NEXT:      }
// SKINNY-NEXT:      %[[BEFORE:.*]] = arith.cmpi slt, %{{.*}}, %[[S]] : index
// SKINNY-COUNT-7:   arith.cmpi slt, %{{.*}}, %[[S]] : index
// SKINNY-NEXT:      %[[ROW:.*]] = arith.select %[[BEFORE]], %{{.*}}, %{{.*}} : index
// SKINNY-COUNT-7:   arith.select
// SKINNY-NEXT:      memory.vector_load %[[B]][%[[ROW]], %{{.*}}] : memref<64x10xf32>, vector<10xf32>
// SKINNY:           memory.vector_store %{{.*}}, %[[BT]][%{{[^,]*}}, %[[LASTCOL:[0-9a-z_]+]]] : memref<10x64xf32>, vector<8xf32>
// SKINNY-NOT:       memory.store
// SKINNY:           loop.parallel
// SKINNY:             %[[LAST:.*]] = arith.subi %[[M]], %{{.*}} : index
// SKINNY:             %[[ROW0:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// SKINNY:             %[[ACC:.*]]:20 = loop.for %[[KK:[^ ]*]] = {{.*}} iter_args(
// SKINNY-NEXT:          %[[KA:.*]] = arith.addi %[[KK]], %[[S]] : index
// SKINNY-NEXT:          memory.vector_load %[[A]][%[[ROW0]], %[[KA]]] : memref<?x64xf32>, vector<8xf32>
// SKINNY-COUNT-3:       memory.vector_load %[[A]]
// SKINNY-NEXT:          %[[Y:.*]] = memory.vector_load %[[BT]][%{{.*}}, %[[KK]]] : memref<10x64xf32>, vector<8xf32>
// SKINNY-NEXT:          math.fma %{{.*}}, %[[Y]], %{{.*}} : vector<8xf32>
// SKINNY:             %[[SI:.*]] = arith.index_cast %[[S]] : index to i32
// SKINNY-NEXT:        %[[SV:.*]] = vector.broadcast %[[SI]] : i32 to vector<8xi32>
// SKINNY-NEXT:        %[[HEAD:.*]] = arith.cmpi slt, %{{.*}}, %[[SV]] : vector<8xi32>
// SKINNY-NEXT:        %[[X0:.*]] = memory.vector_load %[[A]][%[[ROW0]], %{{.*}}] : memref<?x64xf32>, vector<8xf32>
// SKINNY-NEXT:        %[[X1:.*]] = memory.vector_load %[[A]][%[[ROW0]], %[[LASTCOL]]] : memref<?x64xf32>, vector<8xf32>
// SKINNY-NEXT:        %[[XS:.*]] = arith.select %[[HEAD]], %[[X0]], %[[X1]] : vector<8xi1>, vector<8xf32>
// SKINNY:             %[[Y1:.*]] = memory.vector_load %[[BT]][%{{.*}}, %[[LASTCOL]]] : memref<10x64xf32>, vector<8xf32>
// SKINNY-NEXT:        %[[F:.*]] = math.fma %[[XS]], %[[Y1]], %[[ACC]]#0 : vector<8xf32>
// SKINNY-NOT:         vector.reduction
// SKINNY:             %[[LO:.*]] = vector.shuffle %[[F]], %[[G:[^ ]*]] [0, 1, 2, 3, 8, 9, 10, 11] : vector<8xf32>, vector<8xf32>
// SKINNY-NEXT:        %[[HI:.*]] = vector.shuffle %[[F]], %[[G]] [4, 5, 6, 7, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// SKINNY-NEXT:        %[[H:.*]] = arith.addf %[[LO]], %[[HI]] : vector<8xf32>
// SKINNY:             vector.shuffle %[[H]], %{{[^ ]*}} [0, 1, 4, 5, 8, 9, 12, 13] : vector<8xf32>, vector<8xf32>
// SKINNY-NOT:         vector.reduction
// SKINNY:             %[[SUM:.*]] = vector.extract %{{.*}}[0] : f32 from vector<8xf32>
// SKINNY:             %[[IN:.*]] = arith.cmpi slt, %[[ROWN:.*]], %[[M]] : index
// SKINNY-NEXT:        loop.if %[[IN]] {
// SKINNY-NEXT:          %[[OLD:.*]] = memory.load %[[C]][%[[ROWN]], %{{.*}}] : memref<?x10xf32>
// SKINNY-NEXT:          %[[NEW:.*]] = arith.addf %[[OLD]], %[[SUM]] : f32
// SKINNY-NEXT:          memory.store %[[NEW]], %[[C]][%[[ROWN]], %{{.*}}] : memref<?x10xf32>
// SKINNY:           memory.dealloc %[[BT]] : memref<10x64xf32>
// SKINNY-NEXT:      omp.terminator
// SKINNY-NEXT:    }
// SKINNY-NEXT:    return
// With align-start=false the loop starts at k = 0 wherever A lies: no address read, B
// transposed in order.
// NOALIGN-LABEL: func.func @skinny(
// NOALIGN-NOT:     memory.address
// NOALIGN:         loop.for %[[K:[^ ]*]] = %{{[^ ]*}} to %{{[^ ]*}} step %{{[^ ]*}} {
// NOALIGN:           memory.vector_load %{{.*}}[%[[K]], %{{[^]]*}}] : memref<64x10xf32>, vector<10xf32>
// NOALIGN-NOT:     memory.address
// NOALIGN:         vector.extract
// NOALIGN-NOT:     arith.select
// NOALIGN:         return
// SEQ-LABEL:     func.func @skinny(
// SEQ-NOT:         omp.parallel
// SEQ:             %[[BT:.*]] = memory.alloc() : memref<10x64xf32>
// SEQ-NOT:         loop.parallel
// SEQ:             vector.extract
// SEQ:             memory.dealloc %[[BT]] : memref<10x64xf32>
// SEQ-NEXT:        return
// NTILE-LABEL:   func.func @skinny(
// NTILE-NOT:       vector.extract
// NTILE:           math.fma {{.*}} : vector<8xf32>
// NTILE-NOT:       vector.extract
// NTILE:           return
func.func @skinny(%a: memref<?x64xf32>, %b: memref<64x10xf32>, %c: memref<?x10xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x10xf32>) outs(%c : memref<?x10xf32>)
  return
}

// B given transposed (PyTorch's Linear weight, [N, K]: x @ w^T) is read along K already:
// no transposition. With the aligned start its rows are copied by vectors into a Bt rotated
// to A's start (the last column of vectors: B's two ends selected by lane); with
// align-start=false they are read where they lie, no Bt and no team region.
// SKINNY-LABEL: func.func @skinny_nt(
// SKINNY-SAME:      %[[A:[^:]*]]: memref<?x64xf32>, %[[B:[^:]*]]: memref<10x64xf32>, %[[C:[^:]*]]: memref<?x10xf32>
// SKINNY:           memory.address %[[A]] : memref<?x64xf32>
// SKINNY-NEXT:      arith.divui
// SKINNY-NEXT:      arith.remui
// SKINNY-NEXT:      arith.subi
// SKINNY-NEXT:      %[[S:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// SKINNY-NEXT:      omp.parallel {
// SKINNY-NEXT:        %[[BT:.*]] = memory.alloc() : memref<10x64xf32>
// SKINNY-NEXT:        loop.for %[[M:[^ ]*]] = %{{[^ ]*}} to %{{[^ ]*}} step %{{[^ ]*}} {
// SKINNY-NEXT:          %[[KS:.*]] = arith.addi %[[M]], %[[S]] : index
// SKINNY-NEXT:          %[[ROW0:.*]] = memory.vector_load %[[B]][%{{.*}}, %[[KS]]] : memref<10x64xf32>, vector<8xf32>
// SKINNY-NEXT:          memory.vector_store %[[ROW0]], %[[BT]][%{{.*}}, %[[M]]] : memref<10x64xf32>, vector<8xf32>
// SKINNY-COUNT-9:       memory.vector_store
// SKINNY-NEXT:        }
// SKINNY:             %[[HEAD:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : vector<8xi32>
// SKINNY-NEXT:        %[[Y0:.*]] = memory.vector_load %[[B]][%{{.*}}, %{{.*}}] : memref<10x64xf32>, vector<8xf32>
// SKINNY-NEXT:        %[[Y1:.*]] = memory.vector_load %[[B]][%{{.*}}, %{{.*}}] : memref<10x64xf32>, vector<8xf32>
// SKINNY-NEXT:        %[[ENDS:.*]] = arith.select %[[HEAD]], %[[Y0]], %[[Y1]] : vector<8xi1>, vector<8xf32>
// SKINNY-NEXT:        memory.vector_store %[[ENDS]], %[[BT]]
// SKINNY-NOT:         vector.shuffle
// SKINNY:             loop.parallel
// SKINNY:               memory.vector_load %[[BT]]
// SKINNY:           omp.terminator
// SKINNY:         return
// NOALIGN-LABEL: func.func @skinny_nt(
// NOALIGN-SAME:      %[[A:[^:]*]]: memref<?x64xf32>, %[[B:[^:]*]]: memref<10x64xf32>
// NOALIGN-NOT:     memory.alloc
// NOALIGN-NOT:     omp.parallel
// NOALIGN:         loop.parallel
// NOALIGN:           loop.for %[[KK:[^ ]*]] = {{.*}} iter_args(
// NOALIGN-NEXT:        memory.vector_load %[[A]][%{{.*}}, %[[KK]]] : memref<?x64xf32>, vector<8xf32>
// NOALIGN-COUNT-3:     memory.vector_load %[[A]]
// NOALIGN-NEXT:        %[[Y:.*]] = memory.vector_load %[[B]][%{{.*}}, %[[KK]]] : memref<10x64xf32>, vector<8xf32>
// NOALIGN-NEXT:        math.fma %{{.*}}, %[[Y]], %{{.*}} : vector<8xf32>
// NOALIGN:         vector.extract
// NOALIGN-NOT:     memory.dealloc
// NOALIGN:         return
func.func @skinny_nt(%a: memref<?x64xf32>, %b: memref<10x64xf32>, %c: memref<?x10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x64xf32>, memref<10x64xf32>) outs(%c : memref<?x10xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// K = 20 is two vectors of 8 and a tail of 4: the tail's products are added to the lanes'
// sums one k at a time (scalar loads and fmas), as B's last 4 rows are transposed element by
// element; M = 6 is no multiple of the 4 rows, so each row's store is guarded.
// SKINNY-LABEL: func.func @skinny_tail(
// SKINNY-SAME:      %[[A:[^:]*]]: memref<6x20xf32>, %[[B:[^:]*]]: memref<20x10xf32>
// SKINNY:           %[[BT:.*]] = memory.alloc() : memref<10x20xf32>
// SKINNY:           loop.for %{{[^ ]*}} = %{{[^ ]*}} to %[[R16:[^ ]*]] step
// SKINNY:             memory.vector_store %{{[^ ]*}}, %[[BT]]
// SKINNY:           loop.for %[[R:[^ ]*]] = %[[R16]] to
// SKINNY-NEXT:        loop.for %[[J:[^ ]*]] =
// SKINNY-NEXT:          %[[X:[^ ]*]] = memory.load %[[B]][%[[R]], %[[J]]] : memref<20x10xf32>
// SKINNY-NEXT:          memory.store %[[X]], %[[BT]][%[[J]], %[[R]]] : memref<10x20xf32>
// SKINNY:           loop.for %{{.*}} = %{{.*}} to %[[K16:[^ ]*]] step %{{[^ ]*}} iter_args(
// SKINNY:           vector.extract
// SKINNY:           loop.for %[[T:[^ ]*]] = %[[K16]] to %{{.*}} step %{{.*}} iter_args(
// SKINNY-NEXT:        memory.load %[[A]][%{{.*}}, %[[T]]] : memref<6x20xf32>
// SKINNY:             math.fma %{{.*}} : f32
// SKINNY:           loop.if
// SKINNY:         return
func.func @skinny_tail(%a: memref<6x20xf32>, %b: memref<20x10xf32>, %c: memref<6x10xf32>) {
  linalg.matmul ins(%a, %b : memref<6x20xf32>, memref<20x10xf32>) outs(%c : memref<6x10xf32>)
  return
}

// The weight gradient x^T @ dz: A is read along M at stride 1 (x's rows), N = 10. Swapped
// (C^T = dz^T x), the vectors run along M (64, a multiple of 8), x is read where it lies by
// whole vectors (no packed B), and so is dz^T, as A (no packed A); C, whose rows run along
// the swapped M, is stored element by element, rows innermost (consecutive addresses).
// SKINNY-LABEL: func.func @skinny_grad(
// SKINNY-SAME:      %[[X:[^:]*]]: memref<?x64xf32>, %[[D:[^:]*]]: memref<?x10xf32>, %[[C:[^:]*]]: memref<64x10xf32>
// SKINNY-NOT:       vector.extract
// SKINNY-NOT:       memref<2x256x5xf32>
// SKINNY:           loop.for {{.*}} iter_args(
// SKINNY:             memory.vector_load %[[X]][%{{.*}}, %{{.*}}] : memref<?x64xf32>, vector<8xf32>
// SKINNY:             %[[DZ:.*]] = memory.load %[[D]][%{{.*}}, %{{.*}}] : memref<?x10xf32>
// SKINNY-NEXT:        vector.broadcast %[[DZ]]
// SKINNY-NEXT:        math.fma {{.*}} : vector<8xf32>
// SKINNY-NOT:       memory.vector_store {{.*}} %[[C]]
// SKINNY:           loop.for %[[J:[^ ]*]] = {{.*}} {
// SKINNY-NEXT:        loop.for %[[R:[^ ]*]] = {{.*}} {
// SKINNY-NEXT:          memory.load %{{.*}}[%[[R]], %[[J]]] : memref<5x32xf32>
// SKINNY:               memory.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] : memref<64x10xf32>
// SKINNY:         return
// NTILE-LABEL:   func.func @skinny_grad(
// NTILE:           memory.vector_load {{.*}} : memref<{{.*}}>, vector<8xf32>
// NTILE:           memory.vector_store %{{.*}}, %{{.*}} : memref<64x10xf32>, vector<8xf32>
func.func @skinny_grad(%x: memref<?x64xf32>, %d: memref<?x10xf32>, %c: memref<64x10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %d : memref<?x64xf32>, memref<?x10xf32>) outs(%c : memref<64x10xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %o, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// The same weight gradient with SGD's update at its store, from the f64 accumulator of a
// dynamic K (the batch). C's rows run along the swapped M, so a tile's column is mr of C's
// consecutive elements. With mr = 5 (BYCOL), half of M: once per chunk, the tile is
// transposed in registers, per 8 columns its 5 row vectors laid end to end and interleaved
// by one shuffle into a scratch of the tile's columns (float32); then each column is one vector<5>, widened, plus what waits (in
// the per-tile buffer, kept by columns too, and in C), through the update. Nothing is
// stored element by element.
// BYCOL-LABEL: func.func @skinny_grad_sgd(
// BYCOL-SAME:      %[[X:[^:]*]]: memref<?x64xf32>, %[[D:[^:]*]]: memref<?x10xf32>, %[[W:[^:]*]]: memref<64x10xf32>
// BYCOL:           %[[ACC:.*]] = memory.alloc() : memref<64x10xf64>
// BYCOL:           %[[COLS:[^ ]*]] = memory.alloc() : memref<160xf32>
// BYCOL-NEXT:      %[[BUF:[^ ]*]] = memory.alloc() : memref<160xf64>
// BYCOL:           %[[ROWS:[^ ]*]] = vector.shuffle {{.*}} : vector<32xf32>, vector<8xf32>
// BYCOL-NEXT:      %[[T:[^ ]*]] = vector.shuffle %[[ROWS]], %[[ROWS]] [0, 8, 16, 24, 32, 1, 9, {{.*}}, 31, 39] : vector<40xf32>, vector<40xf32>
// BYCOL-NEXT:      memory.vector_store %[[T]], %[[COLS]][%{{[^]]*}}] : memref<160xf32>, vector<40xf32>
// BYCOL:           loop.for %[[J:[^ ]*]] = %{{[^ ]*}} to %{{[^ ]*}} step
// BYCOL-NEXT:        %[[AT:[^ ]*]] = arith.muli %[[J]], %{{[^ ]*}} : index
// BYCOL-NEXT:        %[[G:[^ ]*]] = memory.vector_load %[[COLS]][%[[AT]]] : memref<160xf32>, vector<5xf32>
// BYCOL-NEXT:        arith.extf %[[G]] : vector<5xf32> to vector<5xf64>
// BYCOL:               memory.vector_load %[[BUF]][%[[AT]]] : memref<160xf64>, vector<5xf64>
// BYCOL:               memory.vector_load %[[ACC]][{{.*}}] : memref<64x10xf64>, vector<5xf64>
// BYCOL:             %[[OLD:[^ ]*]] = memory.vector_load %[[W]][%[[I:[^,]*]], %[[M0:[0-9a-z_%]*]]] : memref<64x10xf32>, vector<5xf32>
// BYCOL-NEXT:        arith.truncf %{{[^ ]*}} : vector<5xf64> to vector<5xf32>
// BYCOL:             %[[NEW:[^ ]*]] = arith.subf %[[OLD]], %{{[^ ]*}} : vector<5xf32>
// BYCOL-NEXT:        memory.vector_store %[[NEW]], %[[W]][%[[I]], %[[M0]]] : memref<64x10xf32>, vector<5xf32>
// BYCOL-NOT:       memory.store {{.*}} %[[W]]
// BYCOL:           memory.dealloc %[[COLS]] : memref<160xf32>
// BYCOL:         return
// The same with the default tile, 10 x 16: it spans all of M, so its 16 columns are 160
// consecutive elements of C and of w (rows of exactly 10), and of the transposed tile. Both
// are collapsed to one dim before the nest, and the update runs over the run by whole vectors
// of 8 (none left over: 160 is 20 of them), where by columns it took two vectors per column.
// SKINNY-LABEL: func.func @skinny_grad_sgd(
// SKINNY-SAME:      %[[X:[^:]*]]: memref<?x64xf32>, %[[D:[^:]*]]: memref<?x10xf32>, %[[W:[^:]*]]: memref<64x10xf32>
// SKINNY:           %[[ACC:.*]] = memory.alloc() : memref<64x10xf64>
// SKINNY:           %[[FACC:.*]] = memory.collapse_shape %[[ACC]] {{\[}}[0, 1]] : memref<64x10xf64> into memref<640xf64>
// SKINNY-NEXT:      %[[FW:.*]] = memory.collapse_shape %[[W]] {{\[}}[0, 1]] : memref<64x10xf32> into memref<640xf32>
// SKINNY:           %[[COLS:[^ ]*]] = memory.alloc() : memref<160xf32>
// SKINNY-NEXT:      %[[BUF:[^ ]*]] = memory.alloc() : memref<160xf64>
// SKINNY:           %[[T:[^ ]*]] = vector.shuffle %{{[^ ]*}}, %{{[^ ]*}} [0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 1, 9, {{.*}}, 71, 79] : vector<80xf32>, vector<80xf32>
// SKINNY-NEXT:      memory.vector_store %[[T]], %[[COLS]][%{{[^]]*}}] : memref<160xf32>, vector<80xf32>
// SKINNY:           %[[START:[^ ]*]] = arith.muli %{{[^ ]*}}, %{{[^ ]*}} : index
// SKINNY-NEXT:      loop.for %[[F:[^ ]*]] = %{{[^ ]*}} to %{{[^ ]*}} step
// SKINNY-NEXT:        %[[AT:[^ ]*]] = arith.addi %[[START]], %[[F]] : index
// SKINNY-NEXT:        %[[G:[^ ]*]] = memory.vector_load %[[COLS]][%[[F]]] : memref<160xf32>, vector<8xf32>
// SKINNY-NEXT:        arith.extf %[[G]] : vector<8xf32> to vector<8xf64>
// SKINNY:               memory.vector_load %[[BUF]][%[[F]]] : memref<160xf64>, vector<8xf64>
// SKINNY:               memory.vector_load %[[FACC]][%[[AT]]] : memref<640xf64>, vector<8xf64>
// SKINNY:             %[[OLD:[^ ]*]] = memory.vector_load %[[FW]][%[[AT]]] : memref<640xf32>, vector<8xf32>
// SKINNY-NEXT:        arith.truncf %{{[^ ]*}} : vector<8xf64> to vector<8xf32>
// SKINNY:             %[[NEW:[^ ]*]] = arith.subf %[[OLD]], %{{[^ ]*}} : vector<8xf32>
// SKINNY-NEXT:        memory.vector_store %[[NEW]], %[[FW]][%[[AT]]] : memref<640xf32>, vector<8xf32>
// SKINNY-NOT:       memory.load %[[COLS]]
// SKINNY-NOT:       memory.store {{.*}} %[[W]]
// SKINNY:           memory.dealloc %[[COLS]] : memref<160xf32>
// SKINNY:         return
func.func @skinny_grad_sgd(%x: memref<?x64xf32>, %d: memref<?x10xf32>, %w: memref<64x10xf32>) {
  %zero = arith.constant 0.0 : f64
  %lr = arith.constant 0.1 : f32
  fusion.group {kind = "epilogue", outer_dims = 2 : i64} {
    %acc = memory.alloc() : memref<64x10xf64>
    linalg.fill ins(%zero : f64) outs(%acc : memref<64x10xf64>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                     affine_map<(d0, d1, d2) -> (d2, d1)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %d : memref<?x64xf32>, memref<?x10xf32>) outs(%acc : memref<64x10xf64>) {
    ^bb0(%p: f32, %q: f32, %s: f64):
      %m = arith.mulf %p, %q : f32
      %e = arith.extf %m : f32 to f64
      %t = arith.addf %s, %e : f64
      linalg.yield %t : f64
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%w, %acc : memref<64x10xf32>, memref<64x10xf64>) outs(%w : memref<64x10xf32>) {
    ^bb0(%old: f32, %g: f64, %o: f32):
      %gt = arith.truncf %g : f64 to f32
      %step = arith.mulf %gt, %lr : f32
      %new = arith.subf %old, %step : f32
      linalg.yield %new : f32
    }
    memory.dealloc %acc : memref<64x10xf64>
  }
  return
}

// A weight gradient's A is the transposed activations (x^T @ dz): its one M dim is x's last
// index, at stride 1. Packed (direct-a=false), its panels are copied k by k, each step
// copying mr adjacent floats by vectors whose widths add up to mr (here one of 2), not row
// by row down x's columns, which takes a cache line per element. M (64) is a multiple of
// mr: every panel is whole (where M is dynamic, whole panels by vectors, the last float by
// float).
// FEW-LABEL:   func.func @transposed_a(
// FEW-SAME:        %[[X:[^:]*]]: memref<64x64xf32>
// FEW:           %[[AP:.*]] = memory.alloc() : memref<8x32x2xf32>
// FEW:           loop.for %[[Q:[^ ]*]] =
// FEW:             loop.for %[[K:[^ ]*]] = %{{.*}} to %{{.*}} step
// FEW-NEXT:          %[[KK:.*]] = arith.addi %{{.*}}, %[[K]] : index
// FEW-NEXT:          %[[V:.*]] = memory.vector_load %[[X]][%[[KK]], %{{.*}}] : memref<64x64xf32>, vector<2xf32>
// FEW-NEXT:          memory.vector_store %[[V]], %[[AP]][%[[Q]], %[[K]], %{{.*}}] : memref<8x32x2xf32>, vector<2xf32>
// FEW-NEXT:        }
func.func @transposed_a(%x: memref<64x64xf32>, %dz: memref<64x32xf32>, %g: memref<64x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %dz : memref<64x64xf32>, memref<64x32xf32>) outs(%g : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// A dynamic K (a weight gradient's batch: C = A^T B, the rows of A and B the batch) with an
// epilogue may be several blocks, each adding into the f64 accumulator (which stays) once,
// at its end (@widened): its blocks are `kc-dynamic` long (64, not kc = 32), the packed B
// panel sized for one, so that a K up to it is one block and C is never read; 0 keeps kc.
// DYN-LABEL: func.func @dynamic_k(
// DYN-DAG:     %[[KC:.*]] = arith.constant 64 : index
// DYN-DAG:     %[[ACC:.*]] = memory.alloc() : memref<16x32xf64>
// DYN:         %[[K:.*]] = memory.dim %{{.*}}, 0 : memref<?x16xf32>
// DYN:         memory.alloc() : memref<2x64x16xf32>
// DYN:         loop.for %{{.*}} = %{{.*}} to %[[K]] step %[[KC]] {
// DYN0-LABEL: func.func @dynamic_k(
// DYN0-DAG:    %[[KC:.*]] = arith.constant 32 : index
// DYN0:        %[[K:.*]] = memory.dim %{{.*}}, 0 : memref<?x16xf32>
// DYN0:        memory.alloc() : memref<2x32x16xf32>
// DYN0:        loop.for %{{.*}} = %{{.*}} to %[[K]] step %[[KC]] {
func.func @dynamic_k(%a: memref<?x16xf32>, %b: memref<?x32xf32>, %y: memref<16x32xf32>) {
  %zero = arith.constant 0.0 : f64
  fusion.group {kind = "epilogue", outer_dims = 2 : i64} {
    %acc = memory.alloc() : memref<16x32xf64>
    linalg.fill ins(%zero : f64) outs(%acc : memref<16x32xf64>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                     affine_map<(d0, d1, d2) -> (d2, d1)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<?x16xf32>, memref<?x32xf32>) outs(%acc : memref<16x32xf64>) {
    ^bb0(%x: f32, %w: f32, %s: f64):
      %p = arith.mulf %x, %w : f32
      %e = arith.extf %p : f32 to f64
      %t = arith.addf %s, %e : f64
      linalg.yield %t : f64
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%acc : memref<16x32xf64>) outs(%y : memref<16x32xf32>) {
    ^bb0(%x: f64, %o: f32):
      %r = arith.truncf %x : f64 to f32
      linalg.yield %r : f32
    }
    memory.dealloc %acc : memref<16x32xf64>
  }
  return
}

// x @ w with a dynamic M: B is read where it lies while M is at most `direct-b-tiles`
// register tiles (4 x mr = 8 rows), else packed, as a flag computed once says: the packing
// runs only without it, and the micro-kernel's k loop is there twice, one reading B itself,
// one the packed panel, each with its own addressing, under a `loop.if` that yields the
// accumulators to the tile's one set of stores.
// XW-LABEL: func.func @xw(
// XW-SAME:      %[[A:[^:]*]]: memref<?x64xf32>, %[[B:[^:]*]]: memref<64x32xf32>
// XW-DAG:     %[[EIGHT:.*]] = arith.constant 8 : index
// XW:         %[[M:.*]] = memory.dim %[[A]], 0
// XW:         %[[DIRECT:.*]] = arith.cmpi sle, %[[M]], %[[EIGHT]] : index
// XW:         %[[BP:.*]] = memory.alloc() : memref<2x32x16xf32>
// XW:         loop.if %[[DIRECT]] {
// XW-NEXT:    } else {
// XW-NEXT:      arith.ceildivsi
// XW-NEXT:      loop.parallel
// XW:         %[[ACC:.*]]:4 = loop.if %[[DIRECT]] -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// XW:           loop.for
// XW:             memory.vector_load %[[B]][%{{.*}}, %{{.*}}] : memref<64x32xf32>, vector<8xf32>
// XW:             math.fma
// XW:         } else {
// XW:           loop.for
// XW:             memory.vector_load %[[BP]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x32x16xf32>, vector<8xf32>
// XW:             math.fma
// XW:         memory.vector_load %{{.*}} : memref<?x32xf32>, vector<8xf32>
// XW:         arith.addf %{{.*}}, %[[ACC]]#0 : vector<8xf32>
func.func @xw(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %c: memref<?x32xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  return
}

// A factor of A on M alone (a batchnorm scale times dz, in a filter gradient) multiplies the
// tile's sums once per row after the k loop, not every element of A: A is then one factor,
// read where it lies, with no product in the k loop.
// SCALED-LABEL: func.func @row_scaled(
// SCALED-SAME:      %[[A:[^:]*]]: memref<8x64xf32>, %[[S:[^:]*]]: memref<8xf32>, %[[B:[^:]*]]: memref<64x32xf32>, %[[C:[^:]*]]: memref<8x32xf32>)
// SCALED:         %[[SUMS:.*]]:4 = loop.for
// SCALED-NOT:       arith.mulf
// SCALED:           %[[X:.*]] = memory.load %[[A]][%[[ROW:.*]], %{{.*}}] : memref<8x64xf32>
// SCALED-NEXT:      vector.broadcast %[[X]] : f32 to vector<8xf32>
// SCALED-NEXT:      math.fma
// SCALED:         %[[G:.*]] = memory.load %[[S]][%[[ROW]]] : memref<8xf32>
// SCALED-NEXT:    %[[GV:.*]] = vector.broadcast %[[G]] : f32 to vector<8xf32>
// SCALED-NEXT:    %[[P:.*]] = arith.mulf %[[SUMS]]#0, %[[GV]] : vector<8xf32>
// SCALED-NEXT:    arith.mulf %[[SUMS]]#1, %[[GV]] : vector<8xf32>
// SCALED:         %[[OLD:.*]] = memory.vector_load %[[C]][%[[ROW]], %{{.*}}] : memref<8x32xf32>, vector<8xf32>
// SCALED-NEXT:    arith.addf %[[OLD]], %[[P]] : vector<8xf32>
func.func @row_scaled(%a: memref<8x64xf32>, %s: memref<8xf32>, %b: memref<64x32xf32>, %c: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0)>,
                                   affine_map<(d0, d1, d2) -> (d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %s, %b : memref<8x64xf32>, memref<8xf32>, memref<64x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %g: f32, %y: f32, %acc: f32):
    %xs = arith.mulf %x, %g : f32
    %p = arith.mulf %xs, %y : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }
  return
}

// A filter gradient's shape: M (8) is one row block, K runs over the images (dynamic) and
// 72 values each. Split between threads by rows it would be one thread's: the nest runs
// per image instead (a parallel loop), into partial sums P[image, m, n], and then each
// element of C is their sum (from 0: the zero fill is folded away).
// PERIMG-LABEL: func.func @per_image(
// PERIMG-SAME:      %[[A:[^:]*]]: memref<?x8x72xf32>, %{{[^:]*}}: memref<?x9x72xf32>, %[[C:[^:]*]]: memref<8x9xf64>)
// PERIMG-NOT:     linalg.fill
// PERIMG:         %[[N:.*]] = memory.dim %[[A]], 0 : memref<?x8x72xf32>
// PERIMG-NEXT:    %[[P:.*]] = memory.alloc(%[[N]]) : memref<?x8x9xf64>
// PERIMG:         loop.parallel (%[[IMG:[^)]*]]) =
// PERIMG:         memory.vector_store %{{.*}}, %[[P]][%[[IMG]], %{{.*}}, %{{.*}}] : memref<?x8x9xf64>, vector<8xf64>
// PERIMG:         %[[IMAGES:.*]] = memory.dim %[[P]], 0 : memref<?x8x9xf64>
// PERIMG-NEXT:    loop.parallel (%[[I:[^,]*]], %[[J:[^)]*]]) =
// PERIMG:           loop.for %[[K:[^ ]*]] = %{{.*}} to %[[IMAGES]] step
// PERIMG-NEXT:        memory.load %[[P]][%[[K]], %[[I]], %[[J]]] : memref<?x8x9xf64>
// PERIMG:           memory.store %{{.*}}, %[[C]][%[[I]], %[[J]]] : memref<8x9xf64>
// PERIMG:         memory.dealloc %[[P]] : memref<?x8x9xf64>
func.func @per_image(%a: memref<?x8x72xf32>, %b: memref<?x9x72xf32>, %c: memref<8x9xf64>) {
  %z = arith.constant 0.0 : f64
  linalg.fill ins(%z : f64) outs(%c : memref<8x9xf64>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d0, d3)>,
                                   affine_map<(d0, d1, d2, d3) -> (d2, d1, d3)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<?x8x72xf32>, memref<?x9x72xf32>) outs(%c : memref<8x9xf64>) {
  ^bb0(%x: f32, %y: f32, %s: f64):
    %p = arith.mulf %x, %y : f32
    %w = arith.extf %p : f32 to f64
    %t = arith.addf %s, %w : f64
    linalg.yield %t : f64
  }
  return
}

// A dynamic M with 6-row tiles: a tile with fewer than 3 of its rows inside M (the batch's
// last one) runs a two-row kernel per pair of those rows (an odd last row paired with
// itself), not the six-row kernel whose extra rows are never stored: each pair's sums go
// into the tile's scratch by rows, and the tile's 6 x 2 vectors come back from it, rows
// past M as the last row inside.
// THIN-LABEL: func.func @thin(
// THIN-SAME:      %[[A:[^:]*]]: memref<?x64xf32>
// THIN-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// THIN-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// THIN-DAG:     %[[SIX:.*]] = arith.constant 6 : index
// THIN:         %[[SCRATCH:.*]] = memory.alloc() : memref<6x16xf32>
// THIN:         %[[INSIDE:.*]] = arith.minsi %[[SIX]], %{{.*}} : index
// THIN:         %[[TWICE:.*]] = arith.muli %[[INSIDE]], %[[TWO]] : index
// THIN-NEXT:    %[[SPARSE:.*]] = arith.cmpi slt, %[[TWICE]], %[[SIX]] : index
// THIN-NEXT:    %[[LAST:.*]] = arith.subi %[[INSIDE]], %[[ONE]] : index
// THIN-NEXT:    %{{.*}}:12 = loop.if %[[SPARSE]] -> (vector<8xf32>
// THIN-NEXT:      loop.for %[[R:[^ ]*]] = %{{.*}} to %[[INSIDE]] step %[[TWO]] {
// THIN-NEXT:        %[[NEXT:.*]] = arith.addi %[[R]], %[[ONE]] : index
// THIN-NEXT:        %[[R2:.*]] = arith.minsi %[[NEXT]], %[[LAST]] : index
// THIN-NEXT:        %[[M1:.*]] = arith.addi %[[ROW0:[^ ]*]], %[[R]] : index
// THIN-NEXT:        %[[M2:.*]] = arith.addi %[[ROW0]], %[[R2]] : index
// THIN:             %[[SUMS:.*]]:4 = loop.for
// THIN:               memory.load %[[A]][%[[M1]], %{{.*}}] : memref<?x64xf32>
// THIN-COUNT-2:       math.fma
// THIN:               memory.load %[[A]][%[[M2]], %{{.*}}] : memref<?x64xf32>
// THIN-COUNT-2:       math.fma
// THIN-NOT:           math.fma
// THIN:             memory.vector_store %[[SUMS]]#0, %[[SCRATCH]][%[[R]], %{{.*}}]
// THIN-NEXT:        memory.vector_store %[[SUMS]]#1, %[[SCRATCH]][%[[R]], %{{.*}}]
// THIN-NEXT:        memory.vector_store %[[SUMS]]#2, %[[SCRATCH]][%[[R2]], %{{.*}}]
// THIN-NEXT:        memory.vector_store %[[SUMS]]#3, %[[SCRATCH]][%[[R2]], %{{.*}}]
// THIN-NEXT:      }
// THIN-COUNT-12:  memory.vector_load %[[SCRATCH]]
// THIN:         } else {
// THIN:           loop.for
// THIN-COUNT-12:    math.fma
func.func @thin(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %c: memref<?x32xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  return
}

// A static M of 4 rows is 2 row blocks of one tile, fewer than a team of up to row-blocks (8)
// can share: each block's 8 column tiles (nc = 128 of N = 320) are cut into 4 parts, and the
// threads split the 8 items, part-major (item i: block i mod 2, part i / 2), so that a thread
// reads the columns of B its parts cover, not all of B for its rows.
// PARTS-LABEL: func.func @few_rows(
// PARTS-SAME:      %[[A:[^:]*]]: memref<4x64xf32>, %[[B:[^:]*]]: memref<64x320xf32>
// PARTS-DAG:     %[[C2:.*]] = arith.constant 2 : index
// PARTS-DAG:     %[[C4:.*]] = arith.constant 4 : index
// PARTS-DAG:     %[[C8:.*]] = arith.constant 8 : index
// PARTS:         loop.for %[[JC:[^ ]*]] =
// PARTS:           %[[NB:.*]] = arith.minsi
// PARTS:           loop.for
// PARTS:             loop.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[C8]]) step
// PARTS-NEXT:          %[[BLOCK:.*]] = arith.remui %[[I]], %[[C2]] : index
// PARTS-NEXT:          %[[PART:.*]] = arith.divui %[[I]], %[[C2]] : index
// PARTS:               %[[NT:.*]] = arith.ceildivsi %[[NB]], %{{.*}} : index
// PARTS-NEXT:          %[[S0:.*]] = arith.muli %[[PART]], %[[NT]] : index
// PARTS-NEXT:          %[[P0:.*]] = arith.divui %[[S0]], %[[C4]] : index
// PARTS-NEXT:          %[[NEXT:.*]] = arith.addi %[[PART]], %{{.*}} : index
// PARTS-NEXT:          %[[S1:.*]] = arith.muli %[[NEXT]], %[[NT]] : index
// PARTS-NEXT:          %[[P1:.*]] = arith.divui %[[S1]], %[[C4]] : index
// PARTS-NEXT:          loop.for %{{.*}} = %[[P0]] to %[[P1]] step
// PARTS:                 math.fma
// PARTS:         return
func.func @few_rows(%a: memref<4x64xf32>, %b: memref<64x320xf32>, %c: memref<4x320xf32>) {
  linalg.matmul ins(%a, %b : memref<4x64xf32>, memref<64x320xf32>) outs(%c : memref<4x320xf32>)
  return
}

// K = 75 with chunks of 4 vectors (32 of K on 8 lanes): 9 whole vectors and a tail of 3. The
// chunks but the last run in a loop carrying the 20 sums of a tile in f64 (C's type): in each,
// the vector loop from zero, one tree of all 20 accumulators' lanes (`dot.lane_sums`: 10
// pairs' shuffles and adds first), each sum widened and added. Then the
// last chunk (64 to 72), the tail's products into its float32 sums, their sum with the
// running ones, added to C (no zero fill folded here).
// CHUNK-LABEL: func.func @skinny_long(
// CHUNK:         loop.parallel
// CHUNK:           %[[TOT:.*]]:20 = loop.for %[[K0:[^ ]*]] = %{{[^ ]*}} to %[[C64:[^ ]*]] step %[[C32:[^ ]*]] iter_args({{.*}}) -> (f64, {{.*}}) {
// CHUNK-NEXT:        %[[K1:.*]] = arith.addi %[[K0]], %[[C32]] : index
// CHUNK-NEXT:        %[[ACC:.*]]:20 = loop.for %{{[^ ]*}} = %[[K0]] to %[[K1]] step %{{[^ ]*}} iter_args({{.*}}) -> (vector<8xf32>,
// CHUNK:             vector.shuffle %[[ACC]]#0, %[[ACC]]#1 [0, 1, 2, 3, 8, 9, 10, 11] : vector<8xf32>, vector<8xf32>
// CHUNK:             %[[S0:.*]] = vector.extract %{{.*}}[0] : f32 from vector<8xf32>
// CHUNK:             %[[W0:.*]] = arith.extf %[[S0]] : f32 to f64
// CHUNK-NEXT:        %[[T0:.*]] = arith.addf %{{.*}}, %[[W0]] : f64
// CHUNK:             loop.yield %[[T0]],
// CHUNK:           %[[LAST:.*]]:20 = loop.for %{{[^ ]*}} = %[[C64]] to %[[C72:[^ ]*]] step %{{[^ ]*}} iter_args(
// CHUNK:           vector.shuffle %[[LAST]]#0, %[[LAST]]#1 [0, 1, 2, 3, 8, 9, 10, 11]
// CHUNK:           %[[L0:.*]] = vector.extract %{{.*}}[0] : f32 from vector<8xf32>
// CHUNK:           %[[TAIL:.*]]:20 = loop.for %{{[^ ]*}} = %[[C72]] to %{{[^ ]*}} step %{{[^ ]*}} iter_args(%{{[^ ]*}} = %[[L0]],
// CHUNK:           %[[X0:.*]] = arith.extf %[[TAIL]]#0 : f32 to f64
// CHUNK:           %[[Y0:.*]] = arith.addf %[[TOT]]#0, %[[X0]] : f64
// CHUNK:             %[[OLD:.*]] = memory.load %{{.*}} : memref<?x10xf64>
// CHUNK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %[[Y0]] : f64
// CHUNK-NEXT:        memory.store %[[NEW]]
func.func @skinny_long(%a: memref<?x75xf32>, %b: memref<75x10xf32>, %c: memref<?x10xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x75xf32>, memref<75x10xf32>) outs(%c : memref<?x10xf64>) {
  ^bb0(%x: f32, %y: f32, %acc: f64):
    %p = arith.mulf %x, %y : f32
    %w = arith.extf %p : f32 to f64
    %s = arith.addf %acc, %w : f64
    linalg.yield %s : f64
  }
  return
}

// A dot-product nest already inside a parallel loop: one level of threads, so no team region
// of its own (it would be nested in the loop); one Bt, the row tiles a plain loop.
// SKINNY-LABEL: func.func @skinny_nested(
// SKINNY:         loop.parallel
// SKINNY-NOT:       omp.parallel
// SKINNY:           %[[BT:.*]] = memory.alloc() : memref<10x64xf32>
// SKINNY-NOT:       omp.parallel
// SKINNY-NOT:       loop.parallel
// SKINNY:           vector.extract
// SKINNY:           memory.dealloc %[[BT]]
// SKINNY:         return
func.func @skinny_nested(%a: memref<?x64xf32>, %b: memref<64x10xf32>, %c: memref<?x10xf32>,
                         %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x10xf32>) outs(%c : memref<?x10xf32>)
  }
  return
}
