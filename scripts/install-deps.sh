#!/usr/bin/env bash
# Debian packages irkit's optional checks use. Nothing here is required to build or test
# irkit: tests that need a tool skip cleanly without it. Safe to re-run; never fails the setup.
#   libgomp1       the GNU OpenMP runtime that compiled parallel loops run on (without it
#                  they run on one thread, with a warning)
#   mlir-22-tools  the real mlir-opt (interop tests: irkit's generic output must be valid MLIR)
set -u
as_root_with_apt() { [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; }
# found as irkit looks for it (irkit.backends.llvm_cpu.openmp_library)
if ! python3 -c 'import ctypes.util, sys; sys.exit(not ctypes.util.find_library("gomp"))'; then
  if ! as_root_with_apt || ! { apt-get update -qq && apt-get install -y -qq libgomp1; } \
      >/tmp/irkit-apt.log 2>&1; then
    echo "note: could not install libgomp1 (see /tmp/irkit-apt.log); compiled code runs" \
         "on one thread"
  fi
fi
if command -v mlir-opt >/dev/null 2>&1 || [ -x /usr/lib/llvm-22/bin/mlir-opt ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "note: not root or no apt-get; skipping mlir-22-tools (interop tests will skip)"
  exit 0
fi
if ! { apt-get update -qq && apt-get install -y -qq mlir-22-tools; } >/tmp/irkit-apt.log 2>&1; then
  echo "note: could not install mlir-22-tools (see /tmp/irkit-apt.log); interop tests will skip"
fi
exit 0
