#!/usr/bin/env bash
# matrixmultiply's AVX-512 sgemm kernel against its AVX2/FMA kernel, in one run, on the GEMM
# shapes of the benchmark models' training steps (scripts/gemm-kernels: one thread, medians of
# 9 samples). The AVX-512 arm is what saturate's default `avx512` feature selects on a CPU with
# avx512f; on a CPU without it both arms run the AVX2/FMA kernel.
#
# usage: scripts/bench-gemm-kernels.sh [OUT.csv]   (default target/bench/gemm-kernels.csv)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/target/bench/gemm-kernels.csv}"
mkdir -p "$(dirname "$out")"
manifest="$root/scripts/gemm-kernels/Cargo.toml"
target="$root/target/gemm-kernels"
cargo build --release --quiet --manifest-path "$manifest" --target-dir "$target/fma"
cargo build --release --quiet --manifest-path "$manifest" --target-dir "$target/avx512" \
    --features avx512
flags="$(grep -o -w -E 'avx2|fma|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "# machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, flags: $flags" >&2
echo "# load: $(uptime)" >&2
{
    echo "kernel,shape,m,k,n,us_per_call,gflops"
    # Alternate the arms twice so that a change of load shows as a disagreement.
    for _ in 1 2; do
        "$target/fma/release/gemm-kernels"
        "$target/avx512/release/gemm-kernels"
    done
} | tee "$out"
echo "# wrote $out" >&2
