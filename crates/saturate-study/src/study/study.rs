//! The default study: a sampler, a pruner and a storage.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::error::{Result, StudyError};
use crate::pruners::{MedianPruner, Pruner};
use crate::samplers::{Sampler, TpeSampler};
use crate::storage::{InMemoryStorage, Storage};
use crate::study::base::{FixedParams, Study};
use crate::study::StudyView;
use crate::trial::{FrozenTrial, StudyDirection, Trial, TrialState};

/// What a study and its trials share.
pub(crate) struct StudyCore {
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) study_id: u64,
    pub(crate) name: String,
    pub(crate) directions: Vec<StudyDirection>,
    sampler: Mutex<Box<dyn Sampler>>,
    pub(crate) pruner: Box<dyn Pruner>,
}

impl StudyCore {
    pub(crate) fn view(&self) -> StudyView<'_> {
        StudyView::new(&*self.storage, self.study_id, &self.name, &self.directions)
    }

    pub(crate) fn sampler(&self) -> MutexGuard<'_, Box<dyn Sampler>> {
        self.sampler.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The default [`Study`]: built from a [`Sampler`], a [`Pruner`] and a [`Storage`] with
/// [`StudyConfig`]. Cloning gives another handle on the same study.
///
/// ```
/// use saturate_study::prelude::*;
///
/// let study = StudyConfig::new()
///     .with_sampler(TpeSamplerConfig::new().with_seed(7).init()?)
///     .init()?;
/// study.optimize(Some(20), None, |trial| {
///     let x = trial.suggest_float("x", -10.0, 10.0)?;
///     Ok((x - 2.0).powi(2))
/// })?;
/// assert!(study.best_value()? < 10.0);
/// # Ok::<(), saturate_study::StudyError>(())
/// ```
#[derive(Clone)]
pub struct DefaultStudy {
    core: Arc<StudyCore>,
}

impl std::fmt::Debug for DefaultStudy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DefaultStudy")
            .field("name", &self.core.name)
            .field("study_id", &self.core.study_id)
            .field("directions", &self.core.directions)
            .field("storage", &self.core.storage)
            .finish()
    }
}

/// Configures a [`DefaultStudy`]: [`init`](Self::init) is Optuna's `create_study`,
/// [`load`](Self::load) its `load_study`.
///
/// ```
/// use saturate_study::prelude::*;
///
/// let study = StudyConfig::new()
///     .with_name("tune-mlp")
///     .with_direction(StudyDirection::Maximize)
///     .with_sampler(TpeSamplerConfig::new().with_seed(7).init()?)
///     .with_pruner(MedianPruner::default())
///     .init()?;
/// assert_eq!(study.name(), "tune-mlp");
/// # Ok::<(), StudyError>(())
/// ```
pub struct StudyConfig {
    name: Option<String>,
    directions: Vec<StudyDirection>,
    sampler: Option<Box<dyn Sampler>>,
    pruner: Option<Box<dyn Pruner>>,
    storage: Option<Arc<dyn Storage>>,
    load_if_exists: bool,
}

impl Default for StudyConfig {
    fn default() -> Self {
        Self {
            name: None,
            directions: vec![StudyDirection::Minimize],
            sampler: None,
            pruner: None,
            storage: None,
            load_if_exists: false,
        }
    }
}

impl std::fmt::Debug for StudyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StudyConfig")
            .field("name", &self.name)
            .field("directions", &self.directions)
            .field("storage", &self.storage)
            .field("load_if_exists", &self.load_if_exists)
            .finish_non_exhaustive()
    }
}

impl StudyConfig {
    /// Optuna's defaults: one objective to minimize, TPE, the median pruner, in memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The study name (default: `no-name-<random>`).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// One objective in this direction (default: minimize).
    pub fn with_direction(mut self, direction: StudyDirection) -> Self {
        self.directions = vec![direction];
        self
    }

    /// Several objectives.
    pub fn with_directions(mut self, directions: impl IntoIterator<Item = StudyDirection>) -> Self {
        self.directions = directions.into_iter().collect();
        self
    }

