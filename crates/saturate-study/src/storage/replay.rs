//! The operation log both storages replay, mirroring Optuna's journal semantics.
//!
//! Every write is an [`Operation`] (one journal line). [`ReplayState::apply`] validates an
//! operation and then applies it; ids are derived from replay order exactly as Optuna
//! derives them (a study id per accepted CREATE_STUDY, a global trial id per accepted
//! CREATE_TRIAL). An operation that fails validation changes nothing: when replaying other
//! writers' lines it is skipped, as Optuna skips it; for the caller's own write it is an error.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Local, NaiveDateTime};
use serde_json::Value;

use crate::distributions::Distribution;
use crate::error::{Result, StudyError};
use crate::json::Json;
use crate::storage::{Heartbeat, Storage};
use crate::trial::{FrozenTrial, Param, StudyDirection, TrialState};

/// One write, as a journal line would carry it.
#[derive(Debug, Clone)]
pub(crate) enum Operation {
    CreateStudy {
        name: String,
        directions: Vec<StudyDirection>,
    },
    DeleteStudy {
        study_id: u64,
    },
    SetStudyAttr {
        study_id: u64,
        system: bool,
        key: String,
        value: Json,
    },
    CreateTrial {
        study_id: u64,
        datetime_start: Option<NaiveDateTime>,
        template: Option<Box<FrozenTrial>>,
    },
    SetTrialParam {
        trial_id: u64,
        name: String,
        internal: f64,
        distribution: Distribution,
    },
    SetTrialStateValues {
        trial_id: u64,
        state: TrialState,
        values: Option<Vec<f64>>,
        datetime: Option<NaiveDateTime>,
    },
    SetTrialIntermediateValue {
        trial_id: u64,
        step: i64,
        value: f64,
    },
    SetTrialAttr {
        trial_id: u64,
        system: bool,
        key: String,
        value: Json,
    },
}

/// What an accepted operation produced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Applied {
    Study(u64),
    Trial(u64),
    /// `false` for a RUNNING claim on a trial that was no longer WAITING.
    Accepted(bool),
}

#[derive(Debug, Clone)]
pub(crate) struct StudyRecord {
    pub(crate) name: String,
    pub(crate) directions: Vec<StudyDirection>,
    pub(crate) user_attrs: BTreeMap<String, Value>,
    pub(crate) system_attrs: BTreeMap<String, Value>,
    pub(crate) trial_ids: Vec<u64>,
    /// The first distribution each parameter name was set with in the study.
    pub(crate) distributions: HashMap<String, Distribution>,
}

#[derive(Debug, Clone)]
struct TrialSlot {
    study_id: u64,
    trial: Arc<FrozenTrial>,
}

/// Studies and trials as the log has built them so far.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReplayState {
    studies: BTreeMap<u64, StudyRecord>,
    names: HashMap<String, u64>,
    next_study_id: u64,
    trials: Vec<TrialSlot>,
}

/// The current naive local time, at the microsecond precision the journal keeps.
pub(crate) fn now() -> NaiveDateTime {
    use chrono::{DurationRound, TimeDelta};
    let now = Local::now().naive_local();
    now.duration_trunc(TimeDelta::microseconds(1))
        .unwrap_or(now)
}

impl ReplayState {
    pub(crate) fn study(&self, study_id: u64) -> Result<&StudyRecord> {
        self.studies
            .get(&study_id)
            .ok_or(StudyError::UnknownStudyId { study_id })
    }

    pub(crate) fn study_id(&self, name: &str) -> Result<u64> {
        self.names
            .get(name)
            .copied()
            .ok_or_else(|| StudyError::UnknownStudy { name: name.into() })
    }

    pub(crate) fn studies(&self) -> Vec<(u64, String)> {
        self.studies
            .iter()
            .map(|(id, s)| (*id, s.name.clone()))
            .collect()
    }

    pub(crate) fn trial(&self, trial_id: u64) -> Result<&Arc<FrozenTrial>> {
        self.trials
            .get(trial_id as usize)
            .filter(|slot| self.studies.contains_key(&slot.study_id))
            .map(|slot| &slot.trial)
            .ok_or(StudyError::UnknownTrial { trial_id })
    }

