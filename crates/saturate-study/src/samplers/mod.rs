//! Samplers: how parameter values are chosen.

mod base;
mod cmaes;
mod grid;
mod qmc;
mod random;
mod tpe;

pub use base::{intersection_search_space, Sampler, SearchSpace};
pub use cmaes::CmaEsSampler;
pub use grid::GridSampler;
pub use qmc::{QmcKind, QmcSampler};
pub use random::RandomSampler;
pub use tpe::{default_gamma, hyperopt_gamma, TpeSampler, TpeSamplerBuilder};
