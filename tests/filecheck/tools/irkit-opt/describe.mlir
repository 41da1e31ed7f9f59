// RUN: irkit-opt --describe arith.addf | FileCheck %s
// CHECK: arith.addf  (dialect arith)
// CHECK: traits: Pure, Commutative, SameOperandsAndResultType, Elementwise
// CHECK: operands:
// CHECK-NEXT: lhs: floating-point-like
// CHECK: properties:
// CHECK-NEXT: fastmath: {{.*}}[default: #arith.fastmath<none>]
// CHECK: hooks:
// CHECK: fold {{ *}}dialects/arith/floating.py:{{[0-9]+}}  (inherited from _FloatBinary)
// CHECK: evaluate {{ *}}dialects/arith/floating.py:{{[0-9]+}}
// CHECK: lowerings: none registered

// RUN: irkit-opt --describe arith.mulf | FileCheck %s --check-prefix=PATTERNS
// PATTERNS: canonicalization_patterns
// PATTERNS-SAME: dialects/arith/floating.py:{{[0-9]+}}

// RUN: not irkit-opt --describe arith.adf 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: irkit-opt: error: unknown op 'arith.adf'; did you mean arith.addf
