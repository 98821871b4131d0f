//! [`GroupTrial`]: the K trials of one group, seen by the objective as one.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use saturate_study::distributions::{
    CategoricalDistribution, Choice, Distribution, FloatDistribution, IntDistribution, ParamValue,
};
use saturate_study::{FrozenTrial, Study, StudyError, Trial, TrialState};
use serde_json::Value;

use crate::error::{Result, TrainError};
use crate::members::{MemberValues, Members};
use crate::profile::{GroupProfiler, PROFILE_ATTR};
use crate::run::{RunState, StopReason};

/// System attribute: the group a trial was trained in (the same string on every trial of a
/// group, members that joined through refill included).
pub const GROUP_ATTR: &str = "saturate:group";
/// System attribute: the process that trained the trial (`host:pid`).
pub const WORKER_ATTR: &str = "saturate:worker";
/// System attribute: why the runner stopped a trial early (`timeout`).
pub const STOPPED_ATTR: &str = "saturate:stopped";

/// Where a hyperparameter was suggested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Shared,
    Member,
}

impl Scope {
    fn name(self) -> &'static str {
        match self {
            Scope::Shared => "shared",
            Scope::Member => "member",
        }
    }
}

/// How `report` ended the group, recorded on it so that the runner knows even when the
/// objective wraps (or replaces) the error `report` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupEnd {
    /// No member goes on (pruned, failed or stopped by the timeout).
    Finished,
    /// SIGINT: the in-flight trials were failed.
    Interrupted {
        /// How many.
        failed: usize,
    },
}

/// How a member left the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberOutcome {
    /// Told COMPLETE.
    Complete,
    /// Pruned by the study's pruner (or stopped by the run's timeout).
    Pruned,
    /// Failed: a NaN value or training loss, an infinite training loss, an error or a panic.
    Failed,
}

/// The K trials of one group, trained together as one [`Batched`](saturate_vmap::Batched)
/// model.
///
/// Inside the objective, [`shared`](Self::shared) suggestions are sampled once for the group
/// (they may change shapes: width, depth) and recorded, same value and distribution, on every
/// trial; [`member`](Self::member) suggestions are sampled per trial and come back as
/// [`Members`]. [`report`](Self::report) asks the pruner about every member and says which go
/// on; the others' trials are finished right there.
///
/// Member `i` is the group's i-th live trial: indices shift down when `report` drops members,
/// exactly as `Batched::retain` shifts them.
pub struct GroupTrial<'s, S: Study> {
    study: &'s S,
    group_id: String,
    trials: Vec<Trial>,
    scopes: BTreeMap<String, Scope>,
    shared: BTreeMap<String, (Distribution, ParamValue)>,
    /// The last step each live trial reported, by trial id.
    last_steps: BTreeMap<u64, i64>,
    reported: bool,
    pub(crate) state: &'s RunState,
    pub(crate) finished: Vec<(Arc<FrozenTrial>, MemberOutcome)>,
    profiler: Option<GroupProfiler>,
    heartbeat: Option<GroupHeartbeat>,
    pub(crate) ended: Option<GroupEnd>,
}

impl<'s, S: Study> GroupTrial<'s, S> {
    pub(crate) fn new(
        study: &'s S,
        trials: Vec<Trial>,
        state: &'s RunState,
        profiler: Option<GroupProfiler>,
    ) -> Result<Self> {
        let group_id = format!(
            "{}:{}",
            worker_name(),
            trials.first().map(Trial::number).unwrap_or_default()
        );
        let mut group = Self {
            study,
            group_id,
            trials: Vec::new(),
            scopes: BTreeMap::new(),
            shared: BTreeMap::new(),
            last_steps: BTreeMap::new(),
            reported: false,
            state,
            finished: Vec::new(),
            profiler,
            heartbeat: GroupHeartbeat::start(study),
            ended: None,
        };
        group.add_trials(trials)?;
        Ok(group)
    }

