// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @constants
func.func @constants() -> (f32, i32, i1, index, tensor<4xf32>, vector<2xi8>, f16) {
  // CHECK: %{{.*}} = arith.constant 1.000000e+00 : f32
  // GENERIC: "arith.constant"() <{value = 1.000000e+00 : f32}> : () -> f32
  %0 = arith.constant 1.0 : f32
  // CHECK: arith.constant -1 : i32
  %1 = arith.constant 0xFFFFFFFF : i32
  // CHECK: arith.constant true
  %2 = arith.constant 1 : i1
  // CHECK: arith.constant 3 : index
  %3 = arith.constant 3 : index
  // CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
  %4 = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  // CHECK: arith.constant dense<-1> : vector<2xi8>
  %5 = arith.constant dense<-1> : vector<2xi8>
  // CHECK: arith.constant 0x7C00 : f16
  %6 = arith.constant 1.0e10 : f16
  return %0, %1, %2, %3, %4, %5, %6 : f32, i32, i1, index, tensor<4xf32>, vector<2xi8>, f16
}

// CHECK-LABEL: func.func @integer
// CHECK-SAME: (%[[A:.*]]: i32, %[[B:.*]]: i32)
func.func @integer(%a: i32, %b: i32) {
  // CHECK: arith.addi %[[A]], %[[B]] : i32
  // GENERIC: "arith.addi"(%{{.*}}, %{{.*}}) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
  %0 = arith.addi %a, %b : i32
  // CHECK: arith.addi %[[A]], %[[B]] overflow<nsw> : i32
  %1 = arith.addi %a, %b overflow<nsw> : i32
  // CHECK: arith.subi %[[A]], %[[B]] overflow<nsw, nuw> : i32
  // GENERIC: <{overflowFlags = #arith.overflow<nsw, nuw>}>
  %2 = arith.subi %a, %b overflow<nuw, nsw> : i32
  // CHECK: arith.muli %[[A]], %[[B]] : i32
  %3 = arith.muli %a, %b : i32
  // CHECK: arith.divsi %[[A]], %[[B]] : i32
  // GENERIC: "arith.divsi"(%{{.*}}, %{{.*}}) : (i32, i32) -> i32
  %4 = arith.divsi %a, %b : i32
  // CHECK: arith.divui %[[A]], %[[B]] exact : i32
  // GENERIC: "arith.divui"(%{{.*}}, %{{.*}}) <{isExact}> : (i32, i32) -> i32
  %5 = arith.divui %a, %b exact : i32
  // CHECK: arith.ceildivsi %[[A]], %[[B]] : i32
  %6 = arith.ceildivsi %a, %b : i32
  // CHECK: arith.ceildivui %[[A]], %[[B]] : i32
  %7 = arith.ceildivui %a, %b : i32
  // CHECK: arith.floordivsi %[[A]], %[[B]] : i32
  %8 = arith.floordivsi %a, %b : i32
  // CHECK: arith.remsi %[[A]], %[[B]] : i32
  %9 = arith.remsi %a, %b : i32
  // CHECK: arith.remui %[[A]], %[[B]] : i32
  %10 = arith.remui %a, %b : i32
  // CHECK: arith.andi %[[A]], %[[B]] : i32
  %11 = arith.andi %a, %b : i32
  // CHECK: arith.ori %[[A]], %[[B]] : i32
  %12 = arith.ori %a, %b : i32
  // CHECK: arith.xori %[[A]], %[[B]] : i32
  %13 = arith.xori %a, %b : i32
  // CHECK: arith.shli %[[A]], %[[B]] overflow<nuw> : i32
  %14 = arith.shli %a, %b overflow<nuw> : i32
  // CHECK: arith.shrsi %[[A]], %[[B]] exact : i32
  %15 = arith.shrsi %a, %b exact : i32
  // CHECK: arith.shrui %[[A]], %[[B]] : i32
  %16 = arith.shrui %a, %b : i32
  // CHECK: arith.maxsi %[[A]], %[[B]] : i32
  %17 = arith.maxsi %a, %b : i32
  // CHECK: arith.maxui %[[A]], %[[B]] : i32
  %18 = arith.maxui %a, %b : i32
  // CHECK: arith.minsi %[[A]], %[[B]] : i32
  %19 = arith.minsi %a, %b : i32
  // CHECK: arith.minui %[[A]], %[[B]] {tag} : i32
  %20 = arith.minui %a, %b {tag} : i32
  // CHECK: arith.cmpi slt, %[[A]], %[[B]] : i32
  // GENERIC: "arith.cmpi"(%{{.*}}, %{{.*}}) <{predicate = 2 : i64}> : (i32, i32) -> i1
  %21 = arith.cmpi slt, %a, %b : i32
  // CHECK: arith.cmpi uge, %[[A]], %[[B]] : i32
  %22 = arith.cmpi uge, %a, %b : i32
  return
}

