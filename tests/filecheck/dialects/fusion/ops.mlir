// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// fusion.group in custom and generic form, on tensors (results yielded) and on memrefs (no
// results: the yield without operands is implicit in the custom form).

// CHECK-LABEL: func.func @on_tensors(
// CHECK-SAME:      %[[X:.*]]: tensor<?xf32>
// CHECK:         %[[R:.*]]:2 = fusion.group {kind = "elementwise", outer_dims = 1 : i64} -> (tensor<?xf32>, tensor<?xf32>) {
// CHECK-NEXT:      %[[A:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[X]] : tensor<?xf32>)
// CHECK:           %[[B:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[A]] : tensor<?xf32>)
// CHECK:           fusion.yield %[[A]], %[[B]] : tensor<?xf32>, tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
// GENERIC-LABEL: sym_name = "on_tensors"
// GENERIC:       "fusion.group"() <{kind = "elementwise", outer_dims = 1 : i64}> ({
// GENERIC:         "fusion.yield"(%{{.*}}, %{{.*}}) : (tensor<?xf32>, tensor<?xf32>) -> ()
// GENERIC-NEXT:  }) : () -> (tensor<?xf32>, tensor<?xf32>)
func.func @on_tensors(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %r:2 = fusion.group {kind = "elementwise", outer_dims = 1 : i64} -> (tensor<?xf32>, tensor<?xf32>) {
    %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%x : tensor<?xf32>) {
    ^bb0(%in: f32, %out: f32):
      %e = math.exp %in : f32
      linalg.yield %e : f32
    } -> tensor<?xf32>
    %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<?xf32>) outs(%x : tensor<?xf32>) {
    ^bb0(%in: f32, %out: f32):
      %n = arith.negf %in : f32
      linalg.yield %n : f32
    } -> tensor<?xf32>
    fusion.yield %a, %b : tensor<?xf32>, tensor<?xf32>
  }
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @on_memrefs(
// CHECK:         fusion.group {kind = "reduction", outer_dims = 1 : i64} {
// CHECK-NEXT:      %[[T:.*]] = memory.alloc(%{{.*}}) : memref<?xf32>
// CHECK:           memory.dealloc %[[T]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// GENERIC-LABEL: sym_name = "on_memrefs"
// GENERIC:         "fusion.yield"() : () -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @on_memrefs(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memory.dim %x, 0 : memref<?xf32>
  fusion.group {kind = "reduction", outer_dims = 1 : i64} {
    %t = memory.alloc(%n) : memref<?xf32>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<?xf32>) outs(%t : memref<?xf32>) {
    ^bb0(%in: f32, %out: f32):
      %e = math.exp %in : f32
      linalg.yield %e : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : memref<?xf32>) outs(%y : memref<?xf32>) {
    ^bb0(%in: f32, %out: f32):
      %n2 = arith.negf %in : f32
      linalg.yield %n2 : f32
    }
    memory.dealloc %t : memref<?xf32>
  }
  return
}

// -----

// Explicit captures: the operands are the body's block arguments (custom form `ins(...)`);
// the lowering first makes the body use the operands themselves (`inline_captures`).
// CHECK-LABEL: func.func @captures(
// CHECK-SAME:      %[[X:.*]]: tensor<?xf32>
// CHECK:         %[[R:.*]] = fusion.group ins(%[[X]] : tensor<?xf32>) {kernel = "k0"} -> (tensor<?xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<?xf32>):
// CHECK-NEXT:      %[[B:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[A]] : tensor<?xf32>)
// CHECK:           fusion.yield %[[B]] : tensor<?xf32>
// GENERIC-LABEL: sym_name = "captures"
// GENERIC:       "fusion.group"(%{{.*}}) <{kernel = "k0"}> ({
// GENERIC-NEXT:  ^bb0(%{{.*}}: tensor<?xf32>):
// GENERIC:       }) : (tensor<?xf32>) -> tensor<?xf32>
func.func @captures(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = fusion.group ins(%x : tensor<?xf32>) {kernel = "k0"} -> (tensor<?xf32>) {
  ^bb0(%a: tensor<?xf32>):
    %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<?xf32>) outs(%a : tensor<?xf32>) {
    ^bb0(%in: f32, %out: f32):
      %e = math.exp %in : f32
      linalg.yield %e : f32
    } -> tensor<?xf32>
    fusion.yield %b : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}