    /// The number of members now (it shrinks when `report` drops members).
    pub fn members(&self) -> usize {
        self.trials.len()
    }

    /// The trial numbers of the members, in member order.
    pub fn trial_numbers(&self) -> Vec<u64> {
        self.trials.iter().map(Trial::number).collect()
    }

    /// The group's id, as recorded in each trial's `saturate:group` system attribute.
    pub fn group_id(&self) -> &str {
        &self.group_id
    }

    /// The study the group belongs to.
    pub fn study(&self) -> &S {
        self.study
    }

    /// Suggestions sampled once for the whole group.
    pub fn shared(&mut self) -> SharedScope<'_, 's, S> {
        SharedScope { group: self }
    }

    /// Suggestions sampled per member (one trial each).
    pub fn member(&mut self) -> MemberScope<'_, 's, S> {
        let range = 0..self.trials.len();
        MemberScope {
            group: self,
            range,
            refill: false,
        }
    }

    /// Sets a user attribute on member `index`'s trial.
    ///
    /// # Errors
    /// [`TrainError::WrongMemberCount`] for an index out of range; storage errors.
    pub fn set_member_user_attr(
        &mut self,
        index: usize,
        key: &str,
        value: impl Into<Value>,
    ) -> Result<()> {
        let members = self.trials.len();
        let trial = self
            .trials
            .get_mut(index)
            .ok_or_else(|| TrainError::WrongMemberCount {
                what: format!("member index {index}"),
                expected: members,
                got: index + 1,
            })?;
        trial.set_user_attr(key, value)?;
        Ok(())
    }

    /// Records one intermediate value per member at `step` and asks the study's pruner about
    /// each; returns the indices of the members that go on, in order (give them to
    /// `Batched::retain`, the optimizer's `retain` and [`Members::retain`]).
    ///
    /// Every value is recorded, NaN and ±inf included (as Optuna's `report`); a member whose
    /// value is NaN fails (its trial only; the reason is in its `fail_reason` system
    /// attribute), ±inf goes to the pruner like any value. Pruned members' trials are told PRUNED. Multi-objective
    /// studies record nothing (Optuna has no intermediate values there) and prune nothing.
    ///
    /// # Errors
    /// - [`TrainError::GroupFinished`] when no member goes on (all pruned or failed, or the
    ///   run's timeout stops the group): return it with `?`; the runner ends the group
    ///   normally;
    /// - [`TrainError::Interrupted`] after SIGINT: the members' trials were marked FAIL;
    /// - [`TrainError::WrongMemberCount`] / [`TrainError::StepNotIncreasing`] for bad input.
    pub fn report(&mut self, step: i64, values: &Members<f64>) -> Result<Vec<usize>> {
        let steps = vec![step; self.trials.len()];
        self.report_steps(&steps, values)
    }

    /// [`report`](Self::report) with one step per member (members that joined the group
    /// later count their own steps).
    ///
    /// # Errors
    /// As [`report`](Self::report).
    pub fn report_steps(&mut self, steps: &[i64], values: &Members<f64>) -> Result<Vec<usize>> {
        self.report_steps_pruning(steps, values, true)
    }

