//! Quasi-Monte Carlo sampling.

use std::collections::BTreeMap;

use crate::distributions::Distribution;
use crate::error::Result;
use crate::samplers::base::{
    from_unit, intersection_search_space, sample_uniform, seeded_rng, Sampler,
};
use crate::samplers::SearchSpace;
use crate::study::StudyView;
use crate::trial::{FrozenTrial, TrialState};

/// The low-discrepancy sequence of a [`QmcSampler`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QmcKind {
    /// Owen-scrambled Sobol points (Burley, "Practical Hash-based Owen Scrambling",
    /// JCGT 2020, via the `sobol_burley` crate); up to 256 dimensions.
    Sobol,
    /// The Halton sequence with a random shift per dimension (Cranley–Patterson rotation).
    Halton,
}

/// Samples the search space of the first COMPLETE trial with a scrambled low-discrepancy
/// sequence: trial number n gets point n − 1 (Optuna's `QMCSampler`). Parameters outside that
/// space, and every parameter of the first trial, are sampled at random.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// let sampler = QmcSamplerConfig::new()
///     .with_kind(QmcKind::Halton)
///     .with_seed(7)
///     .init()?;
/// let study = StudyConfig::new().with_sampler(sampler).init()?;
/// study.optimize(Some(8), None, |t| Ok(t.suggest_float("x", 0.0, 1.0)?))?;
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug)]
pub struct QmcSampler {
    kind: QmcKind,
    seed: u32,
    rng: rand::rngs::StdRng,
    space: Option<SearchSpace>,
}

/// Configures a [`QmcSampler`]; the defaults are Optuna's (scrambled Sobol points).
#[derive(Debug, Clone, PartialEq)]
pub struct QmcSamplerConfig {
    /// The sequence (default [`QmcKind::Sobol`]).
    pub kind: QmcKind,
    /// Seed of the scrambling and of the random fallback; `None`: from the operating
    /// system (default).
    pub seed: Option<u64>,
}

impl Default for QmcSamplerConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl QmcSamplerConfig {
    /// Optuna's defaults.
    pub fn new() -> Self {
        Self {
            kind: QmcKind::Sobol,
            seed: None,
        }
    }
    /// Sets [`Self::kind`].
    pub fn with_kind(mut self, kind: QmcKind) -> Self {
        self.kind = kind;
        self
    }
    /// Sets [`Self::seed`].
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
    /// The sampler (no argument can be out of range).
    pub fn init(&self) -> Result<QmcSampler> {
        let mut rng = seeded_rng(self.seed);
        let seed = rand::Rng::random(&mut rng);
        Ok(QmcSampler {
            kind: self.kind,
            seed,
            rng,
            space: None,
        })
    }
}

impl QmcSampler {
    fn point(&self, index: u64, dimension: usize) -> f64 {
        match self.kind {
            QmcKind::Sobol => f64::from(sobol_burley::sample(
                index as u32,
                dimension as u32,
                self.seed,
            )),
            QmcKind::Halton => {
                let base = PRIMES[dimension % PRIMES.len()];
                let mut f = 1.0;
                let mut r = 0.0;
                let mut i = index;
                while i > 0 {
                    f /= base as f64;
                    r += f * (i % base) as f64;
                    i /= base;
                }
                // Random shift per dimension, derived from the seed.
                let shift = (splitmix(u64::from(self.seed) ^ dimension as u64) >> 11) as f64
                    / (1u64 << 53) as f64;
                (r + shift).fract()
            }
        }
    }
}

const PRIMES: [u64; 32] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
    101, 103, 107, 109, 113, 127, 131,
];

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Sampler for QmcSampler {
    fn infer_relative_search_space(
        &mut self,
        study: &StudyView<'_>,
        _trial: &FrozenTrial,
    ) -> Result<SearchSpace> {
        if self.space.is_none() {
            let complete = study.trials(Some(&[TrialState::Complete]))?;
            if let Some(first) = complete.first() {
                self.space = Some(intersection_search_space(std::slice::from_ref(first)));
            }
        }
        Ok(self.space.clone().unwrap_or_default())
    }

    fn sample_relative(
        &mut self,
        _study: &StudyView<'_>,
        trial: &FrozenTrial,
        space: &SearchSpace,
    ) -> Result<BTreeMap<String, f64>> {
        Ok(space
            .iter()
            .enumerate()
            .map(|(d, (name, distribution))| {
                // Trial 0 defines the space and is sampled at random: point 0 goes to trial 1.
                let index = trial.number.saturating_sub(1);
                let u = self.point(index, d).min(1.0 - f64::EPSILON);
                (name.clone(), from_unit(u, distribution))
            })
            .collect())
    }

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
