//! Percentile and median pruning.

use crate::error::{invalid_argument, Result};
use crate::pruners::base::Pruner;
use crate::study::StudyView;
use crate::trial::{FrozenTrial, StudyDirection, TrialState};

/// Prunes a trial whose best intermediate value so far is worse than a percentile of the
/// COMPLETE trials' values at the same step (Optuna's `PercentilePruner`).
///
/// # Rule
///
/// At a reported step `s` (the first one at or after each pruning point
/// `n_warmup_steps + k * interval_steps`), once `n_startup_trials` trials are COMPLETE and
/// at least `n_min_trials` of them reported at `s`: prune when the trial's best
/// intermediate value is worse than the `percentile`-th of theirs at `s` (for a maximised
/// study, better means larger and the percentile is taken from the top).
///
/// # NaN
///
/// NaN intermediate values are ignored when taking the best value and the percentile; a
/// trial whose values are all NaN is pruned; no pruning when the other trials' values at
/// `s` are all NaN.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// // Prune trials that are in the worst quarter at a step, after 5 complete trials.
/// let pruner = PercentilePrunerConfig::new(75.0).with_n_warmup_steps(2).init()?;
/// let study = StudyConfig::new().with_pruner(pruner).init()?;
/// # let _ = study;
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PercentilePruner {
    config: PercentilePrunerConfig,
}

/// Configures a [`PercentilePruner`]; the defaults are Optuna's.
#[derive(Debug, Clone, PartialEq)]
pub struct PercentilePrunerConfig {
    /// The percentile of the other trials' values, in [0, 100] (required).
    pub percentile: f64,
    /// Pruning starts once this many trials are COMPLETE (default 5).
    pub n_startup_trials: usize,
    /// Steps of each trial that are never pruned (default 0; at least 0).
    pub n_warmup_steps: i64,
    /// Steps between pruning points after the warm-up (default 1; at least 1).
    pub interval_steps: i64,
    /// Least number of trials that reported at the step (default 1; at least 1).
    pub n_min_trials: usize,
}

