#!/usr/bin/env python3
"""Optuna's TPE asked K trials at a time, as saturate's group runner asks (see
crates/saturate-study/benches/tpe_batch.rs): K trials asked, then all K told, constant liar on.

usage: <venv>/bin/python scripts/python/bench_tpe_batch.py [n_seeds] [n_trials] [first_seed]
Prints CSV rows `arm,function,k,seed,best` (arm: optuna-<version>-liar).
"""
import sys
import warnings

import optuna

from bench_tpe import FUNCTIONS

warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.ERROR)

KS = [1, 4, 8, 16]

if __name__ == "__main__":
    n_seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    n_trials = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    first_seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    arm = f"optuna-{optuna.__version__}-liar"
    for name, f in FUNCTIONS.items():
        for k in KS:
            for seed in range(first_seed, first_seed + n_seeds):
                sampler = optuna.samplers.TPESampler(seed=seed, constant_liar=True)
                study = optuna.create_study(sampler=sampler)
                asked = 0
                while asked < n_trials:
                    batch = [study.ask() for _ in range(min(k, n_trials - asked))]
                    # Every member suggests before any is told, as in a group.
                    values = [f(trial) for trial in batch]
                    for trial, value in zip(batch, values):
                        study.tell(trial, value)
                    asked += len(batch)
                print(f"{arm},{name},{k},{seed},{study.best_value!r}", flush=True)
