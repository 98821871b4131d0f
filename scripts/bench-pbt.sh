#!/usr/bin/env bash
# Population-based training against the alternatives, in one run, for the same work: 8 members
# x 8 epochs x 24 steps of 64 images (64 member-epochs) of the Fashion-MNIST CNN on the shipped
# subset, on the CPU. Per seed, interleaved:
#   saturate-pbt  examples/pbt.rs: PBT inside one group of 8 (exploit = a gather in the group);
#   ray-pbt       scripts/python/bench_pbt_ray.py: Ray Tune's PopulationBasedTraining with
#                 PyTorch, the same CNN (the width saturate-pbt drew for the seed), data, batch,
#                 steps per epoch and PBT settings, starting from saturate-pbt's initial members
#                 when that arm ran first for the seed; 2 CPUs for Ray, 1 torch thread per trial;
#   saturate-tpe  examples/fashion_mnist.rs: TPE + median pruner with refill, groups of 8,
#                 16 trials of at most 4 epochs of 24 steps (at most 64 member-epochs; pruned
#                 trials use less).
# Writes target/bench/pbt-<date>.csv (one row per arm and seed; the machine, commit and load in
# every row), the logs under target/bench/pbt-logs/, and prints per-seed rows and the summary
# (medians over seeds). NOT part of CI: it needs target/venv/torch (scripts/setup-torch.sh)
# with Ray Tune (scripts/setup-ray.sh). To measure a clean commit from a `git worktree`, point
# CARGO_TARGET_DIR at the main checkout's target (its release dependencies are reused) and
# PYTHON at its target/venv/torch/bin/python.
#
# usage: scripts/bench-pbt.sh
# env:   PYTHON (target/venv/torch/bin/python), SEEDS ("0 1 2 3 4"),
#        SHORT=1 (a smoke test: tiny runs of every arm),
#        ARMS ("saturate-pbt ray-pbt saturate-tpe"), THREADS (2), CSV (the output path),
#        INTERVAL (2: the PBT arms' perturbation interval in epochs; above 8, no exploit at
#        all, so the two PBT arms train the same initial population of 8 without PBT),
#        SUMMARY_ONLY=CSV (print the tables of an earlier run's CSV and exit)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
python="${PYTHON:-$root/target/venv/torch/bin/python}"
if ! "$python" -c 'import torch, ray.tune' 2>/dev/null; then
    echo "error: no PyTorch + Ray Tune in $root/target/venv/torch; run scripts/setup-torch.sh" \
        "and scripts/setup-ray.sh first" >&2
    exit 1
