//! The study contract.

use std::collections::BTreeMap;
use std::error::Error;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::distributions::ParamValue;
use crate::error::{Result, StudyError};
use crate::trial::{FrozenTrial, StudyDirection, Trial, TrialPruned, TrialState};

/// What an objective returns: one value, or one per objective.
pub trait ObjectiveValues {
    /// The values, in objective order.
    fn into_values(self) -> Vec<f64>;
}

impl ObjectiveValues for f64 {
    fn into_values(self) -> Vec<f64> {
        vec![self]
    }
}
impl ObjectiveValues for Vec<f64> {
    fn into_values(self) -> Vec<f64> {
        self
    }
}
impl<const N: usize> ObjectiveValues for [f64; N] {
    fn into_values(self) -> Vec<f64> {
        self.to_vec()
    }
}

/// The error type objectives return: any error; [`TrialPruned`] prunes the trial.
pub type ObjectiveError = Box<dyn Error + Send + Sync>;

/// Parameters fixed by name for a trial to come (enqueue, `ask_batch`).
pub type FixedParams = BTreeMap<String, ParamValue>;

/// A callback run after each trial of [`Study::optimize_with_callbacks`]; `Break` stops.
pub type Callback<'a> = &'a mut dyn FnMut(&FrozenTrial) -> ControlFlow<()>;

/// An Optuna-style study: ask for trials, tell their results.
///
/// # Contract
///
/// - `ask*` returns RUNNING trials; enqueued (WAITING) trials are handed out first, in order.
/// - `tell*` finishes a trial exactly once; telling a finished trial is
///   [`StudyError::TrialFinished`]. A NaN value fails the trial (the reason is in its
///   `fail_reason` system attribute); ±inf completes it with that value, as in Optuna; a
///   value count that does not match the
///   directions fails the trial and returns [`StudyError::WrongNumberOfValues`].
/// - A pruned trial's value is its last intermediate value (when not NaN; ±inf is kept).
pub trait Study {
    /// The study's name.
    fn name(&self) -> &str;
    /// The storage and the study's id in it, for heartbeats in [`Study::optimize`]
    /// (default: `None`, no heartbeats).
    fn heartbeat_storage(&self) -> Option<(Arc<dyn crate::storage::Storage>, u64)> {
        None
    }
    /// One direction per objective.
    fn directions(&self) -> &[StudyDirection];
    /// Starts trials: one per entry of `fixed`, with those parameters fixed by name (an
    /// empty map fixes nothing and may claim an enqueued trial). Created in one storage
    /// write, so their numbers are contiguous when no enqueued trial is claimed.
    fn ask_batch(&self, fixed: &[FixedParams]) -> Result<Vec<Trial>>;
    /// Finishes a trial with a state; `values` for COMPLETE.
    fn tell_state(
        &self,
        trial: &Trial,
        state: TrialState,
        values: Option<&[f64]>,
        fail_reason: Option<&str>,
    ) -> Result<Arc<FrozenTrial>>;
    /// Adds a WAITING trial whose parameters are fixed; returns its number.
    fn enqueue(&self, params: FixedParams) -> Result<u64>;
    /// Starts the WAITING trials `trial_ids`, in that order, and returns those this call
    /// claimed: a trial another worker claimed first (or that is no longer WAITING) is left
    /// out. For callers that choose which enqueued trials to run together (the group runner
    /// matches them by their shared parameters). When the storage has heartbeats, each
    /// claimed trial's first heartbeat is written with its start
    /// ([`Storage::start_waiting_trial_beating`](crate::storage::Storage::start_waiting_trial_beating)):
    /// the caller must keep beating for it, or other workers fail it as stale.
    fn claim_waiting(&self, trial_ids: &[u64]) -> Result<Vec<Trial>>;
    /// Starts new trials, one per entry of `fixed`, in one storage write, like
    /// [`ask_batch`](Self::ask_batch) but never claiming an enqueued trial, even for an empty
    /// map. When the storage has heartbeats, the new trials carry their first heartbeat from
    /// the same write, as in [`claim_waiting`](Self::claim_waiting).
    fn ask_new(&self, fixed: &[FixedParams]) -> Result<Vec<Trial>>;
    /// The trials in number order, optionally only those in `states`.
    fn trials(&self, states: Option<&[TrialState]>) -> Result<Vec<Arc<FrozenTrial>>>;
    /// Sets a study user attribute.
    fn set_user_attr(&self, key: &str, value: Value) -> Result<()>;
    /// The study's user attributes.
    fn user_attrs(&self) -> Result<BTreeMap<String, Value>>;
    /// Sets a study system attribute.
    fn set_system_attr(&self, key: &str, value: Value) -> Result<()>;
    /// The study's system attributes.
    fn system_attrs(&self) -> Result<BTreeMap<String, Value>>;

