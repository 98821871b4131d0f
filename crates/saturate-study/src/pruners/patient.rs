//! Pruning after a lack of progress.

use crate::error::{invalid_argument, Result};
use crate::pruners::base::Pruner;
use crate::study::StudyView;
use crate::trial::{FrozenTrial, StudyDirection};

/// Waits `patience` steps without an improvement of at least `min_delta` before asking
/// the wrapped pruner (or pruning, without one) — Optuna's `PatientPruner`.
///
/// # Rule
///
/// With the intermediate values in step order, the trial has stalled when the best of the
/// last `patience + 1` values is not better than the best before them by `min_delta`.
///
/// # NaN
///
/// NaN values are ignored when taking each side's best; a side with only NaN values
/// never shows a stall.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// let pruner = PatientPrunerConfig::new(3)
///     .with_wrapped(Some(Box::new(MedianPruner::default())))
///     .init()?;
/// let study = StudyConfig::new().with_pruner(pruner).init()?;
/// # let _ = study;
/// # Ok::<(), StudyError>(())
/// ```
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
    fn new(wrapped: Option<Box<dyn Pruner>>, patience: usize, min_delta: f64) -> Result<Self> {
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

/// Configures a [`PatientPruner`]; the defaults are Optuna's (no wrapped pruner,
/// `min_delta` 0).
pub struct PatientPrunerConfig {
    /// The pruner asked once the trial has stalled; `None`: prune on a stall (default).
    pub wrapped: Option<Box<dyn Pruner>>,
    /// Steps without improvement tolerated (required).
    pub patience: usize,
    /// Least change that counts as an improvement (default 0; at least 0).
    pub min_delta: f64,
}

impl std::fmt::Debug for PatientPrunerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatientPrunerConfig")
            .field("wrapped", &self.wrapped.is_some())
            .field("patience", &self.patience)
            .field("min_delta", &self.min_delta)
            .finish()
    }
}

impl PatientPrunerConfig {
    /// A config for `patience` steps, with Optuna's defaults for the rest.
    pub fn new(patience: usize) -> Self {
        Self {
            wrapped: None,
            patience,
            min_delta: 0.0,
        }
    }
    /// Sets [`Self::wrapped`].
    pub fn with_wrapped(mut self, wrapped: Option<Box<dyn Pruner>>) -> Self {
        self.wrapped = wrapped;
        self
    }
    /// Sets [`Self::min_delta`].
    pub fn with_min_delta(mut self, min_delta: f64) -> Self {
        self.min_delta = min_delta;
        self
    }
    /// The pruner (it takes the wrapped pruner over);
    /// [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument) names the
    /// argument out of its range.
    pub fn init(self) -> Result<PatientPruner> {
        PatientPruner::new(self.wrapped, self.patience, self.min_delta)
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
