// RUN: irkit-opt %s -p commit-in-place | FileCheck %s

// An SGD update, as bufferize leaves it: computed into a temporary, copied into the
// variable while the status says no error. It becomes the update written into the variable
// itself, under the status test moved before it; the temporary and the copy are gone.
// CHECK-LABEL: func.func @sgd(
// CHECK-SAME:      %[[W:[^:]*]]: memref<4x8xf32>, %[[G:[^:]*]]: memref<4x8xf32>, %[[ST:[^:]*]]: memref<3xi64>)
// CHECK-NOT:     memory.alloc
// CHECK:         %[[S:.*]] = memory.load %[[ST]][%{{.*}}] : memref<3xi64>
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi eq, %[[S]], %{{.*}} : i64
// CHECK-NEXT:    loop.if %[[OK]] {
// CHECK-NEXT:      linalg.generic
// CHECK-SAME:        ins(%[[W]], %[[G]] : memref<4x8xf32>, memref<4x8xf32>) outs(%[[W]] : memref<4x8xf32>)
// CHECK:         }
// CHECK-NOT:     memory.copy
// CHECK-NOT:     memory.dealloc
// CHECK:         return
func.func @sgd(%w: memref<4x8xf32>, %g: memref<4x8xf32>, %status: memref<3xi64>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %lr = arith.constant 0.1 : f32
  %t = memory.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%t : memref<4x8xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %s = arith.mulf %d, %lr : f32
    %n = arith.subf %x, %s : f32
    linalg.yield %n : f32
  }
  %code = memory.load %status[%c0] : memref<3xi64>
  %ok = arith.cmpi eq, %code, %z : i64
  loop.if %ok {
    memory.copy %t, %w : memref<4x8xf32> to memref<4x8xf32>
  }
  memory.dealloc %t : memref<4x8xf32>
  return
}

// Adam's moments and weight, one fusion group: the moments written by one generic, the
// weight by another that reads the new moments at its own point. All three commits go in
// place under one test; the second generic reads the new moments from the variables.
// CHECK-LABEL: func.func @adam(
// CHECK-SAME:      %[[W:[^:]*]]: memref<16xf32>, %[[M:[^:]*]]: memref<16xf32>, %[[V:[^:]*]]: memref<16xf32>,
// CHECK-NOT:     memory.alloc
// CHECK:         loop.if %{{.*}} {
// CHECK-NEXT:      fusion.group
// CHECK-NEXT:        linalg.generic
// CHECK-SAME:          outs(%[[M]], %[[V]] : memref<16xf32>, memref<16xf32>)
// CHECK:             linalg.generic
// CHECK-SAME:          ins(%[[W]], %[[M]], %[[V]] : memref<16xf32>, memref<16xf32>, memref<16xf32>) outs(%[[W]] : memref<16xf32>)
// CHECK-NOT:     loop.if
// CHECK-NOT:     memory.copy
// CHECK:         return
func.func @adam(%w: memref<16xf32>, %m: memref<16xf32>, %v: memref<16xf32>, %g: memref<16xf32>,
                %status: memref<3xi64>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %b = arith.constant 0.9 : f32
  %tm = memory.alloc() : memref<16xf32>
  %tv = memory.alloc() : memref<16xf32>
  %tw = memory.alloc() : memref<16xf32>
  fusion.group {kind = "elementwise", outer_dims = 1 : i64} {
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                     affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                     affine_map<(d0) -> (d0)>],
                    iterator_types = ["parallel"]}
        ins(%m, %v, %g : memref<16xf32>, memref<16xf32>, memref<16xf32>)
        outs(%tm, %tv : memref<16xf32>, memref<16xf32>) {
    ^bb0(%x: f32, %y: f32, %d: f32, %o: f32, %p: f32):
      %a = arith.mulf %x, %b : f32
      %m2 = arith.addf %a, %d : f32
      %d2 = arith.mulf %d, %d : f32
      %c = arith.mulf %y, %b : f32
      %v2 = arith.addf %c, %d2 : f32
      linalg.yield %m2, %v2 : f32, f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                     affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                    iterator_types = ["parallel"]}
        ins(%w, %tm, %tv : memref<16xf32>, memref<16xf32>, memref<16xf32>)
        outs(%tw : memref<16xf32>) {
    ^bb0(%x: f32, %mm: f32, %vv: f32, %o: f32):
      %r = math.sqrt %vv : f32
      %q = arith.divf %mm, %r : f32
      %n = arith.subf %x, %q : f32
      linalg.yield %n : f32
    }
  }
  %c1 = memory.load %status[%c0] : memref<3xi64>
  %ok1 = arith.cmpi eq, %c1, %z : i64
  loop.if %ok1 {
    memory.copy %tm, %m : memref<16xf32> to memref<16xf32>
  }
  memory.dealloc %tm : memref<16xf32>
  %c2 = memory.load %status[%c0] : memref<3xi64>
  %ok2 = arith.cmpi eq, %c2, %z : i64
  loop.if %ok2 {
    memory.copy %tv, %v : memref<16xf32> to memref<16xf32>
  }
  memory.dealloc %tv : memref<16xf32>
  %c3 = memory.load %status[%c0] : memref<3xi64>
  %ok3 = arith.cmpi eq, %c3, %z : i64
  loop.if %ok3 {
    memory.copy %tw, %w : memref<16xf32> to memref<16xf32>
  }
  memory.dealloc %tw : memref<16xf32>
  return
}

