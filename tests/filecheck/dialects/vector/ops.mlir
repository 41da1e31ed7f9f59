// RUN: irkit-opt %s --allow-unregistered-dialect | irkit-opt --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic | irkit-opt --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The vector dialect in MLIR's own custom syntax, and in generic form: vector.reduction
// always stores its fastmath flags (none by default) and its kind as #vector.kind<...>.

// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME:      %[[S:.*]]: f32, %[[V:.*]]: vector<4xf32>, %[[I:.*]]: index, %[[U:.*]]: vector<1x4xi8>)
// CHECK-NEXT:    %[[A:.*]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK-NEXT:    %[[B:.*]] = vector.broadcast %[[V]] : vector<4xf32> to vector<2x4xf32>
// CHECK-NEXT:    %[[C:.*]] = vector.broadcast %[[I]] : index to vector<4xindex>
// CHECK-NEXT:    %[[D:.*]] = vector.broadcast %[[U]] {test.tag} : vector<1x4xi8> to vector<3x2x4xi8>
// CHECK-NEXT:    "test.use"(%[[A]], %[[B]], %[[C]], %[[D]])
// GENERIC-LABEL: sym_name = "broadcast"
// GENERIC:       "vector.broadcast"(%arg0) : (f32) -> vector<8xf32>
// GENERIC-NEXT:  "vector.broadcast"(%arg1) : (vector<4xf32>) -> vector<2x4xf32>
// GENERIC-NEXT:  "vector.broadcast"(%arg2) : (index) -> vector<4xindex>
// GENERIC-NEXT:  "vector.broadcast"(%arg3) {test.tag} : (vector<1x4xi8>) -> vector<3x2x4xi8>
func.func @broadcast(%s: f32, %v: vector<4xf32>, %i: index, %u: vector<1x4xi8>) {
  %a = vector.broadcast %s : f32 to vector<8xf32>
  %b = vector.broadcast %v : vector<4xf32> to vector<2x4xf32>
  %c = vector.broadcast %i : index to vector<4xindex>
  %d = vector.broadcast %u {test.tag} : vector<1x4xi8> to vector<3x2x4xi8>
  "test.use"(%a, %b, %c, %d) : (vector<8xf32>, vector<2x4xf32>, vector<4xindex>, vector<3x2x4xi8>) -> ()
  return
}

// CHECK-LABEL: func.func @reduction(
// CHECK-SAME:      %[[V:.*]]: vector<8xf32>, %[[I:.*]]: vector<8xi32>, %[[ACC:.*]]: f32, %[[B:.*]]: vector<4xi1>)
// CHECK-NEXT:    %{{.*}} = vector.reduction <add>, %[[V]] : vector<8xf32> into f32
// CHECK-NEXT:    %{{.*}} = vector.reduction <mul>, %[[V]], %[[ACC]] fastmath<reassoc,contract> : vector<8xf32> into f32
// CHECK-NEXT:    %{{.*}} = vector.reduction <maximumf>, %[[V]] fastmath<fast> : vector<8xf32> into f32
// CHECK-NEXT:    %{{.*}} = vector.reduction <minnumf>, %[[V]] {test.tag = 2 : i64} : vector<8xf32> into f32
// CHECK-NEXT:    %{{.*}} = vector.reduction <maxsi>, %[[I]] : vector<8xi32> into i32
// CHECK-NEXT:    %{{.*}} = vector.reduction <minui>, %[[I]] : vector<8xi32> into i32
// CHECK-NEXT:    %{{.*}} = vector.reduction <xor>, %[[I]] : vector<8xi32> into i32
// CHECK-NEXT:    %{{.*}} = vector.reduction <or>, %[[B]] : vector<4xi1> into i1
// GENERIC-LABEL: sym_name = "reduction"
// GENERIC:       "vector.reduction"(%arg0) <{fastmath = #arith.fastmath<none>, kind = #vector.kind<add>}> : (vector<8xf32>) -> f32
// GENERIC-NEXT:  "vector.reduction"(%arg0, %arg2) <{fastmath = #arith.fastmath<reassoc,contract>, kind = #vector.kind<mul>}> : (vector<8xf32>, f32) -> f32
// GENERIC-NEXT:  "vector.reduction"(%arg0) <{fastmath = #arith.fastmath<fast>, kind = #vector.kind<maximumf>}> : (vector<8xf32>) -> f32
// GENERIC-NEXT:  "vector.reduction"(%arg0) <{fastmath = #arith.fastmath<none>, kind = #vector.kind<minnumf>}> {test.tag = 2 : i64} : (vector<8xf32>) -> f32
func.func @reduction(%v: vector<8xf32>, %i: vector<8xi32>, %acc: f32, %b: vector<4xi1>) {
  %0 = vector.reduction <add>, %v : vector<8xf32> into f32
  %1 = vector.reduction <mul>, %v, %acc fastmath<contract, reassoc> : vector<8xf32> into f32
  %2 = vector.reduction <maximumf>, %v fastmath<fast> : vector<8xf32> into f32
  %3 = vector.reduction <minnumf>, %v {test.tag = 2} : vector<8xf32> into f32
  %4 = vector.reduction <maxsi>, %i : vector<8xi32> into i32
  %5 = vector.reduction <minui>, %i : vector<8xi32> into i32
  %6 = vector.reduction <xor>, %i : vector<8xi32> into i32
  %7 = vector.reduction <or>, %b : vector<4xi1> into i1
  "test.use"(%0, %1, %2, %3, %4, %5, %6, %7) : (f32, f32, f32, f32, i32, i32, i32, i1) -> ()
  return
}

