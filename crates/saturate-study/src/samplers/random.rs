//! Uniform random sampling.

use rand::rngs::StdRng;

use crate::distributions::Distribution;
use crate::error::Result;
use crate::samplers::base::{sample_uniform, seeded_rng, Sampler};
use crate::study::StudyView;
use crate::trial::FrozenTrial;

/// Samples every parameter independently and uniformly (log-uniformly for log
/// distributions), Optuna's `RandomSampler`.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// let sampler = RandomSamplerConfig::new().with_seed(1).init();
/// let study = StudyConfig::new().with_sampler(sampler).init()?;
/// study.optimize(Some(3), None, |t| Ok(t.suggest_float("x", 0.0, 1.0)?))?;
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RandomSampler {
    rng: StdRng,
}

impl Default for RandomSampler {
    /// Seeded from the operating system.
    fn default() -> Self {
        RandomSamplerConfig::new().init()
    }
}

/// Configures a [`RandomSampler`]; the defaults are Optuna's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RandomSamplerConfig {
    /// Seed of the sampler's generator; `None`: from the operating system (default).
    pub seed: Option<u64>,
}

impl RandomSamplerConfig {
    /// Optuna's defaults.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets [`Self::seed`].
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
    /// The sampler (no setting can be out of range, so this cannot fail).
    pub fn init(&self) -> RandomSampler {
        RandomSampler {
            rng: seeded_rng(self.seed),
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
