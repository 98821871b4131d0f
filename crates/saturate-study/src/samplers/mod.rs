//! Samplers: how parameter values are chosen.
//!
//! Each sampler is built from its config, as Burn's components are:
//! `TpeSamplerConfig::new().with_seed(0).init()?`; the configs hold Optuna's defaults, and
//! `init` reports an argument out of its range as
//! [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument) (the random sampler's
//! `init`, with nothing to check, returns the sampler).

mod base;
mod cmaes;
mod gp;
mod grid;
mod qmc;
mod random;
mod tpe;

pub use base::{intersection_search_space, Sampler, SearchSpace};
pub use cmaes::{CmaEsSampler, CmaEsSamplerConfig};
pub use gp::{GpSampler, GpSamplerConfig};
pub use grid::{GridSampler, GridSamplerConfig};
pub use qmc::{QmcKind, QmcSampler, QmcSamplerConfig};
pub use random::{RandomSampler, RandomSamplerConfig};
pub use tpe::{default_gamma, hyperopt_gamma, OptunaDefaults, TpeSampler, TpeSamplerConfig};
