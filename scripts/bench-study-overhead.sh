#!/usr/bin/env bash
# TPE's overhead per trial, saturate vs Python Optuna 4.9, measured in one run (issue 13):
# ask + 5 suggests (float, log float, int, stepped float, categorical) + tell, on a study
# holding 1,000 COMPLETE trials of the same objective (sampled at random by saturate, seed 0),
# with TPE seeded 0 and Optuna's defaults. saturate's side is the divan benchmark
# `tpe_ask_5_suggests_tell` of crates/saturate-study/benches/study.rs, which also writes its
# history (SATURATE_BENCH_HISTORY); Optuna's side loads those very trials into an in-memory
# study and times the same objective with target/venv/optuna-4.9.0 (scripts/setup-python.sh).
# Both report the median over 50 trials.
#
# usage: scripts/bench-study-overhead.sh   (release build in target/study-overhead; prints a table)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/study-overhead}"
python=target/venv/optuna-4.9.0/bin/python
[ -x "$python" ] || { echo "missing $python: run scripts/setup-python.sh" >&2; exit 1; }

echo "machine: $(lscpu | sed -n 's/^Model name:\s*//p'), $(nproc) cores; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"

cargo bench -p saturate-study --bench study --no-run 2>/dev/null
bin=$(cargo bench -p saturate-study --bench study --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\))/\1/p' | tail -1)
# divan's row for 1,000 trials: "╰─ 1000  fastest │ slowest │ median │ mean │ samples │ iters".
history="$CARGO_TARGET_DIR/tpe-history"
rust_ms=$(SATURATE_BENCH_HISTORY="$history" "$bin" tpe_ask_5_suggests_tell --bench 2>/dev/null | awk -F'│' '
    /─ 1000 / {
        split($3, m, " ");
        v = m[1]; unit = m[2];
        if (unit == "µs" || unit == "us") v = v / 1000; else if (unit == "ns") v = v / 1e6; else if (unit == "s") v = v * 1000;
        printf "%.3f", v
    }')
[ -n "$rust_ms" ] || { echo "could not read the benchmark's median" >&2; exit 1; }

python_ms=$("$python" - "$history-1000.jsonl" <<'EOF'
import json, math, statistics, sys, time
import optuna

optuna.logging.set_verbosity(optuna.logging.ERROR)

def objective(trial):
    x = trial.suggest_float("x", -5.0, 5.0)
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    n = trial.suggest_int("n", 1, 64)
    q = trial.suggest_float("q", 0.0, 1.0, step=0.1)
    act = trial.suggest_categorical("act", ["relu", "gelu", "tanh"])
    penalty = 0.0 if act == "relu" else 0.5
    return x * x + abs(math.log(lr)) + n / 64.0 + q + penalty

from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

distributions = {
    "x": FloatDistribution(-5.0, 5.0),
    "lr": FloatDistribution(1e-5, 1e-1, log=True),
    "n": IntDistribution(1, 64),
    "q": FloatDistribution(0.0, 1.0, step=0.1),
    "act": CategoricalDistribution(["relu", "gelu", "tanh"]),
}
study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
with open(sys.argv[1]) as lines:
    for line in lines:
        row = json.loads(line)
        params = {k: d.to_external_repr(row[k]) for k, d in distributions.items()}
        study.add_trial(optuna.trial.create_trial(
            params=params, distributions=distributions, value=row["value"]))
assert len(study.trials) == 1000, len(study.trials)
times = []
for _ in range(50):
    start = time.perf_counter()
    trial = study.ask()
    value = objective(trial)
    study.tell(trial, value)
    times.append(time.perf_counter() - start)
print(f"{statistics.median(times) * 1000:.3f}")
EOF
)

echo
echo "| TPE, ask + 5 suggests + tell at 1,000 trials (median of 50) | ms per trial |"
echo "|---|---:|"
echo "| saturate (benches/study.rs, tpe_ask_5_suggests_tell/1000) | $rust_ms |"
echo "| Python Optuna 4.9.0 (same objective and history) | $python_ms |"
echo "| ratio (Optuna / saturate) | $(awk -v a="$python_ms" -v b="$rust_ms" 'BEGIN { printf "%.1fx", a / b }') |"
echo
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
