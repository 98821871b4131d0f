//! Shared by the benchmarks of this crate.

pub mod functions;
// Only `gp` uses these; `tpe_quality` and `tpe_batch` include this module too.
#[allow(dead_code)]
pub mod mo_functions;
