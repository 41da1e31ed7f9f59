// RUN: irkit-opt %s -p 'loop-vectorize{width=8 interleave=1 remarks=true}' | FileCheck %s
// RUN: irkit-opt %s -p 'loop-vectorize{width=8}' | FileCheck %s --check-prefix=INTERLEAVE

// An elementwise loop: unit-stride loads and stores become 8-lane vector accesses, the
// invariant scale factor is broadcast, and the original loop is kept as the scalar
// remainder from the last multiple of 8. The function is marked `irkit.vectorized`: the
// LLVM backend keeps LLVM's loop vectorizer off its loops, the remainder included.

// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?xf32>, %[[B:[^:]*]]: memref<?xf32>, %[[C:[^:]*]]: memref<?xf32>, %[[S:[^:]*]]: f32) attributes {irkit.vectorized} {
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[N:.*]] = memory.dim %[[A]], 0
// CHECK:         %[[REM:.*]] = arith.remsi %[[N]], %[[C8]] : index
// CHECK:         %[[MAIN:.*]] = arith.subi %[[N]], %[[REM]] : index
// CHECK:         loop.parallel (%[[I:.*]]) = (%[[C0]]) to (%[[MAIN]]) step (%[[C8]]) {
// CHECK-NEXT:      %[[X:.*]] = memory.vector_load %[[A]][%[[I]]] : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:      %[[Y:.*]] = memory.vector_load %[[B]][%[[I]]] : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:      %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[X]], %[[SV]] : vector<8xf32>
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[M]], %[[Y]] : vector<8xf32>
// CHECK-NEXT:      memory.vector_store %[[R]], %[[C]][%[[I]]] : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.parallel (%[[J:.*]]) = (%[[MAIN]]) to (%[[N]]) step (%[[C1]]) {
// CHECK-NEXT:      memory.load %[[A]][%[[J]]] : memref<?xf32>
// CHECK:           memory.store {{.*}} : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     loop_vectorize.missed
func.func @elementwise(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memory.load %a[%i] : memref<?xf32>
    %y = memory.load %b[%i] : memref<?xf32>
    %m = arith.mulf %x, %s : f32
    %r = arith.addf %m, %y : f32
    memory.store %r, %c[%i] : memref<?xf32>
  }
  return
}

// A static trip count that is a multiple of the width leaves no remainder; a row-invariant
// load (a bias per row) is a scalar load and a broadcast; `cmpf` and `select` work lane-wise
// on `vector<8xi1>`.

// CHECK-LABEL: func.func @static_relu_bias(
// CHECK:         loop.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to ({{.*}}) step (%{{.*}}, %[[C8:.*]]) {
// CHECK-NEXT:      %[[X:.*]] = memory.vector_load %{{.*}}[%[[I]], %[[J]]] : memref<4x64xf32>, vector<8xf32>
// CHECK-NEXT:      %[[BIAS:.*]] = memory.load %{{.*}}[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %[[BV:.*]] = vector.broadcast %[[BIAS]] : f32 to vector<8xf32>
// CHECK-NEXT:      %[[Z:.*]] = arith.addf %[[X]], %[[BV]] : vector<8xf32>
// CHECK:           %[[POS:.*]] = arith.cmpf ogt, %[[Z]], %{{.*}} : vector<8xf32>
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[POS]], %[[Z]], %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:      memory.vector_store %[[R]], %{{.*}}[%[[I]], %[[J]]] : memref<4x64xf32>, vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @static_relu_bias(%x: memref<4x64xf32>, %b: memref<4xf32>, %y: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  loop.parallel (%i, %j) = (%c0, %c0) to (%c4, %c64) step (%c1, %c1) {
    %v = memory.load %x[%i, %j] : memref<4x64xf32>
    %bias = memory.load %b[%i] : memref<4xf32>
    %z = arith.addf %v, %bias : f32
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %z, %zero : f32
    memory.store %r, %y[%i, %j] : memref<4x64xf32>
  }
  return
}

// A row sum as lower-linalg-to-loop emits it (f32 terms added into an f64 accumulator):
// the inner loop carries 8 partial sums from -0.0 (the identity of addf), a
// `vector.reduction` adds them to the loop's init, and the scalar loop finishes the row.

