//! TPE: Optuna's default sampler.

mod mixture;
pub(crate) mod multi_objective;
mod parzen_estimator;
mod sampler;
mod truncnorm;

pub use sampler::{default_gamma, hyperopt_gamma, OptunaDefaults, TpeSampler, TpeSamplerConfig};
