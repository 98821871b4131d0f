#!/usr/bin/env python3
"""Python Optuna's side of saturate-study's interop tests and benchmarks.

Run with a venv made by scripts/setup-python.sh, e.g.
    target/venv/optuna-4.9.0/bin/python scripts/python/optuna_interop.py dump J.log
Subcommands:
    (<journal> may also be an RDB URL: sqlite:///file.db, postgresql://...)
    dump <journal>                    every study in the journal, as canonical JSON on stdout
    write <journal>                   write the reference studies (see write()), then dump
    continue <journal> <study> <n>    run n more trials of an existing study (random sampler)
    worker <journal> <study> <n>      append n trials to a study as a concurrent worker
    constraints <journal> <study>     each trial's constraints, the best trial and the front
    write-constrained <journal>       write a study with trial.set_constraint (5.0), then
                                      print `constraints` of it
Canonical JSON: non-finite floats become the strings "NaN", "Infinity", "-Infinity".
"""
import json
import math
import sys
import warnings

import optuna
from optuna.distributions import distribution_to_json
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.ERROR)


def storage(path):
    if "://" in path:  # an RDB URL: sqlite:///file.db, postgresql://...
        return optuna.storages.RDBStorage(path)
    return JournalStorage(JournalFileBackend(path))


def canon(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return x
    if isinstance(x, dict):
        return {str(k): canon(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [canon(v) for v in x]
    return x


def iso(dt):
    return None if dt is None else dt.isoformat(timespec="microseconds")


def dump(path):
    st = storage(path)
    out = []
    for summary in optuna.get_all_study_summaries(st):
        study = optuna.load_study(study_name=summary.study_name, storage=st)
        trials = []
        for t in study.get_trials(deepcopy=False):
            trials.append(
                {
                    "number": t.number,
                    "trial_id": t._trial_id,
                    "state": t.state.name,
                    "values": t.values,
                    "params": t.params,
                    "distributions": {k: distribution_to_json(d) for k, d in t.distributions.items()},
                    "intermediate_values": {str(k): v for k, v in t.intermediate_values.items()},
                    "user_attrs": t.user_attrs,
                    "system_attrs": t.system_attrs,
                    "datetime_start": iso(t.datetime_start),
                    "datetime_complete": iso(t.datetime_complete),
                }
            )
        out.append(
            {
                "name": study.study_name,
                "directions": [d.name for d in study.directions],
                "user_attrs": study.user_attrs,
                "system_attrs": study._storage.get_study_system_attrs(study._study_id),
                "trials": trials,
            }
        )
    json.dump(canon(out), sys.stdout, sort_keys=True)


def write(path):
    st = storage(path)
    study = optuna.create_study(study_name="from-python", storage=st, sampler=optuna.samplers.RandomSampler(seed=3))
    study.set_user_attr("owner", {"team": "py", "ids": [1, 2.5, None, True]})
    study.set_metric_names(["loss"])

    def objective(trial):
        trial.suggest_float("f", -1.0, 1.0)
        trial.suggest_float("flog", 1e-5, 1e-1, log=True)
        trial.suggest_float("fstep", 0.0, 1.0, step=0.25)
        trial.suggest_int("i", -3, 3)
        trial.suggest_int("ilog", 1, 1024, log=True)
        trial.suggest_int("istep", 1, 9, step=2)
        trial.suggest_categorical("c", ["a", None, 1.5, True, 7])
        trial.set_user_attr("note", "é ☃ \"quoted\"")
        trial.report(float("nan"), 0)
        trial.report(0.5, 1)
        if trial.number == 1:
            raise optuna.TrialPruned()
        if trial.number == 2:
            return float("nan")  # FAIL
        return trial.number * 0.1

    study.optimize(objective, n_trials=4, catch=())
    running = study.ask()  # RUNNING, left running
    running.suggest_float("f", -1.0, 1.0)
    study.enqueue_trial({"f": 0.25, "c": None})  # WAITING
    mo = optuna.create_study(study_name="mo-python", storage=st, directions=["minimize", "maximize"])
    mo.optimize(lambda t: (t.suggest_float("x", 0, 1), t.suggest_int("y", 0, 4)), n_trials=3)
    dump(path)


def continue_study(path, name, n):
    study = optuna.load_study(study_name=name, storage=storage(path), sampler=optuna.samplers.RandomSampler())
    study.optimize(lambda t: t.suggest_float("f", -1.0, 1.0) ** 2, n_trials=n)


def worker(path, name, n):
    study = optuna.load_study(study_name=name, storage=storage(path), sampler=optuna.samplers.RandomSampler())
    for _ in range(n):
        t = study.ask()
        x = t.suggest_float("x", 0.0, 1.0)
        t.report(x, 0)
        study.tell(t, x)


def constraints(path, name):
    study = optuna.load_study(study_name=name, storage=storage(path))
    trials = study.get_trials(deepcopy=False)
    try:
        best = study.best_trial.number
    except ValueError:  # no (feasible) completed trial
        best = None
    out = {
        "constraints": {str(t.number): t.constraints for t in trials},
        "best": best,
        "front": sorted(t.number for t in study.best_trials),
    }
    json.dump(canon(out), sys.stdout, sort_keys=True)


def write_constrained(path):
    study = optuna.create_study(
        study_name="constrained-python",
        storage=storage(path),
        sampler=optuna.samplers.TPESampler(seed=5, n_startup_trials=4),
    )

    def objective(trial):
        x = trial.suggest_float("x", -3.0, 3.0)
        trial.set_constraint("x_at_least_1", 1.0 - x)
        trial.set_constraint("x_at_most_2", x - 2.0)
        return x * x

    study.optimize(objective, n_trials=12)
    constraints(path, "constrained-python")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "dump":
        dump(args[0])
    elif command == "write":
        write(args[0])
    elif command == "continue":
        continue_study(args[0], args[1], int(args[2]))
    elif command == "worker":
        worker(args[0], args[1], int(args[2]))
    elif command == "constraints":
        constraints(args[0], args[1])
    elif command == "write-constrained":
        write_constrained(args[0])
    else:
        sys.exit(f"unknown command {command}")
