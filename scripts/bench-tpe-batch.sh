#!/usr/bin/env bash
# TPE asked K trials at a time (K in 1, 4, 8, 16), saturate's and Optuna's, in one run: the
# median best value over seeds on the test functions of
# crates/saturate-study/benches/common/functions.rs, and each K's median relative to K = 1.
# Optuna's TPE (constant liar on) comes from the venv of scripts/setup-python.sh.
#
# usage: scripts/bench-tpe-batch.sh [N_SEEDS] [N_TRIALS] [OUT.csv]
#        (40 seeds, 100 trials, target/bench/tpe-batch.csv)
# env:   OPTUNA_VERSION (4.9.0)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seeds="${1:-40}"
trials="${2:-100}"
out="${3:-$root/target/bench/tpe-batch.csv}"
python="$root/target/venv/optuna-${OPTUNA_VERSION:-4.9.0}/bin/python"
if [ ! -x "$python" ]; then
    echo "error: no $python; run scripts/setup-python.sh first" >&2
    exit 1
fi
mkdir -p "$(dirname "$out")"
echo "# machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load: $(uptime)" >&2
echo "# commit: $(git -C "$root" rev-parse --short HEAD); $seeds seeds x $trials trials" >&2
cargo bench --quiet -p saturate-study --bench tpe_batch -- "$seeds" "$trials" 0 >"$out"
"$python" "$root/scripts/python/bench_tpe_batch.py" "$seeds" "$trials" 0 | tee -a "$out" >/dev/null
"$python" - "$out" <<'PY'
import csv, statistics, sys
from collections import defaultdict

rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("arm,") or True))
best = defaultdict(list)
for r in rows:
    if r["arm"] == "arm":
        continue
    best[(r["function"], r["arm"], int(r["k"]))].append(float(r["best"]))
functions = list(dict.fromkeys(f for f, _, _ in best))
arms = list(dict.fromkeys(a for _, a, _ in best))
ks = sorted({k for _, _, k in best})
print("| function | K | " + " | ".join(f"{a} median (IQR)" for a in arms) + " |")
print("|---|---|" + "---|" * len(arms))
for f in functions:
    for k in ks:
        cells = []
        for a in arms:
            v = sorted(best[(f, a, k)])
            q = statistics.quantiles(v, n=4)
            cells.append(f"{statistics.median(v):.4g} ({q[0]:.3g} to {q[2]:.3g})")
        print(f"| {f} | {k} | " + " | ".join(cells) + " |")
PY
echo "# raw rows: $out" >&2
