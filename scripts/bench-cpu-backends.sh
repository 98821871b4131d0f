#!/usr/bin/env bash
# Issue 5: benchmark Burn 0.21's CPU backends (benches/cpu_backends.rs) on the three models,
# K models one after another vs one batched Autodiff<Vmap<_>> group, K in {1, 8} (KS=...).
# Results and analysis: book/src/cpu-backends.md.
#
# Usage: scripts/bench-cpu-backends.sh [backend...] [-- model...]
#   backends: ndarray openblas-system blas-netlib flex flex-simd candle cpu tch (default: all
#   but tch); flex-simd = `--features "flex burn/simd"`; tch = LibTorch (burn-tch) built
#   against target/venv/torch (scripts/setup-torch.sh, then scripts/setup-tch.sh sets the
#   environment; about 5 GB, not in CI)
#   models:   mlp8 mlp784 cnn (default: all), or `parity`: the group-vs-alone parity run of
#   every model on that backend instead of timings
# Environment: REPEAT (runs per configuration, default 3; the table takes the best median),
#   SAMPLES (timed steps per arm, default 5), KS (member counts, default "1,8"), BUILD_ONLY=1,
#   MALLOC ("tuned system": saturate::malloc::tune, as the examples do, and/or glibc's
#   defaults), CONV_LOWERING ("default" and/or host, gemm, inner: Vmap's convolution lowering,
#   saturate::vmap::ConvLowering; default = the library's choice for the backend),
#   BENCH_TARGET_DIR (one target dir for every backend: shares the crates their builds have in
#   common).
#
# Every non-default backend builds in its own target dir (target/bench-<backend>) so the
# default release artifacts stay valid; builds run under `nice`. openblas-system needs
# Debian's libopenblas (`apt-get install -y libopenblas-dev`). Raw output goes to
# target/bench-results/.
set -uo pipefail
cd "$(dirname "$0")/.."

backends=()
models=()
while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then shift; models=("$@"); break; fi
    backends+=("$1"); shift
done
[ ${#backends[@]} -eq 0 ] && backends=(ndarray openblas-system blas-netlib flex flex-simd candle cpu)
repeat=${REPEAT:-3}
read -r -a mallocs <<<"${MALLOC:-tuned system}"
read -r -a lowerings <<<"${CONV_LOWERING:-default}"

out=target/bench-results
mkdir -p "$out"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "nproc: $(nproc)"
    lscpu | grep 'Model name'
    echo "rustc: $(rustc --version)"
} | tee "$out/machine.txt"

features_of() {
    case "$1" in
        ndarray) echo "" ;;
        flex-simd) echo "flex burn/simd" ;;
        *) echo "$1" ;;
    esac
}

# Runs a command with CONV_LOWERING set, or unset for "default".
lowering_env() {
    local lowering=$1
    shift
    if [ "$lowering" = default ]; then
        env -u CONV_LOWERING "$@"
    else
        CONV_LOWERING=$lowering "$@"
    fi
}

for backend in "${backends[@]}"; do
    features=$(features_of "$backend")
    if [ -n "${BENCH_TARGET_DIR:-}" ]; then
        target=$BENCH_TARGET_DIR
    elif [ "$backend" = ndarray ]; then
        target=target
    else
        target=target/bench-$backend
    fi
    # LibTorch: torch-sys finds libtorch through the venv's python; the binary loads it
    # through LD_LIBRARY_PATH (scripts/setup-tch.sh). The environment stays in this
    # backend's subshell.
    (
        if [ "$backend" = tch ]; then
            # shellcheck source=scripts/setup-tch.sh
            export CARGO_TARGET_DIR=$target
            source scripts/setup-tch.sh || exit 1
            python -c 'import torch; print("tch: torch", torch.__version__, "threads", torch.get_num_threads())' \
                | tee -a "$out/machine.txt"
        fi
        echo "=== $backend: building (features: ${features:-default})"
        log="$out/$backend.build.log"
        if ! CARGO_TARGET_DIR=$target nice -n 10 cargo bench --bench cpu_backends \
            ${features:+--features "$features"} --no-run >"$log" 2>&1; then
            echo "$backend: BUILD FAILED (see $log)"
            grep -m5 -E '^(error|warning: build failed)|error:' "$log"
            exit 0
        fi
        # The bench names its backend from the facade's features; burn/simd is not one of them.
        label_from=flex label_to=flex
        [ "$backend" = flex-simd ] && label_to='flex + simd'
        exe=$(grep -o 'target[^ )]*/deps/cpu_backends-[0-9a-f]*' "$log" | tail -1)
        [ -n "${BUILD_ONLY:-}" ] && exit 0
        if [ "${models[*]:-}" = parity ]; then
            for lowering in "${lowerings[@]}"; do
                echo "--- $backend, parity, conv lowering $lowering"
                lowering_env "$lowering" "$exe" parity 2>&1 | tee -a "$out/$backend.parity.md"
            done
            exit 0
        fi
        for lowering in "${lowerings[@]}"; do
            for malloc in "${mallocs[@]}"; do
                for i in $(seq "$repeat"); do
                    echo "--- $backend, malloc $malloc, conv $lowering, run $i, load: $(cut -d' ' -f1-3 /proc/loadavg)"
                    if [ "$malloc" = system ]; then
                        SATURATE_MALLOC=system lowering_env "$lowering" "$exe" "${models[@]}"
                    else
                        lowering_env "$lowering" "$exe" "${models[@]}"
                    fi 2>>"$out/$backend.$malloc.stderr" | grep -v -e '^| backend' -e '^|---' \
                        | sed -E "s/^\| $label_from,/| $label_to,/" \
                        | tee -a "$out/$backend.$malloc.md"
                done
            done
        done
    )
done
echo "raw rows in $out/*.md; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
