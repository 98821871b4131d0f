#!/usr/bin/env python3
"""Time Python Optuna loading a journal: JournalStorage replay + load_study + get_trials.

usage: <venv>/bin/python scripts/python/bench_journal_load.py <journal> [repeats]
Prints {"median_s": .., "runs_s": [..], "trials": n} as JSON.
"""
import json
import statistics
import sys
import time
import warnings

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.ERROR)

path = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
runs = []
n = 0
for _ in range(repeats):
    start = time.perf_counter()
    storage = JournalStorage(JournalFileBackend(path))
    name = optuna.get_all_study_names(storage)[0]
    n = len(optuna.load_study(study_name=name, storage=storage).get_trials(deepcopy=False))
    runs.append(time.perf_counter() - start)
json.dump({"median_s": statistics.median(runs), "runs_s": runs, "trials": n}, sys.stdout)
