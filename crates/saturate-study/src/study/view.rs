//! What samplers and pruners see of a study.

use std::sync::Arc;

use serde_json::Value;

use crate::error::Result;
use crate::storage::Storage;
use crate::trial::{FrozenTrial, StudyDirection, TrialState};

/// A read view of a study, plus the trial system attributes samplers and pruners write.
#[derive(Clone, Copy)]
pub struct StudyView<'a> {
    pub(crate) storage: &'a dyn Storage,
    pub(crate) study_id: u64,
    pub(crate) name: &'a str,
    pub(crate) directions: &'a [StudyDirection],
    /// Only trials passing this are visible (Hyperband's per-bracket studies).
    pub(crate) filter: Option<&'a dyn Fn(&FrozenTrial) -> bool>,
}

impl<'a> StudyView<'a> {
    /// A view of a stored study.
    pub fn new(
        storage: &'a dyn Storage,
        study_id: u64,
        name: &'a str,
        directions: &'a [StudyDirection],
    ) -> Self {
        Self {
            storage,
            study_id,
            name,
            directions,
            filter: None,
        }
    }

    /// The same study showing only the trials for which `filter` holds.
    pub fn filtered(&self, filter: &'a dyn Fn(&FrozenTrial) -> bool) -> Self {
        Self {
            filter: Some(filter),
            ..*self
        }
    }

    /// The study's name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The study's directions (one per objective).
    pub fn directions(&self) -> &[StudyDirection] {
        self.directions
    }

    /// The single direction; `Minimize` for multi-objective studies' first objective.
    pub fn direction(&self) -> StudyDirection {
        self.directions
            .first()
            .copied()
            .unwrap_or(StudyDirection::Minimize)
    }

    /// The trials in number order, optionally only those in `states`.
    pub fn trials(&self, states: Option<&[TrialState]>) -> Result<Vec<Arc<FrozenTrial>>> {
        let mut trials = self.storage.get_all_trials(self.study_id, states)?;
        if let Some(filter) = self.filter {
            trials.retain(|t| filter(t));
        }
        Ok(trials)
    }

    /// Sets a system attribute on a trial (samplers and pruners keep their notes there).
    pub fn set_trial_system_attr(&self, trial_id: u64, key: &str, value: Value) -> Result<()> {
        self.storage.set_trial_system_attr(trial_id, key, value)
    }
}

impl std::fmt::Debug for StudyView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StudyView")
            .field("study_id", &self.study_id)
            .field("name", &self.name)
            .finish()
    }
}