// CHECK-LABEL: func.func @extract(
// CHECK-SAME:      %[[V:.*]]: vector<16xf32>, %[[M:.*]]: vector<2x4xi8>)
// CHECK-NEXT:    %[[A:.*]] = vector.extract %[[V]][3] : f32 from vector<16xf32>
// CHECK-NEXT:    %[[B:.*]] = vector.extract %[[M]][1] : vector<4xi8> from vector<2x4xi8>
// CHECK-NEXT:    %[[C:.*]] = vector.extract %[[M]][1, 2] {test.tag} : i8 from vector<2x4xi8>
// CHECK-NEXT:    %[[D:.*]] = vector.extract %[[V]][] : vector<16xf32> from vector<16xf32>
// GENERIC-LABEL: sym_name = "extract"
// GENERIC:       "vector.extract"(%arg0) <{static_position = array<i64: 3>}> : (vector<16xf32>) -> f32
// GENERIC-NEXT:  "vector.extract"(%arg1) <{static_position = array<i64: 1>}> : (vector<2x4xi8>) -> vector<4xi8>
// GENERIC-NEXT:  "vector.extract"(%arg1) <{static_position = array<i64: 1, 2>}> {test.tag} : (vector<2x4xi8>) -> i8
// GENERIC-NEXT:  "vector.extract"(%arg0) <{static_position = array<i64>}> : (vector<16xf32>) -> vector<16xf32>
func.func @extract(%v: vector<16xf32>, %m: vector<2x4xi8>) {
  %a = vector.extract %v[3] : f32 from vector<16xf32>
  %b = vector.extract %m[1] : vector<4xi8> from vector<2x4xi8>
  %c = vector.extract %m[1, 2] {test.tag} : i8 from vector<2x4xi8>
  %d = vector.extract %v[] : vector<16xf32> from vector<16xf32>
  "test.use"(%a, %b, %c, %d) : (f32, vector<4xi8>, i8, vector<16xf32>) -> ()
  return
}

// Generic input (the fastmath property may be left out: it has a default) reads back into
// the custom form.
// CHECK-LABEL: func.func @generic_input(
// CHECK-NEXT:    %[[B:.*]] = vector.broadcast %arg1 : f32 to vector<4xf32>
// CHECK-NEXT:    %{{.*}} = vector.reduction <minimumf>, %[[B]], %arg1 : vector<4xf32> into f32
// CHECK-NEXT:    %{{.*}} = vector.reduction <and>, %arg0 : vector<4xindex> into index
func.func @generic_input(%v: vector<4xindex>, %x: f32) -> (f32, index) {
  %b = "vector.broadcast"(%x) : (f32) -> vector<4xf32>
  %r = "vector.reduction"(%b, %x) <{kind = #vector.kind<minimumf>}> : (vector<4xf32>, f32) -> f32
  %a = "vector.reduction"(%v) <{fastmath = #arith.fastmath<none>, kind = #vector.kind<and>}> : (vector<4xindex>) -> index
  return %r, %a : f32, index
}

// Elementwise arith and math ops take vectors (i1 vectors for comparisons and select).
// CHECK-LABEL: func.func @elementwise(
// CHECK:         %[[S:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %{{.*}}, %[[S]] fastmath<contract> : vector<8xf32>
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[M]] : vector<8xf32>
// CHECK-NEXT:    %[[C:.*]] = arith.cmpf ogt, %[[E]], %[[S]] : vector<8xf32>
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[C]], %[[E]], %[[S]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    %{{.*}} = vector.reduction <add>, %[[R]] : vector<8xf32> into f32
func.func @elementwise(%x: vector<8xf32>, %s: f32) -> f32 {
  %sv = vector.broadcast %s : f32 to vector<8xf32>
  %m = arith.mulf %x, %sv fastmath<contract> : vector<8xf32>
  %e = math.exp %m : vector<8xf32>
  %c = arith.cmpf ogt, %e, %sv : vector<8xf32>
  %r = arith.select %c, %e, %sv : vector<8xi1>, vector<8xf32>
  %sum = vector.reduction <add>, %r : vector<8xf32> into f32
  return %sum : f32
}

// vector.shuffle: the mask in brackets, both operand types after the colon; the result's is
// implied (the mask's length). Operands may differ in length.
// CHECK-LABEL: func.func @shuffle(
// CHECK-SAME:      %[[W:.*]]: vector<7xf32>, %[[A:.*]]: vector<2xi32>, %[[B:.*]]: vector<3xi32>)
// CHECK-NEXT:    %[[E:.*]] = vector.shuffle %[[W]], %[[W]] [0, 2, 4, 6] : vector<7xf32>, vector<7xf32>
// CHECK-NEXT:    %[[C:.*]] = vector.shuffle %[[A]], %[[B]] [4, 0, 1] {test.tag} : vector<2xi32>, vector<3xi32>
// CHECK-NEXT:    "test.use"(%[[E]], %[[C]]) : (vector<4xf32>, vector<3xi32>) -> ()
// GENERIC-LABEL: sym_name = "shuffle"
// GENERIC:       "vector.shuffle"(%arg0, %arg0) <{mask = array<i64: 0, 2, 4, 6>}> : (vector<7xf32>, vector<7xf32>) -> vector<4xf32>
// GENERIC-NEXT:  "vector.shuffle"(%arg1, %arg2) <{mask = array<i64: 4, 0, 1>}> {test.tag} : (vector<2xi32>, vector<3xi32>) -> vector<3xi32>
func.func @shuffle(%w: vector<7xf32>, %a: vector<2xi32>, %b: vector<3xi32>) {
  %e = vector.shuffle %w, %w [0, 2, 4, 6] : vector<7xf32>, vector<7xf32>
  %c = vector.shuffle %a, %b [4, 0, 1] {test.tag} : vector<2xi32>, vector<3xi32>
  "test.use"(%e, %c) : (vector<4xf32>, vector<3xi32>) -> ()
  return
}
