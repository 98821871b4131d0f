"""The study benchmark's Python reference arm: sequential Optuna + PyTorch.

The same protocol as examples/study_bench.rs: the shipped Fashion-MNIST subset (the same .gz
IDX files, 8,192 training / 2,048 validation images), batch 128, one epoch per trial, the same
small CNN, 24 trials, TPE (seeded, constant liar), the same search space (the width, an
integer from 8 to 16 in steps of 4, unless --width fixes it; learning rate, momentum, weight
decay, dropout; sampled in that order), SGD with dampening 0 and coupled weight decay, no
pruner. With --budget-seconds S it goes on with more trials of the same study after the 24
until S seconds have passed (as the grouped Rust arm does) and counts the trials that
completed within S. It appends one row with the same columns as the Rust arms to the CSV, so
one table holds every arm.

usage: python study_reference.py --seed 0 --csv target/bench/study.csv [--budget-seconds S]
       [--threads 2] [--width N] [--trials N] [--short]

Run through scripts/bench-python-reference.sh (it uses target/venv/torch).
"""

import argparse
import gzip
import os
import resource
import struct
import sys
import time
import warnings

import numpy as np
import optuna
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUBSET = os.path.join(ROOT, "crates", "saturate-data", "fashion-mnist-subset")

# The columns of examples/study_bench.rs (csv_header): keep them in the same order.
PROFILE_COLUMNS = (
    "wall_seconds,cpu_seconds,peak_resident_bytes,gpu_device,gpu_samples,gpu_failed_samples,"
    "gpu_sampling_rate_hz,gpu_busy_fraction,gpu_mean_utilization_percent,gpu_energy_joules,"
    "gpu_peak_memory_used_bytes"
).split(",")
HEADER = (
    "arm,seed,backend,commit,width,train_images,valid_images,batch_size,epochs,group_size,"
    "trials,wall_seconds,trials_per_minute,best_accuracy,budget_seconds,budget_trials,"
    "budget_best_accuracy,load_before,load_after,widths_tried,"
    + ",".join("profile_" + c for c in PROFILE_COLUMNS)
)

LR = (1e-3, 0.3)
MOMENTUM = (0.0, 0.95)
WEIGHT_DECAY = (1e-6, 1e-2)
DROPOUT = (0.0, 0.6)
WIDTH = (8, 16, 4)


