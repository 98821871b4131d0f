//! Percentile and median pruning.

use crate::error::{invalid_argument, Result};
use crate::pruners::base::Pruner;
use crate::study::StudyView;
use crate::trial::{FrozenTrial, StudyDirection, TrialState};

/// Prunes a trial whose best intermediate value so far is worse than the given
/// percentile of the COMPLETE trials' values at the same step (Optuna's `PercentilePruner`).
#[derive(Debug, Clone)]
pub struct PercentilePruner {
    percentile: f64,
    n_startup_trials: usize,
    n_warmup_steps: i64,
    interval_steps: i64,
    n_min_trials: usize,
}

/// The median rule: a [`PercentilePruner`] at 50 (Optuna's `MedianPruner`).
#[derive(Debug, Clone)]
pub struct MedianPruner(PercentilePruner);

impl PercentilePruner {
    /// `percentile` in [0, 100]; pruning starts once `n_startup_trials` trials are
    /// COMPLETE and a trial has passed `n_warmup_steps`, then every `interval_steps`, when
    /// at least `n_min_trials` trials reported at the step.
    pub fn new(
        percentile: f64,
        n_startup_trials: usize,
        n_warmup_steps: i64,
        interval_steps: i64,
        n_min_trials: usize,
    ) -> Result<Self> {
        if !(0.0..=100.0).contains(&percentile) {
            return Err(invalid_argument(
                "percentile",
                format!("{percentile} is not in [0, 100]"),
            ));
        }
        check_steps(n_warmup_steps, interval_steps)?;
        if n_min_trials < 1 {
            return Err(invalid_argument(
                "n_min_trials",
                "must be at least 1, got 0",
            ));
        }
        Ok(Self {
            percentile,
            n_startup_trials,
            n_warmup_steps,
            interval_steps,
            n_min_trials,
        })
    }
}

/// The warm-up and interval arguments that several pruners share.
pub(crate) fn check_steps(n_warmup_steps: i64, interval_steps: i64) -> Result<()> {
    if n_warmup_steps < 0 {
        return Err(invalid_argument(
            "n_warmup_steps",
            format!("must be 0 or more, got {n_warmup_steps}"),
        ));
    }
    if interval_steps < 1 {
        return Err(invalid_argument(
            "interval_steps",
            format!("must be at least 1, got {interval_steps}"),
        ));
    }
    Ok(())
}

impl MedianPruner {
    /// See [`PercentilePruner::new`].
    pub fn new(
        n_startup_trials: usize,
        n_warmup_steps: i64,
        interval_steps: i64,
        n_min_trials: usize,
    ) -> Result<Self> {
        PercentilePruner::new(
            50.0,
            n_startup_trials,
            n_warmup_steps,
            interval_steps,
            n_min_trials,
        )
        .map(Self)
    }
}

impl Default for MedianPruner {
    /// Optuna's defaults: 5 startup trials, no warm-up, every step, 1 trial minimum.
    fn default() -> Self {
        Self::new(5, 0, 1, 1).expect("valid defaults")
    }
}

/// Whether `step` is the first reported step at or after the latest pruning point.
pub(crate) fn is_first_in_interval_step(
    step: i64,
    trial: &FrozenTrial,
    n_warmup_steps: i64,
    interval_steps: i64,
) -> bool {
    let nearest_lower =
        (step - n_warmup_steps).div_euclid(interval_steps) * interval_steps + n_warmup_steps;
    let second_last = trial
        .intermediate_values
        .keys()
        .copied()
        .filter(|s| *s != step)
        .fold(-1, i64::max);
    second_last < nearest_lower
}

/// The best intermediate value over steps, ignoring NaN (NaN if all are NaN).
pub(crate) fn best_intermediate(trial: &FrozenTrial, direction: StudyDirection) -> f64 {
    let values = trial.intermediate_values.values().filter(|v| !v.is_nan());
    match direction {
        StudyDirection::Maximize => values.fold(f64::NAN, |a, b| a.max(*b)),
        _ => values.fold(f64::NAN, |a, b| a.min(*b)),
    }
}

/// numpy's `nanpercentile` with linear interpolation.
pub(crate) fn nan_percentile(values: &[f64], percentile: f64) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let position = percentile / 100.0 * (v.len() - 1) as f64;
    let (lo, hi) = (position.floor() as usize, position.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (position - lo as f64)
}

impl Pruner for PercentilePruner {
    fn prune(&self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<bool> {
        let completed = study.trials(Some(&[TrialState::Complete]))?;
        if completed.is_empty() || completed.len() < self.n_startup_trials {
            return Ok(false);
        }
        let Some((step, _)) = trial.last_step() else {
            return Ok(false);
        };
        if step < self.n_warmup_steps
            || !is_first_in_interval_step(step, trial, self.n_warmup_steps, self.interval_steps)
        {
            return Ok(false);
        }
        let direction = study.direction();
        let best = best_intermediate(trial, direction);
        if best.is_nan() {
            return Ok(true);
        }
        let at_step: Vec<f64> = completed
            .iter()
            .filter_map(|t| t.intermediate_values.get(&step).copied())
            .collect();
        if at_step.len() < self.n_min_trials {
            return Ok(false);
        }
        let percentile = match direction {
            StudyDirection::Maximize => 100.0 - self.percentile,
            _ => self.percentile,
        };
        let threshold = nan_percentile(&at_step, percentile);
        if threshold.is_nan() {
            return Ok(false);
        }
        Ok(match direction {
            StudyDirection::Maximize => best < threshold,
            _ => best > threshold,
        })
    }
}

impl Pruner for MedianPruner {
    fn prune(&self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<bool> {
        self.0.prune(study, trial)
    }
}
