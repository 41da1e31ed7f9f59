// RUN: irkit-opt %s --split-input-file --verify-diagnostics

func.func @cmpi_mismatch(%a: i32, %b: i1) {
  // expected-error @+1 {{'arith.cmpi' op requires all operands to have the same type}}
  %0 = "arith.cmpi"(%a, %b) <{predicate = 0 : i64}> : (i32, i1) -> i1
  return
}

// -----

func.func @cmpi_bad_predicate(%a: i32) {
  // expected-error @+1 {{'arith.cmpi' op attribute 'predicate' failed to satisfy constraint: allowed 64-bit signless integer cases: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}
  %0 = "arith.cmpi"(%a, %a) <{predicate = 12 : i64}> : (i32, i32) -> i1
  return
}

// -----

func.func @cmpi_keyword(%a: i32) {
  // expected-error @+1 {{custom op 'arith.cmpi' expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge]}}
  %0 = arith.cmpi lt, %a, %a : i32
  return
}

// -----

func.func @cmpf_shape(%v: vector<4xf32>) {
  // expected-error @+1 {{'arith.cmpf' op failed to verify that result type has i1 element type and same shape as operands}}
  %0 = "arith.cmpf"(%v, %v) <{predicate = 1 : i64}> : (vector<4xf32>, vector<4xf32>) -> i1
  return
}

// -----

func.func @select_mismatch(%c: i1, %a: i32, %b: i64) {
  // expected-error @+1 {{'arith.select' op failed to verify that all of {true_value, false_value, result} have same type}}
  %0 = "arith.select"(%c, %a, %b) : (i1, i32, i64) -> i32
  return
}

// -----

func.func @select_shape(%c: vector<4xi1>, %t: tensor<4xf32>) {
  // expected-error @+1 {{'arith.select' op all non-scalar operands/results must have the same shape and base type}}
  %0 = arith.select %c, %t, %t : vector<4xi1>, tensor<4xf32>
  return
}

// -----

func.func @extf_narrower(%x: f32) {
  // expected-error @+1 {{'arith.extf' op operand type 'f32' and result type 'f16' are cast incompatible: result type 'f16' must be wider than operand type 'f32'}}
  %0 = arith.extf %x : f32 to f16
  return
}

// -----

func.func @trunci_wider(%a: i32) {
  // expected-error @+1 {{'arith.trunci' op operand type 'i32' and result type 'i64' are cast incompatible}}
  %0 = arith.trunci %a : i32 to i64
  return
}

// -----

func.func @index_cast(%a: i32) {
  // expected-error @+1 {{'arith.index_cast' op operand type 'i32' and result type 'i64' are cast incompatible}}
  %0 = arith.index_cast %a : i32 to i64
  return
}

// -----

func.func @bitcast_width(%a: i32) {
  // expected-error @+1 {{'arith.bitcast' op operand type 'i32' and result type 'f16' are cast incompatible}}
  %0 = arith.bitcast %a : i32 to f16
  return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{'arith.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "arith.constant"() <{value = 3 : i64}> : () -> i32
  return
}

// -----

func.func @constant_unsigned() {
  // expected-error @+1 {{'arith.constant' op integer return type must be signless}}
  %0 = arith.constant 3 : ui8
  return
}

// -----

func.func @addf_ints(%a: i32) {
  // expected-error @+1 {{'arith.addf' op operand #0 must be floating-point-like}}
  %0 = arith.addf %a, %a : i32
  return
}

// -----

func.func @addi_types(%a: i32, %b: i64) {
  // expected-error @+1 {{'arith.addi' op requires the same type for all operands and results}}
  %0 = "arith.addi"(%a, %b) : (i32, i64) -> i32
  return
}

// -----

func.func @bad_fastmath(%x: f32) {
  // expected-error @+1 {{expected fastmath flags to be one of: none, reassoc, nnan, ninf, nsz, arcp, contract, afn, fast}}
  %0 = arith.addf %x, %x fastmath<quick> : f32
  return
}

// -----

func.func @bad_fastmath_generic(%x: f32) {
  // expected-error @+1 {{'arith.addf' op attribute 'fastmath' failed to satisfy constraint}}
  %0 = "arith.addf"(%x, %x) <{fastmath = #arith.fastmath<quick>}> : (f32, f32) -> f32
  return
}

// -----

func.func @use_type(%a: i32, %b: i64) {
  // expected-error @+1 {{use of value '%b' expects different type than prior uses: 'i32' vs 'i64'}}
  %0 = arith.addi %a, %b : i32
  return
}

// -----

// Digits are ASCII, as in MLIR: a superscript or Arabic-Indic digit is not a number.
func.func @unicode_digit() -> i32 {
  // expected-error @+1 {{expected attribute value, found '¹'}}
  %0 = "arith.constant"() <{value = ¹ : i32}> : () -> i32
  return %0 : i32
}

// -----

func.func @unicode_digit_custom() -> i32 {
  // expected-error @+1 {{expected attribute value, found '٣'}}
  %0 = arith.constant ٣ : i32
  return %0 : i32
}
