//! [`run`]: a study drives groups of K trials through the user's objective.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::io::IsTerminal;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use saturate_profile::{GpuSource, ProfileError};
use saturate_study::study::ObjectiveError;
use saturate_study::{FrozenTrial, Study, StudyDirection, TrialPruned};

use crate::error::{Result, TrainError};
use crate::group::{GroupEnd, GroupTrial, MemberOutcome};
use crate::members::MemberValues;
use crate::profile::{GpuSourceFactory, GroupProfiler};

/// What to do with running groups when the run's timeout passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeoutPolicy {
    /// Start no new group; running groups train to the end (Optuna's behaviour).
    #[default]
    FinishGroups,
    /// Also stop running groups at their next `report`: their trials are told PRUNED (with
    /// the last reported value) and marked `saturate:stopped = "timeout"`.
    StopAtNextReport,
}

/// Whether to draw a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Progress {
    /// On a terminal (stderr is a TTY), else quiet.
    #[default]
    Auto,
    /// Never.
    Hidden,
}

/// The settings of a [`run`]: group size and budgets.
///
/// ```
/// use std::time::Duration;
/// use saturate_train::RunConfig;
///
/// let config = RunConfig::new()
///     .with_group_size(8)
///     .with_n_trials(24)
///     .with_timeout(Duration::from_secs(600));
/// assert_eq!(config.group_size, 8);
/// ```
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// K: trials trained together as one group (default 8).
    pub group_size: usize,
    /// Trials to run in this call (all processes on one study each run their own); `None`:
    /// until the timeout or an interrupt.
    pub n_trials: Option<usize>,
    /// Stop asking for new trials after this long.
    pub timeout: Option<Duration>,
    /// What the timeout does to running groups.
    pub on_timeout: TimeoutPolicy,
    /// The progress bar.
    pub progress: Progress,
    /// Catch SIGINT (Ctrl-C): in-flight trials are marked FAIL at their next `report` and the
    /// run returns [`TrainError::Interrupted`]. A second Ctrl-C exits at once. The handler is
    /// active only while `run` runs: afterwards Ctrl-C does what it did before (on Unix the
    /// previous `sigaction` is restored; elsewhere Ctrl-C outside a run exits with status
    /// 130, the default). Default on.
    pub handle_interrupt: bool,
    /// Profile each group and write the profile on its trials (system attribute
    /// [`PROFILE_ATTR`](crate::PROFILE_ATTR)). Default off.
    pub profile: bool,
    /// The GPU each group's profile samples (busy fraction, energy, memory); `None`: wall
    /// time, CPU time and peak resident memory only. Used only with [`profile`](Self::profile).
    pub profile_gpu: Option<GpuSourceFactory>,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            group_size: 8,
            n_trials: None,
            timeout: None,
            on_timeout: TimeoutPolicy::default(),
            progress: Progress::default(),
            handle_interrupt: true,
            profile: false,
            profile_gpu: None,
        }
    }
}

impl RunConfig {
    /// The defaults: groups of 8, no budget (set `n_trials` or `timeout`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets K, the group size.
    pub fn with_group_size(mut self, k: usize) -> Self {
        self.group_size = k;
        self
    }

    /// Sets the number of trials.
    pub fn with_n_trials(mut self, n: usize) -> Self {
        self.n_trials = Some(n);
        self
    }

    /// Sets the timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets what the timeout does to running groups.
    pub fn with_on_timeout(mut self, policy: TimeoutPolicy) -> Self {
        self.on_timeout = policy;
        self
    }

    /// Shows (`true`, on a terminal) or hides the progress bar.
    pub fn with_progress(mut self, show: bool) -> Self {
        self.progress = if show {
            Progress::Auto
        } else {
            Progress::Hidden
        };
        self
    }

    /// Catches SIGINT (default) or leaves it to the process.
    pub fn with_handle_interrupt(mut self, on: bool) -> Self {
        self.handle_interrupt = on;
        self
    }