    pub(crate) fn trials(
        &self,
        study_id: u64,
        states: Option<&[TrialState]>,
    ) -> Result<Vec<Arc<FrozenTrial>>> {
        let study = self.study(study_id)?;
        Ok(study
            .trial_ids
            .iter()
            .map(|id| &self.trials[*id as usize].trial)
            .filter(|t| states.is_none_or(|s| s.contains(&t.state)))
            .cloned()
            .collect())
    }

    fn updatable(&mut self, trial_id: u64) -> Result<&mut FrozenTrial> {
        let state = self.trial(trial_id)?.state;
        if state.is_finished() {
            return Err(StudyError::TrialFinished { trial_id, state });
        }
        Ok(Arc::make_mut(&mut self.trials[trial_id as usize].trial))
    }

    /// Validates and applies one operation; on error nothing changed (Optuna's
    /// `JournalStorageReplayResult._apply_log`, dispatching to one `apply_*` per operation).
    pub(crate) fn apply(&mut self, op: Operation) -> Result<Applied> {
        match op {
            Operation::CreateStudy { name, directions } => {
                self.apply_create_study(name, directions)
            }
            Operation::DeleteStudy { study_id } => self.apply_delete_study(study_id),
            Operation::SetStudyAttr {
                study_id,
                system,
                key,
                value,
            } => self.apply_set_study_attr(study_id, system, key, value),
            Operation::CreateTrial {
                study_id,
                datetime_start,
                template,
            } => self.apply_create_trial(study_id, datetime_start, template),
            Operation::SetTrialParam {
                trial_id,
                name,
                internal,
                distribution,
            } => self.apply_set_trial_param(trial_id, name, internal, distribution),
            Operation::SetTrialStateValues {
                trial_id,
                state,
                values,
                datetime,
            } => self.apply_set_trial_state_values(trial_id, state, values, datetime),
            Operation::SetTrialIntermediateValue {
                trial_id,
                step,
                value,
            } => self.apply_set_trial_intermediate_value(trial_id, step, value),
            Operation::SetTrialAttr {
                trial_id,
                system,
                key,
                value,
            } => self.apply_set_trial_attr(trial_id, system, key, value),
        }
    }

    fn apply_create_study(
        &mut self,
        name: String,
        directions: Vec<StudyDirection>,
    ) -> Result<Applied> {
        if self.names.contains_key(&name) {
            return Err(StudyError::DuplicateStudy { name });
        }
        let study_id = self.next_study_id;
        self.next_study_id += 1;
        self.names.insert(name.clone(), study_id);
        self.studies.insert(
            study_id,
            StudyRecord {
                name,
                directions,
                user_attrs: BTreeMap::new(),
                system_attrs: BTreeMap::new(),
                trial_ids: Vec::new(),
                distributions: HashMap::new(),
            },
        );
        Ok(Applied::Study(study_id))
    }

    fn apply_delete_study(&mut self, study_id: u64) -> Result<Applied> {
        let study = self
            .studies
            .remove(&study_id)
            .ok_or(StudyError::UnknownStudyId { study_id })?;
        self.names.remove(&study.name);
        Ok(Applied::Accepted(true))
    }

    fn apply_set_study_attr(
        &mut self,
        study_id: u64,
        system: bool,
        key: String,
        value: Json,
    ) -> Result<Applied> {
        let study = self
            .studies
            .get_mut(&study_id)
            .ok_or(StudyError::UnknownStudyId { study_id })?;
        let attrs = if system {
            &mut study.system_attrs
        } else {
            &mut study.user_attrs
        };
        attrs.insert(key, value.to_value());
        Ok(Applied::Accepted(true))
    }

    fn apply_create_trial(
        &mut self,
        study_id: u64,
        datetime_start: Option<NaiveDateTime>,
        template: Option<Box<FrozenTrial>>,
    ) -> Result<Applied> {
        let trial_id = self.trials.len() as u64;
        let study = self
            .studies
            .get_mut(&study_id)
            .ok_or(StudyError::UnknownStudyId { study_id })?;
        let number = study.trial_ids.len() as u64;
        let trial = match template {
            Some(template) => FrozenTrial {
                number,
                trial_id,
                datetime_start,
                ..*template
            },
            None => FrozenTrial {
                datetime_start,
                ..FrozenTrial::new(number, trial_id, TrialState::Running)
            },
        };
        study.trial_ids.push(trial_id);
        self.trials.push(TrialSlot {
            study_id,
            trial: Arc::new(trial),
        });
        Ok(Applied::Trial(trial_id))
    }

