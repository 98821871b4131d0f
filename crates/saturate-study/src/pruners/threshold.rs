//! Pruning on fixed bounds.

use crate::error::{invalid_argument, Result};
use crate::pruners::base::Pruner;
use crate::pruners::percentile::{check_steps, is_first_in_interval_step};
use crate::study::StudyView;
use crate::trial::FrozenTrial;

/// Prunes when the latest intermediate value is NaN or leaves `[lower, upper]`
/// (Optuna's `ThresholdPruner`), checked at the first reported step at or after each
/// pruning point `n_warmup_steps + k * interval_steps`.
///
/// # NaN
///
/// A NaN intermediate value is pruned (past the warm-up).
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// // Stop trials whose loss diverges above 10.
/// let pruner = ThresholdPrunerConfig::new().with_upper(Some(10.0)).init()?;
/// let study = StudyConfig::new().with_pruner(pruner).init()?;
/// let mut trial = study.ask()?;
/// trial.report(0, 12.0)?;
/// assert!(trial.should_prune()?);
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ThresholdPruner {
    lower: Option<f64>,
    upper: Option<f64>,
    n_warmup_steps: i64,
    interval_steps: i64,
}

impl ThresholdPruner {
    /// See [`ThresholdPrunerConfig`].
    fn new(
        lower: Option<f64>,
        upper: Option<f64>,
        n_warmup_steps: i64,
        interval_steps: i64,
    ) -> Result<Self> {
        if lower.is_none() && upper.is_none() {
            return Err(invalid_argument(
                "lower, upper",
                "both are None; give a lower or an upper bound",
            ));
        }
        if let (Some(l), Some(u)) = (lower, upper) {
            if l > u {
                return Err(invalid_argument(
                    "lower, upper",
                    format!("lower {l} > upper {u}"),
                ));
            }
        }
        check_steps(n_warmup_steps, interval_steps)?;
        Ok(Self {
            lower,
            upper,
            n_warmup_steps,
            interval_steps,
        })
    }
}

/// Configures a [`ThresholdPruner`]; the defaults are Optuna's (no bound, no warm-up, every step; give at least one bound, `lower <= upper`).
#[derive(Debug, Clone, PartialEq)]
pub struct ThresholdPrunerConfig {
    /// Prune below this value (default none).
    pub lower: Option<f64>,
    /// Prune above this value (default none).
    pub upper: Option<f64>,
    /// Steps of each trial that are never pruned (default 0; at least 0).
    pub n_warmup_steps: i64,
    /// Steps between pruning points after the warm-up (default 1; at least 1).
    pub interval_steps: i64,
}

impl Default for ThresholdPrunerConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl ThresholdPrunerConfig {
    /// Optuna's defaults.
    pub fn new() -> Self {
        Self {
            lower: None,
            upper: None,
            n_warmup_steps: 0,
            interval_steps: 1,
        }
    }
    /// Sets [`Self::lower`].
    pub fn with_lower(mut self, lower: Option<f64>) -> Self {
        self.lower = lower;
        self
    }
    /// Sets [`Self::upper`].
    pub fn with_upper(mut self, upper: Option<f64>) -> Self {
        self.upper = upper;
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
    /// The pruner; [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument)
    /// names the first argument out of its range.
    pub fn init(&self) -> Result<ThresholdPruner> {
        ThresholdPruner::new(
            self.lower,
            self.upper,
            self.n_warmup_steps,
            self.interval_steps,
        )
    }
}

impl Pruner for ThresholdPruner {
    fn prune(&self, _study: &StudyView<'_>, trial: &FrozenTrial) -> Result<bool> {
        let Some((step, value)) = trial.last_step() else {
            return Ok(false);
        };
        if step < self.n_warmup_steps
            || !is_first_in_interval_step(step, trial, self.n_warmup_steps, self.interval_steps)
        {
            return Ok(false);
        }
        Ok(value.is_nan()
            || self.lower.is_some_and(|l| value < l)
            || self.upper.is_some_and(|u| value > u))
    }
}
