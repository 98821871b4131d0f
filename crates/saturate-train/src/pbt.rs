//! Population-based training inside one group (Jaderberg et al. 2017): the group's K members
//! are the population. Every `perturbation_interval` epochs the members in the bottom quantile
//! *exploit* members of the top quantile (their weights, running statistics and optimizer
//! state become copies, gathered on the device by [`Batched::select`](saturate_vmap::Batched::select))
//! and *explore* (their hyperparameters are the donor's, perturbed or resampled).
//!
//! Each constant-hyperparameter segment of a member is one trial of the study, so Optuna and
//! optuna-dashboard show a PBT run as ordinary trials. At an exploit the weak member's trial
//! ends COMPLETE with its last value, and a new trial starts with the explored values and the
//! system attributes [`PARENT_ATTR`] (the donor trial's number), [`GENERATION_ATTR`] and
//! [`START_STEP_ATTR`] (the epoch it starts after); its intermediate values continue at the
//! member's epoch count. [`lineage`] follows the parents back to the first generation: the
//! hyperparameter schedule that produced a trial.
//!
//! Turn it on with [`TrainerConfig::with_pbt`](crate::TrainerConfig::with_pbt).

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use saturate_study::distributions::{Distribution, ParamValue};
use saturate_study::StudyDirection;

use crate::error::{Result, TrainError};

pub use saturate_study::lineage::{
    lineage, Segment, GENERATION_ATTR, PARENT_ATTR, START_STEP_ATTR,
};

/// Population-based training settings, in Ray Tune's terms
/// (`PopulationBasedTraining`): see [`TrainerConfig::with_pbt`](crate::TrainerConfig::with_pbt).
#[derive(Debug, Clone, PartialEq)]
pub struct PbtConfig {
    /// Epochs of the trainer between two exploit/explore steps.
    pub perturbation_interval: usize,
    /// The fraction of the population in the bottom quantile (which exploits) and in the top
    /// quantile (which it copies): in `(0, 0.5]`, default 0.25. At least one member exploits
    /// when the population has two or more.
    pub quantile_fraction: f64,
    /// The probability that an explored value is resampled from its distribution instead of
    /// perturbed (default 0.25).
    pub resample_probability: f64,
    /// The factors a perturbed value is multiplied by, one chosen at random (default 0.8 and
    /// 1.2); a categorical value moves to the previous or the next choice instead.
    pub perturbation_factors: (f64, f64),
    /// The member hyperparameters that explore, with the distributions the study samples them
    /// from (bounds, log scale and steps are respected). Member hyperparameters not listed
    /// are copied from the donor unchanged; shared (shape) parameters cannot be listed.
    pub hyperparam_mutations: BTreeMap<String, Distribution>,
    /// The seed of the exploit and explore draws (`None`: from the operating system).
    pub seed: Option<u64>,
}

impl PbtConfig {
    /// An exploit/explore step every `perturbation_interval` epochs, Ray Tune's defaults
    /// otherwise, and no mutations yet (add them with [`with_mutation`](Self::with_mutation)).
    pub fn new(perturbation_interval: usize) -> Self {
        Self {
            perturbation_interval,
            quantile_fraction: 0.25,
            resample_probability: 0.25,
            perturbation_factors: (0.8, 1.2),
            hyperparam_mutations: BTreeMap::new(),
            seed: None,
        }
    }

    /// Explores `name` within `distribution` (the one the task suggests it from).
    pub fn with_mutation(mut self, name: impl Into<String>, distribution: Distribution) -> Self {
        self.hyperparam_mutations.insert(name.into(), distribution);
        self
    }

    /// Sets [`quantile_fraction`](Self::quantile_fraction).
    pub fn with_quantile_fraction(mut self, fraction: f64) -> Self {
        self.quantile_fraction = fraction;
        self
    }

