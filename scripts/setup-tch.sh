#!/usr/bin/env bash
# Environment for `--features tch` (burn-tch: LibTorch through tch 0.22 / torch-sys 0.22) built
# against the PyTorch that scripts/setup-torch.sh installs into target/venv/torch, instead of
# a libtorch download (which needs the network at build time). NOT part of CI: the PyPI torch
# wheel is about 5 GB with its CUDA libraries.
#
# usage:
#   source scripts/setup-tch.sh            # exports the variables into this shell
#   scripts/setup-tch.sh COMMAND [ARGS...] # runs COMMAND with them, e.g.
#   scripts/setup-tch.sh cargo bench --bench cpu_backends --features tch
#
# STATUS (measured 2026-12-01): with PyTorch 2.15.0 (what scripts/setup-torch.sh installs by
# default) the build FAILS in torch-sys's generated C++ shim: PyTorch 2.15 removed ops that
# tch 0.22's shim wraps (`Tensor::align_as`, `torch::align_tensors`, `torch::cholesky`,
# `torch::qr` and their `_out` forms). With the PyTorch tch 0.22 was generated for, 2.9.0, it
# builds, and the parity run passes (book/src/cpu-backends.md, "LibTorch"):
#   python3 -m venv target/venv/torch29 &&
#   target/venv/torch29/bin/pip install torch==2.9.0 numpy  # PyPI's wheel pulls CUDA, ~2.2 GB
#   TCH_VENV=target/venv/torch29 CARGO_TARGET_DIR=target \
#     scripts/setup-tch.sh cargo bench --bench cpu_backends --features tch -- parity
#
# What it sets, and why:
# - PATH: target/venv/torch/bin first, and VIRTUAL_ENV: torch-sys's build script asks
#   `python` (`python3` without VIRTUAL_ENV) for torch's version, include and lib dirs.
# - LIBTORCH_USE_PYTORCH=1: take libtorch from that Python's torch package.
# - LIBTORCH_BYPASS_VERSION_CHECK=1: torch-sys 0.22 expects PyTorch 2.9.0 and refuses any
#   other version at build time ("this tch version expects PyTorch 2.9.0, got 2.15.0"). The
#   bypass gets past that check, but its C++ shim must still compile against the installed
#   headers (see STATUS).
# - CXX: a wrapper (written to target/tch-cxx) that compiles torch-sys's C++ shim with
#   -std=c++20 instead of the -std=c++17 torch-sys 0.22 passes: PyTorch >= 2.10's headers
#   refuse older standards ("#error C++20 or later compatible compiler is required").
#   The real compiler is $TCH_CXX, default `c++` (GCC 12 works).
# - LD_LIBRARY_PATH: torch/lib (libtorch_cpu.so, libc10.so, ...), which the built binaries
#   load at run time; torch-sys records no rpath.
# - CARGO_TARGET_DIR: target/bench-tch unless already set (a LibTorch build has its own
#   artifacts; keeps the default ones valid).
# - OMP_NUM_THREADS: the number of CPUs unless set (LibTorch's intra-op threads).

_tch_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# TCH_VENV: the venv whose torch to build against (default target/venv/torch).
_tch_venv="$(cd "$_tch_root" && realpath -m "${TCH_VENV:-target/venv/torch}")"
if [ ! -x "$_tch_venv/bin/python" ] || ! "$_tch_venv/bin/python" -c 'import torch' 2>/dev/null; then
    echo "setup-tch: no torch in $_tch_venv; run scripts/setup-torch.sh first" >&2
    # shellcheck disable=SC2317 # `return` when sourced, `exit` when run
    return 1 2>/dev/null || exit 1
fi
_tch_lib="$("$_tch_venv/bin/python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
_tch_cxx="$_tch_root/target/tch-cxx"
mkdir -p "$(dirname "$_tch_cxx")"
cat >"$_tch_cxx" <<EOF_CXX
#!/bin/sh
# Written by scripts/setup-tch.sh: torch-sys 0.22 asks for C++17, PyTorch >= 2.10 needs C++20.
for a in "\$@"; do
    shift
    [ "\$a" = -std=c++17 ] && a=-std=c++20
    set -- "\$@" "\$a"
done
exec ${TCH_CXX:-c++} "\$@"
EOF_CXX
chmod +x "$_tch_cxx"
export CXX="$_tch_cxx"
export VIRTUAL_ENV="$_tch_venv"
export PATH="$_tch_venv/bin:$PATH"
export LIBTORCH_USE_PYTORCH=1
export LIBTORCH_BYPASS_VERSION_CHECK=1
export LD_LIBRARY_PATH="$_tch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$_tch_root/target/bench-tch}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
unset _tch_root _tch_venv _tch_lib _tch_cxx

# Run as a command: run the arguments in this environment.
if [ "${BASH_SOURCE[0]}" = "$0" ] && [ $# -gt 0 ]; then
    exec "$@"
fi
