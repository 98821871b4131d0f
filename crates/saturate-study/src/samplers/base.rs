//! The sampler contract.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::distributions::Distribution;
use crate::error::Result;
use crate::study::StudyView;
use crate::trial::{FrozenTrial, TrialState};

/// Parameters sampled jointly, by name.
pub type SearchSpace = BTreeMap<String, Distribution>;

/// Chooses parameter values (Optuna's `BaseSampler`).
///
/// # Contract
///
/// - At the start of each trial, the study calls [`Sampler::before_trial`], then
///   [`Sampler::infer_relative_search_space`] and [`Sampler::sample_relative`]: values
///   sampled jointly for the parameters the sampler already knows. Every parameter not
///   covered there is sampled on first use by [`Sampler::sample_independent`].
/// - Values are in the internal representation and must lie in their distribution
///   ([`Distribution::contains`]).
/// - [`Sampler::after_trial`] runs when the trial is told, before its state is stored.
/// - A sampler built with a seed produces the same sequence for the same history.
/// - Samplers see RUNNING trials through the [`StudyView`]; those that support it use
///   them to keep trials asked together apart (TPE's `constant_liar`).
pub trait Sampler: Send {
    /// The parameters to sample jointly in `trial` (empty: none).
    fn infer_relative_search_space(
        &mut self,
        _study: &StudyView<'_>,
        _trial: &FrozenTrial,
    ) -> Result<SearchSpace> {
        Ok(SearchSpace::new())
    }

    /// Joint values for `search_space`, by name (internal representation).
    fn sample_relative(
        &mut self,
        _study: &StudyView<'_>,
        _trial: &FrozenTrial,
        _search_space: &SearchSpace,
    ) -> Result<BTreeMap<String, f64>> {
        Ok(BTreeMap::new())
    }

    /// A value for one parameter (internal representation).
    fn sample_independent(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        name: &str,
        distribution: &Distribution,
    ) -> Result<f64>;

    /// Called when a trial starts, before relative sampling.
    fn before_trial(&mut self, _study: &StudyView<'_>, _trial: &FrozenTrial) -> Result<()> {
        Ok(())
    }

    /// Whether `values` (internal representation, by name, each with its distribution) are
    /// still the values this sampler would choose for those parameters, given the study's
    /// finished trials. The group runner asks it before refilling a group whose shared
    /// values these are (`RefillPolicy::WhilePromising` in saturate-train) and closes the
    /// group when the answer is `Some(false)`. `None` (the default): no opinion, the group
    /// refills up to its limit.
    fn still_promising(
        &mut self,
        _study: &StudyView<'_>,
        _values: &BTreeMap<String, (Distribution, f64)>,
    ) -> Result<Option<bool>> {
        Ok(None)
    }

    /// Called when a trial is told, before its state is stored.
    fn after_trial(
        &mut self,
        _study: &StudyView<'_>,
        _trial: &FrozenTrial,
        _state: TrialState,
        _values: Option<&[f64]>,
    ) -> Result<()> {
        Ok(())
    }
}

/// The search space shared by all COMPLETE trials (Optuna's
/// `IntersectionSearchSpace`): parameters present in every one with the same distribution.
pub fn intersection_search_space(trials: &[Arc<FrozenTrial>]) -> SearchSpace {
    let mut space: Option<SearchSpace> = None;
    for trial in trials.iter().filter(|t| t.state == TrialState::Complete) {
        match &mut space {
            None => {
                space = Some(
                    trial
                        .params
                        .iter()
                        .map(|(k, p)| (k.clone(), p.distribution.clone()))
                        .collect(),
                )
            }
            Some(space) => space.retain(|name, distribution| {
                trial
                    .params
                    .get(name)
                    .is_some_and(|p| p.distribution == *distribution)
            }),
        }
    }
    let mut space = space.unwrap_or_default();
    space.retain(|_, d| !d.single());
    space
}

/// A value drawn uniformly from a distribution (in log space for log distributions,
/// on the grid for stepped ones), in the internal representation.
pub(crate) fn sample_uniform(rng: &mut impl rand::Rng, distribution: &Distribution) -> f64 {
    let unit: f64 = rng.random();
    from_unit(unit, distribution)
}