    /// [`report_steps`](Self::report_steps), asking the pruner only when `prune`
    /// (population-based training replaces weak members instead of pruning them).
    pub(crate) fn report_steps_pruning(
        &mut self,
        steps: &[i64],
        values: &Members<f64>,
        prune: bool,
    ) -> Result<Vec<usize>> {
        for (what, got) in [("values", values.len()), ("steps", steps.len())] {
            if got != self.trials.len() {
                return Err(TrainError::WrongMemberCount {
                    what: format!("the {what} given to `report`"),
                    expected: self.trials.len(),
                    got,
                });
            }
        }
        for (trial, &step) in self.trials.iter().zip(steps) {
            if let Some(&previous) = self.last_steps.get(&trial.id()).filter(|&&p| step <= p) {
                return Err(TrainError::StepNotIncreasing { step, previous });
            }
        }
        for (trial, &step) in self.trials.iter().zip(steps) {
            self.last_steps.insert(trial.id(), step);
        }
        self.reported = true;
        let single = self.study.directions().len() == 1;
        let mut keep = Vec::new();
        for (index, &value) in values.iter().enumerate() {
            if single {
                // As Optuna: every value is recorded, NaN and ±inf included.
                self.trials[index].report(steps[index], value)?;
            }
            if value.is_nan() {
                continue;
            }
            if prune && single && self.trials[index].should_prune()? {
                continue;
            }
            keep.push(index);
        }
        let dropped: Vec<usize> = (0..self.trials.len())
            .filter(|i| !keep.contains(i))
            .collect();
        for &index in &dropped {
            let value = values[index];
            if !value.is_nan() {
                self.finish(index, TrialState::Pruned, None, None)?;
            } else {
                let reason = format!("the value reported at step {} is {value}", steps[index]);
                self.finish(index, TrialState::Fail, None, Some(&reason))?;
            }
        }
        self.drop_finished();
        self.state.progress_changed();
        match self.state.stop_reason() {
            Some(StopReason::Interrupted) => {
                let failed = self.fail_all("interrupted")?;
                self.ended = Some(GroupEnd::Interrupted { failed });
                return Err(TrainError::Interrupted { failed });
            }
            Some(StopReason::Timeout) => {
                for index in 0..self.trials.len() {
                    self.trials[index].set_system_attr(STOPPED_ATTR, "timeout")?;
                    self.finish(index, TrialState::Pruned, None, None)?;
                }
                self.drop_finished();
                self.ended = Some(GroupEnd::Finished);
                return Err(TrainError::GroupFinished {
                    reason: "the run's timeout stopped it".into(),
                });
            }
            None => {}
        }
        if keep.is_empty() {
            self.ended = Some(GroupEnd::Finished);
            return Err(TrainError::GroupFinished {
                reason: "every member was pruned or failed".into(),
            });
        }
        Ok(keep)
    }

    /// Finishes members `indices` as COMPLETE with their values (a member that reached its
    /// budget before the others) and returns the indices of the members that go on.
    ///
    /// # Errors
    /// [`TrainError::WrongMemberCount`] for an index out of range or values of the wrong
    /// length; storage errors.
    pub fn complete_members<V: MemberValues>(
        &mut self,
        indices: &[usize],
        values: &V,
    ) -> Result<Vec<usize>> {
        if values.member_count() != indices.len() {
            return Err(TrainError::WrongMemberCount {
                what: "the values given to `complete_members`".into(),
                expected: indices.len(),
                got: values.member_count(),
            });
        }
        if let Some(&bad) = indices.iter().find(|&&i| i >= self.trials.len()) {
            return Err(TrainError::WrongMemberCount {
                what: format!("member index {bad}"),
                expected: self.trials.len(),
                got: bad + 1,
            });
        }
        for (n, &index) in indices.iter().enumerate() {
            self.finish(
                index,
                TrialState::Complete,
                Some(&values.values_of(n)),
                None,
            )?;
        }
        let keep = (0..self.trials.len())
            .filter(|i| !indices.contains(i))
            .collect();
        self.drop_finished();
        self.state.progress_changed();
        Ok(keep)
    }

    /// Fails the members `failures` names (index, reason), e.g. a diverged training loss, and
    /// returns the indices of the members that go on (in order).
    pub(crate) fn fail_members(&mut self, failures: &[(usize, String)]) -> Result<Vec<usize>> {
        for (index, reason) in failures {
            self.finish(*index, TrialState::Fail, None, Some(reason))?;
        }
        let keep = (0..self.trials.len())
            .filter(|i| !failures.iter().any(|(f, _)| f == i))
            .collect();
        self.drop_finished();
        self.state.progress_changed();
        Ok(keep)
    }

