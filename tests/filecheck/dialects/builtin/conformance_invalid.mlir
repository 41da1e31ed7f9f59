// RUN: irkit-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

// Rules of the IR itself, with MLIR 22's messages and locations (tests/unit/
// test_mlir_conformance.py checks the file with mlir-opt where it is installed).

// Aliases name attributes and types of no dialect: a dotted name is a dialect's.

// expected-error @+1 {{attribute names with a '.' are reserved for dialect-defined names}}
#foo.bar = 3

// -----

// expected-error @+1 {{type names with a '.' are reserved for dialect-defined names}}
!foo.bar = i32

// -----

// Dominance errors are worded as MLIR words them (no `'t.u' op` prefix), with a note at the
// definition saying where it is. Ops are located at their names.
func.func @use_before_def() {
  // expected-error @+1 {{operand #0 does not dominate this use}}
  "t.u"(%0) : (i32) -> ()
  // expected-note @+1 {{operand defined here (op in the same block)}}
  %0 = "t.c"() : () -> i32
  return
}

// -----

func.func @sibling_block(%c: i1) {
  "t.cbr"(%c)[^bb1, ^bb2] : (i1) -> ()
^bb1:
  // expected-note @+1 {{operand defined here (op in the same region)}}
  %0 = "t.c"() : () -> i32
  "t.br"()[^bb3] : () -> ()
^bb2:
  "t.br"()[^bb3] : () -> ()
^bb3:
  // expected-error @+1 {{operand #0 does not dominate this use}}
  "t.u"(%0) : (i32) -> ()
  return
}

// -----

// expected-note @+1 {{operand defined as a block argument (block #1 in the same region)}}
func.func @sibling_block_argument(%c: i1) {
  "t.cbr"(%c)[^bb1, ^bb2] : (i1) -> ()
^bb1(%x: i32):
  "t.br"()[^bb3] : () -> ()
^bb2:
  // expected-error @+1 {{operand #0 does not dominate this use}}
  "t.u"(%x) : (i32) -> ()
  "t.br"()[^bb3] : () -> ()
^bb3:
  return
}
