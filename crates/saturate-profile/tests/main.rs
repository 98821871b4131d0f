//! The crate's one integration-test binary; each module tests one part.

mod common;
mod group_size;
mod nvml;
mod process;
mod report;
mod sampler;