    /// The trial of member `index`.
    pub(crate) fn trial(&self, index: usize) -> &Trial {
        &self.trials[index]
    }

    /// Adds trials to the group (refill): the group's shared values are recorded on them.
    pub(crate) fn add_trials(&mut self, trials: Vec<Trial>) -> Result<()> {
        let first_new = self.trials.len();
        let size = (first_new + trials.len()) as i64;
        // New members: the group goes on (a refill after `report` finished it).
        if !trials.is_empty() {
            self.ended = None;
        }
        if let Some(heartbeat) = &self.heartbeat {
            heartbeat.add(trials.iter().map(Trial::id))?;
        }
        self.trials.extend(trials);
        for trial in &mut self.trials[first_new..] {
            trial.set_system_attr(GROUP_ATTR, self.group_id.clone())?;
            trial.set_system_attr(WORKER_ATTR, worker_name())?;
            trial.set_system_attr("saturate:group_size", size)?;
            for (name, (distribution, value)) in &self.shared {
                trial.record_param(name, distribution.clone(), value)?;
            }
        }
        self.state
            .running_changed(self.trials.len() - first_new, true);
        Ok(())
    }

    /// The names suggested as shared so far.
    pub(crate) fn shared_names(&self) -> impl Iterator<Item = &str> {
        // The scopes, not the values: a name whose suggestion failed (a pinned value that
        // conflicts) is shared all the same.
        self.scopes
            .iter()
            .filter(|(_, scope)| **scope == Scope::Shared)
            .map(|(name, _)| name.as_str())
    }

    /// The shared values suggested so far, with their distributions.
    pub(crate) fn shared_values(&self) -> &BTreeMap<String, (Distribution, ParamValue)> {
        &self.shared
    }

    /// The shared values suggested so far, as fixed parameters for new trials.
    pub(crate) fn shared_params(&self) -> saturate_study::study::FixedParams {
        self.shared
            .iter()
            .map(|(name, (_, value))| (name.clone(), value.clone()))
            .collect()
    }

    /// A member scope over the members from `first` on (the ones refill just added).
    pub(crate) fn member_from(&mut self, first: usize) -> MemberScope<'_, 's, S> {
        let range = first..self.trials.len();
        MemberScope {
            group: self,
            range,
            refill: true,
        }
    }

    /// Tells every live trial its values (the objective's return).
    pub(crate) fn tell_all<V: MemberValues>(&mut self, values: &V) -> Result<()> {
        if values.member_count() != self.trials.len() {
            let expected = self.trials.len();
            self.fail_all("the objective returned the wrong number of member values")?;
            return Err(TrainError::WrongMemberCount {
                what: "the objective's return value".into(),
                expected,
                got: values.member_count(),
            });
        }
        for index in 0..self.trials.len() {
            self.finish(
                index,
                TrialState::Complete,
                Some(&values.values_of(index)),
                None,
            )?;
        }
        self.drop_finished();
        Ok(())
    }

    /// Fails every live trial with `reason`; returns how many.
    pub(crate) fn fail_all(&mut self, reason: &str) -> Result<usize> {
        let count = self.trials.len();
        for index in 0..count {
            self.finish(index, TrialState::Fail, None, Some(reason))?;
        }
        self.drop_finished();
        Ok(count)
    }

    /// Prunes every live trial.
    pub(crate) fn prune_all(&mut self) -> Result<()> {
        for index in 0..self.trials.len() {
            self.finish(index, TrialState::Pruned, None, None)?;
        }
        self.drop_finished();
        Ok(())
    }

