//! End-to-end tests of the `saturate` binary: each spawns the built binary on real journal
//! files. `interop` and `dashboard` need Python Optuna 4.9.0 (and optuna-dashboard) from
//! `scripts/setup-python.sh`; they fail when it is missing (outside CI,
//! `SATURATE_SKIP_INTEROP=1` skips them and says so).

mod ask_tell;
mod commands;
mod dashboard;
mod export;
mod interop;
mod rdb;
mod support;
