#!/usr/bin/env bash
# The project's test command (README "Test"): format, lints, tests, docs, the book.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x scripts/setup-python.sh ]; then
  scripts/setup-python.sh
fi
scripts/setup-data.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
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
cargo test --workspace
scripts/setup-postgres.sh stop "$pg_state"
trap - EXIT
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
scripts/setup-book.sh
mdbook build book