// CHECK-LABEL: func.func @row_sum(
// CHECK:         loop.parallel (%[[I:.*]]) =
// CHECK-NEXT:      %[[INIT:.*]] = memory.load %{{.*}}[%[[I]]] : memref<?xf64>
// CHECK:           %[[ID:.*]] = arith.constant -0.000000e+00 : f64
// CHECK-NEXT:      %[[IDV:.*]] = vector.broadcast %[[ID]] : f64 to vector<8xf64>
// CHECK-NEXT:      %[[P:.*]] = loop.for %[[K:.*]] = %{{.*}} to %[[MAIN:.*]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[IDV]]) -> (vector<8xf64>) {
// CHECK-NEXT:        %[[X:.*]] = memory.vector_load %{{.*}}[%[[I]], %[[K]]] : memref<?x?xf32>, vector<8xf32>
// CHECK-NEXT:        %[[E:.*]] = arith.extf %[[X]] : vector<8xf32> to vector<8xf64>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[ACC]], %[[E]] : vector<8xf64>
// CHECK-NEXT:        loop.yield %[[S]] : vector<8xf64>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[R:.*]] = vector.reduction <add>, %[[P]], %[[INIT]] fastmath<reassoc> : vector<8xf64> into f64
// CHECK-NEXT:      %[[T:.*]] = loop.for %{{.*}} = %[[MAIN]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[R]]) -> (f64) {
// CHECK:             arith.addf %{{.*}} : f64
// CHECK:           memory.store %[[T]], %{{.*}}[%[[I]]] : memref<?xf64>
func.func @row_sum(%a: memref<?x?xf32>, %out: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memory.dim %a, 0 : memref<?x?xf32>
  %n = memory.dim %a, 1 : memref<?x?xf32>
  loop.parallel (%i) = (%c0) to (%m) step (%c1) {
    %init = memory.load %out[%i] : memref<?xf64>
    %r = loop.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (f64) {
      %x = memory.load %a[%i, %k] : memref<?x?xf32>
      %e = arith.extf %x : f32 to f64
      %s = arith.addf %acc, %e : f64
      loop.yield %s : f64
    }
    memory.store %r, %out[%i] : memref<?xf64>
  }
  return
}

// The row max: maximumf is exactly associative, its identity -inf.

// CHECK-LABEL: func.func @row_max(
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         loop.for {{.*}} -> (vector<8xf32>)
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         vector.reduction <maximumf>, %{{.*}}, %{{.*}} : vector<8xf32> into f32
func.func @row_max(%a: memref<?xf32>, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?xf32>
  %r = loop.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
    %x = memory.load %a[%k] : memref<?xf32>
    %s = arith.maximumf %acc, %x : f32
    loop.yield %s : f32
  }
  return %r : f32
}

// A 2 x 2 max-pool window: the input column 2x + kx steps by 2 along the lanes. Each load
// is one contiguous load from lane 0's element to the last lane's (11 floats for 6 lanes,
// nothing past what the scalar loop reads) and a shuffle of every second one. The 6
// columns, fewer than 8, are one vector of 6 lanes: no remainder.