    /// Profiles each group's training (off by default) with [`saturate_profile`]: wall time,
    /// process CPU time, peak resident memory and, with [`with_profile_gpu`](Self::with_profile_gpu),
    /// the GPU's busy fraction, mean utilisation, energy and peak memory. Each trial gets the
    /// JSON of the group's [`Profile`](saturate_profile::Profile) from the group's start
    /// until the trial finished, in its [`PROFILE_ATTR`](crate::PROFILE_ATTR) system
    /// attribute (trials finished together carry the same profile; the last ones, the whole
    /// group's). Python Optuna and optuna-dashboard show it with the other system attributes.
    ///
    /// The CPU time and peak resident memory are the process's: profile groups of one run in
    /// one process at a time (the runner does) and nothing heavy beside them.
    ///
    /// ```
    /// use saturate_study::prelude::*;
    /// use saturate_train::{run, RunConfig, PROFILE_ATTR};
    ///
    /// let study = StudyConfig::new().with_sampler(RandomSamplerConfig::new().with_seed(0).init()).init()?;
    /// let config = RunConfig::new().with_group_size(2).with_n_trials(2).with_profile(true);
    /// run(&study, &config, |g| Ok(g.member().suggest_float("x", 0.0, 1.0)?))?;
    /// let trial = &study.trials(None)?[0];
    /// let profile: saturate_profile::Profile =
    ///     serde_json::from_value(trial.system_attrs[PROFILE_ATTR].clone())?;
    /// assert!(profile.wall_seconds > 0.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_profile(mut self, on: bool) -> Self {
        self.profile = on;
        self
    }

    /// Samples a GPU in each group's profile (and turns profiling on): `make` is called once
    /// per group for a fresh source, e.g. `|| saturate_profile::NvmlSource::new(0)` (feature
    /// `nvml` of saturate-profile). A source that fails to read when its group starts ends
    /// the run with [`TrainError::Profile`] before that group's trials are asked.
    pub fn with_profile_gpu<G, F>(mut self, make: F) -> Self
    where
        G: GpuSource + 'static,
        F: Fn() -> core::result::Result<G, ProfileError> + Send + Sync + 'static,
    {
        self.profile = true;
        self.profile_gpu = Some(GpuSourceFactory::new(make));
        self
    }

    pub(crate) fn check(&self) -> Result<()> {
        if self.group_size == 0 {
            return Err(TrainError::InvalidConfig {
                setting: "group_size",
                reason: "a group needs at least one member: use 1 to train trials one by one"
                    .into(),
            });
        }
        if self.n_trials.is_none() && self.timeout.is_none() {
            return Err(TrainError::InvalidConfig {
                setting: "n_trials",
                reason: "set `n_trials` or `timeout` (or both), or the run never ends".into(),
            });
        }
        Ok(())
    }
}

/// What a [`run`] did.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Trials told COMPLETE.
    pub complete: usize,
    /// Trials told PRUNED.
    pub pruned: usize,
    /// Trials told FAIL.
    pub failed: usize,
    /// Groups trained.
    pub groups: usize,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// The study's best trial after the run (single objective, if any completed).
    pub best: Option<Arc<FrozenTrial>>,
    /// The errors that failed whole groups (objective errors and panics), in order.
    pub group_errors: Vec<String>,
}

impl RunSummary {
    /// Trials finished by the run.
    pub fn trials(&self) -> usize {
        self.complete + self.pruned + self.failed
    }
}

impl fmt::Display for RunSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let minutes = self.elapsed.as_secs_f64() / 60.0;
        writeln!(
            f,
            "| trials | complete | pruned | failed | groups | wall time | trials/min |"
        )?;
        writeln!(f, "|---|---|---|---|---|---|---|")?;
        writeln!(
            f,
            "| {} | {} | {} | {} | {} | {:.1} s | {:.1} |",
            self.trials(),
            self.complete,
            self.pruned,
            self.failed,
            self.groups,
            self.elapsed.as_secs_f64(),
            if minutes > 0.0 {
                self.trials() as f64 / minutes
            } else {
                0.0
            }
        )?;
        if let Some(best) = &self.best {
            writeln!(
                f,
                "best trial: #{} value {}",
                best.number,
                best.value().map_or("-".into(), |v| format!("{v:.6}"))
            )?;
            for (name, param) in &best.params {
                writeln!(f, "  {name} = {}", param.value())?;
            }
        }
        for error in &self.group_errors {
            writeln!(f, "group failed: {error}")?;
        }
        Ok(())
    }
}

