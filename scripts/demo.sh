#!/usr/bin/env bash
# The main job, for now (dev mode): compile examples/mlp.irk to the graph dialect, run it in
# the interpreter on a batch, compare with numpy, assign a parameter. Later stages replace this
# with compiling to native code and training.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
.venv/bin/python examples/run_model.py "${1:-examples/mlp.irk}"