// CHECK-LABEL: func.func @pool(
// CHECK:         loop.parallel (%[[Y:[^,]*]], %[[X:[^)]*]]) = {{.*}} step (%{{.*}}, %{{.*}}) {
// CHECK:           %[[X2:.*]] = arith.muli %[[X]], %{{.*}} : index
// CHECK:           loop.for %[[KY:[^ ]*]] = {{.*}} -> (vector<6xf32>) {
// CHECK:             loop.for %[[KX:[^ ]*]] = {{.*}} -> (vector<6xf32>) {
// CHECK-NEXT:          %[[COL:.*]] = arith.addi %[[X2]], %[[KX]] : index
// CHECK-NEXT:          %[[W:.*]] = memory.vector_load %arg0[%{{.*}}, %[[COL]]] : memref<4x12xf32>, vector<11xf32>
// CHECK-NEXT:          %[[E:.*]] = vector.shuffle %[[W]], %[[W]] [0, 2, 4, 6, 8, 10] : vector<11xf32>, vector<11xf32>
// CHECK-NEXT:          arith.maximumf %{{.*}}, %[[E]] : vector<6xf32>
// CHECK:         memory.vector_store %{{.*}}, %arg1[%[[Y]], %[[X]]] : memref<2x6xf32>, vector<6xf32>
// CHECK-NOT:     loop.parallel
// CHECK-NOT:     loop_vectorize.missed
// CHECK:         return
func.func @pool(%in: memref<4x12xf32>, %out: memref<2x6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  loop.parallel (%y, %x) = (%c0, %c0) to (%c2, %c6) step (%c1, %c1) {
    %init = memory.load %out[%y, %x] : memref<2x6xf32>
    %y2 = arith.muli %y, %c2 : index
    %x2 = arith.muli %x, %c2 : index
    %m = loop.for %ky = %c0 to %c2 step %c1 iter_args(%a = %init) -> (f32) {
      %row = arith.addi %y2, %ky : index
      %n = loop.for %kx = %c0 to %c2 step %c1 iter_args(%b = %a) -> (f32) {
        %col = arith.addi %x2, %kx : index
        %v = memory.load %in[%row, %col] : memref<4x12xf32>
        %mx = arith.maximumf %b, %v : f32
        loop.yield %mx : f32
      }
      loop.yield %n : f32
    }
    memory.store %m, %out[%y, %x] : memref<2x6xf32>
  }
  return
}

// A store whose lanes are apart, and a load at a stride above 4, stay scalar.

// CHECK-LABEL: func.func @strided_store(
// CHECK-NOT:     vector{{[<.]}}
// CHECK:         } {loop_vectorize.missed = "'memory.store' of lanes 2 elements apart (a strided store)"}
func.func @strided_store(%in: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memory.dim %in, 0 : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memory.load %in[%i] : memref<?xf32>
    %j = arith.muli %i, %c2 : index
    memory.store %x, %out[%j] : memref<?xf32>
  }
  return
}

// CHECK-LABEL: func.func @stride5(
// CHECK-NOT:     vector{{[<.]}}
// CHECK:         } {loop_vectorize.missed = "lanes 5 elements apart (at most 4 are loaded together and shuffled)"}
func.func @stride5(%in: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %n = memory.dim %out, 0 : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %j = arith.muli %c5, %i : index
    %x = memory.load %in[%j] : memref<?xf32>
    memory.store %x, %out[%i] : memref<?xf32>
  }
  return
}

// A gather (the index loaded from memory) stays scalar, with the reason.

// CHECK-LABEL: func.func @gather(
// CHECK-NOT:     vector{{[<.]}}
// CHECK:         loop.parallel
// CHECK:         } {loop_vectorize.missed = "'arith.index_cast' computes a per-lane index (a gather or scatter)"}
func.func @gather(%idx: memref<?xi32>, %table: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %idx, 0 : memref<?xi32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %k = memory.load %idx[%i] : memref<?xi32>
    %ki = arith.index_cast %k : i32 to index
    %v = memory.load %table[%ki] : memref<?xf32>
    memory.store %v, %out[%i] : memref<?xf32>
  }
  return
}

// A lane index cast to an integer (a one-hot: the label compared with the column): lane
// 0's index cast once and splatted, plus the lanes' offsets [0, 1, ..., 7].

// CHECK-LABEL: func.func @one_hot(
// CHECK-SAME:      %[[L:[^:]*]]: memref<?xi32>, %[[OUT:[^:]*]]: memref<?x?xf32>
// CHECK:         loop.parallel (%[[R:[^,]*]], %[[J:[^)]*]]) =
// CHECK:           %[[P:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:      %[[PS:.*]] = vector.broadcast %[[P]] : i64 to vector<8xi64>
// CHECK-NEXT:      %[[STEP:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi64>
// CHECK-NEXT:      %[[PV:.*]] = arith.addi %[[PS]], %[[STEP]] : vector<8xi64>
// CHECK:           arith.cmpi eq, %{{.*}}, %[[PV]] : vector<8xi64>
// CHECK:           memory.vector_store %{{.*}}, %[[OUT]][%[[R]], %[[J]]] : memref<?x?xf32>, vector<8xf32>
func.func @one_hot(%labels: memref<?xi32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %rows = memory.dim %out, 0 : memref<?x?xf32>
  %cols = memory.dim %out, 1 : memref<?x?xf32>
  loop.parallel (%r, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %l = memory.load %labels[%r] : memref<?xi32>
    %lw = arith.extsi %l : i32 to i64
    %p = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %lw, %p : i64
    %v = arith.select %eq, %one, %zero : f32
    memory.store %v, %out[%r, %j] : memref<?x?xf32>
  }
  return
}

