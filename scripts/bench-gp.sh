#!/usr/bin/env bash
# GP sampler: saturate's GpSampler next to Optuna 5.0's GPSampler on the test functions of
# crates/saturate-study/benches/common/functions.rs (median best and IQR over seeds), plus
# the time per ask at 100 trials. Rows go to book/src/data/gp-quality.csv and
# book/src/data/gp-ask-time.csv.
#
# Optuna's GPSampler needs torch and scipy. The venv made here (target/venv/optuna-gp) holds
# optuna 5.0.0 and scipy only; a .pth file appends the site-packages of target/venv/torch
# (scripts/setup-torch.sh), so its torch is found without installing it again.
#
# PARTS=mo compares the two-objective studies instead (not run by default): saturate's
# GpSampler, TPE and random search next to Optuna 5.0's GPSampler and TPESampler on the
# functions of crates/saturate-study/benches/common/mo_functions.rs (MO_FUNCTIONS, default
# "zdt1-5d,fonseca-3d,mixed-mo"), by the hypervolume of the completed trials (higher is
# better) over N_SEEDS x N_TRIALS, and the GP samplers' time per ask at 100 trials. Rows go
# to book/src/data/gp-mo-quality.csv and book/src/data/gp-mo-ask-time.csv.
#
# usage: scripts/bench-gp.sh [N_SEEDS] [N_TRIALS] [FUNCTIONS]
#        (40 seeds, 60 trials, "branin,hartmann-6,mixed"); the time per ask is measured
#        on ASK_SEEDS (3) seeds x 100 trials of the same functions
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seeds="${1:-40}"
trials="${2:-60}"
functions="${3:-branin,hartmann-6,mixed}"
# PARTS=ask-time (or quality) runs one part only; PARTS=mo the two-objective part.
parts="${PARTS:-quality ask-time}"
mo_functions="${MO_FUNCTIONS:-zdt1-5d,fonseca-3d,mixed-mo}"
ask_seeds="${ASK_SEEDS:-3}"
venv="$root/target/venv/optuna-gp"
torch_site="$root/target/venv/torch/lib/python3.11/site-packages"
if [ ! -d "$torch_site/torch" ]; then
    echo "error: no torch in $torch_site; run scripts/setup-torch.sh first" >&2
    exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import optuna, scipy; assert optuna.__version__ == "5.0.0"' 2>/dev/null; then
    "$venv/bin/pip" install --quiet optuna==5.0.0 scipy greenlet
fi
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# Appended after the venv's own packages: its optuna 5.0.0 wins over the torch venv's 4.9.
echo "$torch_site" >"$site/zz-torch.pth"
"$venv/bin/python" -c 'import torch, optuna; print("torch", torch.__version__, "optuna", optuna.__version__)' >&2
[ "${SETUP_ONLY:-0}" = 1 ] && exit 0

data="$root/book/src/data"
mkdir -p "$data"
echo "# machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load: $(uptime)" >&2
echo "# commit: $(git -C "$root" rev-parse --short HEAD); $seeds seeds x $trials trials; $(date -u)" >&2
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
if [[ " $parts " == *" quality "* ]]; then
    cargo bench --quiet -p saturate-study --bench gp -- quality "$seeds" "$trials" "$functions" >"$data/gp-quality.csv"
    "$venv/bin/python" "$root/scripts/python/bench_gp.py" quality "$seeds" "$trials" "$functions" >>"$data/gp-quality.csv"
fi
if [[ " $parts " == *" ask-time "* ]]; then
    cargo bench --quiet -p saturate-study --bench gp -- ask-time "$ask_seeds" 100 "$functions" >"$data/gp-ask-time.csv"
    "$venv/bin/python" "$root/scripts/python/bench_gp.py" ask-time "$ask_seeds" 100 "$functions" >>"$data/gp-ask-time.csv"
fi
if [[ " $parts " == *" quality "* || " $parts " == *" ask-time "* ]]; then
    "$venv/bin/python" "$root/scripts/python/bench_gp.py" table "$data/gp-quality.csv" "$data/gp-ask-time.csv"
fi
if [[ " $parts " == *" mo "* ]]; then
    cargo bench --quiet -p saturate-study --bench gp -- mo-quality "$seeds" "$trials" "$mo_functions" >"$data/gp-mo-quality.csv"
    "$venv/bin/python" "$root/scripts/python/bench_gp.py" mo-quality "$seeds" "$trials" "$mo_functions" >>"$data/gp-mo-quality.csv"
    cargo bench --quiet -p saturate-study --bench gp -- mo-ask-time "$ask_seeds" 100 "$mo_functions" >"$data/gp-mo-ask-time.csv"
    "$venv/bin/python" "$root/scripts/python/bench_gp.py" mo-ask-time "$ask_seeds" 100 "$mo_functions" >>"$data/gp-mo-ask-time.csv"
    "$venv/bin/python" "$root/scripts/python/bench_gp.py" mo-table "$data/gp-mo-quality.csv" "$data/gp-mo-ask-time.csv"
fi
