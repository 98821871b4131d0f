"""Pairs saturate's members with Ray Tune's trials of the same configuration.

scripts/bench-pbt.sh starts both PBT arms of a seed from the same 8 configurations. Run without
exploits (`INTERVAL=100`), each configuration trains with constant hyperparameters in both
frameworks, so its accuracy can be compared one to one. This script reads a run's logs
directory (target/bench/pbt-logs/<stamp>: `saturate-pbt-<seed>.journal` and
`ray-pbt-<seed>.log`, whose RESULT line names Ray's run directory), matches every initial
saturate member to the Ray trial with the same lr, momentum, weight decay and dropout, and
prints the accuracy differences at the last epoch: over all configurations, by learning rate,
and per seed (a seed's configurations share the data order and the width, so the standard
errors are computed over per-seed means).

usage: pbt_pairs.py LOGS_DIR [--ray-results DIR] [--csv OUT]
       --ray-results: where to look for `pbt-seed<seed>-*` when a log names no run directory
       (a run before the RESULT line carried it; the newest match is taken).
"""

import argparse
import csv
import glob
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_pbt_ray import initial_trials  # noqa: E402
from study_reference import ROOT  # noqa: E402

KEYS = ("lr", "momentum", "weight_decay", "dropout")


def key(params):
    return tuple(round(float(params[k]), 12) for k in KEYS)


def saturate_members(journal):
    """Width and final value of every initial member with a value, by configuration."""
    return {
        key(t.params): (int(t.params["width"]), t.value)
        for t in initial_trials(journal)
        if t.value is not None
    }


def ray_trials(run_dir):
    out = {}
    for trial in glob.glob(os.path.join(run_dir, "CnnTrainable_*")):
        params = json.load(open(os.path.join(trial, "params.json")))
        rows = list(csv.DictReader(open(os.path.join(trial, "progress.csv"))))
        if rows:
            out[key(params)] = float(rows[-1]["accuracy"])
    return out


def ray_run_dir(log, seed, fallback):
    for line in open(log, encoding="utf-8", errors="replace"):
        m = re.search(r"\brun_dir=(\S+)", line) if line.startswith("RESULT ") else None
        if m:
            return os.path.join(ROOT, m.group(1))
    runs = sorted(glob.glob(os.path.join(fallback, f"pbt-seed{seed}-*")), key=os.path.getmtime)
    if not runs:
        sys.exit(f"{log}: no run_dir in its RESULT line and no pbt-seed{seed}-* in {fallback}")
    return runs[-1]


def summarise(name, rows):
    if not rows:
        return
    by_seed = {}
    for r in rows:
        by_seed.setdefault(r["seed"], []).append(r["diff"])
    means = [statistics.mean(v) for v in by_seed.values()]
    se = statistics.stdev(means) / math.sqrt(len(means)) if len(means) > 1 else float("nan")
    diffs = [r["diff"] for r in rows]
    print(
        f"| {name} | {len(rows)} | {len(means)} | {statistics.median(diffs):+.4f} "
        f"| {statistics.mean(means):+.4f} | {se:.4f} | {sum(d > 0 for d in diffs)} "
        f"| {sum(m > 0 for m in means)} |"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logs")
    ap.add_argument("--ray-results", default=os.path.join(ROOT, "target", "bench", "ray-results"))
    ap.add_argument("--csv", help="write one row per configuration here")
    args = ap.parse_args()
    rows = []
    journals = sorted(glob.glob(os.path.join(args.logs, "saturate-pbt-*.journal")))
    if not journals:
        sys.exit(f"{args.logs}: no saturate-pbt-<seed>.journal (run scripts/bench-pbt.sh)")
    for journal in journals:
        seed = int(re.search(r"saturate-pbt-(\d+)\.journal$", journal).group(1))
        log = os.path.join(args.logs, f"ray-pbt-{seed}.log")
        if not os.path.exists(log):
            sys.exit(f"{log}: missing (ARMS must include ray-pbt after saturate-pbt)")
        ray = ray_trials(ray_run_dir(log, seed, args.ray_results))
        for k, (width, value) in saturate_members(journal).items():
            if k not in ray:
                sys.exit(f"seed {seed}: no Ray trial with the configuration {k}")
            rows.append(dict(zip(KEYS, k), seed=seed, width=width, saturate=value,
                             ray=ray[k], diff=value - ray[k]))
    print("accuracy at the last epoch, saturate minus Ray, same configuration; standard error "
          "over per-seed means\n")
    print("| configurations | n | seeds | median | mean of seed means | SE | saturate ahead "
          "(configurations) | saturate ahead (seeds) |")
    print("|---|---|---|---|---|---|---|---|")
    summarise("all", rows)
    summarise("lr < 0.01", [r for r in rows if r["lr"] < 0.01])
    summarise("0.01 <= lr < 0.05", [r for r in rows if 0.01 <= r["lr"] < 0.05])
    summarise("lr >= 0.05", [r for r in rows if r["lr"] >= 0.05])
    for w in sorted({r["width"] for r in rows}):
        summarise(f"width {w}", [r for r in rows if r["width"] == w])
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["seed", "width", *KEYS, "saturate", "ray", "diff"])
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
