#!/usr/bin/env python3
"""Python Optuna's side of crates/saturate-study/benches/rdb.rs: milliseconds per trial
(ask, 3 suggests, 1 report, tell; random sampler) on a study that already holds 100 trials.

    target/venv/optuna-4.9.0/bin/python scripts/python/bench_rdb_trial.py sqlite:////tmp/b.db
    target/venv/optuna-4.9.0/bin/python scripts/python/bench_rdb_trial.py \
        postgresql+psycopg2://USER:PASSWORD@127.0.0.1:PORT/DB
The URL's password is never printed.
"""
import sys, time, optuna, warnings
warnings.simplefilter("ignore"); optuna.logging.set_verbosity(optuna.logging.ERROR)
url = sys.argv[1]
def objective(t):
    x = t.suggest_float("x", -5, 5); lr = t.suggest_float("lr", 1e-5, 1e-1, log=True); n = t.suggest_int("n", 1, 8)
    t.report(x*x, 0); return x*x + lr + n
s = optuna.create_study(study_name="b", storage=url, sampler=optuna.samplers.RandomSampler(seed=0))
s.optimize(objective, n_trials=100)
t0 = time.perf_counter(); s.optimize(objective, n_trials=50); dt = time.perf_counter() - t0
print(f"{url.split(':')[0]}: {dt/50*1000:.1f} ms/trial")
