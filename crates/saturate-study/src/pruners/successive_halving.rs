//! Asynchronous successive halving.

use std::sync::Mutex;

use serde_json::Value;

use crate::error::{invalid_argument, Result};
use crate::pruners::base::Pruner;
use crate::study::StudyView;
use crate::trial::{FrozenTrial, StudyDirection, TrialState};

/// ASHA, stopping variant (Li et al., "A System for Massively Parallel Hyperparameter
/// Tuning", MLSys 2020), as Optuna's `SuccessiveHalvingPruner` implements it.
///
/// Rung k is reached at step `min_resource · η^(min_early_stopping_rate + k)`. A trial
/// reaching a rung records its value in system attribute `completed_rung_<k>` and
/// continues only if it is in the top 1/η of the values recorded at that rung (for the
/// first η−1 values: only if it is the best so far), and only once more than
/// `bootstrap_count` values are there.
///
/// # NaN
///
/// A trial whose value at a rung is NaN is pruned there.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// let pruner = SuccessiveHalvingPrunerConfig::new()
///     .with_min_resource(Some(1))
///     .with_reduction_factor(3)
///     .init()?;
/// let study = StudyConfig::new().with_pruner(pruner).init()?;
/// # let _ = study;
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug)]
pub struct SuccessiveHalvingPruner {
    /// `None` = "auto", fixed at the first decision that can make it.
    min_resource: Mutex<Option<i64>>,
    reduction_factor: i64,
    min_early_stopping_rate: u32,
    bootstrap_count: usize,
}

impl Default for SuccessiveHalvingPruner {
    /// Optuna's defaults: `min_resource="auto"`, η = 4, rate 0, no bootstrap.
    fn default() -> Self {
        SuccessiveHalvingPrunerConfig::new()
            .init()
            .expect("valid defaults")
    }
}

impl SuccessiveHalvingPruner {
    /// See [`SuccessiveHalvingPrunerConfig`].
    pub(crate) fn new(
        min_resource: Option<i64>,
        reduction_factor: i64,
        min_early_stopping_rate: u32,
        bootstrap_count: usize,
    ) -> Result<Self> {
        if let Some(min) = min_resource.filter(|min| *min < 1) {
            return Err(invalid_argument(
                "min_resource",
                format!("must be at least 1, got {min}"),
            ));
        }
        if reduction_factor < 2 {
            return Err(invalid_argument(
                "reduction_factor",
                format!("must be at least 2, got {reduction_factor}"),
            ));
        }
        if bootstrap_count > 0 && min_resource.is_none() {
            return Err(invalid_argument(
                "bootstrap_count",
                format!("{bootstrap_count} needs an explicit min_resource, not None (\"auto\")"),
            ));
        }
        Ok(Self {
            min_resource: Mutex::new(min_resource),
            reduction_factor,
            min_early_stopping_rate,
            bootstrap_count,
        })
    }
}

/// Configures a [`SuccessiveHalvingPruner`]; the defaults are Optuna's (`"auto"`, η = 4, rate 0, no bootstrap).
#[derive(Debug, Clone, PartialEq)]
pub struct SuccessiveHalvingPrunerConfig {
    /// Steps before the first rung; `None` is Optuna's `"auto"`: the largest last step of the COMPLETE trials / 100 (at least 1), once one exists (default `None`).
    pub min_resource: Option<i64>,
    /// η: a trial continues when it is in the top 1/η at a rung (default 4; at least 2).
    pub reduction_factor: i64,
    /// Rung 0 is at `min_resource · η^min_early_stopping_rate` (default 0).
    pub min_early_stopping_rate: u32,
    /// Values a rung needs before it promotes any trial (default 0; needs an explicit `min_resource`).
    pub bootstrap_count: usize,
}

impl Default for SuccessiveHalvingPrunerConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl SuccessiveHalvingPrunerConfig {
    /// Optuna's defaults.
    pub fn new() -> Self {
        Self {
            min_resource: None,
            reduction_factor: 4,
            min_early_stopping_rate: 0,
            bootstrap_count: 0,
        }
    }
    /// Sets [`Self::min_resource`].
    pub fn with_min_resource(mut self, min_resource: Option<i64>) -> Self {
        self.min_resource = min_resource;
        self
    }
    /// Sets [`Self::reduction_factor`].
    pub fn with_reduction_factor(mut self, reduction_factor: i64) -> Self {
        self.reduction_factor = reduction_factor;
        self
    }
    /// Sets [`Self::min_early_stopping_rate`].
    pub fn with_min_early_stopping_rate(mut self, min_early_stopping_rate: u32) -> Self {
        self.min_early_stopping_rate = min_early_stopping_rate;
        self
    }
    /// Sets [`Self::bootstrap_count`].
    pub fn with_bootstrap_count(mut self, bootstrap_count: usize) -> Self {
        self.bootstrap_count = bootstrap_count;
        self
    }
    /// The pruner; [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument)
    /// names the first argument out of its range.
    pub fn init(&self) -> Result<SuccessiveHalvingPruner> {
        SuccessiveHalvingPruner::new(
            self.min_resource,
            self.reduction_factor,
            self.min_early_stopping_rate,
            self.bootstrap_count,
        )
    }
}

fn rung_key(rung: usize) -> String {
    format!("completed_rung_{rung}")
}

fn estimate_min_resource(trials: &[std::sync::Arc<FrozenTrial>]) -> Option<i64> {
    trials
        .iter()
        .filter(|t| t.state == TrialState::Complete)
        .filter_map(|t| t.last_step().map(|(s, _)| s))
        .max()
        .map(|last| (last / 100).max(1))
}

fn is_promotable(value: f64, mut competing: Vec<f64>, eta: i64, direction: StudyDirection) -> bool {
    let index = (competing.len() as i64 / eta - 1).max(0) as usize;
    competing.sort_by(f64::total_cmp);
    match direction {
        StudyDirection::Maximize => value >= competing[competing.len() - 1 - index],
        _ => value <= competing[index],
    }
}

impl Pruner for SuccessiveHalvingPruner {
    fn prune(&self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<bool> {
        let Some((step, value)) = trial.last_step() else {
            return Ok(false);
        };
        let mut rung = trial
            .system_attrs
            .keys()
            .filter(|k| k.starts_with("completed_rung_"))
            .count();
        let mut trials = None;
        loop {
            let min_resource = {
                let mut guard = self.min_resource.lock().unwrap_or_else(|e| e.into_inner());
                if guard.is_none() {
                    let all = match &trials {
                        Some(t) => t,
                        None => trials.insert(study.trials(None)?),
                    };
                    *guard = estimate_min_resource(all);
                }
                match *guard {
                    Some(r) => r,
                    None => return Ok(false),
                }
            };
            let exponent = self.min_early_stopping_rate + rung as u32;
            let promotion_step =
                min_resource.saturating_mul(self.reduction_factor.saturating_pow(exponent));
            if step < promotion_step {
                return Ok(false);
            }
            if value.is_nan() {
                return Ok(true);
            }
            let all = match &trials {
                Some(t) => t,
                None => trials.insert(study.trials(None)?),
            };
            let key = rung_key(rung);
            study.set_trial_system_attr(trial.trial_id, &key, Value::from(value))?;
            let mut competing: Vec<f64> = all
                .iter()
                .filter_map(|t| t.system_attrs.get(&key).and_then(Value::as_f64))
                .collect();
            competing.push(value);
            if competing.len() <= self.bootstrap_count {
                return Ok(true);
            }
            if !is_promotable(value, competing, self.reduction_factor, study.direction()) {
                return Ok(true);
            }
            rung += 1;
        }
    }
}
