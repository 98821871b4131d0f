//! Gaussian-process Bayesian optimisation (Optuna's `GPSampler`).

// Small dense linear algebra reads best with explicit indices.
#![allow(clippy::needless_range_loop)]

mod acquisition;
mod boxes;
mod ehvi;
mod lbfgs;
mod linalg;
mod optimize;
mod regressor;
mod sampler;
mod search_space;

pub use sampler::{GpSampler, GpSamplerConfig};

#[cfg(test)]
mod tests;