    /// Whether the sampler would still choose `values` (user-facing values by name, each with
    /// its distribution) for those parameters now ([`Sampler::still_promising`](crate::samplers::Sampler::still_promising)).
    /// The group runner asks it before refilling a group with these shared values. Default:
    /// `Ok(None)`, no opinion.
    fn shared_values_promising(
        &self,
        _values: &BTreeMap<String, (crate::distributions::Distribution, ParamValue)>,
    ) -> Result<Option<bool>> {
        Ok(None)
    }

    /// Starts one trial.
    fn ask(&self) -> Result<Trial> {
        Ok(self.ask_batch(&[FixedParams::new()])?.remove(0))
    }

    /// Starts `n` trials at once.
    fn ask_many(&self, n: usize) -> Result<Vec<Trial>> {
        self.ask_batch(&vec![FixedParams::new(); n])
    }

    /// Starts one trial with some parameters fixed.
    fn ask_with(&self, fixed: FixedParams) -> Result<Trial> {
        Ok(self.ask_batch(&[fixed])?.remove(0))
    }

    /// Completes a trial with its objective values.
    fn tell(&self, trial: &Trial, values: &[f64]) -> Result<Arc<FrozenTrial>> {
        self.tell_state(trial, TrialState::Complete, Some(values), None)
    }

    /// Marks a trial pruned.
    fn tell_pruned(&self, trial: &Trial) -> Result<Arc<FrozenTrial>> {
        self.tell_state(trial, TrialState::Pruned, None, None)
    }

    /// Marks a trial failed, recording why.
    fn tell_fail(&self, trial: &Trial, reason: &str) -> Result<Arc<FrozenTrial>> {
        self.tell_state(trial, TrialState::Fail, None, Some(reason))
    }

    /// The best COMPLETE trial of a single-objective study. With constraints
    /// ([`Trial::set_constraint`]), the best feasible one, as Optuna 5.0: when no completed
    /// trial is feasible, [`StudyError::NoFeasibleTrial`].
    fn best_trial(&self) -> Result<Arc<FrozenTrial>> {
        let directions = self.directions();
        if directions.len() != 1 {
            return Err(StudyError::MultiObjective {
                operation: "best_trial",
                objectives: directions.len(),
            });
        }
        let direction = directions[0];
        let complete: Vec<_> = self
            .trials(Some(&[TrialState::Complete]))?
            .into_iter()
            .filter(|t| t.value().is_some_and(|v| !v.is_nan()))
            .collect();
        let any_complete = !complete.is_empty();
        complete
            .into_iter()
            .filter(|t| t.is_feasible())
            .min_by(|a, b| {
                let loss = |t: &FrozenTrial| direction.to_loss(t.value().expect("filtered"));
                loss(a).total_cmp(&loss(b))
            })
            .ok_or(if any_complete {
                StudyError::NoFeasibleTrial
            } else {
                StudyError::NoCompletedTrial
            })
    }

    /// The best value of a single-objective study.
    fn best_value(&self) -> Result<f64> {
        Ok(self
            .best_trial()?
            .value()
            .expect("a complete trial has a value"))
    }