    /// Finishes member `index`'s trial (it stays in `trials` until `drop_finished`).
    fn finish(
        &mut self,
        index: usize,
        state: TrialState,
        values: Option<&[f64]>,
        reason: Option<&str>,
    ) -> Result<()> {
        if let Some(profiler) = &mut self.profiler {
            // Finished trials are immutable: the profile goes on before the state.
            let profile = profiler.snapshot_json();
            self.trials[index].set_system_attr(PROFILE_ATTR, profile)?;
        }
        let trial = &self.trials[index];
        // The heartbeat stops before the trial is finished: a finished trial takes no writes.
        if let Some(heartbeat) = &self.heartbeat {
            heartbeat.remove(trial.id());
        }
        let frozen = match self.study.tell_state(trial, state, values, reason) {
            Ok(frozen) => frozen,
            // A value list of the wrong length fails the trial (stored) and is reported; the
            // other members go on.
            Err(StudyError::WrongNumberOfValues { .. }) => self
                .study
                .trials(None)?
                .into_iter()
                .find(|t| t.trial_id == trial.id())
                .ok_or(StudyError::NoCompletedTrial)?,
            Err(e) => return Err(e.into()),
        };
        let outcome = match frozen.state {
            TrialState::Complete => MemberOutcome::Complete,
            TrialState::Pruned => MemberOutcome::Pruned,
            _ => MemberOutcome::Failed,
        };
        self.state.finished(&frozen, outcome);
        self.finished.push((frozen, outcome));
        Ok(())
    }

    /// Removes the trials that were finished from the live list.
    fn drop_finished(&mut self) {
        if let Some(profiler) = &mut self.profiler {
            profiler.end_batch();
        }
        let before = self.trials.len();
        let finished: Vec<u64> = self.finished.iter().map(|(t, _)| t.trial_id).collect();
        self.trials.retain(|t| !finished.contains(&t.id()));
        self.state
            .running_changed(before - self.trials.len(), false);
    }

    fn claim(&mut self, name: &str, scope: Scope) -> Result<()> {
        if self.reported {
            return Err(TrainError::SuggestAfterReport { name: name.into() });
        }
        match self.scopes.get(name) {
            Some(&first) if first != scope => Err(TrainError::ScopeConflict {
                name: name.into(),
                first: first.name(),
                second: scope.name(),
            }),
            _ => {
                self.scopes.insert(name.into(), scope);
                Ok(())
            }
        }
    }
}

/// The heartbeats of a group's live trials, recorded by one thread for the whole group
/// (Optuna's `HeartbeatThread`, with K trials instead of one): while the group trains,
/// another worker's `fail_stale_trials` leaves its trials alone; when this process dies,
/// the heartbeats stop and the trials become stale after the storage's grace period.
struct GroupHeartbeat {
    storage: Arc<dyn saturate_study::storage::Storage>,
    live: Arc<Mutex<Vec<u64>>>,
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl GroupHeartbeat {
    /// Starts the thread when the study's storage has heartbeats (else `None`).
    fn start<S: Study>(study: &S) -> Option<Self> {
        let (storage, _) = study.heartbeat_storage()?;
        let interval = storage.heartbeat()?.interval();
        let live = Arc::new(Mutex::new(Vec::<u64>::new()));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = {
            let storage = storage.clone();
            let live = live.clone();
            std::thread::Builder::new()
                .name("saturate-heartbeat".into())
                .spawn(move || loop {
                    match stopped.recv_timeout(interval) {
                        Err(RecvTimeoutError::Timeout) => {
                            // Held while beating: a trial being finished waits for the beat.
                            let live = live.lock().unwrap_or_else(|e| e.into_inner());
                            for &trial_id in live.iter() {
                                if let Err(e) = storage.record_heartbeat(trial_id) {
                                    log::warn!("heartbeat of trial {trial_id} not recorded: {e}");
                                }
                            }
                        }
                        _ => return,
                    }
                })
        };
        match thread {
            Ok(thread) => Some(Self {
                storage,
                live,
                stop: Some(stop),
                thread: Some(thread),
            }),
            Err(e) => {
                log::warn!(
                    "could not start the heartbeat thread ({e}): this group's trials have no \
                     heartbeat and may be failed as stale by other workers"
                );
                None
            }
        }
    }

    /// Records the first heartbeat of new trials and beats for them from now on.
    fn add(&self, trial_ids: impl Iterator<Item = u64>) -> Result<()> {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        for trial_id in trial_ids {
            self.storage.record_heartbeat(trial_id)?;
            live.push(trial_id);
        }
        Ok(())
    }

    /// Stops beating for a trial (it is about to be finished).
    fn remove(&self, trial_id: u64) {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&id| id != trial_id);
    }
}