    fn apply_set_trial_param(
        &mut self,
        trial_id: u64,
        name: String,
        internal: f64,
        distribution: Distribution,
    ) -> Result<Applied> {
        self.updatable(trial_id)?;
        let study_id = self.trials[trial_id as usize].study_id;
        if let Some(study) = self.studies.get_mut(&study_id) {
            match study.distributions.get(&name) {
                Some(existing) => {
                    crate::distributions::check_compatible(&name, existing, &distribution)?
                }
                None => {
                    study
                        .distributions
                        .insert(name.clone(), distribution.clone());
                }
            }
        }
        let trial = self.updatable(trial_id)?;
        trial.params.insert(
            name,
            Param {
                internal,
                distribution,
            },
        );
        Ok(Applied::Accepted(true))
    }

    fn apply_set_trial_state_values(
        &mut self,
        trial_id: u64,
        state: TrialState,
        values: Option<Vec<f64>>,
        datetime: Option<NaiveDateTime>,
    ) -> Result<Applied> {
        let trial = self.updatable(trial_id)?;
        if state == TrialState::Running && trial.state != TrialState::Waiting {
            return Ok(Applied::Accepted(false));
        }
        trial.state = state;
        if values.is_some() {
            trial.values = values;
        }
        if state == TrialState::Running {
            trial.datetime_start = datetime;
        }
        if state.is_finished() {
            trial.datetime_complete = datetime;
        }
        Ok(Applied::Accepted(true))
    }

    fn apply_set_trial_intermediate_value(
        &mut self,
        trial_id: u64,
        step: i64,
        value: f64,
    ) -> Result<Applied> {
        self.updatable(trial_id)?
            .intermediate_values
            .insert(step, value);
        Ok(Applied::Accepted(true))
    }

    fn apply_set_trial_attr(
        &mut self,
        trial_id: u64,
        system: bool,
        key: String,
        value: Json,
    ) -> Result<Applied> {
        let trial = self.updatable(trial_id)?;
        let attrs = if system {
            &mut trial.system_attrs
        } else {
            &mut trial.user_attrs
        };
        attrs.insert(key, value.to_value());
        Ok(Applied::Accepted(true))
    }
}

/// A storage built on the operation log: writes go through `write`, reads see a
/// consistent [`ReplayState`]. Every such type is a [`Storage`] (the blanket impl below).
pub(crate) trait OperationLog: Send + Sync + std::fmt::Debug {
    /// Applies (and persists) operations in order, in one write where the backend allows.
    fn write(&self, ops: Vec<Operation>) -> Result<Vec<Applied>>;
    /// Reads the current state (after catching up with other writers).
    fn read<R>(&self, f: impl FnOnce(&ReplayState) -> Result<R>) -> Result<R>;
    /// The heartbeat settings (none by default).
    fn heartbeat(&self) -> Option<&Heartbeat> {
        None
    }

    fn write_one(&self, op: Operation) -> Result<Applied> {
        Ok(self.write(vec![op])?.remove(0))
    }

    fn write_accepted(&self, op: Operation) -> Result<bool> {
        match self.write_one(op)? {
            Applied::Accepted(accepted) => Ok(accepted),
            other => unreachable!("an update applied as {other:?}"),
        }
    }
}

/// The system attribute in which operation-log storages keep a running trial's last
/// heartbeat (the journal has no heartbeat table): naive local time, as the journal's
/// datetimes.
pub(crate) const HEARTBEAT_ATTR: &str = "saturate:heartbeat";

impl<T: OperationLog> Storage for T {
    fn create_new_study(&self, directions: &[StudyDirection], name: &str) -> Result<u64> {
        match self.write_one(Operation::CreateStudy {
            name: name.into(),
            directions: directions.to_vec(),
        })? {
            Applied::Study(id) => Ok(id),
            other => unreachable!("create study applied as {other:?}"),
        }
    }

