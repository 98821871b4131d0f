//! The storage contract.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use serde_json::Value;

use crate::distributions::Distribution;
use crate::error::Result;
use crate::trial::{FrozenTrial, StudyDirection, TrialState};

/// Where studies and trials live (Optuna's `BaseStorage`).
///
/// # Contract
///
/// - Implementations are shared between threads (`Send + Sync`); every method takes `&self`.
/// - Ids: study ids and trial ids are assigned by the storage; a trial's `number` is its
///   index in its study. Ids are never reused, even after a study is deleted (one
///   exception: [`RdbStorage`](crate::storage::RdbStorage) on SQLite, whose Optuna tables
///   hand the newest deleted id out again, as Python Optuna's do).
/// - Heartbeats (optional): a storage that has them returns its settings from
///   [`Storage::heartbeat`] and implements [`Storage::record_heartbeat`] and
///   [`Storage::stale_trial_ids`].
/// - Finished trials (COMPLETE, PRUNED, FAIL) are immutable: every write to one returns
///   [`StudyError::TrialFinished`](crate::StudyError::TrialFinished).
/// - A RUNNING state may only be set on a WAITING trial; when another worker claimed it
///   first, [`Storage::set_trial_state_values`] returns `Ok(false)` and changes nothing.
/// - After a write returns, every read through the same storage object sees it; other
///   processes sharing the backend see it after their next read.
pub trait Storage: Send + Sync + Debug {
    /// Creates a study; [`StudyError::DuplicateStudy`](crate::StudyError::DuplicateStudy)
    /// if the name is taken.
    fn create_new_study(&self, directions: &[StudyDirection], name: &str) -> Result<u64>;
    /// Deletes a study (its id is not reused).
    fn delete_study(&self, study_id: u64) -> Result<()>;
    /// Sets one study user attribute.
    fn set_study_user_attr(&self, study_id: u64, key: &str, value: Value) -> Result<()>;
    /// Sets one study system attribute.
    fn set_study_system_attr(&self, study_id: u64, key: &str, value: Value) -> Result<()>;
    /// The id of the study with this name.
    fn get_study_id_from_name(&self, name: &str) -> Result<u64>;
    /// The name of a study.
    fn get_study_name_from_id(&self, study_id: u64) -> Result<String>;
    /// The directions of a study.
    fn get_study_directions(&self, study_id: u64) -> Result<Vec<StudyDirection>>;
    /// The user attributes of a study.
    fn get_study_user_attrs(&self, study_id: u64) -> Result<BTreeMap<String, Value>>;
    /// The system attributes of a study.
    fn get_study_system_attrs(&self, study_id: u64) -> Result<BTreeMap<String, Value>>;
    /// `(id, name)` of every study, in creation order.
    fn get_all_studies(&self) -> Result<Vec<(u64, String)>>;
    /// Creates trials in one write (contiguous ids when the backend is shared): a fresh
    /// RUNNING trial for each `None`, a copy of the template for each `Some` (its number
    /// and id are ignored). Returns the new trial ids.
    fn create_new_trials(
        &self,
        study_id: u64,
        templates: &[Option<FrozenTrial>],
    ) -> Result<Vec<u64>>;
    /// Sets a parameter's internal value and distribution.
    fn set_trial_param(
        &self,
        trial_id: u64,
        name: &str,
        internal: f64,
        distribution: &Distribution,
    ) -> Result<()>;
    /// Sets the state (and values). Returns `Ok(false)` when RUNNING is asked for a trial
    /// that is no longer WAITING.
    fn set_trial_state_values(
        &self,
        trial_id: u64,
        state: TrialState,
        values: Option<&[f64]>,
    ) -> Result<bool>;
    /// Records an intermediate value.
    fn set_trial_intermediate_value(&self, trial_id: u64, step: i64, value: f64) -> Result<()>;
    /// Sets one trial user attribute.
    fn set_trial_user_attr(&self, trial_id: u64, key: &str, value: Value) -> Result<()>;
    /// Sets one trial system attribute.
    fn set_trial_system_attr(&self, trial_id: u64, key: &str, value: Value) -> Result<()>;
    /// One trial.
    fn get_trial(&self, trial_id: u64) -> Result<Arc<FrozenTrial>>;
    /// The trials of a study in number order, optionally only those in `states`.
    fn get_all_trials(
        &self,
        study_id: u64,
        states: Option<&[TrialState]>,
    ) -> Result<Vec<Arc<FrozenTrial>>>;

    /// The heartbeat settings (`None`, the default: no heartbeats; see
    /// [`fail_stale_trials`](crate::storage::fail_stale_trials)).
    fn heartbeat(&self) -> Option<&crate::storage::Heartbeat> {
        None
    }

    /// Records that a worker is alive and running `trial_id` (a no-op without heartbeats).
    fn record_heartbeat(&self, trial_id: u64) -> Result<()> {
        let _ = trial_id;
        Ok(())
    }

    /// The study's RUNNING trials whose last heartbeat is older than the grace period
    /// (trials that never recorded one are not stale). Empty without heartbeats.
    fn stale_trial_ids(&self, study_id: u64) -> Result<Vec<u64>> {
        let _ = study_id;
        Ok(Vec::new())
    }

    /// [`create_new_trials`](Self::create_new_trials) for a worker that keeps the new
    /// trials' heartbeats: with heartbeats on, every RUNNING trial created carries its first
    /// heartbeat from the same write, so a worker killed right after this call leaves trials
    /// that become stale after the grace period instead of RUNNING ones that no
    /// [`fail_stale_trials`](crate::storage::fail_stale_trials) ever reaps. Without
    /// heartbeats, the same as `create_new_trials`. The default records the heartbeats in
    /// separate writes; the storages of this crate override it with one write.
    fn create_new_trials_beating(
        &self,
        study_id: u64,
        templates: &[Option<FrozenTrial>],
    ) -> Result<Vec<u64>> {
        let ids = self.create_new_trials(study_id, templates)?;
        if self.heartbeat().is_some() {
            for (&id, template) in ids.iter().zip(templates) {
                if template
                    .as_ref()
                    .is_none_or(|t| t.state == crate::TrialState::Running)
                {
                    self.record_heartbeat(id)?;
                }
            }
        }
        Ok(ids)
    }

    /// Moves a WAITING trial to RUNNING for a worker that keeps its heartbeat, with the first
    /// heartbeat in the same write (see [`create_new_trials_beating`](
    /// Self::create_new_trials_beating)). `Ok(false)` when the trial is no longer WAITING
    /// (another worker claimed it first), as
    /// [`set_trial_state_values`](Self::set_trial_state_values).
    fn start_waiting_trial_beating(&self, trial_id: u64) -> Result<bool> {
        let started = self.set_trial_state_values(trial_id, crate::TrialState::Running, None)?;
        if started {
            self.record_heartbeat(trial_id)?;
        }
        Ok(started)
    }

    /// Creates one trial (see [`Storage::create_new_trials`]).
    fn create_new_trial(&self, study_id: u64, template: Option<FrozenTrial>) -> Result<u64> {
        Ok(self.create_new_trials(study_id, &[template])?[0])
    }
}
