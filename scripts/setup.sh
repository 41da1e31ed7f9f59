#!/usr/bin/env bash
# Creates .venv (once) with irkit installed in editable mode plus its test dependencies and
# the examples' (scikit-learn, for the digits the demo trains on) and MPI's (mpi4py on the
# MPICH wheel: `mpiexec -n 2` runs data parallel training) and CUDA's (cuda-bindings, 31 MB:
# engine="cuda" on a GPU; without one it says what is missing), and installs the optional
# Debian packages. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.irkit-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e '.[test,examples,mpi,cuda]'
  touch "$stamp"
fi
bash scripts/install-deps.sh
