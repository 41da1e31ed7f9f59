#!/usr/bin/env bash
# The main job (dev mode): train examples/mlp.irk on scikit-learn's bundled digits in the
# interpreter. Its `train` clause is the @train_step function (forward graph, backward graph
# built by the autodiff pass, Adam's update as graph ops and variable assignments), run once
# per minibatch; loss and test accuracy are printed per epoch, then the wall time. Arguments
# go to examples/train_digits.py (`--models logreg,mlp` trains the logistic regression too).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
.venv/bin/python examples/train_digits.py --models mlp "$@"