// A column access (the lanes stride over rows) stays scalar too.

// CHECK-LABEL: func.func @column(
// CHECK:         {loop_vectorize.missed = "'memory.load' strides the lanes over a dimension other than the last"}
func.func @column(%a: memref<64x64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  loop.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memory.load %a[%i, %c0] : memref<64x64xf32>
    memory.store %v, %out[%i] : memref<64xf32>
  }
  return
}

// Matmul as lower-linalg-to-loop emits it: j, the last parallel dimension, is unit-stride
// in C and B and the k loop is inside it. The k loop carries 8 sums of j lanes (f64, as
// the emitter accumulates): A[i, k] is a scalar load and a broadcast, B[k, j:j+8] one
// vector load; no lane's sum is reordered. 20 columns: 16 in vectors of 8, and the static
// remainder of 4 in one vector of 4, nothing left scalar.

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?x32xf32>, %[[B:[^:]*]]: memref<32x20xf32>, %[[C:[^:]*]]: memref<?x20xf64>)
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK:         loop.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to (%{{.*}}, %[[C16]]) step (%{{.*}}, %[[C8]]) {
// CHECK-NEXT:      %[[ACC:.*]] = memory.vector_load %[[C]][%[[I]], %[[J]]] : memref<?x20xf64>, vector<8xf64>
// CHECK-NEXT:      %[[S:.*]] = loop.for %[[K:.*]] = {{.*}} iter_args(%[[SUM:.*]] = %[[ACC]]) -> (vector<8xf64>) {
// CHECK-NEXT:        %[[X:.*]] = memory.load %[[A]][%[[I]], %[[K]]] : memref<?x32xf32>
// CHECK-NEXT:        %[[Y:.*]] = memory.vector_load %[[B]][%[[K]], %[[J]]] : memref<32x20xf32>, vector<8xf32>
// CHECK-NEXT:        %[[XV:.*]] = vector.broadcast %[[X]] : f32 to vector<8xf32>
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[XV]], %[[Y]] : vector<8xf32>
// CHECK-NEXT:        %[[PE:.*]] = arith.extf %[[P]] : vector<8xf32> to vector<8xf64>
// CHECK-NEXT:        %[[N:.*]] = arith.addf %[[SUM]], %[[PE]] : vector<8xf64>
// CHECK-NEXT:        loop.yield %[[N]] : vector<8xf64>
// CHECK-NEXT:      }
// CHECK-NEXT:      memory.vector_store %[[S]], %[[C]][%[[I]], %[[J]]] : memref<?x20xf64>, vector<8xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.parallel (%[[I4:.*]], %[[J4:.*]]) = (%{{.*}}, %[[C16]]) to
// CHECK-NEXT:      %[[ACC4:.*]] = memory.vector_load %[[C]][%[[I4]], %[[J4]]] : memref<?x20xf64>, vector<4xf64>
// CHECK:           memory.vector_load %[[B]][%{{.*}}, %[[J4]]] : memref<32x20xf32>, vector<4xf32>
// CHECK:           memory.vector_store %{{.*}}, %[[C]][%[[I4]], %[[J4]]] : memref<?x20xf64>, vector<4xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @matmul(%a: memref<?x32xf32>, %b: memref<32x20xf32>, %c: memref<?x20xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %c32 = arith.constant 32 : index
  %m = memory.dim %a, 0 : memref<?x32xf32>
  loop.parallel (%i, %j) = (%c0, %c0) to (%m, %c20) step (%c1, %c1) {
    %acc = memory.load %c[%i, %j] : memref<?x20xf64>
    %s = loop.for %k = %c0 to %c32 step %c1 iter_args(%sum = %acc) -> (f64) {
      %x = memory.load %a[%i, %k] : memref<?x32xf32>
      %y = memory.load %b[%k, %j] : memref<32x20xf32>
      %p = arith.mulf %x, %y : f32
      %pe = arith.extf %p : f32 to f64
      %n = arith.addf %sum, %pe : f64
      loop.yield %n : f64
    }
    memory.store %s, %c[%i, %j] : memref<?x20xf64>
  }
  return
}

