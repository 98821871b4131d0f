#!/usr/bin/env bash
# Creates target/venv/torch: PyTorch + Optuna for the Python reference benchmarks
# (scripts/bench-python-reference.sh, scripts/bench-step-pytorch.sh). NOT part of CI: PyPI's
# default Linux torch wheel pulls the NVIDIA CUDA libraries, several GB on disk.
# Idempotent: an environment whose torch and optuna already import is left alone.
#
# usage: scripts/setup-torch.sh
#        TORCH_VERSION=2.9.1 OPTUNA_VERSION=4.9.0 scripts/setup-torch.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
venv="$root/target/venv/torch"
optuna_version="${OPTUNA_VERSION:-4.9.0}"
torch_spec="torch${TORCH_VERSION:+==$TORCH_VERSION}"

if [ -x "$venv/bin/python" ] &&
    "$venv/bin/python" -c 'import torch, optuna, numpy' 2>/dev/null; then
    "$venv/bin/python" -c 'import torch, optuna; print("torch", torch.__version__, "optuna", optuna.__version__, "(already set up)")'
    exit 0
fi
echo "creating $venv (torch from PyPI: a large download)"
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "$torch_spec" numpy "optuna==$optuna_version"
"$venv/bin/python" -c 'import torch, optuna; print("torch", torch.__version__, "optuna", optuna.__version__, "ready")'
