#!/usr/bin/env bash
# The whole test suite: unit, property (hypothesis), FileCheck (lit) and interop tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" = "5" ]; then
  echo "error: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
