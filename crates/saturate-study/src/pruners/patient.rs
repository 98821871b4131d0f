//! Pruning after a lack of progress.

use crate::error::{invalid_argument, Result};
use crate::pruners::base::Pruner;
use crate::study::StudyView;
use crate::trial::{FrozenTrial, StudyDirection};

/// Waits `patience` steps without an improvement of at least `min_delta` before asking
/// the wrapped pruner (or pruning, without one) — Optuna's `PatientPruner`.
pub struct PatientPruner {
    wrapped: Option<Box<dyn Pruner>>,
    patience: usize,
    min_delta: f64,
}

impl std::fmt::Debug for PatientPruner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatientPruner")
            .field("wrapped", &self.wrapped.is_some())
            .field("patience", &self.patience)
            .field("min_delta", &self.min_delta)
            .finish()
    }
}

impl PatientPruner {
    /// `min_delta >= 0`.
    pub fn new(wrapped: Option<Box<dyn Pruner>>, patience: usize, min_delta: f64) -> Result<Self> {
        if min_delta.is_nan() || min_delta < 0.0 {
            return Err(invalid_argument(
                "min_delta",
                format!("must be 0 or more, got {min_delta}"),
            ));
        }
        Ok(Self {
            wrapped,
            patience,
            min_delta,
        })
    }
}

impl Pruner for PatientPruner {
    fn prune(&self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<bool> {
        let values: Vec<f64> = trial.intermediate_values.values().copied().collect();
        if values.len() <= self.patience + 1 {
            return Ok(false);
        }
        let split = values.len() - self.patience - 1;
        let (before, after) = values.split_at(split);
        let nan_min = |v: &[f64]| {
            v.iter()
                .copied()
                .filter(|x| !x.is_nan())
                .fold(f64::NAN, f64::min)
        };
        let nan_max = |v: &[f64]| {
            v.iter()
                .copied()
                .filter(|x| !x.is_nan())
                .fold(f64::NAN, f64::max)
        };
        let stalled = match study.direction() {
            StudyDirection::Maximize => nan_max(before) - self.min_delta > nan_max(after),
            _ => nan_min(before) + self.min_delta < nan_min(after),
        };
        match (&self.wrapped, stalled) {
            (_, false) => Ok(false),
            (Some(wrapped), true) => wrapped.prune(study, trial),
            (None, true) => Ok(true),
        }
    }
}
