#!/usr/bin/env python3
"""The book's refill table from scripts/bench-refill-limit.sh's rows.

usage: scripts/refill-table.py [CSV]     (default: target/bench/refill-limit.csv)

One row per setting, in the order the rows name them: groups and widths tried (their range
over seeds), busy slots and best validation accuracy (median and range), and the seeds where
the setting's best accuracy beat, tied or lost to the first setting's on the same seed (the
runs are seeded, so a seed is the same study up to the setting), with the two-sided exact sign
test's p-value over the seeds that differ.
"""
import csv
import math
import statistics
import sys

NAMES = {
    "8": "limit 8 (no refill)",
    "16": "limit 16 (the default)",
    "none": "no limit",
    "16+promising": "limit 16, while promising",
    "none+promising": "no limit, while promising",
    "none+halving": "no limit, halving (η = 2)",
    "16+halving": "limit 16, halving (η = 2)",
}


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt(lo) if lo == hi else f"{fmt(lo)} to {fmt(hi)}"


def sign_test(better, worse):
    """Two-sided exact sign test: the chance of a split at least this uneven by coin flips."""
    n = better + worse
    if n == 0:
        return 1.0
    k = min(better, worse)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "target/bench/refill-limit.csv"
    rows = list(csv.DictReader(open(path, newline="")))
    if not rows:
        sys.exit(f"{path}: no rows")
    settings = list(dict.fromkeys(r["limit"] for r in rows))
    by = {s: {int(r["seed"]): r for r in rows if r["limit"] == s} for s in settings}
    base = by[settings[0]]
    seeds = sorted(set.intersection(*(set(by[s]) for s in settings)))
    print(f"{len(seeds)} seeds in every setting: {' '.join(map(str, seeds))}\n")
    print("| setting | groups | widths tried | slots busy: median (range) "
          "| best accuracy: median (range) | against the first, same seed: better / same / worse (sign test p) |")
    print("|---|---|---|---|---|---|")
    for s in settings:
        runs = [by[s][seed] for seed in seeds]
        groups = [int(r["groups"]) for r in runs]
        widths = [len([w for w in r["widths"].split(";") if w.strip()]) for r in runs]
        busy = [int(r["busy_pct"]) for r in runs]
        best = [float(r["best"]) for r in runs]
        pct = lambda v: f"{v:.0f}%"
        acc = lambda v: f"{v:.4f}"
        if s == settings[0]:
            versus = "-"
        else:
            d = [float(by[s][seed]["best"]) - float(base[seed]["best"]) for seed in seeds]
            better, worse = sum(x > 0 for x in d), sum(x < 0 for x in d)
            p = sign_test(better, worse)
            versus = f"{better} / {len(d) - better - worse} / {worse} (p = {p:.2g})"
        print(f"| {NAMES.get(s, s)} | {span(groups, str)} | {span(widths, str)} "
              f"| {pct(statistics.median(busy))} ({span(busy, pct)}) "
              f"| {acc(statistics.median(best))} ({span(best, acc)}) | {versus} |")


if __name__ == "__main__":
    main()