    /// Sets [`resample_probability`](Self::resample_probability).
    pub fn with_resample_probability(mut self, probability: f64) -> Self {
        self.resample_probability = probability;
        self
    }

    /// Sets [`perturbation_factors`](Self::perturbation_factors).
    pub fn with_perturbation_factors(mut self, low: f64, high: f64) -> Self {
        self.perturbation_factors = (low, high);
        self
    }

    /// Sets [`seed`](Self::seed).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    pub(crate) fn check(&self) -> Result<()> {
        let invalid = |setting: &'static str, reason: String| {
            Err(TrainError::InvalidConfig { setting, reason })
        };
        if self.perturbation_interval == 0 {
            return invalid("pbt.perturbation_interval", "must be at least 1".into());
        }
        if !(self.quantile_fraction > 0.0 && self.quantile_fraction <= 0.5) {
            return invalid(
                "pbt.quantile_fraction",
                format!("{} is not in (0, 0.5]", self.quantile_fraction),
            );
        }
        if !(0.0..=1.0).contains(&self.resample_probability) {
            return invalid(
                "pbt.resample_probability",
                format!("{} is not in [0, 1]", self.resample_probability),
            );
        }
        let (low, high) = self.perturbation_factors;
        if !(low.is_finite() && high.is_finite() && low > 0.0 && high > 0.0) {
            return invalid(
                "pbt.perturbation_factors",
                format!("({low}, {high}): both must be finite and positive"),
            );
        }
        if self.hyperparam_mutations.is_empty() {
            return invalid(
                "pbt.hyperparam_mutations",
                "name at least one member hyperparameter to explore (`with_mutation`)".into(),
            );
        }
        for (name, distribution) in &self.hyperparam_mutations {
            distribution
                .validate()
                .map_err(|e| TrainError::InvalidConfig {
                    setting: "pbt.hyperparam_mutations",
                    reason: format!("`{name}`: {e}"),
                })?;
        }
        Ok(())
    }

    pub(crate) fn rng(&self) -> StdRng {
        match self.seed {
            Some(seed) => StdRng::seed_from_u64(seed),
            None => StdRng::from_os_rng(),
        }
    }
}

/// The exploit step's plan for a population with these values: `(member, donor)` pairs, each
/// member of the bottom quantile with a donor drawn from the top quantile. Ties keep the
/// lower index in the better half. NaN values rank last.
pub(crate) fn exploit_plan(
    values: &[f64],
    direction: StudyDirection,
    quantile_fraction: f64,
    rng: &mut StdRng,
) -> Vec<(usize, usize)> {
    let n = values.len();
    if n < 2 {
        return Vec::new();
    }
    let in_quantile = ((n as f64 * quantile_fraction).ceil() as usize).clamp(1, n / 2);
    let mut order: Vec<usize> = (0..n).collect();
    // Best first.
    let better = |a: f64, b: f64| match direction {
        StudyDirection::Maximize => b.total_cmp(&a),
        _ => a.total_cmp(&b),
    };
    order.sort_by(|&i, &j| match (values[i].is_nan(), values[j].is_nan()) {
        (false, false) => better(values[i], values[j]).then(i.cmp(&j)),
        (a, b) => a.cmp(&b).then(i.cmp(&j)),
    });
    let top = &order[..in_quantile];
    let mut bottom: Vec<usize> = order[n - in_quantile..].to_vec();
    bottom.sort_unstable();
    bottom
        .into_iter()
        .map(|member| (member, top[rng.random_range(0..top.len())]))
        .collect()
}

/// A donor for an empty slot: a member of the top quantile.
pub(crate) fn top_donor(
    values: &[f64],
    direction: StudyDirection,
    quantile_fraction: f64,
    rng: &mut StdRng,
) -> usize {
    let n = values.len();
    let in_quantile = ((n as f64 * quantile_fraction).ceil() as usize).clamp(1, n);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (values[i], values[j]);
        match (a.is_nan(), b.is_nan()) {
            (false, false) => match direction {
                StudyDirection::Maximize => b.total_cmp(&a),
                _ => a.total_cmp(&b),
            },
            (x, y) => x.cmp(&y),
        }
        .then(i.cmp(&j))
    });
    order[rng.random_range(0..in_quantile)]
}

