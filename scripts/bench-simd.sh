#!/usr/bin/env bash
# The speed cost of building burn-ndarray without its `simd` feature (issue 8): one training step
# of K = 8 members (grouped: one Batched model on Autodiff<Vmap<NdArray>>; sequential: 8 models on
# Autodiff<NdArray> one after another) on the three benchmark models, with NdArray's SIMD layer
# off (saturate's default) and on (`--features ndarray-simd`), measured in one run.
#
# usage: scripts/bench-simd.sh            (release build in target/simd-bench; prints a table)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/simd-bench}"
declare -A steps=([mlp8]=3000 [mlp784]=300 [cnn]=4)
echo "machine: $(lscpu | sed -n 's/^Model name:\s*//p'), $(nproc) cores; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for variant in "exact (default)" "simd"; do
    features=()
    [ "$variant" = simd ] && features=(--features ndarray-simd)
    cargo bench --bench training_step "${features[@]}" --no-run 2>/dev/null
    bin=$(cargo bench --bench training_step "${features[@]}" --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\))/\1/p' | tail -1)
    for model in mlp8 mlp784 cnn; do
        for arm in grouped sequential; do
            line=$(SATURATE_PROFILE="$arm,$model,8,${steps[$model]}" "$bin")
            echo "| $variant | $line |"
        done
    done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
