//! Samplers: how parameter values are chosen.
//!
//! Each sampler is built from its config, as Burn's components are:
//! `CmaEsSamplerConfig::new().with_seed(Some(0)).init()?`; the configs hold Optuna's
//! defaults, and `init` reports an argument out of its range as
//! [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument). TPE, with a dozen
//! options, has a builder of the same shape: `TpeSampler::builder().seed(0).build()`.

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
pub use tpe::{default_gamma, hyperopt_gamma, OptunaDefaults, TpeSampler, TpeSamplerBuilder};
