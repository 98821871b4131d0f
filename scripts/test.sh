#!/usr/bin/env bash
# The project's test command (README "Test"): format, lints, tests, docs, the book.
#
# Build time dominates on a small machine, so every cargo call of a stage resolves the same
# features (cargo rebuilds Burn and everything above it whenever the resolved feature set of a
# shared dependency changes, e.g. between `-p saturate-vmap` and `--workspace`):
#   - the NdArray stage: `--workspace` with the default features;
#   - the wgpu stage: `--workspace --features saturate/wgpu` with saturate's own code at
#     opt-level 0 (the same flags as scripts/gpu-check.sh's dry run, so it reuses the build).
# Each step prints the minutes elapsed, so a slow step shows in the log.
set -euo pipefail
cd "$(dirname "$0")/.."
# A clean clone builds everything once: incremental caches would only add about 16 GB of disk.
export CARGO_INCREMENTAL=0
# Without debug info (Cargo.toml's dev profile keeps line tables for profiling): less to
# generate and link in every test binary and example; a failing test still names its panic.
export CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_TEST_DEBUG=0
start=$SECONDS
step() { printf '\n== test.sh [%dm%02ds] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }

step "setup: Python Optuna, the data, a Vulkan device, mdBook"
if [ -x scripts/setup-python.sh ]; then
  scripts/setup-python.sh
fi
scripts/setup-data.sh
# A Vulkan device for the wgpu tests (Mesa's lavapipe when the machine has no GPU); the log
# names it. The GPU check's dry run (tests/gpu_check.rs) and the cubecl suite below run on it.
XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
export XDG_RUNTIME_DIR
scripts/setup-vulkan.sh
mdbook_dir="$(scripts/setup-book.sh)"
PATH="$mdbook_dir:$PATH"

step "format; the book's snippets are current; links"
cargo fmt --all -- --check
python3 scripts/book-snippets.py --check
python3 scripts/check-links.py
step "clippy (NdArray)"
cargo clippy --workspace --all-targets -- -D warnings

# A throwaway PostgreSQL on 127.0.0.1 for saturate-study's RDB tests, stopped when done.
pg_state="$(mktemp -d)"
trap 'scripts/setup-postgres.sh stop "$pg_state"' EXIT
scripts/setup-postgres.sh start "$pg_state"
SATURATE_TEST_POSTGRES_URL="$(cat "$pg_state/url")"
export SATURATE_TEST_POSTGRES_URL
# The parity tests append their worst difference to these files (scripts/parity-table.sh
# makes the book's table from them).
rm -f target/parity-ndarray.csv target/parity-wgpu.csv
step "tests (NdArray)"
SATURATE_PARITY_REPORT="$PWD/target/parity-ndarray.csv" cargo test --workspace
scripts/setup-postgres.sh stop "$pg_state"
trap - EXIT
# Name the CPU's SIMD level in the log (the parity tests' premise: an exact NdArray recip);
# the workspace's test binaries are built already.
cargo test --workspace --test main -- lane::simd_level --nocapture

step "docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
mdbook build book

# The CubeCL path on wgpu (the Vulkan device was set up above). One feature set for the
# whole stage (see the top of this file).
wgpu=(--config profile.dev.package.saturate.opt-level=0 --workspace --features saturate/wgpu)
# Clippy lints the stage's code while cargo builds it: clippy-driver wraps rustc for the
# workspace's crates, as `cargo clippy -- -D warnings` does, but in build mode, so the wgpu
# dependencies are compiled once instead of checked for clippy and then compiled (the whole
# run about 2.4 minutes shorter on 2 cores). Every wgpu-gated line is in a target the stage
# builds: the parity suite, every crate's `main` tests, the examples' shared backend choice
# and the training-step bench. Exported: the GPU check's dry run (tests/gpu_check.rs) builds
# the same artifacts with it. Without clippy-driver the stage would build unlinted: stop.
clippy_driver="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)"
[ -x "$clippy_driver" ] || { echo "test.sh: no clippy-driver (rustup component add clippy)" >&2; exit 1; }
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
step "tests (wgpu), linted by clippy as they build: the parity suite on Vmap<Wgpu>"
SATURATE_PARITY_REPORT="$PWD/target/parity-wgpu.csv" cargo test "${wgpu[@]}" --test cubecl
# Convolutions on CubeCL backends are grouped convolutions by default; the unfold + K-batched
# matmul is the other lowering a program may choose: the convolution tests again under it.
step "tests (wgpu): the convolutions under the unfold lowering"
SATURATE_CONV_LOWERING=gemm cargo test "${wgpu[@]}" --test cubecl -- conv cnn
# The wgpu programs, built as the GPU check's dry run builds them (the same artifacts), then
# the main job's and the study benchmark's short modes and the dry run (tests/gpu_check.rs),
# one at a time (they share the machine's two cores with lavapipe).
step "tests (wgpu): the examples and the GPU check's dry run"
cargo build "${wgpu[@]}" --bench training_step --example parity_check \
  --example recommend_group_size --example study_bench --example fashion_mnist
cargo test "${wgpu[@]}" --test main -- --test-threads=1 \
  examples_train::fashion_mnist examples_train::study_bench gpu_check

# The CUDA build (library and the training-step bench's CUDA arm): no GPU here, but it must
# compile.
step "check (CUDA)"
unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
cargo check -p saturate --features cuda,nvml --lib --bench training_step
step "done"
