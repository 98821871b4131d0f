#!/usr/bin/env python3
"""Optuna's TPE on saturate-study's benchmark functions (see benches/tpe_quality.rs).

usage: <venv>/bin/python scripts/python/bench_tpe.py [n_seeds] [n_trials] [first_seed] [f1,f2,..]
Prints one JSON object: {function: [best value per seed]}. The functions and search
spaces are the same as in benches/tpe_quality.rs.
"""
import json
import math
import sys
import warnings

import optuna

warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.ERROR)

HARTMANN_A = [
    [10, 3, 17, 3.5, 1.7, 8],
    [0.05, 10, 17, 0.1, 8, 14],
    [3, 3.5, 1.7, 10, 17, 8],
    [17, 8, 0.05, 10, 0.1, 14],
]
HARTMANN_P = [
    [1312, 1696, 5569, 124, 8283, 5886],
    [2329, 4135, 8307, 3736, 1004, 9991],
    [2348, 1451, 3522, 2883, 3047, 6650],
    [4047, 8828, 8732, 5743, 1091, 381],
]
HARTMANN_ALPHA = [1.0, 1.2, 3.0, 3.2]


def sphere(t):
    return sum(t.suggest_float(f"x{i}", -5, 5) ** 2 for i in range(5))


def rosenbrock(t):
    x = [t.suggest_float(f"x{i}", -5, 10) for i in range(5)]
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(4))


def branin(t):
    x1 = t.suggest_float("x1", -5, 10)
    x2 = t.suggest_float("x2", 0, 15)
    b, c, r, s, tt = 5.1 / (4 * math.pi**2), 5 / math.pi, 6, 10, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - tt) * math.cos(x1) + s


def hartmann6(t):
    x = [t.suggest_float(f"x{i}", 0, 1) for i in range(6)]
    total = 0.0
    for i in range(4):
        inner = sum(HARTMANN_A[i][j] * (x[j] - HARTMANN_P[i][j] * 1e-4) ** 2 for j in range(6))
        total += HARTMANN_ALPHA[i] * math.exp(-inner)
    return -total


def mixed(t):
    x = t.suggest_int("x", -10, 10)
    y = t.suggest_float("y", -5, 5)
    c = t.suggest_categorical("c", ["a", "b", "c"])
    return (x - 3) ** 2 + (y + 1) ** 2 + {"a": 0.0, "b": 1.0, "c": 2.0}[c]


def styblinski_tang(t):
    xs = [t.suggest_float(f"x{i}", -5, 5) for i in range(10)]
    return sum(x**4 - 16 * x * x + 5 * x for x in xs) / 2


def conditional(t):
    lr = t.suggest_float("lr", 1e-5, 1.0, log=True)
    width = t.suggest_int("width", 4, 512, log=True)
    optimizer = t.suggest_categorical("optimizer", ["sgd", "adam"])
    if optimizer == "sgd":
        momentum = t.suggest_float("momentum", 0.0, 0.99)
        best_lr, extra = 1e-1, 4 * (momentum - 0.9) ** 2 + 0.2
    else:
        beta = t.suggest_float("beta1", 0.5, 0.999)
        best_lr, extra = 1e-3, 4 * (beta - 0.9) ** 2
    return (math.log10(lr) - math.log10(best_lr)) ** 2 + (math.log2(width) - 7) ** 2 / 4 + extra


FUNCTIONS = {"sphere-5d": sphere, "rosenbrock-5d": rosenbrock, "branin": branin, "hartmann-6": hartmann6, "mixed": mixed,
             "styblinski-tang-10d": styblinski_tang, "conditional": conditional}

if __name__ == "__main__":
    n_seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    n_trials = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    first_seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    names = sys.argv[4].split(",") if len(sys.argv) > 4 else list(FUNCTIONS)
    out = {}
    for name in names:
        f = FUNCTIONS[name]
        out[name] = []
        for seed in range(first_seed, first_seed + n_seeds):
            study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
            study.optimize(f, n_trials=n_trials)
            out[name].append(study.best_value)
    json.dump(out, sys.stdout)
