//! TPE: Optuna's default sampler.

mod multi_objective;
mod parzen;
mod sampler;
mod truncnorm;

pub use sampler::{default_gamma, hyperopt_gamma, TpeSampler, TpeSamplerBuilder};