/// The explored value of a donor's `value`: resampled from `distribution` with
/// `resample_probability`, perturbed otherwise; always inside the distribution.
pub(crate) fn explore(
    value: &ParamValue,
    distribution: &Distribution,
    config: &PbtConfig,
    rng: &mut StdRng,
) -> Result<ParamValue> {
    let resample = rng.random_bool(config.resample_probability);
    let factor = if rng.random_bool(0.5) {
        config.perturbation_factors.0
    } else {
        config.perturbation_factors.1
    };
    let explored = match distribution {
        Distribution::Float(d) => {
            let x = if resample {
                if d.log {
                    rng.random_range(d.low.ln()..=d.high.ln()).exp()
                } else {
                    rng.random_range(d.low..=d.high)
                }
            } else {
                value.as_f64().unwrap_or(d.low) * factor
            };
            let x = match d.step {
                Some(step) => d.low + ((x - d.low) / step).round() * step,
                None => x,
            };
            ParamValue::Float(x.clamp(d.low, d.high))
        }
        Distribution::Int(d) => {
            let x = if resample {
                if d.log {
                    rng.random_range((d.low as f64).ln()..=(d.high as f64).ln())
                        .exp()
                } else {
                    rng.random_range(d.low..=d.high) as f64
                }
            } else {
                value.as_f64().unwrap_or(d.low as f64) * factor
            };
            let steps = ((x - d.low as f64) / d.step as f64).round() as i64;
            ParamValue::Int((d.low + steps * d.step).clamp(d.low, d.high))
        }
        Distribution::Categorical(d) => {
            let n = d.choices.len();
            let index = if resample {
                rng.random_range(0..n)
            } else {
                let current = match value {
                    ParamValue::Categorical(c) => d.index_of(c).unwrap_or(0),
                    _ => 0,
                };
                if factor == config.perturbation_factors.0 {
                    current.saturating_sub(1)
                } else {
                    (current + 1).min(n - 1)
                }
            };
            ParamValue::Categorical(d.choices[index].clone())
        }
    };
    // Clamping can leave a high bound that is not on the step grid: snap down inside.
    let internal = distribution.to_internal(&explored)?;
    if distribution.contains(internal) {
        Ok(explored)
    } else {
        Ok(distribution.to_external(internal.min(upper_internal(distribution))))
    }
}

