//! Uniform random sampling.

use rand::rngs::StdRng;

use crate::distributions::Distribution;
use crate::error::Result;
use crate::samplers::base::{sample_uniform, seeded_rng, Sampler};
use crate::study::StudyView;
use crate::trial::FrozenTrial;

/// Samples every parameter independently and uniformly (log-uniformly for log
/// distributions), Optuna's `RandomSampler`.
#[derive(Debug, Clone)]
pub struct RandomSampler {
    rng: StdRng,
}

impl RandomSampler {
    /// A sampler seeded from `seed` (`None`: from the operating system).
    pub fn new(seed: Option<u64>) -> Self {
        Self {
            rng: seeded_rng(seed),
        }
    }
}

impl Sampler for RandomSampler {
    fn sample_independent(
        &mut self,
        _study: &StudyView<'_>,
        _trial: &FrozenTrial,
        _name: &str,
        distribution: &Distribution,
    ) -> Result<f64> {
        Ok(sample_uniform(&mut self.rng, distribution))
    }
}