    /// The sampler (default: [`TpeSampler`] with Optuna's defaults).
    pub fn with_sampler(mut self, sampler: impl Sampler + 'static) -> Self {
        self.sampler = Some(Box::new(sampler));
        self
    }

    /// The pruner (default: [`MedianPruner`] with Optuna's defaults).
    pub fn with_pruner(mut self, pruner: impl Pruner + 'static) -> Self {
        self.pruner = Some(Box::new(pruner));
        self
    }

    /// The storage (default: a fresh [`InMemoryStorage`]).
    pub fn with_storage(mut self, storage: Arc<dyn Storage>) -> Self {
        self.storage = Some(storage);
        self
    }

    /// Load the study if one with this name exists instead of failing with
    /// [`StudyError::DuplicateStudy`] (default: false). To start afresh under the same name,
    /// delete the old study first ([`delete_study`](crate::delete_study)).
    pub fn with_load_if_exists(mut self, load: bool) -> Self {
        self.load_if_exists = load;
        self
    }

    /// Creates the study (or loads it, with `load_if_exists`).
    ///
    /// # Errors
    /// [`StudyError::DuplicateStudy`] if the name exists and `load_if_exists` is off;
    /// [`StudyError::WrongNumberOfValues`] for an empty list of directions; storage errors.
    pub fn init(self) -> Result<DefaultStudy> {
        let storage = self
            .storage
            .clone()
            .unwrap_or_else(|| Arc::new(InMemoryStorage::new()));
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| format!("no-name-{}", crate::random_id::random_hex(32)));
        if self.directions.is_empty() {
            return Err(StudyError::WrongNumberOfValues {
                expected: 1,
                got: 0,
            });
        }
        let study_id = match storage.create_new_study(&self.directions, &name) {
            Ok(id) => id,
            Err(StudyError::DuplicateStudy { .. }) if self.load_if_exists => {
                storage.get_study_id_from_name(&name)?
            }
            Err(e) => return Err(e),
        };
        self.finish(storage, study_id, name)
    }

    /// Loads an existing study by name (Optuna's `load_study`); its stored directions win.
    ///
    /// # Errors
    /// [`StudyError::UnknownStudy`] if no study has this name (or none was set).
    pub fn load(self) -> Result<DefaultStudy> {
        let storage = self
            .storage
            .clone()
            .unwrap_or_else(|| Arc::new(InMemoryStorage::new()));
        let name = self.name.clone().ok_or_else(|| StudyError::UnknownStudy {
            name: String::new(),
        })?;
        let study_id = storage.get_study_id_from_name(&name)?;
        self.finish(storage, study_id, name)
    }

    fn finish(
        self,
        storage: Arc<dyn Storage>,
        study_id: u64,
        name: String,
    ) -> Result<DefaultStudy> {
        let directions = storage.get_study_directions(study_id)?;
        Ok(DefaultStudy {
            core: Arc::new(StudyCore {
                storage,
                study_id,
                name,
                directions,
                sampler: Mutex::new(
                    self.sampler
                        .unwrap_or_else(|| Box::new(TpeSampler::default())),
                ),
                pruner: self
                    .pruner
                    .unwrap_or_else(|| Box::new(MedianPruner::default())),
            }),
        })
    }
}

/// Deletes the study `name` and its trials from `storage` (Optuna's `delete_study`), e.g. to
/// start a study afresh under the same name.
///
/// ```
/// use std::sync::Arc;
/// use saturate_study::prelude::*;
///
/// let storage: Arc<dyn Storage> = Arc::new(InMemoryStorage::new());
/// let config = || StudyConfig::new().with_name("sweep").with_storage(storage.clone());
/// config().init()?;
/// assert!(matches!(config().init(), Err(StudyError::DuplicateStudy { .. })));
/// saturate_study::delete_study(&*storage, "sweep")?;
/// config().init()?; // a new, empty study
/// # Ok::<(), StudyError>(())
/// ```
///
/// # Errors
/// [`StudyError::UnknownStudy`] if there is no study with this name; storage errors.
pub fn delete_study(storage: &dyn Storage, name: &str) -> Result<()> {
    let study_id = storage.get_study_id_from_name(name)?;
    storage.delete_study(study_id)
}

