// arith and math in custom form: scalars, vectors and tensors, every comparison predicate
// family, casts, fastmath and overflow flags, constants of many types.
func.func @scalars(%a: i32, %b: i32, %x: f32, %y: f32, %i: index) -> (i32, f32, i1) {
  %c0 = arith.constant 0 : i32
  %c7 = arith.constant 7 : i32
  %cm1 = arith.constant -1 : i64
  %true = arith.constant true
  %cidx = arith.constant 42 : index
  %f0 = arith.constant 0.000000e+00 : f32
  %f1 = arith.constant 1.5 : f64
  %fh = arith.constant 0x7FC00000 : f32
  %bf = arith.constant -2.5 : bf16
  %h = arith.constant 6.5e-3 : f16
  %0 = arith.addi %a, %b : i32
  %1 = arith.subi %0, %c7 overflow<nsw> : i32
  %2 = arith.muli %1, %b overflow<nsw, nuw> : i32
  %3 = arith.divsi %2, %c7 : i32
  %4 = arith.divui %3, %c7 : i32
  %5 = arith.remsi %4, %c7 : i32
  %6 = arith.andi %5, %a : i32
  %7 = arith.ori %6, %b : i32
  %8 = arith.xori %7, %c0 : i32
  %9 = arith.shli %8, %c7 : i32
  %10 = arith.shrsi %9, %c7 : i32
  %11 = arith.shrui %10, %c7 : i32
  %12 = arith.maxsi %11, %a : i32
  %13 = arith.minui %12, %b : i32
  %14 = arith.ceildivsi %13, %c7 : i32
  %15 = arith.floordivsi %14, %c7 : i32
  %f2 = arith.addf %x, %y : f32
  %f3 = arith.mulf %f2, %x fastmath<fast> : f32
  %f4 = arith.subf %f3, %y fastmath<nnan,ninf> : f32
  %f5 = arith.divf %f4, %y : f32
  %f6 = arith.negf %f5 : f32
  %f7 = arith.maximumf %f6, %f0 : f32
  %f8 = arith.minnumf %f7, %fh : f32
  %f9 = arith.remf %f8, %y : f32
  %cmp1 = arith.cmpi slt, %a, %b : i32
  %cmp2 = arith.cmpi uge, %15, %c0 : i32
  %cmp3 = arith.cmpf olt, %f9, %x : f32
  %cmp4 = arith.cmpf une, %f9, %y : f32
  %and = arith.andi %cmp1, %cmp2 : i1
  %or = arith.ori %and, %cmp3 : i1
  %xor = arith.xori %or, %true : i1
  %sel = arith.select %xor, %15, %a : i32
  %ext = arith.extsi %sel : i32 to i64
  %ext2 = arith.extui %cmp4 : i1 to i32
  %tr = arith.trunci %ext : i64 to i16
  %sitofp = arith.sitofp %tr : i16 to f32
  %fptosi = arith.fptosi %f9 : f32 to i32
  %fpext = arith.extf %x : f32 to f64
  %fptr = arith.truncf %fpext : f64 to f32
  %bc = arith.bitcast %fptr : f32 to i32
  %ic = arith.index_cast %i : index to i64
  %icu = arith.index_castui %a : i32 to index
  %m0 = math.exp %fptr : f32
  %m1 = math.log %m0 : f32
  %m2 = math.tanh %m1 : f32
  %m3 = math.sqrt %m2 fastmath<afn> : f32
  %m4 = math.rsqrt %m3 : f32
  %m5 = math.absf %m4 : f32
  %m6 = math.powf %m5, %y : f32
  %m7 = math.fma %m6, %x, %y : f32
  %m8 = math.sin %m7 : f32
  %m9 = math.cos %m8 : f32
  %m10 = math.floor %m9 : f32
  %m11 = math.erf %m10 : f32
  %m12 = math.log1p %m11 : f32
  %m13 = math.exp2 %m12 : f32
  %m14 = math.absi %ext2 : i32
  %m15 = math.ctlz %m14 : i32
  %r = arith.addf %m13, %sitofp : f32
  %sum = arith.addi %m15, %bc : i32
  return %sum, %r, %cmp3 : i32, f32, i1
}

func.func @vectors(%v: vector<8xf32>, %w: vector<8xf32>, %m: vector<4x8xi32>,
                   %s: vector<[4]xf32>) -> vector<8xf32> {
  %cst = arith.constant dense<1.000000e+00> : vector<8xf32>
  %ci = arith.constant dense<[[1, 2, 3, 4, 5, 6, 7, 8], [0, 0, 0, 0, 0, 0, 0, 0],
                              [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2]]> : vector<4x8xi32>
  %0 = arith.addf %v, %w : vector<8xf32>
  %1 = arith.mulf %0, %cst : vector<8xf32>
  %2 = math.exp %1 : vector<8xf32>
  %3 = arith.cmpf ogt, %2, %v : vector<8xf32>
  %4 = arith.select %3, %2, %w : vector<8xi1>, vector<8xf32>
  %5 = arith.addi %m, %ci : vector<4x8xi32>
  %6 = math.tanh %s : vector<[4]xf32>
  return %4 : vector<8xf32>
}

func.func @tensors(%t: tensor<?x784xf32>, %u: tensor<4x?xi64>) -> tensor<?x784xf32> {
  %cst = arith.constant dense<0.5> : tensor<784xf32>
  %z = arith.constant dense<0> : tensor<2x3xi8>
  %b = arith.constant dense<[true, false, true]> : tensor<3xi1>
  %0 = math.exp %t : tensor<?x784xf32>
  %1 = arith.addf %0, %t : tensor<?x784xf32>
  %2 = arith.negf %1 : tensor<?x784xf32>
  %3 = arith.muli %u, %u : tensor<4x?xi64>
  return %2 : tensor<?x784xf32>
}