// A static remainder is one vector of exactly what is left, whatever its count: rows of 14
// are a vector of 8 and one of 6 (LLVM widens the 6 lanes to a register and splits only
// the loads and stores), not 8, 4 and 2, each running the body again.
// CHECK-LABEL: func.func @row_of_fourteen(
// CHECK:         loop.parallel ({{.*}}) step (%{{.*}}, %[[C8:[^)]*]]) {
// CHECK:           arith.mulf %{{.*}} : vector<8xf32>
// CHECK:         loop.parallel ({{.*}}) step (%{{.*}}, %[[C6:[^)]*]]) {
// CHECK:           %[[V:.*]] = memory.vector_load %{{.*}} : memref<?x14xf32>, vector<6xf32>
// CHECK:           arith.mulf %[[V]], %{{.*}} : vector<6xf32>
// CHECK-NOT:     vector<4xf32>
// CHECK-NOT:     vector<2xf32>
// CHECK-NOT:     loop.parallel
// CHECK:         return
func.func @row_of_fourteen(%a: memref<?x14xf32>, %b: memref<?x14xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  %two = arith.constant 2.0 : f32
  %n = memory.dim %a, 0 : memref<?x14xf32>
  loop.parallel (%i, %j) = (%c0, %c0) to (%n, %c14) step (%c1, %c1) {
    %x = memory.load %a[%i, %j] : memref<?x14xf32>
    %y = arith.mulf %x, %two : f32
    memory.store %y, %b[%i, %j] : memref<?x14xf32>
  }
  return
}

// An index `lane + c` (and `c + lane`) is still unit stride: both loads become vector loads.
// CHECK-LABEL: func.func @shifted(
// CHECK:         loop.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[K:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK:           memory.vector_load %{{.*}}[%[[K]]] : memref<34xf32>, vector<8xf32>
// CHECK:           %[[L:.*]] = arith.addi %{{.*}}, %[[J]] : index
// CHECK:           memory.vector_load %{{.*}}[%[[L]]] : memref<34xf32>, vector<8xf32>
// CHECK:           memory.vector_store %{{.*}}, %{{.*}}[%[[J]]] : memref<32xf32>, vector<8xf32>
// CHECK-NOT:     loop_vectorize.missed
func.func @shifted(%x: memref<34xf32>, %y: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  loop.for %j = %c0 to %c32 step %c1 {
    %k = arith.addi %j, %c1 : index
    %v = memory.load %x[%k] : memref<34xf32>
    %l = arith.addi %c2, %j : index
    %u = memory.load %x[%l] : memref<34xf32>
    %w = arith.mulf %v, %u : f32
    memory.store %w, %y[%j] : memref<32xf32>
  }
  return
}

// Interleaving (the second RUN line, the default interleave=4): a short reduction body is
// run 4 times per iteration, each copy carrying its own partial results, so 4 chains of
// `maximumf` run side by side. The copies' partials are combined lane-wise (a tree), a
// one-copy vector loop continues from them to the last multiple of 8, and the reduction
// and the scalar remainder follow as without interleaving.