impl DefaultStudy {
    /// The storage.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.core.storage
    }

    /// The study's id in its storage.
    pub fn id(&self) -> u64 {
        self.core.study_id
    }

    /// A view for samplers and pruners.
    pub fn view(&self) -> StudyView<'_> {
        self.core.view()
    }

    /// `ask_batch` (`claim`: empty maps claim enqueued trials first) and `ask_new` (not;
    /// the new trials carry their first heartbeat when the storage has heartbeats).
    fn ask_slots(&self, fixed: &[FixedParams], claim: bool) -> Result<Vec<Trial>> {
        let storage = &self.core.storage;
        let wanted_plain = if claim {
            fixed.iter().filter(|f| f.is_empty()).count()
        } else {
            0
        };
        let mut claimed = Vec::new();
        if wanted_plain > 0 {
            for waiting in
                storage.get_all_trials(self.core.study_id, Some(&[TrialState::Waiting]))?
            {
                if claimed.len() == wanted_plain {
                    break;
                }
                if storage.set_trial_state_values(waiting.trial_id, TrialState::Running, None)? {
                    claimed.push(waiting.trial_id);
                }
            }
        }
        let mut claimed = claimed.into_iter();
        let mut templates = Vec::new();
        let mut slots = Vec::with_capacity(fixed.len());
        for params in fixed {
            if params.is_empty() {
                if let Some(id) = claimed.next() {
                    slots.push(Ok(id));
                    continue;
                }
                templates.push(None);
            } else {
                let mut template = FrozenTrial::new(0, 0, TrialState::Running);
                template.datetime_start = Some(crate::storage::replay::now());
                template
                    .system_attrs
                    .insert("fixed_params".into(), fixed_params_attr(params));
                templates.push(Some(template));
            }
            slots.push(Err(templates.len() - 1));
        }
        let created = if templates.is_empty() {
            Vec::new()
        } else {
            if claim {
                storage.create_new_trials(self.core.study_id, &templates)?
            } else {
                // `ask_new` is the group runner's: it keeps the trials' heartbeats, and the
                // first one is written with the trials.
                storage.create_new_trials_beating(self.core.study_id, &templates)?
            }
        };
        slots
            .into_iter()
            .map(|slot| self.start(slot.unwrap_or_else(|i| created[i])))
            .collect()
    }

    fn start(&self, trial_id: u64) -> Result<Trial> {
        let frozen = (*self.core.storage.get_trial(trial_id)?).clone();
        let view = self.core.view();
        let mut sampler = self.core.sampler();
        sampler.before_trial(&view, &frozen)?;
        let relative_space = sampler.infer_relative_search_space(&view, &frozen)?;
        let relative_params = if relative_space.is_empty() {
            BTreeMap::new()
        } else {
            sampler.sample_relative(&view, &frozen, &relative_space)?
        };
        drop(sampler);
        Ok(Trial {
            study: self.core.clone(),
            frozen,
            relative_space,
            relative_params,
        })
    }
}

fn fixed_params_attr(fixed: &FixedParams) -> Value {
    Value::Object(
        fixed
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json().to_value()))
            .collect(),
    )
}

impl Study for DefaultStudy {
    fn name(&self) -> &str {
        &self.core.name
    }

    fn heartbeat_storage(&self) -> Option<(Arc<dyn Storage>, u64)> {
        self.core
            .storage
            .heartbeat()
            .map(|_| (self.core.storage.clone(), self.core.study_id))
    }

    fn directions(&self) -> &[StudyDirection] {
        &self.core.directions
    }

    fn ask_batch(&self, fixed: &[FixedParams]) -> Result<Vec<Trial>> {
        self.ask_slots(fixed, true)
    }

    fn ask_new(&self, fixed: &[FixedParams]) -> Result<Vec<Trial>> {
        self.ask_slots(fixed, false)
    }

    fn claim_waiting(&self, trial_ids: &[u64]) -> Result<Vec<Trial>> {
        let mut claimed = Vec::with_capacity(trial_ids.len());
        for &trial_id in trial_ids {
            // `false`: another worker claimed it first, or it is not WAITING.
            if self.core.storage.start_waiting_trial_beating(trial_id)? {
                claimed.push(trial_id);
            }
        }
        claimed.into_iter().map(|id| self.start(id)).collect()
    }

