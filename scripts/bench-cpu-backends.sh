#!/usr/bin/env bash
# Issue 5: benchmark Burn 0.21's CPU backends (benches/cpu_backends.rs) on the three models,
# K models one after another vs one batched Autodiff<Vmap<_>> group, K in {1, 8}.
# Results and analysis: book/src/cpu-backends.md.
#
# Usage: scripts/bench-cpu-backends.sh [backend...] [-- model...]
#   backends: ndarray openblas-system blas-netlib flex flex-simd candle cpu (default: all);
#   flex-simd = `--features "flex burn/simd"` (the facade's `flex` leaves burn-flex's simd off)
#   models:   mlp8 mlp784 cnn (default: all)
# Environment: REPEAT (runs per configuration, default 3; the table takes the best median),
#   SAMPLES (timed steps per arm, default 5), BUILD_ONLY=1.
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
# The lead's allocator setting: large freed blocks stay in the heap instead of being
# returned to the kernel (page faults on every step otherwise).
tunables='glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824:glibc.malloc.top_pad=268435456'

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

for backend in "${backends[@]}"; do
    features=$(features_of "$backend")
    if [ "$backend" = ndarray ]; then
        target=target
    else
        target=target/bench-$backend
    fi
    echo "=== $backend: building (features: ${features:-default})"
    log="$out/$backend.build.log"
    if ! CARGO_TARGET_DIR=$target nice -n 10 cargo bench --bench cpu_backends \
        ${features:+--features "$features"} --no-run >"$log" 2>&1; then
        echo "$backend: BUILD FAILED (see $log)"
        grep -m5 -E '^(error|warning: build failed)|error:' "$log"
        continue
    fi
    # The bench names its backend from the facade's features; burn/simd is not one of them.
    label_from=flex label_to=flex
    [ "$backend" = flex-simd ] && label_to='flex + simd'
    exe=$(grep -o 'target[^ )]*/deps/cpu_backends-[0-9a-f]*' "$log" | tail -1)
    [ -n "${BUILD_ONLY:-}" ] && continue
    for malloc in default tunables; do
        for i in $(seq "$repeat"); do
            echo "--- $backend, malloc $malloc, run $i, load: $(cut -d' ' -f1-3 /proc/loadavg)"
            if [ "$malloc" = tunables ]; then
                GLIBC_TUNABLES=$tunables "$exe" "${models[@]}"
            else
                "$exe" "${models[@]}"
            fi 2>>"$out/$backend.$malloc.stderr" | grep -v -e '^| backend' -e '^|---' \
                | sed -E "s/^\| $label_from( \+ | \|)/| $label_to\1/" \
                | tee -a "$out/$backend.$malloc.md"
        done
    done
done
echo "raw rows in $out/*.md; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
