// RUN: irkit-opt --list-passes | FileCheck %s
// CHECK: Passes:
// CHECK: --canonicalize {{ *}}- Fold ops, deduplicate constants and apply canonicalization patterns
// CHECK-NEXT: max-iterations=int (default 10)
// CHECK-NEXT: region-simplify=bool (default True)
// CHECK: --cse
// CHECK: --dce
// CHECK: --strip-debuginfo
// CHECK: --symbol-dce