// Without checks the copy is bare, and the update goes in place without a test.
// CHECK-LABEL: func.func @unguarded(
// CHECK-SAME:      %[[W:[^:]*]]: memref<8xf32>
// CHECK-NOT:     memory.alloc
// CHECK-NOT:     loop.if
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%[[W]] : memref<8xf32>)
// CHECK-NOT:     memory.copy
// CHECK:         return
func.func @unguarded(%w: memref<8xf32>, %g: memref<8xf32>) {
  %t = memory.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%w, %g : memref<8xf32>, memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %n = arith.subf %x, %d : f32
    linalg.yield %n : f32
  }
  memory.copy %t, %w : memref<8xf32> to memref<8xf32>
  memory.dealloc %t : memref<8xf32>
  return
}

// Left as they are: the old weight read after the update is computed (the next layer's
// gradient through it); a check between the update and its copy (the status may still
// change); the update reading the old weight at another point (a transpose), where
// writing in place would read updated elements.
// CHECK-LABEL: func.func @read_between(
// CHECK:         memory.alloc
// CHECK:         memory.copy
// CHECK-LABEL: func.func @check_between(
// CHECK:         memory.alloc
// CHECK:         memory.copy
// CHECK-LABEL: func.func @transposed(
// CHECK:         memory.alloc
// CHECK:         memory.copy
func.func @read_between(%w: memref<8xf32>, %g: memref<8xf32>, %out: memref<8xf32>,
                        %status: memref<3xi64>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %t = memory.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%w, %g : memref<8xf32>, memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %n = arith.subf %x, %d : f32
    linalg.yield %n : f32
  }
  memory.copy %w, %out : memref<8xf32> to memref<8xf32>
  %code = memory.load %status[%c0] : memref<3xi64>
  %ok = arith.cmpi eq, %code, %z : i64
  loop.if %ok {
    memory.copy %t, %w : memref<8xf32> to memref<8xf32>
  }
  memory.dealloc %t : memref<8xf32>
  return
}
func.func @check_between(%w: memref<8xf32>, %g: memref<8xf32>, %status: memref<3xi64>,
                         %bad: i1, %i: i64) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %t = memory.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%w, %g : memref<8xf32>, memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %n = arith.subf %x, %d : f32
    linalg.yield %n : f32
  }
  memory.check %bad, %i, %i, %status {code = 1 : i64, message = "failed"} : memref<3xi64>
  %code = memory.load %status[%c0] : memref<3xi64>
  %ok = arith.cmpi eq, %code, %z : i64
  loop.if %ok {
    memory.copy %t, %w : memref<8xf32> to memref<8xf32>
  }
  memory.dealloc %t : memref<8xf32>
  return
}
func.func @transposed(%w: memref<4x4xf32>, %status: memref<3xi64>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %t = memory.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<4x4xf32>) outs(%t : memref<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  %code = memory.load %status[%c0] : memref<3xi64>
  %ok = arith.cmpi eq, %code, %z : i64
  loop.if %ok {
    memory.copy %t, %w : memref<4x4xf32> to memref<4x4xf32>
  }
  memory.dealloc %t : memref<4x4xf32>
  return
}
