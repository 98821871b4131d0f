#!/usr/bin/env bash
# The project's test command (README "Test"): format, lints, tests, docs, the book.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x scripts/setup-python.sh ]; then
  scripts/setup-python.sh
fi
scripts/setup-data.sh
# A Vulkan device for the wgpu tests (Mesa's lavapipe when the machine has no GPU); the log
# names it. The GPU check's dry run (tests/gpu_check.rs) and the cubecl suite below run on it.
XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
export XDG_RUNTIME_DIR
scripts/setup-vulkan.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The wgpu-only targets (the cubecl test binary, the examples' wgpu backend).
cargo clippy -p saturate-vmap --features wgpu --tests -- -D warnings
# The CUDA build (library and the training-step bench's CUDA arm): no GPU here, but it must compile.
cargo check -p saturate --features cuda,nvml --lib --bench training_step
# Name the CPU's SIMD level in the log (the parity tests' premise: an exact NdArray recip).
cargo test -p saturate-vmap --test main lane::simd_level -- --nocapture
# A throwaway PostgreSQL on 127.0.0.1 for saturate-study's RDB tests, stopped when done.
pg_state="$(mktemp -d)"
trap 'scripts/setup-postgres.sh stop "$pg_state"' EXIT
scripts/setup-postgres.sh start "$pg_state"
SATURATE_TEST_POSTGRES_URL="$(cat "$pg_state/url")"
export SATURATE_TEST_POSTGRES_URL
# The parity tests append their worst difference to these files (scripts/parity-table.sh
# makes the book's table from them).
rm -f target/parity-ndarray.csv target/parity-wgpu.csv
SATURATE_PARITY_REPORT="$PWD/target/parity-ndarray.csv" cargo test --workspace
scripts/setup-postgres.sh stop "$pg_state"
trap - EXIT
# The CubeCL path on wgpu (the Vulkan device was set up above): the parity suite on
# Vmap<Wgpu>, then the examples built for wgpu and checked by the facade's tests (they assert
# the backend they ran on).
SATURATE_PARITY_REPORT="$PWD/target/parity-wgpu.csv" \
  cargo test -p saturate-vmap --features wgpu --test cubecl
# wgpu's convolutions are grouped convolutions; the other CubeCL backends (CUDA, ROCm, Metal)
# get the unfold + K-batched matmul: the convolution tests again under that lowering.
SATURATE_CONV_LOWERING=gemm cargo test -p saturate-vmap --features wgpu --test cubecl -- conv cnn
# The wgpu programs, built as the GPU check's dry run builds them (saturate's own code at
# opt-level 0: the same artifacts), then the main job's and the study benchmark's short modes
# and the dry run (tests/gpu_check.rs), one at a time (the dry run's build re-links binaries the
# other two run).
wgpu_build=(--config profile.dev.package.saturate.opt-level=0 --features wgpu)
cargo build "${wgpu_build[@]}" --bench training_step --example parity_check \
  --example recommend_group_size --example study_bench --example fashion_mnist
cargo test "${wgpu_build[@]}" --test main -- --test-threads=1 \
  examples_train::fashion_mnist examples_train::study_bench gpu_check
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
scripts/setup-book.sh
mdbook build book
