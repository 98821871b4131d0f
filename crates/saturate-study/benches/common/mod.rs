//! Shared by the benchmarks of this crate.

pub mod functions;
