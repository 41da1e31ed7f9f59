#!/usr/bin/env bash
# The main job: compile examples/mlp.irk to a shared library (build/mlp.so, with the C header
# build/mlp.h and the metadata build/mlp.so.json), load it with irkit.load, and train it on
# scikit-learn's bundled digits. Its `train` clause is the @train_step function (forward graph,
# backward graph built by the autodiff pass, Adam's update), lowered to loops and compiled;
# one call per minibatch. Per epoch: a progress bar (on a terminal), the loss and the test
# accuracy; then the training-step time next to the same step written by hand in numpy, and
# the checkpoint (build/mlp.npz; build/mlp.params.bin for examples/infer_digits.c).
# Arguments go to examples/train_digits.py (`--engine interpreter` for dev mode,
# `--engine jit` to compile in process, `--models logreg,mlp` for the logistic regression too).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
.venv/bin/python examples/train_digits.py --models mlp "$@"