fn upper_internal(distribution: &Distribution) -> f64 {
    match distribution {
        Distribution::Float(d) => match d.step {
            Some(step) => d.low + ((d.high - d.low) / step).floor() * step,
            None => d.high,
        },
        Distribution::Int(d) => (d.low + (d.high - d.low) / d.step * d.step) as f64,
        Distribution::Categorical(d) => (d.choices.len() - 1) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use saturate_study::distributions::{
        CategoricalDistribution, FloatDistribution, IntDistribution,
    };

    #[test]
    fn the_bottom_quantile_copies_the_top_quantile() {
        let mut rng = StdRng::seed_from_u64(0);
        let values = [0.5, 0.9, 0.1, 0.7, 0.3, 0.8, f64::NAN, 0.6];
        for _ in 0..50 {
            let plan = exploit_plan(&values, StudyDirection::Maximize, 0.25, &mut rng);
            let bottom: Vec<usize> = plan.iter().map(|p| p.0).collect();
            assert_eq!(bottom, vec![2, 6], "NaN and 0.1 exploit");
            assert!(plan.iter().all(|p| p.1 == 1 || p.1 == 5), "{plan:?}");
            let plan = exploit_plan(&values, StudyDirection::Minimize, 0.25, &mut rng);
            let bottom: Vec<usize> = plan.iter().map(|p| p.0).collect();
            assert_eq!(bottom, vec![1, 6], "minimising: NaN and 0.9 exploit");
            assert!(plan.iter().all(|p| p.1 == 2 || p.1 == 4), "{plan:?}");
        }
        assert!(exploit_plan(&[1.0], StudyDirection::Maximize, 0.5, &mut rng).is_empty());
    }

    #[test]
    fn explored_values_stay_inside_their_distributions() {
        let config = PbtConfig::new(1).with_resample_probability(0.3);
        let mut rng = StdRng::seed_from_u64(1);
        let log = Distribution::Float(FloatDistribution::new(1e-4, 1e-1, true, None).unwrap());
        let stepped =
            Distribution::Float(FloatDistribution::new(0.0, 0.9, false, Some(0.1)).unwrap());
        let int = Distribution::Int(IntDistribution::new(2, 30, false, 4).unwrap());
        let cat = Distribution::Categorical(
            CategoricalDistribution::new(vec!["a".into(), "b".into(), "c".into()]).unwrap(),
        );
        let mut perturbed_once = false;
        for _ in 0..500 {
            for (distribution, start) in [
                (&log, ParamValue::Float(0.09)),
                (&stepped, ParamValue::Float(0.9)),
                (&int, ParamValue::Int(30)),
                (&cat, ParamValue::Categorical("c".into())),
            ] {
                let v = explore(&start, distribution, &config, &mut rng).unwrap();
                let internal = distribution.to_internal(&v).unwrap();
                assert!(
                    distribution.contains(internal),
                    "{v:?} outside {distribution:?}"
                );
                if let (ParamValue::Float(x), Distribution::Float(d)) = (&v, distribution) {
                    if let Some(step) = d.step {
                        let k = (x - d.low) / step;
                        assert!((k - k.round()).abs() < 1e-9, "{x} off the step grid");
                    }
                }
                if v == ParamValue::Float(0.09 * 0.8) {
                    perturbed_once = true;
                }
            }
        }
        assert!(perturbed_once, "a log value is perturbed by the factor 0.8");
        // Perturbing only: 0.5 goes to 0.4 or 0.6; "b" to "a" or "c".
        let perturb = PbtConfig::new(1).with_resample_probability(0.0);
        let plain = Distribution::Float(FloatDistribution::new(0.0, 1.0, false, None).unwrap());
        for _ in 0..50 {
            let v = explore(&ParamValue::Float(0.5), &plain, &perturb, &mut rng)
                .unwrap()
                .as_f64()
                .unwrap();
            assert!((v - 0.4).abs() < 1e-12 || (v - 0.6).abs() < 1e-12, "{v}");
            let c = explore(
                &ParamValue::Categorical("b".into()),
                &cat,
                &perturb,
                &mut rng,
            )
            .unwrap();
            assert!(
                c == ParamValue::Categorical("a".into())
                    || c == ParamValue::Categorical("c".into())
            );
        }
    }

    #[test]
    fn invalid_settings_are_errors() {
        let lr = Distribution::Float(FloatDistribution::new(1e-4, 1e-1, true, None).unwrap());
        assert!(PbtConfig::new(2)
            .with_mutation("lr", lr.clone())
            .check()
            .is_ok());
        for bad in [
            PbtConfig::new(0).with_mutation("lr", lr.clone()),
            PbtConfig::new(2),
            PbtConfig::new(2)
                .with_mutation("lr", lr.clone())
                .with_quantile_fraction(0.6),
            PbtConfig::new(2)
                .with_mutation("lr", lr.clone())
                .with_resample_probability(1.5),
            PbtConfig::new(2)
                .with_mutation("lr", lr)
                .with_perturbation_factors(0.0, 1.2),
        ] {
            assert!(
                matches!(bad.check(), Err(TrainError::InvalidConfig { .. })),
                "{bad:?}"
            );
        }
    }
}