    fn tell_state(
        &self,
        trial: &Trial,
        state: TrialState,
        values: Option<&[f64]>,
        fail_reason: Option<&str>,
    ) -> Result<Arc<FrozenTrial>> {
        let storage = &self.core.storage;
        let trial_id = trial.id();
        let stored = storage.get_trial(trial_id)?;
        if stored.state.is_finished() {
            return Err(StudyError::TrialFinished {
                trial_id,
                state: stored.state,
            });
        }
        let expected = self.core.directions.len();
        let mut state = state;
        let mut reason = fail_reason.map(str::to_owned);
        let mut wrong_count = None;
        let values: Option<Vec<f64>> = match state {
            TrialState::Complete => {
                let values = values.unwrap_or(&[]);
                if values.len() != expected {
                    wrong_count = Some(values.len());
                    reason = Some(format!(
                        "the study has {expected} objective(s) but {} value(s) were given",
                        values.len()
                    ));
                    state = TrialState::Fail;
                    None
                } else if values.iter().any(|v| v.is_nan()) {
                    // As Optuna: NaN fails the trial; ±inf is a value like any other.
                    reason = Some("the objective value NaN is not acceptable".into());
                    state = TrialState::Fail;
                    None
                } else {
                    Some(values.to_vec())
                }
            }
            TrialState::Pruned => stored
                .last_step()
                .map(|(_, v)| v)
                .filter(|v| !v.is_nan() && expected == 1)
                .map(|v| vec![v]),
            TrialState::Fail => None,
            TrialState::Running | TrialState::Waiting => {
                return Err(StudyError::InvalidTellState { state })
            }
        };
        self.core
            .sampler()
            .after_trial(&self.core.view(), &stored, state, values.as_deref())?;
        if let Some(reason) = &reason {
            storage.set_trial_system_attr(trial_id, "fail_reason", Value::from(reason.clone()))?;
        }
        storage.set_trial_state_values(trial_id, state, values.as_deref())?;
        if let Some(got) = wrong_count {
            return Err(StudyError::WrongNumberOfValues { expected, got });
        }
        storage.get_trial(trial_id)
    }

    fn shared_values_promising(
        &self,
        values: &BTreeMap<
            String,
            (
                crate::distributions::Distribution,
                crate::distributions::ParamValue,
            ),
        >,
    ) -> Result<Option<bool>> {
        let internal = values
            .iter()
            .map(|(name, (d, v))| Ok((name.clone(), (d.clone(), d.to_internal(v)?))))
            .collect::<Result<BTreeMap<_, _>>>()?;
        self.core
            .sampler()
            .still_promising(&self.core.view(), &internal)
    }

    fn enqueue(&self, params: FixedParams) -> Result<u64> {
        let mut template = FrozenTrial::new(0, 0, TrialState::Waiting);
        template
            .system_attrs
            .insert("fixed_params".into(), fixed_params_attr(&params));
        let trial_id = self
            .core
            .storage
            .create_new_trial(self.core.study_id, Some(template))?;
        Ok(self.core.storage.get_trial(trial_id)?.number)
    }

    fn trials(&self, states: Option<&[TrialState]>) -> Result<Vec<Arc<FrozenTrial>>> {
        self.core.storage.get_all_trials(self.core.study_id, states)
    }

    fn set_user_attr(&self, key: &str, value: Value) -> Result<()> {
        self.core
            .storage
            .set_study_user_attr(self.core.study_id, key, value)
    }

    fn user_attrs(&self) -> Result<BTreeMap<String, Value>> {
        self.core.storage.get_study_user_attrs(self.core.study_id)
    }

    fn set_system_attr(&self, key: &str, value: Value) -> Result<()> {
        self.core
            .storage
            .set_study_system_attr(self.core.study_id, key, value)
    }

    fn system_attrs(&self) -> Result<BTreeMap<String, Value>> {
        self.core.storage.get_study_system_attrs(self.core.study_id)
    }
}