impl PercentilePrunerConfig {
    /// A config for `percentile`, with Optuna's defaults for the rest.
    pub fn new(percentile: f64) -> Self {
        Self {
            percentile,
            n_startup_trials: 5,
            n_warmup_steps: 0,
            interval_steps: 1,
            n_min_trials: 1,
        }
    }
    /// Sets [`Self::n_startup_trials`].
    pub fn with_n_startup_trials(mut self, n_startup_trials: usize) -> Self {
        self.n_startup_trials = n_startup_trials;
        self
    }
    /// Sets [`Self::n_warmup_steps`].
    pub fn with_n_warmup_steps(mut self, n_warmup_steps: i64) -> Self {
        self.n_warmup_steps = n_warmup_steps;
        self
    }
    /// Sets [`Self::interval_steps`].
    pub fn with_interval_steps(mut self, interval_steps: i64) -> Self {
        self.interval_steps = interval_steps;
        self
    }
    /// Sets [`Self::n_min_trials`].
    pub fn with_n_min_trials(mut self, n_min_trials: usize) -> Self {
        self.n_min_trials = n_min_trials;
        self
    }
    /// The pruner; [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument)
    /// names the first argument out of its range.
    pub fn init(&self) -> Result<PercentilePruner> {
        if !(0.0..=100.0).contains(&self.percentile) {
            return Err(invalid_argument(
                "percentile",
                format!("{} is not in [0, 100]", self.percentile),
            ));
        }
        check_steps(self.n_warmup_steps, self.interval_steps)?;
        if self.n_min_trials < 1 {
            return Err(invalid_argument(
                "n_min_trials",
                "must be at least 1, got 0",
            ));
        }
        Ok(PercentilePruner {
            config: self.clone(),
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

/// The median rule: a [`PercentilePruner`] at 50 (Optuna's `MedianPruner`).
///
/// # Rule
///
/// At a reported step `s` (the first one at or after each pruning point
/// `n_warmup_steps + k * interval_steps`), once `n_startup_trials` trials are COMPLETE and
/// at least `n_min_trials` of them reported at `s`: prune when the trial's best
/// intermediate value is worse than the median of theirs at `s`.
///
/// # NaN
///
/// As [`PercentilePruner`]: NaN values are ignored; a trial whose values are all NaN is
/// pruned.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// let pruner = MedianPrunerConfig::new()
///     .with_n_startup_trials(4)
///     .with_n_warmup_steps(2)
///     .init()?;
/// let study = StudyConfig::new().with_pruner(pruner).init()?;
/// let mut trial = study.ask()?;
/// trial.report(0, 0.5)?;
/// // No trial is complete yet: nothing is pruned.
/// assert!(!trial.should_prune()?);
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug, Clone)]
pub struct MedianPruner(PercentilePruner);

/// Configures a [`MedianPruner`]; the defaults are Optuna's (5 startup trials, no
/// warm-up, every step, 1 trial minimum).
#[derive(Debug, Clone, PartialEq)]
pub struct MedianPrunerConfig {
    /// Pruning starts once this many trials are COMPLETE (default 5).
    pub n_startup_trials: usize,
    /// Steps of each trial that are never pruned (default 0; at least 0).
    pub n_warmup_steps: i64,
    /// Steps between pruning points after the warm-up (default 1; at least 1).
    pub interval_steps: i64,
    /// Least number of trials that reported at the step (default 1; at least 1).
    pub n_min_trials: usize,
}

impl Default for MedianPrunerConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl MedianPrunerConfig {
    /// Optuna's defaults.
    pub fn new() -> Self {
        Self {
            n_startup_trials: 5,
            n_warmup_steps: 0,
            interval_steps: 1,
            n_min_trials: 1,
        }
    }
    /// Sets [`Self::n_startup_trials`].
    pub fn with_n_startup_trials(mut self, n_startup_trials: usize) -> Self {
        self.n_startup_trials = n_startup_trials;
        self
    }
    /// Sets [`Self::n_warmup_steps`].
    pub fn with_n_warmup_steps(mut self, n_warmup_steps: i64) -> Self {
        self.n_warmup_steps = n_warmup_steps;
        self
    }
    /// Sets [`Self::interval_steps`].
    pub fn with_interval_steps(mut self, interval_steps: i64) -> Self {
        self.interval_steps = interval_steps;
        self
    }
    /// Sets [`Self::n_min_trials`].
    pub fn with_n_min_trials(mut self, n_min_trials: usize) -> Self {
        self.n_min_trials = n_min_trials;
        self
    }
    /// The pruner; [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument)
    /// names the first argument out of its range.
    pub fn init(&self) -> Result<MedianPruner> {
        PercentilePrunerConfig {
            percentile: 50.0,
            n_startup_trials: self.n_startup_trials,
            n_warmup_steps: self.n_warmup_steps,
            interval_steps: self.interval_steps,
            n_min_trials: self.n_min_trials,
        }
        .init()
        .map(MedianPruner)
    }
}

impl Default for MedianPruner {
    /// Optuna's defaults ([`MedianPrunerConfig::new`]).
    fn default() -> Self {
        MedianPrunerConfig::new().init().expect("valid defaults")
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
        if completed.is_empty() || completed.len() < self.config.n_startup_trials {
            return Ok(false);
        }
        let Some((step, _)) = trial.last_step() else {
            return Ok(false);
        };
        if step < self.config.n_warmup_steps
            || !is_first_in_interval_step(
                step,
                trial,
                self.config.n_warmup_steps,
                self.config.interval_steps,
            )
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
        if at_step.len() < self.config.n_min_trials {
            return Ok(false);
        }
        let percentile = match direction {
            StudyDirection::Maximize => 100.0 - self.config.percentile,
            _ => self.config.percentile,
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
