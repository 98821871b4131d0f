"""The PBT benchmark's Ray Tune arm: Ray Tune's PopulationBasedTraining with PyTorch.

The job of examples/pbt.rs, as Ray Tune runs it: the shipped Fashion-MNIST subset (the same .gz
IDX files: 8,192 training / 2,048 validation images, the same normalisation), the same CNN
(scripts/python/study_reference.py's `Cnn`: conv 1->w->2w 3x3 same padding, ReLU, 2x2 max
pooling, per-trial dropout, 64 hidden units, 10 logits; w = the width saturate's run drew for
the seed), SGD with momentum (dampening 0) and coupled weight decay, batch 64, 8 trials of
8 epochs of 24 steps, validation on the 2,048 images after every epoch (one Tune iteration).
Every trial reads the same batches in the same order (one shuffle per pass over the training
images, as saturate's group). PBT: synchronous (all trials at the same epoch at each exploit, as
in a saturate group), perturbation interval 2 epochs, quantile fraction 0.25, resample
probability 0.25, factors 1.2 / 0.8, mutations of lr (log-uniform 1e-3..0.3), momentum
(0..0.95), weight decay (log-uniform 1e-6..1e-2) and dropout (0..0.6), perturbed values
clipped into those ranges as saturate does. Ray gets 2 CPUs, each trial 1 CPU and 1 torch
thread: 2 trials train at a time and the others wait, paused, in their checkpoints.

With --population-from JOURNAL the 8 trials start from the hyperparameters of saturate's
initial members in that journal (examples/pbt.rs's study for the same seed: its trials without
a PBT parent, in trial order), through Ray's BasicVariantGenerator(points_to_evaluate=...):
both arms then start from the same population and differ in the weights' initialisation, the
dropout masks, the order of the training images and the exploit and explore draws.

Checkpoints are what Ray's PBT needs: the class API's save_checkpoint / load_checkpoint write
and read the model, the optimizer state and the epoch (torch.save / torch.load). Each save and
restore as Ray calls it (Trainable.save / Trainable.restore: the trainable's own write or read
plus Ray's copy into or out of its storage directory) is timed and appended to a JSON-lines
file, summarised in the result.

usage: bench_pbt_ray.py --seed 0 --width 16 [--short] [--epochs 8] [--steps 24] [--trials 8]
       [--interval 2] [--cpus 2] [--async] [--population-from pbt.journal]
Prints `RESULT key=value ...`: the arm's line, which scripts/bench-pbt.sh writes into its CSV. Run through scripts/bench-pbt.sh (target/venv/torch, scripts/setup-ray.sh).
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import zlib

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_DEDUP_LOGS", "0")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from study_reference import DROPOUT, LR, MOMENTUM, ROOT, WEIGHT_DECAY, Cnn, load  # noqa: E402

BOUNDS = {"lr": LR, "momentum": MOMENTUM, "weight_decay": WEIGHT_DECAY, "dropout": DROPOUT}


def batches(seed, n_train, batch, start_step, steps):
    """The training indices of steps start_step..start_step+steps: one shuffle of the images
    per pass (the same for every trial), batches of `batch` taken in order; a pass's tail
    shorter than a batch is skipped (as saturate's task does)."""
    per_pass = n_train // batch
    out = []
    for step in range(start_step, start_step + steps):
        p, i = divmod(step, per_pass)
        order = np.random.default_rng([seed, p]).permutation(n_train)
        out.append(torch.from_numpy(order[i * batch : (i + 1) * batch]))
    return out


def initial_trials(journal):
    """The initial members of the one study in saturate's journal (examples/pbt.rs): its
    trials without a PBT parent, in trial order."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    storage = JournalStorage(JournalFileBackend(journal))
    studies = optuna.get_all_study_summaries(storage)
    if len(studies) != 1:
        sys.exit(f"{journal}: {len(studies)} studies, expected the one of examples/pbt.rs")
    study = optuna.load_study(study_name=studies[0].study_name, storage=storage)
    trials = sorted(study.get_trials(deepcopy=False), key=lambda t: t.number)
    return [t for t in trials if "saturate:pbt_parent" not in t.system_attrs]


def initial_population(journal):
    """The hyperparameters of the initial members of saturate's study in `journal`."""
    points = []
    for trial in initial_trials(journal):
        missing = [k for k in BOUNDS if k not in trial.params]
        if missing:
            sys.exit(f"{journal}: trial {trial.number} has no {', '.join(missing)}")
        points.append({k: float(trial.params[k]) for k in BOUNDS})
    return points


def make_trainable():
    from ray import tune

    class CnnTrainable(tune.Trainable):
        def setup(self, config):
            torch.set_num_threads(1)
            self.seed = config["seed"]
            self.width = config["width"]
            self.batch = config["batch"]
            self.steps = config["steps"]
            self.events = config["events"]
            self.x_train, self.y_train = load("train", config["n_train"])
            self.x_valid, self.y_valid = load("test", config["n_valid"])
            torch.manual_seed(zlib.crc32(f"{self.seed}-{self.trial_id}".encode()))
            self.epoch = 0
            self._build(config, fresh=True)

        def _build(self, config, fresh):
            self.config_now = dict(config)
            if fresh:
                self.model = Cnn(self.width, config["dropout"])
            else:
                self.model.dropout.p = config["dropout"]
            self.optim = torch.optim.SGD(
                self.model.parameters(),
                lr=config["lr"],
                momentum=config["momentum"],
                dampening=0.0,
                weight_decay=config["weight_decay"],
            )

        def _set_hyper(self, config):
            """The explored hyperparameters onto a loaded optimizer and model."""
            self.config_now = dict(config)
            self.model.dropout.p = config["dropout"]
            for group in self.optim.param_groups:
                group["lr"] = config["lr"]
                group["momentum"] = config["momentum"]
                group["weight_decay"] = config["weight_decay"]

        def step(self):
            self.model.train()
            start = self.epoch * self.steps
            for idx in batches(self.seed, len(self.x_train), self.batch, start, self.steps):
                self.optim.zero_grad(set_to_none=True)
                loss = F.cross_entropy(self.model(self.x_train[idx]), self.y_train[idx])
                loss.backward()
                self.optim.step()
            self.epoch += 1
            self.model.eval()
            hits = 0
            with torch.no_grad():
                for s in range(0, len(self.x_valid), 512):
                    logits = self.model(self.x_valid[s : s + 512])
                    hits += (logits.argmax(1) == self.y_valid[s : s + 512]).sum().item()
            accuracy = hits / len(self.x_valid)
            if not np.isfinite(loss.item()):
                accuracy = 0.0
            return {"accuracy": accuracy, "epoch": self.epoch, **{
                k: self.config_now[k] for k in BOUNDS
            }}

        def save_checkpoint(self, checkpoint_dir):
            torch.save(
                {
                    "model": self.model.state_dict(),
                    "optim": self.optim.state_dict(),
                    "epoch": self.epoch,
                },
                os.path.join(checkpoint_dir, "state.pt"),
            )

        def load_checkpoint(self, checkpoint_dir):
            state = torch.load(os.path.join(checkpoint_dir, "state.pt"))
            self.model.load_state_dict(state["model"])
            self.optim.load_state_dict(state["optim"])
            self.epoch = state["epoch"]
            # load_state_dict brings the donor's hyperparameters: this trial's explored ones.
            self._set_hyper(self.config)

        def reset_config(self, new_config):
            # Actor reuse: a new trial (or a restored one) on this process.
            self.config = new_config
            self._build(new_config, fresh=True)
            self.epoch = 0
            return True

        def _event(self, op, ms):
            with open(self.events, "a") as f:
                f.write(json.dumps({"op": op, "ms": ms, "trial": self.trial_id}) + "\n")

        def save(self, *args, **kwargs):
            t0 = time.perf_counter()
            out = super().save(*args, **kwargs)
            self._event("save", (time.perf_counter() - t0) * 1e3)
            return out

        def restore(self, *args, **kwargs):
            t0 = time.perf_counter()
            out = super().restore(*args, **kwargs)
            self._event("restore", (time.perf_counter() - t0) * 1e3)
            return out

    return CnnTrainable


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--short", action="store_true", help="4 trials, 4 epochs of 4 steps")
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--trials", type=int, default=None)
    ap.add_argument("--interval", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--async", dest="asynchronous", action="store_true")
    ap.add_argument(
        "--population-from",
        metavar="JOURNAL",
        help="start from the initial members of saturate's PBT study in this journal",
    )
    args = ap.parse_args()
    t_process = time.perf_counter()

    trials, epochs, steps, n_train, n_valid = (
        (4, 4, 4, 512, 256) if args.short else (8, 8, 24, 8192, 2048)
    )
    trials = args.trials or trials
    epochs = args.epochs or epochs
    steps = args.steps or steps
    random.seed(args.seed)
    np.random.seed(args.seed)
    points = initial_population(args.population_from) if args.population_from else None
    if points is not None and len(points) != trials:
        sys.exit(f"{args.population_from}: {len(points)} initial members, expected {trials}")

    import ray
    from ray import tune
    from ray.tune.schedulers import PopulationBasedTraining
    from ray.tune.search.basic_variant import BasicVariantGenerator

    ray.init(
        num_cpus=args.cpus,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=True,
        logging_level="ERROR",
    )
    t_ray = time.perf_counter() - t_process

    def clip(config):
        for key, (low, high) in BOUNDS.items():
            config[key] = min(max(config[key], low), high)
        return config

    mutations = {
        "lr": tune.loguniform(*LR),
        "momentum": tune.uniform(*MOMENTUM),
        "weight_decay": tune.loguniform(*WEIGHT_DECAY),
        "dropout": tune.uniform(*DROPOUT),
    }
    pbt = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=args.interval,
        hyperparam_mutations=mutations,
        quantile_fraction=0.25,
        resample_probability=0.25,
        perturbation_factors=(1.2, 0.8),
        custom_explore_fn=clip,
        synch=not args.asynchronous,
    )
    storage = os.path.join(ROOT, "target", "bench", "ray-results")
    os.makedirs(storage, exist_ok=True)
    events = tempfile.NamedTemporaryFile(
        prefix=f"pbt-ray-{args.seed}-", suffix=".jsonl", dir=storage, delete=False
    ).name
    param_space = {
        **mutations,
        "seed": args.seed,
        "width": args.width,
        "batch": args.batch,
        "steps": steps,
        "n_train": n_train,
        "n_valid": n_valid,
        "events": events,
    }
    run_name = f"pbt-seed{args.seed}-{os.getpid()}"
    trainable = tune.with_resources(make_trainable(), {"cpu": 1})
    tuner = tune.Tuner(
        trainable,
        param_space=param_space,
        tune_config=tune.TuneConfig(
            scheduler=pbt, metric="accuracy", mode="max", num_samples=trials,
            reuse_actors=True,
            search_alg=BasicVariantGenerator(points_to_evaluate=points) if points else None,
        ),
        run_config=tune.RunConfig(
            name=run_name,
            storage_path=storage,
            stop={"training_iteration": epochs},
            verbose=0,
        ),
    )
    t0 = time.perf_counter()
    grid = tuner.fit()
    fit_wall = time.perf_counter() - t0
    ray.shutdown()
    process_wall = time.perf_counter() - t_process

    if points is not None:
        # Every trial's first iteration reports the configuration it started from: the set of
        # them is saturate's initial population.
        starts = sorted(
            tuple(round(float(r.metrics_dataframe[k].iloc[0]), 12) for k in BOUNDS)
            for r in grid
            if r.metrics_dataframe is not None and not r.metrics_dataframe.empty
        )
        wanted = sorted(tuple(round(p[k], 12) for k in BOUNDS) for p in points)
        if starts != wanted:
            sys.exit(f"Ray's trials did not start from the given population: {starts} != {wanted}")

    finals, anys = [], []
    for result in grid:
        df = result.metrics_dataframe
        if df is None or df.empty:
            continue
        anys.append(float(df["accuracy"].max()))
        last = result.metrics
        if last.get("training_iteration") == epochs:
            finals.append(float(last["accuracy"]))
    errors = sum(1 for r in grid if r.error is not None)
    ev = [json.loads(line) for line in open(events)]
    os.unlink(events)
    saves = [e["ms"] for e in ev if e["op"] == "save"]
    restores = [e["ms"] for e in ev if e["op"] == "restore"]

    def med(xs):
        return statistics.median(xs) if xs else float("nan")

    fields = {
        "arm": "ray-pbt",
        "seed": args.seed,
        "width": args.width,
        "wall_seconds": f"{process_wall:.3f}",
        "fit_seconds": f"{fit_wall:.3f}",
        "ray_init_seconds": f"{t_ray:.3f}",
        "best_accuracy": f"{max(anys, default=float('nan')):.6f}",
        "best_final_accuracy": f"{max(finals, default=float('nan')):.6f}",
        "mean_final_accuracy": f"{statistics.mean(finals) if finals else float('nan'):.6f}",
        "member_epochs": trials * epochs,
        "saves": len(saves),
        "restores": len(restores),
        "save_ms_median": f"{med(saves):.3f}",
        "restore_ms_median": f"{med(restores):.3f}",
        "save_ms_total": f"{sum(saves):.3f}",
        "restore_ms_total": f"{sum(restores):.3f}",
        "errors": errors,
        "synch": int(not args.asynchronous),
        "paired": int(points is not None),
        # Every trial's config and per-epoch accuracy (scripts/python/pbt_pairs.py reads them).
        "run_dir": os.path.relpath(os.path.join(storage, run_name), ROOT),
        "ray": ray.__version__,
        "torch": torch.__version__,
    }
    print("RESULT " + " ".join(f"{k}={v}" for k, v in fields.items()), flush=True)


if __name__ == "__main__":
    main()