// INTERLEAVE-LABEL: func.func @interleaved_max(
// INTERLEAVE-SAME:      %[[A:[^:]*]]: memref<?xf32>, %[[INIT:[^:]*]]: f32)
// INTERLEAVE-DAG:     %[[C8:.*]] = arith.constant 8 : index
// INTERLEAVE-DAG:     %[[C16:.*]] = arith.constant 16 : index
// INTERLEAVE-DAG:     %[[C24:.*]] = arith.constant 24 : index
// INTERLEAVE-DAG:     %[[C32:.*]] = arith.constant 32 : index
// INTERLEAVE:         %[[N:.*]] = memory.dim %[[A]], 0
// INTERLEAVE-NEXT:    %[[R1:.*]] = arith.remsi %[[N]], %[[C8]] : index
// INTERLEAVE-NEXT:    %[[M1:.*]] = arith.subi %[[N]], %[[R1]] : index
// INTERLEAVE:         %[[NEGINF:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// INTERLEAVE-NEXT:    %[[R4:.*]] = arith.remsi %[[N]], %[[C32]] : index
// INTERLEAVE-NEXT:    %[[M4:.*]] = arith.subi %[[N]], %[[R4]] : index
// INTERLEAVE-NEXT:    %[[P:.*]]:4 = loop.for %[[K:.*]] = %{{.*}} to %[[M4]] step %[[C32]] iter_args(%[[A0:.*]] = %[[NEGINF]], %[[A1:.*]] = %[[NEGINF]], %[[A2:.*]] = %[[NEGINF]], %[[A3:.*]] = %[[NEGINF]]) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// INTERLEAVE-NEXT:      %[[X0:.*]] = memory.vector_load %[[A]][%[[K]]]
// INTERLEAVE-NEXT:      %[[Y0:.*]] = arith.maximumf %[[A0]], %[[X0]] : vector<8xf32>
// INTERLEAVE-NEXT:      %[[K1:.*]] = arith.addi %[[K]], %[[C8]] : index
// INTERLEAVE-NEXT:      %[[X1:.*]] = memory.vector_load %[[A]][%[[K1]]]
// INTERLEAVE-NEXT:      %[[Y1:.*]] = arith.maximumf %[[A1]], %[[X1]] : vector<8xf32>
// INTERLEAVE-NEXT:      %[[K2:.*]] = arith.addi %[[K]], %[[C16]] : index
// INTERLEAVE-NEXT:      %[[X2:.*]] = memory.vector_load %[[A]][%[[K2]]]
// INTERLEAVE-NEXT:      %[[Y2:.*]] = arith.maximumf %[[A2]], %[[X2]] : vector<8xf32>
// INTERLEAVE-NEXT:      %[[K3:.*]] = arith.addi %[[K]], %[[C24]] : index
// INTERLEAVE-NEXT:      %[[X3:.*]] = memory.vector_load %[[A]][%[[K3]]]
// INTERLEAVE-NEXT:      %[[Y3:.*]] = arith.maximumf %[[A3]], %[[X3]] : vector<8xf32>
// INTERLEAVE-NEXT:      loop.yield %[[Y0]], %[[Y1]], %[[Y2]], %[[Y3]]
// INTERLEAVE-NEXT:    }
// INTERLEAVE-NEXT:    %[[M01:.*]] = arith.maximumf %[[P]]#0, %[[P]]#1 : vector<8xf32>
// INTERLEAVE-NEXT:    %[[M23:.*]] = arith.maximumf %[[P]]#2, %[[P]]#3 : vector<8xf32>
// INTERLEAVE-NEXT:    %[[M:.*]] = arith.maximumf %[[M01]], %[[M23]] : vector<8xf32>
// INTERLEAVE-NEXT:    %[[Q:.*]] = loop.for %[[J:.*]] = %[[M4]] to %[[M1]] step %[[C8]] iter_args(%[[B:.*]] = %[[M]]) -> (vector<8xf32>) {
// INTERLEAVE-NEXT:      %[[X:.*]] = memory.vector_load %[[A]][%[[J]]]
// INTERLEAVE-NEXT:      %[[Y:.*]] = arith.maximumf %[[B]], %[[X]] : vector<8xf32>
// INTERLEAVE-NEXT:      loop.yield %[[Y]] : vector<8xf32>
// INTERLEAVE-NEXT:    }
// INTERLEAVE-NEXT:    %[[RED:.*]] = vector.reduction <maximumf>, %[[Q]], %[[INIT]] : vector<8xf32> into f32
// INTERLEAVE-NEXT:    loop.for %{{.*}} = %[[M1]] to %[[N]] step %{{.*}} iter_args(%{{.*}} = %[[RED]]) -> (f32) {
// INTERLEAVE:           arith.maximumf %{{.*}} : f32
func.func @interleaved_max(%a: memref<?xf32>, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?xf32>
  %r = loop.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
    %x = memory.load %a[%k] : memref<?xf32>
    %s = arith.maximumf %acc, %x : f32
    loop.yield %s : f32
  }
  return %r : f32
}

