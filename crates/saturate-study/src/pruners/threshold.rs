//! Pruning on fixed bounds.

use crate::error::{invalid_argument, Result};
use crate::pruners::base::Pruner;
use crate::pruners::percentile::{check_steps, is_first_in_interval_step};
use crate::study::StudyView;
use crate::trial::FrozenTrial;

/// Prunes when the latest intermediate value is NaN or leaves `[lower, upper]`
/// (Optuna's `ThresholdPruner`).
#[derive(Debug, Clone)]
pub struct ThresholdPruner {
    lower: Option<f64>,
    upper: Option<f64>,
    n_warmup_steps: i64,
    interval_steps: i64,
}

impl ThresholdPruner {
    /// At least one bound; `lower <= upper`.
    pub fn new(
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