/// Why running groups should stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    Interrupted,
    Timeout,
}

/// What an objective's error means for its group.
enum ObjectiveOutcome {
    /// The group ended normally: `report` finished it, or the objective raised `TrialPruned`
    /// or `GroupFinished` (anywhere in the error's source chain).
    Pruned,
    /// An `Interrupted` error in the chain.
    Interrupted { failed: usize },
    /// A real error: the group's running trials fail.
    Failed,
}

fn objective_outcome(
    error: &(dyn std::error::Error + 'static),
    ended: Option<GroupEnd>,
) -> ObjectiveOutcome {
    if ended == Some(GroupEnd::Finished) || TrialPruned::in_chain(error) {
        return ObjectiveOutcome::Pruned;
    }
    let mut next = Some(error);
    while let Some(e) = next {
        match e.downcast_ref::<TrainError>() {
            Some(TrainError::GroupFinished { .. }) => return ObjectiveOutcome::Pruned,
            Some(TrainError::Interrupted { failed }) => {
                return ObjectiveOutcome::Interrupted { failed: *failed }
            }
            _ => next = e.source(),
        }
    }
    ObjectiveOutcome::Failed
}

/// The counters and signals of one run, shared by its groups.
pub(crate) struct RunState {
    started: Instant,
    timeout: Option<Duration>,
    on_timeout: TimeoutPolicy,
    handle_interrupt: bool,
    n_trials: Option<usize>,
    asked: Cell<usize>,
    direction: Option<StudyDirection>,
    complete: Cell<usize>,
    pruned: Cell<usize>,
    failed: Cell<usize>,
    running: Cell<usize>,
    best: Cell<Option<f64>>,
    bar: ProgressBar,
    group_errors: RefCell<Vec<String>>,
}

impl RunState {
    fn new(config: &RunConfig, directions: &[StudyDirection]) -> Self {
        let show = config.progress == Progress::Auto && std::io::stderr().is_terminal();
        let bar = match (show, config.n_trials) {
            (false, _) => ProgressBar::hidden(),
            (true, Some(n)) => {
                ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::stderr())
            }
            (true, None) => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} trials [{elapsed_precise}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Self {
            started: Instant::now(),
            timeout: config.timeout,
            on_timeout: config.on_timeout,
            handle_interrupt: config.handle_interrupt,
            n_trials: config.n_trials,
            asked: Cell::new(0),
            direction: (directions.len() == 1).then(|| directions[0]),
            complete: Cell::new(0),
            pruned: Cell::new(0),
            failed: Cell::new(0),
            running: Cell::new(0),
            best: Cell::new(None),
            bar,
            group_errors: RefCell::new(Vec::new()),
        }
    }

    fn timed_out(&self) -> bool {
        self.timeout.is_some_and(|t| self.started.elapsed() >= t)
    }

    fn interrupted(&self) -> bool {
        self.handle_interrupt && crate::interrupt::interrupted()
    }

    /// Takes up to `want` trials from the budget: how many may be asked now (0 once the
    /// budget is spent, the timeout passed or the run was interrupted).
    pub(crate) fn claim(&self, want: usize) -> usize {
        if self.timed_out() || self.interrupted() {
            return 0;
        }
        let left = self.n_trials.map_or(usize::MAX, |n| n - self.asked.get());
        let granted = want.min(left);
        self.asked.set(self.asked.get() + granted);
        granted
    }

    /// Why running groups should stop now, if they should.
    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        if self.interrupted() {
            Some(StopReason::Interrupted)
        } else if self.on_timeout == TimeoutPolicy::StopAtNextReport && self.timed_out() {
            Some(StopReason::Timeout)
        } else {
            None
        }
    }

    pub(crate) fn finished(&self, trial: &FrozenTrial, outcome: MemberOutcome) {
        let counter = match outcome {
            MemberOutcome::Complete => &self.complete,
            MemberOutcome::Pruned => &self.pruned,
            MemberOutcome::Failed => &self.failed,
        };
        counter.set(counter.get() + 1);
        if let (MemberOutcome::Complete, Some(direction), Some(value)) =
            (outcome, self.direction, trial.value())
        {
            let better = self
                .best
                .get()
                .is_none_or(|best| direction.to_loss(value) < direction.to_loss(best));
            if better {
                self.best.set(Some(value));
            }
        }
        self.bar.inc(1);
        log::debug!("trial {} finished: {:?}", trial.number, outcome);
    }

    pub(crate) fn running_changed(&self, by: usize, added: bool) {
        let running = self.running.get();
        self.running.set(if added {
            running + by
        } else {
            running.saturating_sub(by)
        });
        self.progress_changed();
    }

    pub(crate) fn progress_changed(&self) {
        if self.bar.is_hidden() {
            return;
        }
        let done = self.complete.get() + self.pruned.get() + self.failed.get();
        let minutes = self.started.elapsed().as_secs_f64() / 60.0;
        self.bar.set_message(format!(
            "complete {} pruned {} failed {} | running {} | best {} | {:.1} trials/min",
            self.complete.get(),
            self.pruned.get(),
            self.failed.get(),
            self.running.get(),
            self.best.get().map_or("-".into(), |b| format!("{b:.4}")),
            if minutes > 0.0 {
                done as f64 / minutes
            } else {
                0.0
            },
        ));
    }

    pub(crate) fn group_failed(&self, message: String) {
        log::warn!("group failed: {message}");
        self.group_errors.borrow_mut().push(message);
    }
}