def read_idx(path):
    """An IDX file (.gz) as a uint8 numpy array of its declared shape."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        sys.exit(f"{path}: not an unsigned-byte IDX file")
    shape = struct.unpack(">" + "I" * ndim, data[4 : 4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load(split, count):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(os.path.join(SUBSET, f"{prefix}-images-idx3-ubyte.gz"))[:count]
    labels = read_idx(os.path.join(SUBSET, f"{prefix}-labels-idx1-ubyte.gz"))[:count]
    # The Rust batcher's normalisation: pixel / 255, then Fashion-MNIST's mean and std.
    x = (images.astype(np.float32) / 255.0 - 0.286) / 0.353
    return torch.from_numpy(x).unsqueeze(1), torch.from_numpy(labels.astype(np.int64))


class Cnn(nn.Module):
    """examples/study_bench.rs's CNN: conv 1->w->2w (3x3, same padding) with ReLU and 2x2 max
    pooling, dropout on the flattened features, 64 hidden units, 10 logits."""

    def __init__(self, width, dropout):
        super().__init__()
        self.conv1 = nn.Conv2d(1, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.dropout = nn.Dropout(dropout)
        self.hidden = nn.Linear(2 * width * 7 * 7, 64)
        self.out = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(torch.flatten(x, 1))
        return self.out(F.relu(self.hidden(x)))


def load_average():
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return ""


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--csv", default=os.path.join(ROOT, "target", "bench", "study.csv"))
    p.add_argument("--budget-seconds", type=float, default=None)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--width", type=int, default=None, help="fix the width (default: searched)")
    p.add_argument("--trials", type=int, default=None)
    p.add_argument("--short", action="store_true")
    args = p.parse_args()

    trials, batch, epochs = (2, 128, 1) if args.short else (24, 128, 1)
    trials = args.trials or trials
    n_train, n_valid = (512, 256) if args.short else (8192, 2048)
    width_label = str(args.width) if args.width else f"{WIDTH[0]}-{WIDTH[1]} step {WIDTH[2]}"
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    x_train, y_train = load("train", n_train)
    x_valid, y_valid = load("test", n_valid)
    # Every trial reads the training images in the same shuffled order (as the Rust arms).
    order = torch.from_numpy(np.random.default_rng(args.seed).permutation(len(x_train)))
    steps = len(x_train) // batch
    print(
        f"optuna-pytorch arm, seed {args.seed}: {trials} trials of the CNN (width {width_label}) "
        f"on {len(x_train)} / {len(x_valid)} images, batch {batch}, {epochs} epoch(s) of "
        f"{steps} steps; torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"optuna {optuna.__version__}",
        flush=True,
    )

    def objective(trial):
        width = args.width or trial.suggest_int("width", WIDTH[0], WIDTH[1], step=WIDTH[2])
        lr = trial.suggest_float("lr", *LR, log=True)
        momentum = trial.suggest_float("momentum", *MOMENTUM)
        weight_decay = trial.suggest_float("weight_decay", *WEIGHT_DECAY, log=True)
        dropout = trial.suggest_float("dropout", *DROPOUT)
        model = Cnn(width, dropout)
        optim = torch.optim.SGD(
            model.parameters(), lr=lr, momentum=momentum, dampening=0.0,
            weight_decay=weight_decay,
        )
        model.train()
        for _ in range(epochs):
            for step in range(steps):
                idx = order[step * batch : (step + 1) * batch]
                optim.zero_grad(set_to_none=True)
                loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
                loss.backward()
                optim.step()
        model.eval()
        hits = 0
        with torch.no_grad():
            for start in range(0, len(x_valid), 512):
                logits = model(x_valid[start : start + 512])
                hits += (logits.argmax(1) == y_valid[start : start + 512]).sum().item()
        accuracy = hits / len(x_valid)
        print(
            f"trial {trial.number:2}: accuracy {accuracy:.4f} (width {width}, lr {lr:.4f}, momentum "
            f"{momentum:.3f}, weight decay {weight_decay:.2e}, dropout {dropout:.3f})",
            flush=True,
        )
        return accuracy

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # constant_liar is "experimental" in Optuna 4.x; the Rust arms use it too.
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    study = optuna.create_study(
        direction="maximize",
        sampler=optuna.samplers.TPESampler(seed=args.seed, constant_liar=True),
    )
    load_before = load_average()
    cpu0 = time.process_time()
    started_wall = time.time()
    t0 = time.perf_counter()
    study.optimize(objective, n_trials=trials)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    if args.budget_seconds is not None and wall < args.budget_seconds:
        # The grouped arm's continuation: more trials of the same study until the budget has
        # passed (the trial running then finishes and is not counted). As in the Rust arms,
        # the wall and CPU columns are the protocol's trials only.
        study.optimize(objective, timeout=args.budget_seconds - wall)
    load_after = load_average()
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux

    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    best = max(t.value for t in complete[:trials])
    budget = args.budget_seconds if args.budget_seconds is not None else wall
    in_budget = [
        t for t in complete if t.datetime_complete.timestamp() - started_wall <= budget
    ]
    budget_best = max((t.value for t in in_budget), default=float("nan"))
    widths = {t.params.get("width", args.width) for t in in_budget}

    profile = [repr(wall), repr(cpu), str(peak_rss)] + [""] * (len(PROFILE_COLUMNS) - 3)
    row = [
        "optuna-pytorch", str(args.seed), f"torch-cpu-{torch.get_num_threads()}t",
        os.environ.get("SATURATE_BENCH_COMMIT", ""), width_label, str(len(x_train)),
        str(len(x_valid)), str(batch), str(epochs), "1", str(trials), repr(wall),
        repr(trials / (wall / 60.0)), repr(best), repr(budget), str(len(in_budget)),
        repr(budget_best), load_before, load_after, str(len(widths)),
    ] + profile
    os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
    new = not os.path.exists(args.csv) or os.path.getsize(args.csv) == 0
    if not new:
        with open(args.csv) as f:
            if f.readline().rstrip("\n") != HEADER:
                sys.exit(f"{args.csv} has other columns than the study benchmark writes")
    with open(args.csv, "a") as f:
        if new:
            f.write(HEADER + "\n")
        f.write(",".join(row) + "\n")
    print(
        f"optuna-pytorch: {trials} trials in {wall:.1f} s ({trials / (wall / 60):.2f} "
        f"trials/min), best accuracy {best:.4f}; in {budget:.0f} s: {len(in_budget)} trials, "
        f"best {budget_best:.4f}, {len(widths)} width(s); CPU {cpu:.1f} s, peak RSS {peak_rss / 2**20:.0f} MiB"
    )
    print(f"row appended to {args.csv}")


if __name__ == "__main__":
    main()
