#!/usr/bin/env bash
# The study benchmark (book/src/benchmarks/study.md): the protocol of examples/study_bench.rs
# (Fashion-MNIST subset 8,192 / 2,048, batch 128, one epoch, the small CNN with its width
# searched, 24 trials, group 8) for each TPE seed, arms interleaved per seed so that the
# machine's load hits all of them:
# - grouped1: a sequential search on saturate's kernels (the runner at K = 1, one trial at a
#   time, each sampling its own width); its wall time is the seed's budget;
# - grouped: saturate's runner at K = 8 (refill on), then more groups until the budget passed;
# - python: sequential Optuna + PyTorch (scripts/bench-python-reference.sh), then more trials
#   until the budget passed;
# - sequential (not in the default): one trial at a time in plain Burn (`Autodiff<NdArray>`,
#   burn's convolution: about 40 s per trial at width 16 on a 2-core EPYC, 10 min per seed);
#   when it runs first in a seed, its wall time is the budget instead.
# The table ends with each arm's median and interquartile range over seeds.
#
# usage: scripts/bench-study.sh [seed...]          (default: 0 to 9)
# env:   ARMS="grouped1 grouped python"     the arms, in this order per seed
#        CSV=target/bench/study.csv         rows are appended (one per arm and seed)
#        FEATURES=cuda,nvml                 cargo features of the build (default: none, NdArray)
#        STUDY_ARGS="--short"               extra arguments of every arm (e.g. the smoke test)
#        BIN=PATH                           run this study_bench binary, build nothing
#        PROFILE=release                    cargo profile (dev: opt-level 3 here too, with debug
#                                           assertions; builds in target/debug)
#
# Builds examples/study_bench in release first (and again before each seed: a commit that
# landed meanwhile is picked up and recorded). Every row records the commit it was built at
# ("+dirty" when crates/ or examples/ had uncommitted changes), the load average before and
# after, and its profile (CPU time, peak RSS; GPU with FEATURES=nvml). The markdown table goes
# to target/bench/study.md with the command, the machine and uptime before/after each arm.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(0 1 2 3 4 5 6 7 8 9)
arms=(${ARMS:-grouped1 grouped python})
csv="${CSV:-target/bench/study.csv}"
md="${csv%.csv}.md"
features="${FEATURES:-}"
read -r -a extra <<<"${STUDY_ARGS:-}"
profile="${PROFILE:-release}"
bin="${BIN:-$CARGO_TARGET_DIR/$([ "$profile" = dev ] && echo debug || echo "$profile")/examples/study_bench}"
mkdir -p "$(dirname "$csv")"

{
    echo "command: ${BIN:+BIN=$BIN }scripts/bench-study.sh ${seeds[*]} (ARMS=\"${arms[*]}\" FEATURES=\"$features\" STUDY_ARGS=\"${extra[*]:-}\" PROFILE=$profile)"
    echo "started: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB"
} | tee -a "$md.log"

commit() {
    local dirty=""
    git diff --quiet HEAD -- crates examples src 2>/dev/null || dirty="+dirty"
    echo "$(git rev-parse --short HEAD)$dirty"
}

for seed in "${seeds[@]}"; do
    if [ -z "${BIN:-}" ]; then
        cargo build --profile "$profile" --example study_bench ${features:+--features "$features"}
        export SATURATE_BENCH_COMMIT="$(commit)"
    else
        export SATURATE_BENCH_COMMIT="${SATURATE_BENCH_COMMIT:-$(commit)}"
    fi
    budget=""
    for arm in "${arms[@]}"; do
        echo "== seed $seed, $arm (commit $SATURATE_BENCH_COMMIT); before: $(uptime)" | tee -a "$md.log"
        case "$arm" in
            sequential)
                "$bin" --arm sequential --seed "$seed" --csv "$csv" "${extra[@]}"
                budget=$(awk -F, -v s="$seed" '$1 == "sequential" && $2 == s {w = $12} END {print w}' "$csv")
                ;;
            grouped)
                "$bin" --arm grouped --seed "$seed" --csv "$csv" \
                    ${budget:+--budget-seconds "$budget"} "${extra[@]}"
                ;;
            grouped1)
                # The runner one trial at a time on Vmap<NdArray> (refill off: each trial
                # samples its own width): a sequential search on saturate's kernels. Without a
                # sequential arm before it in the seed, its wall time is the seed's budget.
                "$bin" --arm grouped --group-size 1 --seed "$seed" --csv "$csv" "${extra[@]}"
                [ -n "$budget" ] || budget=$(awk -F, -v s="$seed" \
                    '$1 == "grouped" && $2 == s && $10 == 1 {w = $12} END {print w}' "$csv")
                ;;
            python)
                "$root/scripts/bench-python-reference.sh" --seed "$seed" --csv "$csv" \
                    ${budget:+--budget-seconds "$budget"} "${extra[@]}"
                ;;
            *) echo "unknown arm $arm (sequential, grouped, grouped1, python)" >&2; exit 2 ;;
        esac
        echo "== seed $seed, $arm done; after: $(uptime)" | tee -a "$md.log"
    done
done

"$bin" --table "$csv" >"$md"
cat "$md"
echo "CSV: $csv, table: $md, log: $md.log"