/// Maps `u` in [0, 1) onto a distribution, uniformly (log-uniformly for log ones).
pub(crate) fn from_unit(u: f64, distribution: &Distribution) -> f64 {
    match distribution {
        Distribution::Float(d) => match d.step {
            Some(step) => {
                let n = ((d.high - d.low) / step).round() + 1.0;
                let k = (u * n).floor().min(n - 1.0);
                (d.low + k * step).min(d.high)
            }
            None if d.log => {
                let (lo, hi) = (d.low.ln(), d.high.ln());
                (lo + u * (hi - lo)).exp().clamp(d.low, d.high)
            }
            None => (d.low + u * (d.high - d.low)).clamp(d.low, d.high),
        },
        Distribution::Int(d) => {
            if d.log {
                let (lo, hi) = ((d.low as f64 - 0.5).ln(), (d.high as f64 + 0.5).ln());
                let x = (lo + u * (hi - lo)).exp().round();
                x.clamp(d.low as f64, d.high as f64)
            } else {
                let n = ((d.high - d.low) / d.step + 1) as f64;
                let k = (u * n).floor().min(n - 1.0);
                d.low as f64 + k * d.step as f64
            }
        }
        Distribution::Categorical(c) => {
            let n = c.choices.len() as f64;
            (u * n).floor().min(n - 1.0)
        }
    }
}

/// A reproducible generator for `Some(seed)`, an OS-seeded one for `None`.
pub(crate) fn seeded_rng(seed: Option<u64>) -> rand::rngs::StdRng {
    use rand::SeedableRng;
    match seed {
        Some(seed) => rand::rngs::StdRng::seed_from_u64(seed),
        None => rand::rngs::StdRng::from_rng(&mut rand::rng()),
    }
}

impl<S: Sampler + ?Sized> Sampler for Box<S> {
    fn infer_relative_search_space(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
    ) -> Result<SearchSpace> {
        (**self).infer_relative_search_space(study, trial)
    }
    fn sample_relative(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        search_space: &SearchSpace,
    ) -> Result<BTreeMap<String, f64>> {
        (**self).sample_relative(study, trial, search_space)
    }
    fn sample_independent(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        name: &str,
        distribution: &Distribution,
    ) -> Result<f64> {
        (**self).sample_independent(study, trial, name, distribution)
    }
    fn before_trial(&mut self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<()> {
        (**self).before_trial(study, trial)
    }
    fn still_promising(
        &mut self,
        study: &StudyView<'_>,
        values: &BTreeMap<String, (Distribution, f64)>,
    ) -> Result<Option<bool>> {
        (**self).still_promising(study, values)
    }
    fn after_trial(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        state: TrialState,
        values: Option<&[f64]>,
    ) -> Result<()> {
        (**self).after_trial(study, trial, state, values)
    }
}

/// The longest string a relative-parameter chunk holds (Optuna's limit for a system
/// attribute value in its RDB storage).
const SYSTEM_ATTR_MAX_LENGTH: usize = 2045;

/// Publishes a trial's relative parameters (internal representation) as JSON split over
/// the system attributes `<key>:0`, `<key>:1`, ..., so that trials asked while it is RUNNING
/// see where it will be (TPE's constant liar, the GP's qLogEI).
pub(crate) fn publish_relative_params(
    study: &StudyView<'_>,
    trial_id: u64,
    key: &str,
    params: &BTreeMap<String, f64>,
) -> Result<()> {
    let text = serde_json::to_string(params).expect("floats serialise");
    let chars: Vec<char> = text.chars().collect();
    for (i, chunk) in chars.chunks(SYSTEM_ATTR_MAX_LENGTH).enumerate() {
        study.set_trial_system_attr(
            trial_id,
            &format!("{key}:{i}"),
            serde_json::Value::String(chunk.iter().collect()),
        )?;
    }
    Ok(())
}

/// The relative parameters `trial` published under `key` ([`publish_relative_params`]);
/// `None` when it published none (or they do not parse).
pub(crate) fn published_relative_params(
    trial: &FrozenTrial,
    key: &str,
) -> Option<BTreeMap<String, f64>> {
    let mut text = String::new();
    let mut i = 0;
    while let Some(serde_json::Value::String(chunk)) = trial.system_attrs.get(&format!("{key}:{i}"))
    {
        text.push_str(chunk);
        i += 1;
    }
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(published)) => Some(
            published
                .into_iter()
                .filter_map(|(k, v)| v.as_f64().map(|x| (k, x)))
                .collect(),
        ),
        _ => None,
    }
}