impl Drop for GroupHeartbeat {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `host:pid` of this process.
pub(crate) fn worker_name() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!("{host}:{}", std::process::id())
}

/// Suggestions sampled once for a group: the value is sampled on the group's first trial and
/// recorded, with the same distribution, on every other trial. Returned by
/// [`GroupTrial::shared`].
pub struct SharedScope<'g, 's, S: Study> {
    group: &'g mut GroupTrial<'s, S>,
}

impl<S: Study> SharedScope<'_, '_, S> {
    /// A value from any distribution, the same for every member.
    ///
    /// # Errors
    /// [`TrainError::ScopeConflict`], [`TrainError::SuggestAfterReport`]; the study's errors
    /// (an invalid distribution, or another distribution for a name suggested before).
    pub fn suggest(&mut self, name: &str, distribution: Distribution) -> Result<ParamValue> {
        let group = &mut *self.group;
        group.claim(name, Scope::Shared)?;
        if let Some((existing, value)) = group.shared.get(name) {
            if *existing != distribution {
                return Err(StudyError::IncompatibleDistribution {
                    name: name.into(),
                    existing: existing.to_json_string(),
                    requested: distribution.to_json_string(),
                }
                .into());
            }
            return Ok(value.clone());
        }
        let (first, rest) = group
            .trials
            .split_first_mut()
            .expect("a group has at least one member");
        let value = first.suggest(name, distribution.clone())?;
        for trial in rest.iter() {
            if let Some(pinned) = crate::enqueued::pinned_value(trial.frozen(), name) {
                if !crate::enqueued::same_value(&pinned, &value.to_json_value()) {
                    return Err(TrainError::PinnedValueConflict {
                        trial: trial.number(),
                        name: name.into(),
                        pinned: pinned.to_string(),
                        group: value.to_string(),
                    });
                }
            }
        }
        for trial in rest {
            trial.record_param(name, distribution.clone(), &value)?;
        }
        group
            .shared
            .insert(name.into(), (distribution, value.clone()));
        Ok(value)
    }

    /// A float in `[low, high]`.
    pub fn suggest_float(&mut self, name: &str, low: f64, high: f64) -> Result<f64> {
        let d = FloatDistribution::new(low, high, false, None)?.into();
        Ok(self.suggest(name, d)?.as_f64().expect("a float"))
    }

    /// A float in `[low, high]`, log-uniform.
    pub fn suggest_float_log(&mut self, name: &str, low: f64, high: f64) -> Result<f64> {
        let d = FloatDistribution::new(low, high, true, None)?.into();
        Ok(self.suggest(name, d)?.as_f64().expect("a float"))
    }

    /// An integer in `[low, high]`.
    pub fn suggest_int(&mut self, name: &str, low: i64, high: i64) -> Result<i64> {
        self.suggest_int_with(name, low, high, false, 1)
    }

    /// An integer in `{low, low + step, ...} ∩ [low, high]`, optionally log-uniform.
    pub fn suggest_int_with(
        &mut self,
        name: &str,
        low: i64,
        high: i64,
        log: bool,
        step: i64,
    ) -> Result<i64> {
        let d = IntDistribution::new(low, high, log, step)?.into();
        match self.suggest(name, d)? {
            ParamValue::Int(i) => Ok(i),
            other => unreachable!("an int distribution gave {other:?}"),
        }
    }

