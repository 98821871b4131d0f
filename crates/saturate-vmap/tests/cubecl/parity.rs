//! The parity suite of the `main` binary (`tests/parity/`), here on `crate::Inner` = wgpu.
//! `seeds.rs` (30-seed CNN runs) and `edge.rs` stay on NdArray: on lavapipe they would take
//! most of the suite's time for shapes the other cases already cover.

#[path = "../parity/common.rs"]
pub mod common;
#[path = "../parity/extra.rs"]
mod extra;
#[path = "../parity/isolation.rs"]
mod isolation;
#[path = "../parity/lifecycle.rs"]
mod lifecycle;
#[path = "../parity/models.rs"]
mod models;
#[path = "../parity/modules.rs"]
mod modules;
#[path = "../parity/optim.rs"]
mod optim;
#[path = "../parity/running.rs"]
mod running;