fi
summary() { # csv: per-seed rows, then medians over seeds per arm
    "$python" - "$1" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def f(r, k):
    return float(r[k]) if r.get(k, "") not in ("", "nan") else float("nan")
print(f"\n{sys.argv[1]}\n")
print("| arm | seed | width | wall s (process) | run s | best accuracy | best final member "
      "| member-epochs | exploits / checkpoints | load before, after |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    if r["arm"] == "ray-pbt":
        ex = (f"{r['saves']} saves (median {f(r, 'save_ms_median'):.1f} ms), "
              + (f"{r['restores']} restores (median {f(r, 'restore_ms_median'):.1f} ms)"
                 if r["restores"] not in ("", "0") else "no restore"))
    elif r["arm"] == "saturate-pbt":
        ex = (f"{r['exploits']} exploits: {f(r, 'exploit_copy_ms'):.2f} ms copying, "
              f"{f(r, 'exploit_study_ms'):.1f} ms study writes")
    else:
        ex = f"{r['trials']} trials, {r['pruned']} pruned"
    fin = f"{f(r, 'best_final_accuracy'):.4f}" if r["best_final_accuracy"] else "-"
    print(f"| {r['arm']} | {r['seed']} | {r['width']} | {f(r, 'wall_seconds'):.1f} "
          f"| {f(r, 'run_seconds'):.1f} | {f(r, 'best_accuracy'):.4f} | {fin} "
          f"| {f(r, 'member_epochs'):.0f} | {ex} | {r['load_before']}, {r['load_after']} |")
print("\n| arm | seeds | best accuracy: median (min-max) | best final member: median (min-max) "
      "| wall s (process): median (min-max) | run s: median | one exploit, median |")
print("|---|---|---|---|---|---|---|")
med = {}
for arm in dict.fromkeys(r["arm"] for r in rows):
    rs = [r for r in rows if r["arm"] == arm]
    def s(vals):
        vals = [v for v in vals if v == v]
        return (statistics.median(vals), min(vals), max(vals)) if vals else (float("nan"),) * 3
    a = s(f(r, "best_accuracy") for r in rs)
    fin = s(f(r, "best_final_accuracy") for r in rs)
    w = s(f(r, "wall_seconds") for r in rs)
    run = s(f(r, "run_seconds") for r in rs)
    if arm == "saturate-pbt":
        ex_rows = [r for r in rs if f(r, "exploits") > 0]
        copy = s(f(r, "exploit_copy_ms") / f(r, "exploits") for r in ex_rows)
        study = s(f(r, "exploit_study_ms") / f(r, "exploits") for r in ex_rows)
        ex = f"{copy[0]:.2f} ms copying + {study[0]:.1f} ms study writes" if ex_rows else "none"
    elif arm == "ray-pbt":
        sv = s(f(r, "save_ms_median") for r in rs)
        rt = s(f(r, "restore_ms_median") for r in rs)
        # Without exploits (INTERVAL above the epochs) and trials <= CPUs, nothing restores.
        ex = (f"{sv[0]:.1f} ms save + {rt[0]:.1f} ms restore = {sv[0] + rt[0]:.1f} ms"
              if rt[0] == rt[0] else f"{sv[0]:.1f} ms save, no restore")
    else:
        ex = "-"
    med[arm] = (w[0], run[0])
    print(f"| {arm} | {len(rs)} | {a[0]:.4f} ({a[1]:.4f}-{a[2]:.4f}) "
          f"| {fin[0]:.4f} ({fin[1]:.4f}-{fin[2]:.4f}) | {w[0]:.1f} ({w[1]:.1f}-{w[2]:.1f}) "
          f"| {run[0]:.1f} | {ex} |")
if "saturate-pbt" in med and "ray-pbt" in med:
    (sw, sr), (rw, rr) = med["saturate-pbt"], med["ray-pbt"]
    print(f"\nmedian wall time, ray-pbt / saturate-pbt: {rw / sw:.2f}x (process), "
          f"{rr / sr:.2f}x (run: saturate's trainer, Ray's Tuner.fit)")
    # Seed by seed (the two arms of a seed start from the same population when paired).
    by = {(r["arm"], r["seed"]): r for r in rows}
    pairs = [(by[("saturate-pbt", sd)], by[("ray-pbt", sd)])
             for sd in dict.fromkeys(r["seed"] for r in rows)
             if ("saturate-pbt", sd) in by and ("ray-pbt", sd) in by]
    if pairs:
        diff = [f(a, "best_accuracy") - f(b, "best_accuracy") for a, b in pairs]
        mean_diff = [f(a, "mean_final_accuracy") - f(b, "mean_final_accuracy") for a, b in pairs]
        mean_diff = [d for d in mean_diff if d == d]
        ratio = [f(b, "wall_seconds") / f(a, "wall_seconds") for a, b in pairs]
        paired = sum(1 for _, b in pairs if b.get("paired") == "1")
        print(f"seed by seed ({len(pairs)} seeds, {paired} from the same population): wall "
              f"ratio median {statistics.median(ratio):.2f}x ({min(ratio):.2f}-{max(ratio):.2f}); "
              f"best accuracy saturate - ray median {statistics.median(diff):+.4f} "
              f"({min(diff):+.4f} to {max(diff):+.4f}), saturate ahead in "
              f"{sum(d > 0 for d in diff)}, tied in {sum(d == 0 for d in diff)}")
        if mean_diff:
            print(f"mean accuracy of the members at the last epoch, saturate - ray: median "
                  f"{statistics.median(mean_diff):+.4f} ({min(mean_diff):+.4f} to "
                  f"{max(mean_diff):+.4f}), saturate ahead in {sum(d > 0 for d in mean_diff)} "
                  f"of {len(mean_diff)} seeds")
PY
}

if [ -n "${SUMMARY_ONLY:-}" ]; then
    summary "$SUMMARY_ONLY"
    exit 0
fi

seeds="${SEEDS:-0 1 2 3 4}"
arms="${ARMS:-saturate-pbt ray-pbt saturate-tpe}"
threads="${THREADS:-2}"
interval="${INTERVAL:-2}"
short="${SHORT:-0}"
stamp="$(date -u +%Y-%m-%dT%H%M%SZ)"
csv="${CSV:-$target/bench/pbt-$stamp.csv}"
logs="$target/bench/pbt-logs/$stamp"
mkdir -p "$(dirname "$csv")" "$logs"

cd "$root"
cargo build --release --example pbt --example fashion_mnist >&2
# The runs use copies: a build elsewhere in the checkout must not replace them mid-run.
bin="$logs/bin"
mkdir -p "$bin"
cp "$target/release/examples/pbt" "$target/release/examples/fashion_mnist" "$bin/"
commit="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- examples scripts crates src || echo '+dirty')"
cpu="$(lscpu | sed -n 's/^Model name: *//p')"
flags="$(grep -o -w -E 'avx2|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//')"
machine="$cpu, $(nproc) cores, ${flags:-no avx2}"
echo "machine: $machine; commit $commit; load before: $(uptime)" >&2
load1() { cut -d' ' -f1 /proc/loadavg; }

if [ "$short" = 1 ]; then
    export SATURATE_SHORT=1
    tpe_args=(--trials 8 --epochs 4 --steps-per-epoch 4)
    ray_args=(--short)
else
    unset SATURATE_SHORT
    tpe_args=(--trials 16 --epochs 4 --steps-per-epoch 24)
    ray_args=()
fi
export RAYON_NUM_THREADS="$threads"

# One arm's output -> one CSV row (the arm's RESULT line plus the harness's columns).
row() { # arm seed log wall load_before load_after
    "$python" - "$csv" "$@" "$commit" "$machine" "$short" "$interval" <<'PY'
import csv, os, sys
path, arm, seed, log, wall, lb, la, commit, machine, short, interval = sys.argv[1:]
cols = ["date", "arm", "seed", "short", "interval", "width", "wall_seconds", "run_seconds",
        "best_accuracy", "best_final_accuracy", "mean_final_accuracy", "member_epochs", "exploits",
        "exploit_copy_ms", "exploit_study_ms", "trials", "pruned", "refilled", "saves",
        "restores", "save_ms_median", "restore_ms_median", "save_ms_total",
        "restore_ms_total", "ray_init_seconds", "errors", "paired", "versions", "commit", "machine",
        "load_before", "load_after", "log"]
res = {}
for line in open(log, encoding="utf-8", errors="replace"):
    if line.startswith("RESULT "):
        res = dict(kv.split("=", 1) for kv in line.split()[1:])
if not res:
    sys.exit(f"{arm} seed {seed}: no RESULT line in {log}")
import datetime
out = {c: "" for c in cols}
out.update({k: v for k, v in res.items() if k in cols})
out.update(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           arm=arm, seed=seed, short=short, wall_seconds=wall,
           interval=interval if arm != "saturate-tpe" else "",
           run_seconds=res.get("fit_seconds", res.get("wall_seconds", "")),
           commit=commit, machine=machine, load_before=lb, load_after=la,
           log=os.path.relpath(log))
if "ray" in res:
    out["versions"] = f"ray {res['ray']}, torch {res['torch']}"
new = not os.path.exists(path) or os.path.getsize(path) == 0
with open(path, "a", newline="") as f:
    w = csv.DictWriter(f, fieldnames=cols)
    if new:
        w.writeheader()
    w.writerow(out)
PY
}

run_arm() { # arm seed log command...
    local arm="$1" seed="$2" log="$3"
    shift 3
    local lb la t0 t1
    lb="$(load1)"
    t0="$(date +%s.%N)"
    "$@" >"$log" 2>&1 || { echo "error: $arm seed $seed failed, see $log" >&2; tail -20 "$log" >&2; exit 1; }
    t1="$(date +%s.%N)"
    la="$(load1)"
    local wall
    wall="$(echo "$t1 - $t0" | bc -l | sed 's/^\./0./')"
    row "$arm" "$seed" "$log" "$wall" "$lb" "$la"
    echo "$arm seed $seed: $(grep '^RESULT ' "$log" | cut -d' ' -f2-) (process ${wall}s, load $lb -> $la)" >&2
}

for seed in $seeds; do
    work="$(mktemp -d)"
    width=16
    population=()
    for arm in $arms; do
        log="$logs/$arm-$seed.log"
        case "$arm" in
        saturate-pbt)
            run_arm "$arm" "$seed" "$log" "$bin/pbt" \
                --seed "$seed" --storage "$work/pbt.journal" --interval "$interval"
            width="$(sed -n 's/^RESULT .* width=\([0-9]*\).*/\1/p' "$log")"
            # Ray's trials start from saturate's initial members (the same population).
            population=(--population-from "$work/pbt.journal")
            ;;
        ray-pbt)
            run_arm "$arm" "$seed" "$log" "$python" "$root/scripts/python/bench_pbt_ray.py" \
                --seed "$seed" --width "$width" --cpus "$threads" --interval "$interval" \
                "${ray_args[@]}" \
                "${population[@]}"
            ;;
        saturate-tpe)
            run_arm "$arm" "$seed" "$log" "$bin/fashion_mnist" \
                --seed "$seed" --storage "$work/tpe.journal" "${tpe_args[@]}"
            ;;
        *) echo "error: unknown arm $arm" >&2; exit 1 ;;
        esac
    done
    # saturate's journal stays beside its log (scripts/python/pbt_pairs.py pairs its members
    # with Ray's trials of the same configuration).
    [ -f "$work/pbt.journal" ] && cp "$work/pbt.journal" "$logs/saturate-pbt-$seed.journal"
    rm -rf "$work"
done
rm -rf "$bin"
echo "load after: $(uptime)" >&2

summary "$csv"