// Static trip counts: 64 f32 terms summed in f64 are two rounds of 4 copies and nothing
// after them (no one-copy loop, no remainder); 40 integers are one round and one more
// vector; 20 are fewer than 4 * 8 and keep one chain.

// INTERLEAVE-LABEL: func.func @interleaved_static(
// INTERLEAVE:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<8xf64>, vector<8xf64>, vector<8xf64>, vector<8xf64>) {
// INTERLEAVE-COUNT-4:   arith.addf %{{.*}} : vector<8xf64>
// INTERLEAVE:         }
// INTERLEAVE-NEXT:    arith.addf %{{.*}} : vector<8xf64>
// INTERLEAVE-NEXT:    arith.addf %{{.*}} : vector<8xf64>
// INTERLEAVE-NEXT:    %[[S:.*]] = arith.addf %{{.*}} : vector<8xf64>
// INTERLEAVE-NEXT:    vector.reduction <add>, %[[S]], %{{.*}} fastmath<reassoc> : vector<8xf64> into f64
// INTERLEAVE-NOT:     -> (f64)
// INTERLEAVE:         -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>)
// INTERLEAVE:         }
// INTERLEAVE-NEXT:    arith.addi %{{.*}} : vector<8xi32>
// INTERLEAVE-NEXT:    arith.addi %{{.*}} : vector<8xi32>
// INTERLEAVE-NEXT:    %[[I:.*]] = arith.addi %{{.*}} : vector<8xi32>
// INTERLEAVE-NEXT:    loop.for {{.*}} iter_args(%{{.*}} = %[[I]]) -> (vector<8xi32>) {
// INTERLEAVE:         vector.reduction <add>, %{{.*}} : vector<8xi32> into i32
// INTERLEAVE-NOT:     -> (i32)
// INTERLEAVE:         loop.for {{.*}} -> (vector<8xi32>) {
// INTERLEAVE-NOT:     vector<8xi32>, vector<8xi32>
// INTERLEAVE:         vector.reduction <add>
// INTERLEAVE:         return
func.func @interleaved_static(%a: memref<64xf32>, %b: memref<40xi32>, %c: memref<20xi32>)
    -> (f64, i32, i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %c40 = arith.constant 40 : index
  %c64 = arith.constant 64 : index
  %z = arith.constant 0.0 : f64
  %zi = arith.constant 0 : i32
  %r = loop.for %k = %c0 to %c64 step %c1 iter_args(%acc = %z) -> (f64) {
    %x = memory.load %a[%k] : memref<64xf32>
    %e = arith.extf %x : f32 to f64
    %s = arith.addf %acc, %e : f64
    loop.yield %s : f64
  }
  %q = loop.for %k = %c0 to %c40 step %c1 iter_args(%acc = %zi) -> (i32) {
    %x = memory.load %b[%k] : memref<40xi32>
    %s = arith.addi %acc, %x : i32
    loop.yield %s : i32
  }
  %t = loop.for %k = %c0 to %c20 step %c1 iter_args(%acc = %zi) -> (i32) {
    %x = memory.load %c[%k] : memref<20xi32>
    %s = arith.addi %acc, %x : i32
    loop.yield %s : i32
  }
  return %r, %q, %t : f64, i32, i32
}

// A body with an op that expands into a long sequence (exp) is bound by its ops, not by
// the chain: one copy.

// INTERLEAVE-LABEL: func.func @exp_sum_one_chain(
// INTERLEAVE:         loop.for {{.*}} -> (vector<8xf32>) {
// INTERLEAVE-NEXT:      memory.vector_load
// INTERLEAVE-NEXT:      math.exp %{{.*}} : vector<8xf32>
// INTERLEAVE-NEXT:      arith.addf
// INTERLEAVE-NEXT:      loop.yield
// INTERLEAVE-NOT:     vector<8xf32>, vector<8xf32>
// INTERLEAVE:         return
func.func @exp_sum_one_chain(%a: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %n = memory.dim %a, 0 : memref<?xf32>
  %r = loop.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %x = memory.load %a[%k] : memref<?xf32>
    %e = math.exp %x : f32
    %s = arith.addf %acc, %e : f32
    loop.yield %s : f32
  }
  return %r : f32
}