// CHECK-LABEL: func.func @float
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[V:.*]]: vector<4xf32>)
func.func @float(%x: f32, %y: f32, %v: vector<4xf32>) {
  // CHECK: arith.addf %[[X]], %[[Y]] : f32
  // GENERIC: "arith.addf"(%{{.*}}, %{{.*}}) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
  %0 = arith.addf %x, %y : f32
  // CHECK: arith.subf %[[X]], %[[Y]] fastmath<fast> : f32
  %1 = arith.subf %x, %y fastmath<fast> : f32
  // CHECK: arith.mulf %[[X]], %[[Y]] fastmath<nnan,ninf> : f32
  %2 = arith.mulf %x, %y fastmath<ninf,nnan> : f32
  // CHECK: arith.divf %[[X]], %[[Y]] : f32
  %3 = arith.divf %x, %y fastmath<none> : f32
  // CHECK: arith.remf %[[X]], %[[Y]] : f32
  %4 = arith.remf %x, %y : f32
  // CHECK: arith.negf %[[X]] : f32
  %5 = arith.negf %x : f32
  // CHECK: arith.maximumf %[[X]], %[[Y]] : f32
  %6 = arith.maximumf %x, %y : f32
  // CHECK: arith.minimumf %[[X]], %[[Y]] : f32
  %7 = arith.minimumf %x, %y : f32
  // CHECK: arith.maxnumf %[[X]], %[[Y]] : f32
  %8 = arith.maxnumf %x, %y : f32
  // CHECK: arith.minnumf %[[X]], %[[Y]] : f32
  %9 = arith.minnumf %x, %y : f32
  // CHECK: arith.cmpf olt, %[[X]], %[[Y]] : f32
  // GENERIC: "arith.cmpf"(%{{.*}}, %{{.*}}) <{fastmath = #arith.fastmath<none>, predicate = 4 : i64}> : (f32, f32) -> i1
  %10 = arith.cmpf olt, %x, %y : f32
  // CHECK: arith.cmpf uno, %[[V]], %[[V]] fastmath<fast> : vector<4xf32>
  %11 = arith.cmpf uno, %v, %v fastmath<fast> : vector<4xf32>
  return
}

// CHECK-LABEL: func.func @select
func.func @select(%c: i1, %vc: vector<4xi1>, %a: i32, %v: vector<4xf32>) {
  // CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
  %0 = arith.select %c, %a, %a : i32
  // CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi1>, vector<4xf32>
  // GENERIC: "arith.select"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<4xi1>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
  %1 = arith.select %vc, %v, %v : vector<4xi1>, vector<4xf32>
  // CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
  %2 = arith.select %c, %v, %v : vector<4xf32>
  return
}

// CHECK-LABEL: func.func @casts
func.func @casts(%a: i32, %x: f32, %h: f16, %d: f64, %i: index, %t: tensor<?xi32>) {
  // CHECK: arith.extsi %{{.*}} : i32 to i64
  %0 = arith.extsi %a : i32 to i64
  // CHECK: arith.extui %{{.*}} : i32 to i64
  %1 = arith.extui %a : i32 to i64
  // CHECK: arith.trunci %{{.*}} : i32 to i8
  // GENERIC: "arith.trunci"(%{{.*}}) <{overflowFlags = #arith.overflow<none>}> : (i32) -> i8
  %2 = arith.trunci %a : i32 to i8
  // CHECK: arith.extf %{{.*}} : f16 to f32
  // GENERIC: "arith.extf"(%{{.*}}) : (f16) -> f32
  %3 = arith.extf %h : f16 to f32
  // CHECK: arith.extf %{{.*}} fastmath<none> : f16 to f32
  %4 = arith.extf %h fastmath<none> : f16 to f32
  // CHECK: arith.truncf %{{.*}} : f64 to f32
  %5 = arith.truncf %d : f64 to f32
  // CHECK: arith.truncf %{{.*}} downward fastmath<fast> : f64 to f32
  // GENERIC: <{fastmath = #arith.fastmath<fast>, roundingmode = 1 : i32}>
  %6 = arith.truncf %d downward fastmath<fast> : f64 to f32
  // CHECK: arith.sitofp %{{.*}} : i32 to f32
  %7 = arith.sitofp %a : i32 to f32
  // CHECK: arith.uitofp %{{.*}} : i32 to f32
  %8 = arith.uitofp %a : i32 to f32
  // CHECK: arith.fptosi %{{.*}} : f32 to i32
  %9 = arith.fptosi %x : f32 to i32
  // CHECK: arith.fptoui %{{.*}} : f32 to i32
  %10 = arith.fptoui %x : f32 to i32
  // CHECK: arith.index_cast %{{.*}} : i32 to index
  %11 = arith.index_cast %a : i32 to index
  // CHECK: arith.index_castui %{{.*}} : index to i32
  %12 = arith.index_castui %i : index to i32
  // CHECK: arith.bitcast %{{.*}} : f32 to i32
  %13 = arith.bitcast %x : f32 to i32
  // CHECK: arith.index_cast %{{.*}} : tensor<?xi32> to tensor<?xindex>
  %14 = arith.index_cast %t : tensor<?xi32> to tensor<?xindex>
  return
}
