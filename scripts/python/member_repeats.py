"""Repeats of fixed configurations in saturate and in PyTorch: is one framework's training
systematically better for the same hyperparameters?

For each configuration (width, lr, momentum, weight decay, dropout) and each seed, saturate
trains a group of 8 members that all start from that configuration (examples/pbt.rs with
`--member` x 8 and `--interval 100`: no exploit, so each member trains alone in the group, from
its own initialisation and with its own dropout masks, on the seed's order of the training
images); PyTorch trains 8 runs of the same configuration (scripts/python/study_reference.py's
CNN, SGD with momentum, dampening 0 and coupled weight decay, batch 64, 8 epochs of 24 steps,
the seed's order of the training images from bench_pbt_ray.py, its own initialisation per run).
Both validate on the same 2,048 images after every epoch. The paired quantity is a
configuration's mean accuracy at the last epoch over its repeats, per framework.

usage: member_repeats.py --bin target/release/examples/pbt --seeds 100 101 --csv out.csv
       [--config 12,0.08,0.65,3e-6,0.43 ...] [--torch-jobs 2]
Prints one row per configuration and the summary; writes every repeat to --csv.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import zlib
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_pbt_ray import batches  # noqa: E402
from study_reference import ROOT, Cnn, load  # noqa: E402

EPOCHS, STEPS, BATCH, MEMBERS = 8, 24, 64, 8
N_TRAIN, N_VALID = 8192, 2048


def parse_config(text):
    width, lr, momentum, wd, dropout = text.split(",")
    return {"width": int(width), "lr": float(lr), "momentum": float(momentum),
            "weight_decay": float(wd), "dropout": float(dropout)}


def torch_run(args):
    """One PyTorch repeat: accuracy after every epoch."""
    config, seed, repeat = args
    torch.set_num_threads(1)
    torch.manual_seed(zlib.crc32(f"repeat-{seed}-{repeat}".encode()))
    x_train, y_train = load("train", N_TRAIN)
    x_valid, y_valid = load("test", N_VALID)
    model = Cnn(config["width"], config["dropout"])
    optim = torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=config["momentum"],
                            dampening=0.0, weight_decay=config["weight_decay"])
    accuracies, finite = [], True
    for epoch in range(EPOCHS):
        model.train()
        for idx in batches(seed, N_TRAIN, BATCH, epoch * STEPS, STEPS):
            optim.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
            loss.backward()
            optim.step()
            finite = finite and bool(torch.isfinite(loss))
        if not finite:
            # As a saturate member whose loss turned non-finite: its last value stands.
            accuracies += [accuracies[-1] if accuracies else 0.1] * (EPOCHS - epoch)
            break
        model.eval()
        hits = 0
        with torch.no_grad():
            for s in range(0, N_VALID, 512):
                logits = model(x_valid[s:s + 512])
                hits += (logits.argmax(1) == y_valid[s:s + 512]).sum().item()
        accuracies.append(hits / N_VALID)
    return accuracies


def saturate_runs(binary, config, seed):
    """The 8 members of one saturate group: accuracy after every epoch, per member."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    spec = ",".join(f"{k}={config[k]!r}" for k in
                    ("width", "lr", "momentum", "weight_decay", "dropout"))
    with tempfile.TemporaryDirectory() as tmp:
        journal = os.path.join(tmp, "pbt.journal")
        cmd = [binary, "--seed", str(seed), "--interval", "100", "--storage", journal]
        for _ in range(MEMBERS):
            cmd += ["--member", spec]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if out.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
        storage = JournalStorage(JournalFileBackend(journal))
        name = optuna.get_all_study_summaries(storage)[0].study_name
        trials = optuna.load_study(study_name=name, storage=storage).get_trials()
    runs = []
    # A member whose loss turned non-finite is replaced by a copy of a good one (a trial with
    # a PBT parent): the repeat is the initial trial, its last value carried to the end.
    initial = [t for t in trials if "saturate:pbt_parent" not in t.system_attrs]
    for t in sorted(initial, key=lambda t: t.number):
        for k in ("lr", "momentum", "weight_decay", "dropout"):
            if abs(t.params[k] - config[k]) > 1e-12 * max(1.0, abs(config[k])):
                sys.exit(f"trial {t.number}: {k} {t.params[k]} is not the enqueued {config[k]}")
        if t.params["width"] != config["width"]:
            sys.exit(f"trial {t.number}: width {t.params['width']} != {config['width']}")
        acc, last = [], float("nan")
        for e in range(1, EPOCHS + 1):
            last = t.intermediate_values.get(e, last)
            acc.append(last)
        runs.append(acc)
    if len(runs) != MEMBERS:
        sys.exit(f"{len(runs)} trials, expected {MEMBERS}")
    return runs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "examples", "pbt"))
    p.add_argument("--seeds", type=int, nargs="+", required=True)
    p.add_argument("--config", nargs="+", required=True,
                   help="width,lr,momentum,weight_decay,dropout")
    p.add_argument("--csv", required=True)
    p.add_argument("--torch-jobs", type=int, default=2)
    args = p.parse_args()
    configs = [parse_config(c) for c in args.config]

    rows = []
    with ProcessPoolExecutor(args.torch_jobs) as pool:
        for ci, config in enumerate(configs):
            for seed in args.seeds:
                sat = saturate_runs(args.bin, config, seed)
                jobs = [(config, seed, r) for r in range(MEMBERS)]
                tor = list(pool.map(torch_run, jobs))
                for arm, runs in (("saturate", sat), ("torch", tor)):
                    for r, acc in enumerate(runs):
                        rows.append({"config": ci, **config, "seed": seed, "arm": arm,
                                     "repeat": r, **{f"epoch{e + 1}": a
                                                     for e, a in enumerate(acc)}})
                means = {a: statistics.mean(x[-1] for x in runs)
                         for a, runs in (("saturate", sat), ("torch", tor))}
                print(f"config {ci} seed {seed}: saturate {means['saturate']:.4f} "
                      f"torch {means['torch']:.4f}", flush=True)
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    # A seed's repeats share the data order: the standard error is over the per-seed
    # differences of the two frameworks' means.
    def seed_diff(ci, seed):
        means = [statistics.mean(r[f"epoch{EPOCHS}"] for r in rows
                                 if r["config"] == ci and r["seed"] == seed and r["arm"] == a)
                 for a in ("saturate", "torch")]
        return means[0] - means[1]

    def se(values):
        return statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else float("nan")

    print("\n| config | width | lr | momentum | weight decay | dropout | seeds | saturate | torch "
          "| diff | SE (over seeds) | saturate ahead (seeds) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    pairs = []
    for ci, config in enumerate(configs):
        m = {a: statistics.mean(r[f"epoch{EPOCHS}"] for r in rows
                                if r["config"] == ci and r["arm"] == a)
             for a in ("saturate", "torch")}
        d = [seed_diff(ci, seed) for seed in args.seeds]
        pairs += d
        print(f"| {ci} | {config['width']} | {config['lr']:.4f} | {config['momentum']:.3f} "
              f"| {config['weight_decay']:.2e} | {config['dropout']:.3f} | {len(d)} "
              f"| {m['saturate']:.4f} | {m['torch']:.4f} | {statistics.mean(d):+.4f} "
              f"| {se(d):.4f} | {sum(x > 0 for x in d)} of {len(d)} |")
    if len(pairs) > 1:
        print(f"\nall seed pairs: {statistics.mean(pairs):+.4f} (SE {se(pairs):.4f}); "
              f"saturate ahead in {sum(x > 0 for x in pairs)} of {len(pairs)}")
    for e in range(1, EPOCHS + 1):
        m = {a: statistics.mean(r[f"epoch{e}"] for r in rows if r["arm"] == a)
             for a in ("saturate", "torch")}
        print(f"epoch {e}: saturate {m['saturate']:.4f} torch {m['torch']:.4f}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