    fn delete_study(&self, study_id: u64) -> Result<()> {
        self.write_accepted(Operation::DeleteStudy { study_id })
            .map(drop)
    }

    fn set_study_user_attr(&self, study_id: u64, key: &str, value: Value) -> Result<()> {
        self.write_accepted(Operation::SetStudyAttr {
            study_id,
            system: false,
            key: key.into(),
            value: Json::from_value(&value),
        })
        .map(drop)
    }

    fn set_study_system_attr(&self, study_id: u64, key: &str, value: Value) -> Result<()> {
        self.write_accepted(Operation::SetStudyAttr {
            study_id,
            system: true,
            key: key.into(),
            value: Json::from_value(&value),
        })
        .map(drop)
    }

    fn get_study_id_from_name(&self, name: &str) -> Result<u64> {
        self.read(|s| s.study_id(name))
    }

    fn get_study_name_from_id(&self, study_id: u64) -> Result<String> {
        self.read(|s| Ok(s.study(study_id)?.name.clone()))
    }

    fn get_study_directions(&self, study_id: u64) -> Result<Vec<StudyDirection>> {
        self.read(|s| Ok(s.study(study_id)?.directions.clone()))
    }

    fn get_study_user_attrs(&self, study_id: u64) -> Result<BTreeMap<String, Value>> {
        self.read(|s| Ok(s.study(study_id)?.user_attrs.clone()))
    }

    fn get_study_system_attrs(&self, study_id: u64) -> Result<BTreeMap<String, Value>> {
        self.read(|s| Ok(s.study(study_id)?.system_attrs.clone()))
    }

    fn get_all_studies(&self) -> Result<Vec<(u64, String)>> {
        self.read(|s| Ok(s.studies()))
    }

    fn create_new_trials(
        &self,
        study_id: u64,
        templates: &[Option<FrozenTrial>],
    ) -> Result<Vec<u64>> {
        let ops = templates
            .iter()
            .map(|template| Operation::CreateTrial {
                study_id,
                datetime_start: match template {
                    None => Some(now()),
                    Some(t) => t.datetime_start,
                },
                template: template.clone().map(Box::new),
            })
            .collect();
        Ok(self
            .write(ops)?
            .into_iter()
            .map(|applied| match applied {
                Applied::Trial(id) => id,
                other => unreachable!("create trial applied as {other:?}"),
            })
            .collect())
    }

    fn create_new_trials_beating(
        &self,
        study_id: u64,
        templates: &[Option<FrozenTrial>],
    ) -> Result<Vec<u64>> {
        if OperationLog::heartbeat(self).is_none() {
            return self.create_new_trials(study_id, templates);
        }
        // The first heartbeat is a system attribute of the created trial: one operation.
        let beat = Value::String(format_datetime(&now()));
        let templates: Vec<Option<FrozenTrial>> = templates
            .iter()
            .map(|template| {
                let mut trial = template.clone().unwrap_or_else(|| {
                    let mut fresh = FrozenTrial::new(0, 0, TrialState::Running);
                    fresh.datetime_start = Some(now());
                    fresh
                });
                if trial.state == TrialState::Running {
                    trial
                        .system_attrs
                        .insert(HEARTBEAT_ATTR.into(), beat.clone());
                }
                Some(trial)
            })
            .collect();
        self.create_new_trials(study_id, &templates)
    }

    fn start_waiting_trial_beating(&self, trial_id: u64) -> Result<bool> {
        let start = Operation::SetTrialStateValues {
            trial_id,
            state: TrialState::Running,
            values: None,
            datetime: Some(now()),
        };
        if OperationLog::heartbeat(self).is_none() {
            return self.write_accepted(start);
        }
        // One write: a worker killed after it leaves a trial whose heartbeat goes stale. When
        // the start is rejected (another worker claimed the trial), the beat lands on that
        // worker's live trial, or is rejected with it when the trial is finished.
        let applied = self.write(vec![
            start,
            Operation::SetTrialAttr {
                trial_id,
                system: true,
                key: HEARTBEAT_ATTR.into(),
                value: Json::from_value(&Value::String(format_datetime(&now()))),
            },
        ])?;
        match applied.first() {
            Some(Applied::Accepted(accepted)) => Ok(*accepted),
            other => unreachable!("a state update applied as {other:?}"),
        }
    }

