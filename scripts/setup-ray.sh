#!/usr/bin/env bash
# Adds Ray Tune to target/venv/torch (the PyTorch + Optuna environment of
# scripts/setup-torch.sh) for the PBT benchmark's Ray arm (scripts/bench-pbt.sh). NOT part of CI.
# Idempotent: an environment where `ray.tune` already imports is left alone. torch is never
# reinstalled: pip keeps the installed one (ray[tune] does not depend on torch).
#
# usage: scripts/setup-ray.sh
#        RAY_VERSION=2.52.1 scripts/setup-ray.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/venv/torch"
python="$venv/bin/python"
if ! "$python" -c 'import torch, optuna' 2>/dev/null; then
    echo "error: no PyTorch + Optuna in $venv; run scripts/setup-torch.sh first" >&2
    exit 1
fi
if "$python" -c 'import ray, ray.tune' 2>/dev/null; then
    "$python" -c 'import ray, torch; print("ray", ray.__version__, "torch", torch.__version__, "(already set up)")'
    exit 0
fi
spec="ray[tune]${RAY_VERSION:+==$RAY_VERSION}"
torch_before="$("$python" -c 'import torch; print(torch.__version__)')"
# --upgrade-strategy only-if-needed (pip's default): installed packages such as torch and numpy
# stay unless ray's requirements exclude them.
"$python" -m pip install --quiet "$spec"
torch_after="$("$python" -c 'import torch; print(torch.__version__)')"
if [ "$torch_before" != "$torch_after" ]; then
    echo "warning: torch changed from $torch_before to $torch_after" >&2
fi
"$python" -c 'import ray, ray.tune, torch; print("ray", ray.__version__, "torch", torch.__version__, "ready")'
