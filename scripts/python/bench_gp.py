#!/usr/bin/env python3
"""Optuna 5.0's GPSampler on saturate-study's benchmark functions (see benches/gp.rs and
scripts/bench-gp.sh), and the table of both.

usage: <venv>/bin/python scripts/python/bench_gp.py quality N_SEEDS N_TRIALS F1,F2,..
       <venv>/bin/python scripts/python/bench_gp.py ask-time N_SEEDS N_TRIALS F1,F2,..
       <venv>/bin/python scripts/python/bench_gp.py table QUALITY.csv ASK_TIME.csv

quality:  CSV rows `optuna-gp,function,seed,best,seconds` (no header).
ask-time: CSV rows `optuna-gp,function,seed,trials,ms_per_ask`: the mean wall time of the
          last 10 trials' ask and suggestions (Optuna samples at the first suggestion) of
          one study of N_TRIALS.
The functions and search spaces are bench_tpe.py's, the same as in benches/common.
"""
import csv
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import optuna  # noqa: E402
from bench_tpe import FUNCTIONS  # noqa: E402

warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.ERROR)


def quality(n_seeds, n_trials, names):
    for name in names:
        for seed in range(n_seeds):
            started = time.perf_counter()
            study = optuna.create_study(sampler=optuna.samplers.GPSampler(seed=seed))
            study.optimize(FUNCTIONS[name], n_trials=n_trials)
            seconds = time.perf_counter() - started
            print(f"optuna-gp,{name},{seed},{study.best_value!r},{seconds:.3f}", flush=True)


def ask_time(n_seeds, n_trials, names):
    for name in names:
        for seed in range(n_seeds):
            study = optuna.create_study(sampler=optuna.samplers.GPSampler(seed=seed))
            times = []
            for _ in range(n_trials):
                started = time.perf_counter()
                trial = study.ask()
                value = FUNCTIONS[name](trial)
                times.append(time.perf_counter() - started)
                study.tell(trial, value)
            ms = 1e3 * statistics.mean(times[-10:])
            print(f"optuna-gp,{name},{seed},{n_trials},{ms:.3f}", flush=True)


def quartiles(values):
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def table(quality_csv, ask_time_csv):
    rows = list(csv.DictReader(open(quality_csv)))
    samplers = list(dict.fromkeys(r["sampler"] for r in rows))
    functions = list(dict.fromkeys(r["function"] for r in rows))
    print("| function | " + " | ".join(f"{s} median best (IQR)" for s in samplers) + " | seeds |")
    print("|---|" + "---|" * len(samplers) + "---|")
    for f in functions:
        cells, seeds = [], 0
        for s in samplers:
            values = [float(r["best"]) for r in rows if r["sampler"] == s and r["function"] == f]
            seeds = max(seeds, len(values))
            if len(values) < 2:
                cells.append("n/a")
                continue
            lo, mid, hi = quartiles(values)
            cells.append(f"{mid:.4g} ({lo:.4g} to {hi:.4g})")
        print(f"| {f} | " + " | ".join(cells) + f" | {seeds} |")
    print()
    rows = list(csv.DictReader(open(ask_time_csv)))
    samplers = list(dict.fromkeys(r["sampler"] for r in rows))
    functions = list(dict.fromkeys(r["function"] for r in rows))
    print("| function | trials | " + " | ".join(f"{s} ms per ask" for s in samplers) + " | ratio |")
    print("|---|---|" + "---|" * len(samplers) + "---|")
    for f in functions:
        ms = {
            s: statistics.median(
                float(r["ms_per_ask"]) for r in rows if r["sampler"] == s and r["function"] == f
            )
            for s in samplers
        }
        trials = next(r["trials"] for r in rows if r["function"] == f)
        ratio = ms.get("optuna-gp", float("nan")) / ms.get("saturate-gp", float("nan"))
        cells = " | ".join(f"{ms[s]:.1f}" for s in samplers)
        print(f"| {f} | {trials} | {cells} | {ratio:.1f}x |")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "table":
        table(sys.argv[2], sys.argv[3])
    else:
        n_seeds, n_trials = int(sys.argv[2]), int(sys.argv[3])
        names = sys.argv[4].split(",")
        {"quality": quality, "ask-time": ask_time}[mode](n_seeds, n_trials, names)