    /// The COMPLETE trials on the Pareto front (for one objective: all best trials). When
    /// any trial of the study carries constraints ([`Trial::set_constraint`]), the front of
    /// the feasible trials, as Optuna 5.0 (empty when none is feasible).
    fn best_trials(&self) -> Result<Vec<Arc<FrozenTrial>>> {
        let directions = self.directions().to_vec();
        let losses = |t: &FrozenTrial| -> Vec<f64> {
            let values = t.values.as_deref().unwrap_or(&[]);
            directions
                .iter()
                .zip(values)
                .map(|(d, v)| d.to_loss(*v))
                .collect()
        };
        let all_trials = self.trials(None)?;
        let constrained = all_trials.iter().any(|t| t.is_constrained());
        let complete: Vec<_> = all_trials
            .into_iter()
            .filter(|t| t.state == TrialState::Complete)
            .filter(|t| !constrained || t.is_feasible())
            .filter(|t| {
                t.values
                    .as_ref()
                    .is_some_and(|v| v.len() == directions.len())
            })
            .collect();
        let all: Vec<Vec<f64>> = complete.iter().map(|t| losses(t)).collect();
        Ok(complete
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !all.iter().any(|other| dominates(other, &all[*i])))
            .map(|(_, t)| t)
            .collect())
    }

    /// Runs `objective` on new trials until `n_trials` have run or `timeout` has passed
    /// (whichever comes first; neither: until an error).
    ///
    /// An objective error or panic fails the trial and is returned as
    /// [`StudyError::ObjectiveFailed`]; the study stays usable. [`TrialPruned`] prunes it.
    fn optimize<V, F>(
        &self,
        n_trials: Option<usize>,
        timeout: Option<Duration>,
        objective: F,
    ) -> Result<()>
    where
        Self: Sized,
        V: ObjectiveValues,
        F: FnMut(&mut Trial) -> Result<V, ObjectiveError>,
    {
        self.optimize_with_callbacks(n_trials, timeout, objective, &mut [])
    }

    /// [`Study::optimize`], calling each callback after each finished trial.
    fn optimize_with_callbacks<V, F>(
        &self,
        n_trials: Option<usize>,
        timeout: Option<Duration>,
        mut objective: F,
        callbacks: &mut [Callback<'_>],
    ) -> Result<()>
    where
        Self: Sized,
        V: ObjectiveValues,
        F: FnMut(&mut Trial) -> Result<V, ObjectiveError>,
    {
        let started = Instant::now();
        let mut done = 0;
        while n_trials.is_none_or(|n| done < n) && timeout.is_none_or(|t| started.elapsed() < t) {
            // Heartbeats (Optuna's `_run_trial`): fail dead workers' trials, then beat
            // while the objective runs.
            let heartbeat = self.heartbeat_storage();
            if let Some((storage, study_id)) = &heartbeat {
                crate::storage::fail_stale_trials(&**storage, *study_id)?;
            }
            let mut trial = self.ask()?;
            let beating = match heartbeat {
                Some((storage, _)) => {
                    Some(crate::storage::HeartbeatGuard::start(storage, trial.id())?)
                }
                None => None,
            };
            let outcome = catch_unwind(AssertUnwindSafe(|| objective(&mut trial)));
            drop(beating);
            let frozen = match outcome {
                Ok(Ok(values)) => self.tell(&trial, &values.into_values())?,
                Ok(Err(e)) if TrialPruned::in_chain(&*e) => self.tell_pruned(&trial)?,
                Ok(Err(e)) => return Err(fail_objective(self, &trial, e.to_string())),
                Err(panic) => {
                    let message = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "panic".into());
                    return Err(fail_objective(self, &trial, format!("panicked: {message}")));
                }
            };
            done += 1;
            for callback in callbacks.iter_mut() {
                if callback(&frozen).is_break() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

/// Fails the trial of an objective that errored or panicked; the error to return.
fn fail_objective<S: Study + ?Sized>(study: &S, trial: &Trial, message: String) -> StudyError {
    match study.tell_fail(trial, &message) {
        Ok(_) => StudyError::ObjectiveFailed {
            number: trial.number(),
            message,
        },
        Err(e) => e,
    }
}

/// Whether loss vector `a` Pareto-dominates `b` (all <=, one <).
pub(crate) fn dominates(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y) && a.iter().zip(b).any(|(x, y)| x < y)
}