/// Runs `objective` on groups of trials of `study` until `config`'s budget is spent.
///
/// Each group is `min(group_size, trials left)` trials asked together (10 trials with K = 4:
/// groups of 4, 4 and 2). The objective trains them as one group and returns one value per
/// member still running ([`Members`](crate::Members)`<f64>`, or `Members<Vec<f64>>` for a
/// multi-objective study); those are told to their trials.
///
/// Failures stay as small as they can: a member whose reported or returned value is NaN
/// fails its own trial only (±inf is a value, as in Optuna); an objective error or panic fails the group's running
/// trials (the error is in their `fail_reason` and in [`RunSummary::group_errors`]) and the
/// run goes on with the next group. Returning [`TrainError::GroupFinished`] (from `report`)
/// or Optuna-style [`TrialPruned`] ends the group normally.
///
/// On a storage with heartbeats (`with_heartbeat` of the journal and RDB storages), each
/// group's live trials get a heartbeat from one thread, and before each group is asked the
/// trials of dead workers (no heartbeat within the grace period) are failed and passed to the
/// storage's stale-trial callback, as [`Study::optimize`] does.
///
/// ```
/// use saturate_study::prelude::*;
/// use saturate_train::{run, Members, RunConfig};
///
/// let study = StudyConfig::new().with_sampler(RandomSamplerConfig::new().with_seed(0).init()).init()?;
/// let summary = run(&study, &RunConfig::new().with_group_size(4).with_n_trials(10), |g| {
///     let offset = g.shared().suggest_float("offset", 0.0, 1.0)?;
///     let x = g.member().suggest_float("x", -2.0, 2.0)?;
///     Ok(x.map(|x| (x - offset).powi(2)))
/// })?;
/// assert_eq!((summary.complete, summary.groups), (10, 3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`TrainError::InvalidConfig`] for a bad config; [`TrainError::Interrupted`] after SIGINT;
/// [`TrainError::Profile`] when a profiled group's GPU source fails to start; storage errors
/// of the study.
pub fn run<S, V, F>(study: &S, config: &RunConfig, mut objective: F) -> Result<RunSummary>
where
    S: Study,
    V: MemberValues,
    F: FnMut(&mut GroupTrial<'_, S>) -> core::result::Result<V, ObjectiveError>,
{
    config.check()?;
    // SIGINT is caught only while this run runs; the previous disposition is back when the
    // guard drops, on every return path.
    let _interrupt = config
        .handle_interrupt
        .then(crate::interrupt::InterruptScope::enter);
    let state = RunState::new(config, study.directions());
    let mut groups = 0;
    loop {
        if state.interrupted() {
            state.bar.abandon();
            return Err(TrainError::Interrupted { failed: 0 });
        }
        let k = state.claim(config.group_size);
        if k == 0 {
            break;
        }
        // Started before the trials are asked: a GPU source that cannot be read fails the
        // run without leaving RUNNING trials behind.
        let profiler = config
            .profile
            .then(|| GroupProfiler::start(config.profile_gpu.as_ref()))
            .transpose()
            .map_err(|source| TrainError::Profile { source })?;
        // Trials of dead workers (no heartbeat within the grace period) are failed and
        // handed to the storage's stale-trial callback first, as `Study::optimize` does; a
        // retry callback enqueues copies this group may claim.
        if let Some((storage, study_id)) = study.heartbeat_storage() {
            let failed = saturate_study::storage::fail_stale_trials(&*storage, study_id)?;
            if !failed.is_empty() {
                log::warn!(
                    "failed {} stale trial(s) of dead workers: ids {failed:?}",
                    failed.len()
                );
            }
        }
        // Enqueued and retried trials first, grouped by the shared values they pin.
        let trials = crate::enqueued::ask_group(study, k)?;
        groups += 1;
        let mut group = GroupTrial::new(study, trials, &state, profiler)?;
        log::info!(
            "group {} started: trials {:?}",
            group.group_id(),
            group.trial_numbers()
        );
        let outcome = catch_unwind(AssertUnwindSafe(|| objective(&mut group)));
        // Later groups match enqueued trials by the names this group suggested as shared.
        if let Err(e) = crate::enqueued::record_shared_names(study, group.shared_names()) {
            log::warn!("could not record the group's shared parameter names: {e}");
        }
        // What `report` decided is recorded on the group: it holds whatever the objective did
        // with the error (returned it, wrapped it, replaced it or swallowed it).
        if let Some(GroupEnd::Interrupted { failed }) = group.ended {
            state.bar.abandon();
            return Err(TrainError::Interrupted { failed });
        }
        match outcome {
            Ok(Ok(values)) => {
                if let Err(e) = group.tell_all(&values) {
                    state.group_failed(e.to_string());
                }
            }
            Ok(Err(error)) => match objective_outcome(&*error, group.ended) {
                ObjectiveOutcome::Pruned => group.prune_all()?,
                ObjectiveOutcome::Interrupted { failed } => {
                    state.bar.abandon();
                    return Err(TrainError::Interrupted { failed });
                }
                ObjectiveOutcome::Failed => {
                    let message = error.to_string();
                    group.fail_all(&message)?;
                    state.group_failed(message);
                }
            },
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".into());
                let message = format!("panicked: {message}");
                group.fail_all(&message)?;
                state.group_failed(message);
            }
        }
    }
    state.bar.finish();
    let best = if study.directions().len() == 1 {
        study.best_trial().ok()
    } else {
        None
    };
    let summary = RunSummary {
        complete: state.complete.get(),
        pruned: state.pruned.get(),
        failed: state.failed.get(),
        groups,
        elapsed: state.started.elapsed(),
        best,
        group_errors: state.group_errors.take(),
    };
    log::info!("run finished:\n{summary}");
    if !state.bar.is_hidden() {
        eprintln!("{summary}");
    }
    Ok(summary)
}
