//! Heartbeats (Optuna's `_heartbeat.py`): a worker running a trial records a heartbeat
//! every `heartbeat_interval`; a RUNNING trial whose last heartbeat is older than the grace
//! period belongs to a dead worker, and the next worker to start a trial marks it FAIL
//! ([`fail_stale_trials`]) and hands it to the stale-trial callback (e.g.
//! [`RetryFailedTrialCallback`], which enqueues a copy).

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::{invalid_argument, Result, StudyError};
use crate::storage::Storage;
use crate::trial::{FrozenTrial, TrialState};

/// Called with `(storage, study_id, failed trial)` for each trial that
/// [`fail_stale_trials`] marked FAIL (Optuna's `heartbeat_stale_trial_callback`).
pub type StaleTrialCallback =
    Arc<dyn Fn(&dyn Storage, u64, &FrozenTrial) -> Result<()> + Send + Sync>;

/// Heartbeat settings of a storage.
#[derive(Clone)]
pub struct Heartbeat {
    interval: Duration,
    grace_period: Duration,
    callback: Option<StaleTrialCallback>,
}

impl std::fmt::Debug for Heartbeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Heartbeat")
            .field("interval", &self.interval)
            .field("grace_period", &self.grace_period)
            .field("callback", &self.callback.is_some())
            .finish()
    }
}

impl Heartbeat {
    /// `interval` between heartbeats; a trial is stale after `grace_period` without one
    /// (Optuna's default: twice the interval).
    ///
    /// # Errors
    /// [`StudyError::InvalidArgument`] for a zero interval or grace period (Optuna: "should
    /// be a positive integer").
    pub fn new(
        interval: Duration,
        grace_period: Option<Duration>,
        callback: Option<StaleTrialCallback>,
    ) -> Result<Self> {
        if interval.is_zero() {
            return Err(invalid_argument("heartbeat_interval", "must be positive"));
        }
        let grace_period = grace_period.unwrap_or(interval * 2);
        if grace_period.is_zero() {
            return Err(invalid_argument("grace_period", "must be positive"));
        }
        Ok(Self {
            interval,
            grace_period,
            callback,
        })
    }

    /// Time between two heartbeats of a running trial.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Time without a heartbeat after which a RUNNING trial is stale.
    pub fn grace_period(&self) -> Duration {
        self.grace_period
    }

    /// The stale-trial callback.
    pub fn callback(&self) -> Option<&StaleTrialCallback> {
        self.callback.as_ref()
    }
}

/// Marks the study's stale RUNNING trials FAIL (those another worker did not fail first)
/// and calls the storage's stale-trial callback on each; returns their ids. Does nothing
/// when the storage has no heartbeat (Optuna's `fail_stale_trials`).
pub fn fail_stale_trials(storage: &dyn Storage, study_id: u64) -> Result<Vec<u64>> {
    let Some(heartbeat) = storage.heartbeat() else {
        return Ok(Vec::new());
    };
    let mut failed = Vec::new();
    for trial_id in storage.stale_trial_ids(study_id)? {
        match storage.set_trial_state_values(trial_id, TrialState::Fail, None) {
            Ok(true) => failed.push(trial_id),
            Ok(false) | Err(StudyError::TrialFinished { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    if let Some(callback) = heartbeat.callback() {
        for &trial_id in &failed {
            let trial = storage.get_trial(trial_id)?;
            callback(storage, study_id, &trial)?;
        }
    }
    Ok(failed)
}

/// Optuna's `RetryFailedTrialCallback` (`RetryHeartbeatStaleTrialCallback` in 4.9+):
/// enqueues a WAITING copy of a stale trial (its parameters, user attributes and system
/// attributes, plus `failed_trial` = the first failed number and `retry_history`), up to
/// `max_retry` times per original trial (`None`: no limit).
#[derive(Debug, Clone, Copy, Default)]
pub struct RetryFailedTrialCallback {
    /// Retries per original trial (`None`: unlimited).
    pub max_retry: Option<usize>,
    /// Copy the failed trial's intermediate values too.
    pub inherit_intermediate_values: bool,
}

impl RetryFailedTrialCallback {
    /// The callback as a [`StaleTrialCallback`].
    pub fn into_callback(self) -> StaleTrialCallback {
        Arc::new(move |storage, study_id, trial| self.retry(storage, study_id, trial))
    }

    /// Enqueues the retry of `trial` (or not, past `max_retry`).
    pub fn retry(&self, storage: &dyn Storage, study_id: u64, trial: &FrozenTrial) -> Result<()> {
        let mut system_attrs = trial.system_attrs.clone();
        // The dead worker's last heartbeat (journal storages) must not make the copy stale.
        system_attrs.remove(crate::storage::replay::HEARTBEAT_ATTR);
        system_attrs
            .entry("failed_trial".into())
            .or_insert(json!(trial.number));
        let history = system_attrs
            .entry("retry_history".into())
            .or_insert(json!([]));
        if !history.is_array() {
            *history = json!([]);
        }
        if let Value::Array(items) = history {
            items.push(json!(trial.number));
            if self.max_retry.is_some_and(|max| max < items.len()) {
                return Ok(());
            }
        }
        let mut copy = FrozenTrial::new(0, 0, TrialState::Waiting);
        copy.params = trial.params.clone();
        copy.user_attrs = trial.user_attrs.clone();
        copy.system_attrs = system_attrs;
        if self.inherit_intermediate_values {
            copy.intermediate_values = trial.intermediate_values.clone();
        }
        storage.create_new_trial(study_id, Some(copy)).map(drop)
    }

    /// The number of the original trial `trial` retries (Optuna's `retried_trial_number`).
    pub fn retried_trial_number(trial: &FrozenTrial) -> Option<u64> {
        trial
            .system_attrs
            .get("failed_trial")
            .and_then(Value::as_u64)
    }
}

/// Records a trial's heartbeat every interval on a thread until dropped (Optuna's
/// `HeartbeatThread`); a no-op when the storage has no heartbeat.
pub struct HeartbeatGuard {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl HeartbeatGuard {
    /// Starts recording `trial_id`'s heartbeat (the first one before returning).
    pub fn start(storage: Arc<dyn Storage>, trial_id: u64) -> Result<Self> {
        let Some(interval) = storage.heartbeat().map(Heartbeat::interval) else {
            return Ok(Self {
                stop: None,
                thread: None,
            });
        };
        storage.record_heartbeat(trial_id)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || loop {
            match stopped.recv_timeout(interval) {
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = storage.record_heartbeat(trial_id) {
                        log::warn!("heartbeat of trial {trial_id} not recorded: {e}");
                    }
                }
                _ => return,
            }
        });
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for HeartbeatGuard {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