    /// One of `choices`, returned as the type given (see
    /// [`Trial::suggest_categorical`](saturate_study::Trial::suggest_categorical)).
    pub fn suggest_categorical<C: Into<Choice> + Clone>(
        &mut self,
        name: &str,
        choices: impl IntoIterator<Item = C>,
    ) -> Result<C> {
        let given: Vec<C> = choices.into_iter().collect();
        let d = CategoricalDistribution::new(given.iter().cloned().map(Into::into).collect())?;
        let value = self.suggest(name, d.clone().into())?;
        Ok(given[d.index_of_suggested(&value)].clone())
    }
}

/// Suggestions sampled per member, one trial each (asked in member order, so a sampler that
/// sees running trials, such as TPE with `constant_liar`, keeps them apart). Returned by
/// [`GroupTrial::member`].
pub struct MemberScope<'g, 's, S: Study> {
    group: &'g mut GroupTrial<'s, S>,
    range: core::ops::Range<usize>,
    /// Members that joined a running group: they suggest after the group's reports, and only
    /// names the group already samples per member.
    refill: bool,
}

impl<S: Study> MemberScope<'_, '_, S> {
    /// One value per member from any distribution.
    ///
    /// # Errors
    /// [`TrainError::ScopeConflict`], [`TrainError::SuggestAfterReport`]; the study's errors.
    pub fn suggest(
        &mut self,
        name: &str,
        distribution: Distribution,
    ) -> Result<Members<ParamValue>> {
        let group = &mut *self.group;
        if !self.refill {
            group.claim(name, Scope::Member)?;
        } else if group.scopes.get(name) == Some(&Scope::Shared) {
            return Err(TrainError::ScopeConflict {
                name: name.into(),
                first: "shared",
                second: "member",
            });
        }
        group.trials[self.range.clone()]
            .iter_mut()
            .map(|trial| Ok(trial.suggest(name, distribution.clone())?))
            .collect()
    }

    /// One float in `[low, high]` per member.
    pub fn suggest_float(&mut self, name: &str, low: f64, high: f64) -> Result<Members<f64>> {
        let d = FloatDistribution::new(low, high, false, None)?.into();
        self.floats(name, d)
    }

    /// One float in `[low, high]` per member, log-uniform.
    pub fn suggest_float_log(&mut self, name: &str, low: f64, high: f64) -> Result<Members<f64>> {
        let d = FloatDistribution::new(low, high, true, None)?.into();
        self.floats(name, d)
    }

    /// One float in `{low, low + step, ...} ∩ [low, high]` per member.
    pub fn suggest_float_step(
        &mut self,
        name: &str,
        low: f64,
        high: f64,
        step: f64,
    ) -> Result<Members<f64>> {
        let d = FloatDistribution::new(low, high, false, Some(step))?.into();
        self.floats(name, d)
    }

    /// One integer in `[low, high]` per member.
    pub fn suggest_int(&mut self, name: &str, low: i64, high: i64) -> Result<Members<i64>> {
        let d = IntDistribution::new(low, high, false, 1)?.into();
        Ok(self.suggest(name, d)?.map(|v| match v {
            ParamValue::Int(i) => *i,
            other => unreachable!("an int distribution gave {other:?}"),
        }))
    }

    /// One of `choices` per member, returned as the type given.
    pub fn suggest_categorical<C: Into<Choice> + Clone>(
        &mut self,
        name: &str,
        choices: impl IntoIterator<Item = C>,
    ) -> Result<Members<C>> {
        let given: Vec<C> = choices.into_iter().collect();
        let d = CategoricalDistribution::new(given.iter().cloned().map(Into::into).collect())?;
        Ok(self
            .suggest(name, d.clone().into())?
            .map(|v| given[d.index_of_suggested(v)].clone()))
    }

    fn floats(&mut self, name: &str, distribution: Distribution) -> Result<Members<f64>> {
        Ok(self
            .suggest(name, distribution)?
            .map(|v| v.as_f64().expect("a float")))
    }
}
