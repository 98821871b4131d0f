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
/// let sampler = RandomSamplerConfig::new().with_seed(Some(1)).init()?;
/// let study = DefaultStudy::builder().sampler(sampler).build()?;
/// study.optimize(Some(3), None, |t| Ok(t.suggest_float("x", 0.0, 1.0)?))?;
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RandomSampler {
    rng: StdRng,
}

impl RandomSampler {
    /// `RandomSamplerConfig::new().with_seed(seed).init()`, which cannot fail: the
    /// shorthand for the one argument (`None`: seeded from the operating system).
    pub fn new(seed: Option<u64>) -> Self {
        Self {
            rng: seeded_rng(seed),
        }
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
    pub fn with_seed(mut self, seed: Option<u64>) -> Self {
        self.seed = seed;
        self
    }
    /// The sampler (no argument can be out of range).
    pub fn init(&self) -> Result<RandomSampler> {
        Ok(RandomSampler::new(self.seed))
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