    fn set_trial_param(
        &self,
        trial_id: u64,
        name: &str,
        internal: f64,
        distribution: &Distribution,
    ) -> Result<()> {
        self.write_accepted(Operation::SetTrialParam {
            trial_id,
            name: name.into(),
            internal,
            distribution: distribution.clone(),
        })
        .map(drop)
    }

    fn set_trial_state_values(
        &self,
        trial_id: u64,
        state: TrialState,
        values: Option<&[f64]>,
    ) -> Result<bool> {
        let datetime = (state == TrialState::Running || state.is_finished()).then(now);
        self.write_accepted(Operation::SetTrialStateValues {
            trial_id,
            state,
            values: values.map(<[f64]>::to_vec),
            datetime,
        })
    }

    fn set_trial_intermediate_value(&self, trial_id: u64, step: i64, value: f64) -> Result<()> {
        self.write_accepted(Operation::SetTrialIntermediateValue {
            trial_id,
            step,
            value,
        })
        .map(drop)
    }

    fn set_trial_user_attr(&self, trial_id: u64, key: &str, value: Value) -> Result<()> {
        self.write_accepted(Operation::SetTrialAttr {
            trial_id,
            system: false,
            key: key.into(),
            value: Json::from_value(&value),
        })
        .map(drop)
    }

    fn set_trial_system_attr(&self, trial_id: u64, key: &str, value: Value) -> Result<()> {
        self.write_accepted(Operation::SetTrialAttr {
            trial_id,
            system: true,
            key: key.into(),
            value: Json::from_value(&value),
        })
        .map(drop)
    }

    fn get_trial(&self, trial_id: u64) -> Result<Arc<FrozenTrial>> {
        self.read(|s| s.trial(trial_id).cloned())
    }

    fn get_all_trials(
        &self,
        study_id: u64,
        states: Option<&[TrialState]>,
    ) -> Result<Vec<Arc<FrozenTrial>>> {
        self.read(|s| s.trials(study_id, states))
    }

    fn heartbeat(&self) -> Option<&Heartbeat> {
        OperationLog::heartbeat(self)
    }

    fn record_heartbeat(&self, trial_id: u64) -> Result<()> {
        if OperationLog::heartbeat(self).is_none() {
            return Ok(());
        }
        self.set_trial_system_attr(
            trial_id,
            HEARTBEAT_ATTR,
            Value::String(format_datetime(&now())),
        )
    }

    fn stale_trial_ids(&self, study_id: u64) -> Result<Vec<u64>> {
        let Some(heartbeat) = OperationLog::heartbeat(self) else {
            return Ok(Vec::new());
        };
        let grace =
            chrono::TimeDelta::from_std(heartbeat.grace_period()).unwrap_or(chrono::TimeDelta::MAX);
        let now = now();
        self.read(|s| {
            Ok(s.trials(study_id, Some(&[TrialState::Running]))?
                .iter()
                .filter(|t| {
                    t.system_attrs
                        .get(HEARTBEAT_ATTR)
                        .and_then(Value::as_str)
                        .and_then(parse_datetime)
                        .is_some_and(|beat| now - beat > grace)
                })
                .map(|t| t.trial_id)
                .collect())
        })
    }
}

/// Parses a datetime as Optuna writes it: naive local (4.x) or with an offset (5.0),
/// which is converted to naive local time as 5.0's reader does.
pub(crate) fn parse_datetime(text: &str) -> Option<NaiveDateTime> {
    let text = text.trim();
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(text, format) {
            return Some(dt);
        }
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f%:z", "%Y-%m-%d %H:%M:%S%.f%:z"] {
        if let Ok(dt) = DateTime::parse_from_str(text, format) {
            return Some(dt.with_timezone(&Local).naive_local());
        }
    }
    None
}

/// `datetime.isoformat(timespec="microseconds")` of a naive datetime.
pub(crate) fn format_datetime(dt: &NaiveDateTime) -> String {
    dt.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
}
