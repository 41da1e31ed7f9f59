#!/usr/bin/env bash
# The main job, for now: read a bundled example, verify it, interpret it, print it back in
# custom and generic form. Later stages replace this with compiling and training a model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
.venv/bin/python examples/run_example.py examples/softmax.mlir
