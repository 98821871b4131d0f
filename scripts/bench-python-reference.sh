#!/usr/bin/env bash
# The study benchmark's Python reference arm: sequential Optuna + PyTorch on this CPU
# (torch.set_num_threads(2)), the same protocol, CNN and data files as
# examples/study_bench.rs, appending the same CSV columns (scripts/python/study_reference.py).
# NOT part of CI: it needs target/venv/torch (scripts/setup-torch.sh, a large download; run
# here if missing). scripts/bench-study.sh calls it between the Rust arms of each seed.
#
# usage: scripts/bench-python-reference.sh [--seed N] [--budget-seconds S] [--csv PATH]
#                                          [--threads N] [--short]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$root/target/venv/torch/bin/python"
if ! [ -x "$python" ] || ! "$python" -c 'import torch, optuna, numpy' 2>/dev/null; then
    "$root/scripts/setup-torch.sh"
fi
exec "$python" "$root/scripts/python/study_reference.py" "$@"
