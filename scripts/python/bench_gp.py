#!/usr/bin/env python3
"""Optuna 5.0's GPSampler on saturate-study's benchmark functions (see benches/gp.rs and
scripts/bench-gp.sh), and the table of both.

usage: <venv>/bin/python scripts/python/bench_gp.py quality N_SEEDS N_TRIALS F1,F2,..
       <venv>/bin/python scripts/python/bench_gp.py ask-time N_SEEDS N_TRIALS F1,F2,..
       <venv>/bin/python scripts/python/bench_gp.py table QUALITY.csv ASK_TIME.csv
       <venv>/bin/python scripts/python/bench_gp.py mo-quality N_SEEDS N_TRIALS F1,F2,..
       <venv>/bin/python scripts/python/bench_gp.py mo-ask-time N_SEEDS N_TRIALS F1,F2,..
       <venv>/bin/python scripts/python/bench_gp.py mo-table MO_QUALITY.csv MO_ASK_TIME.csv

quality:  CSV rows `optuna-gp,function,seed,best,seconds` (no header).
ask-time: CSV rows `optuna-gp,function,seed,trials,ms_per_ask`: the mean wall time of the
          last 10 trials' ask and suggestions (Optuna samples at the first suggestion) of
          one study of N_TRIALS.
The functions and search spaces are bench_tpe.py's, the same as in benches/common.

mo-quality:  CSV rows `SAMPLER,function,seed,hypervolume,seconds` for optuna-gp and
             optuna-tpe (Optuna 5.0's default sampler for several objectives): the
             hypervolume of all completed trials against the function's reference point.
mo-ask-time: as ask-time, on a two-objective study.
The two-objective functions (MO_FUNCTIONS below) are those of
benches/common/mo_functions.rs, with the same parameter names, suggestion order and
reference points; both objectives are minimised.
"""
import csv
import math
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


def zdt1(t):
    x = [t.suggest_float(f"x{i}", 0, 1) for i in range(5)]
    g = 1 + 9 * sum(x[1:]) / 4
    return x[0], g * (1 - math.sqrt(x[0] / g))


def fonseca(t):
    x = [t.suggest_float(f"x{i}", -4, 4) for i in range(3)]
    shift = 1 / math.sqrt(3)
    f1 = 1 - math.exp(-sum((xi - shift) ** 2 for xi in x))
    f2 = 1 - math.exp(-sum((xi + shift) ** 2 for xi in x))
    return f1, f2


def mixed_mo(t):
    n = t.suggest_int("n", -5, 5)
    x = t.suggest_float("x", -3, 3)
    c = t.suggest_categorical("c", ["a", "b", "c"])
    offset = {"a": 0.0, "b": 0.5, "c": 1.0}[c]
    return (x - 1) ** 2 + 0.1 * n**2 + offset, (x + 1) ** 2 + 0.1 * (n - 2) ** 2 + offset


# name: (objective, reference point: 1.1 times each objective's maximum over the space; see
# mo_functions.rs for the maxima).
MO_FUNCTIONS = {
    "zdt1-5d": (zdt1, (1.1, 11.0)),
    "fonseca-3d": (fonseca, (1.1, 1.1)),
    "mixed-mo": (mixed_mo, (21.45, 24.09)),
}


def hypervolume(points, reference):
    """The area dominated by `points` (both minimised) inside the box bounded by
    `reference`, exact: sorted by the first objective, each point adds the strip between its
    second objective and the lowest one before it (mo_functions.rs's `hypervolume`)."""
    inside = sorted(p for p in points if p[0] < reference[0] and p[1] < reference[1])
    lowest, volume = reference[1], 0.0
    for f1, f2 in inside:
        if f2 < lowest:
            volume += (reference[0] - f1) * (lowest - f2)
            lowest = f2
    return volume


def quality(n_seeds, n_trials, names):
    for name in names:
        for seed in range(n_seeds):
            started = time.perf_counter()
            study = optuna.create_study(sampler=optuna.samplers.GPSampler(seed=seed))
            study.optimize(FUNCTIONS[name], n_trials=n_trials)
            seconds = time.perf_counter() - started
            print(f"optuna-gp,{name},{seed},{study.best_value!r},{seconds:.3f}", flush=True)


def mo_quality(n_seeds, n_trials, names):
    samplers = {"optuna-gp": optuna.samplers.GPSampler, "optuna-tpe": optuna.samplers.TPESampler}
    for name in names:
        objective, reference = MO_FUNCTIONS[name]
        for seed in range(n_seeds):
            for label, sampler in samplers.items():
                started = time.perf_counter()
                study = optuna.create_study(
                    directions=["minimize", "minimize"], sampler=sampler(seed=seed)
                )
                study.optimize(objective, n_trials=n_trials)
                seconds = time.perf_counter() - started
                points = [
                    t.values
                    for t in study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
                ]
                volume = hypervolume(points, reference)
                print(f"{label},{name},{seed},{volume!r},{seconds:.3f}", flush=True)


def ask_time(n_seeds, n_trials, names, functions=FUNCTIONS, directions=("minimize",)):
    for name in names:
        for seed in range(n_seeds):
            study = optuna.create_study(
                directions=list(directions), sampler=optuna.samplers.GPSampler(seed=seed)
            )
            times = []
            for _ in range(n_trials):
                started = time.perf_counter()
                trial = study.ask()
                values = functions[name](trial)
                times.append(time.perf_counter() - started)
                study.tell(trial, values)
            ms = 1e3 * statistics.mean(times[-10:])
            print(f"optuna-gp,{name},{seed},{n_trials},{ms:.3f}", flush=True)


def mo_ask_time(n_seeds, n_trials, names):
    objectives = {name: objective for name, (objective, _) in MO_FUNCTIONS.items()}
    ask_time(n_seeds, n_trials, names, objectives, ("minimize", "minimize"))


def quartiles(values):
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def table(quality_csv, ask_time_csv, column="best"):
    """Per function, the median and IQR over seeds of `column` (best: lower is better;
    hypervolume: higher is better), then the median time per ask and optuna-gp's over
    saturate-gp's."""
    rows = list(csv.DictReader(open(quality_csv)))
    samplers = list(dict.fromkeys(r["sampler"] for r in rows))
    functions = list(dict.fromkeys(r["function"] for r in rows))
    header = " | ".join(f"{s} median {column} (IQR)" for s in samplers)
    print(f"| function | {header} | seeds |")
    print("|---|" + "---|" * len(samplers) + "---|")
    for f in functions:
        cells, seeds = [], 0
        for s in samplers:
            values = [float(r[column]) for r in rows if r["sampler"] == s and r["function"] == f]
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
    elif mode == "mo-table":
        table(sys.argv[2], sys.argv[3], column="hypervolume")
    else:
        n_seeds, n_trials = int(sys.argv[2]), int(sys.argv[3])
        names = sys.argv[4].split(",")
        modes = {
            "quality": quality,
            "ask-time": ask_time,
            "mo-quality": mo_quality,
            "mo-ask-time": mo_ask_time,
        }
        modes[mode](n_seeds, n_trials, names)
