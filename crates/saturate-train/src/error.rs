//! [`TrainError`]: the runner's typed errors.

use saturate_optim::OptimError;
use saturate_study::StudyError;
use saturate_vmap::VmapError;

/// The result type of the runner.
pub type Result<T, E = TrainError> = core::result::Result<T, E>;

/// What can go wrong while a study drives groups.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrainError {
    /// An invalid setting of [`RunConfig`](crate::RunConfig) or
    /// [`TrainerConfig`](crate::TrainerConfig).
    #[error("invalid run setting `{setting}`: {reason}")]
    InvalidConfig {
        /// The setting.
        setting: &'static str,
        /// Why, and what to do.
        reason: String,
    },
    /// A name suggested in both scopes of one group.
    #[error(
        "`{name}` was suggested as a {first} hyperparameter and then as a {second} one in the \
         same group: a name is either shared by the group (`g.shared()`) or sampled per member \
         (`g.member()`); use another name for one of them"
    )]
    ScopeConflict {
        /// The parameter name.
        name: String,
        /// The scope it was first suggested in.
        first: &'static str,
        /// The scope of the conflicting suggestion.
        second: &'static str,
    },
    /// A suggestion after the group's first report.
    #[error(
        "`{name}` was suggested after the group's first `report`: suggest every hyperparameter \
         before training starts (members that join later could not get it)"
    )]
    SuggestAfterReport {
        /// The parameter name.
        name: String,
    },
    /// A per-member list whose length is not the group's member count.
    #[error(
        "{what} has {got} values but the group has {expected} members: return or report one \
         value per member, in member order (`g.members()` is the current count; it shrinks \
         when `report` prunes members)"
    )]
    WrongMemberCount {
        /// What had the wrong length.
        what: String,
        /// The group's member count.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A report step lower than or equal to a previous one.
    #[error("report step {step} is not after the previous step {previous}: steps must increase")]
    StepNotIncreasing {
        /// The step given.
        step: i64,
        /// The last reported step.
        previous: i64,
    },
    /// The run was interrupted (SIGINT / Ctrl-C): in-flight trials were marked FAIL.
    #[error(
        "interrupted: the {failed} trial(s) in flight were marked FAIL (\"interrupted\"); the \
         study's storage is consistent and can be resumed"
    )]
    Interrupted {
        /// How many in-flight trials were failed.
        failed: usize,
    },
    /// No member of the group goes on (all pruned or failed, or the run's timeout stopped
    /// the group): not a failure. Returned by `report`; return it from the objective with `?`
    /// and the runner ends the group normally, like Optuna's `TrialPruned`.
    #[error("the group is finished: {reason}")]
    GroupFinished {
        /// Why.
        reason: String,
    },
    /// A WAITING trial that joined a group pins a value of a parameter the group samples as
    /// shared, and the value differs from the group's. Groups match enqueued trials by the
    /// shared names the study records (the first group of a study that suggests a shared
    /// name records it); before then a group takes WAITING trials in order, and two of them
    /// may disagree on a name nobody knew was shared. Nothing is replaced: the group fails
    /// with this error, the names are recorded, and later groups keep such trials apart.
    #[error(
        "trial {trial} pins `{name}` = {pinned}, but its group samples `{name}` as shared and          has {group}: the study did not know `{name}` is shared when the group took the trial.          It knows now, and later groups match enqueued trials by it: enqueue the trial again,          or run with a retry callback (RetryFailedTrialCallback), which re-enqueues it"
    )]
    PinnedValueConflict {
        /// The joining trial's number.
        trial: u64,
        /// The parameter's name.
        name: String,
        /// The value the trial pins.
        pinned: String,
        /// The group's value.
        group: String,
    },
    /// A group's profiler could not start
    /// ([`RunConfig::profile_gpu`](crate::RunConfig::profile_gpu)'s source failed to read).
    #[error(
        "could not profile the group: {source}; fix the GPU source or run without `profile_gpu`"
    )]
    Profile {
        /// The profiler's error.
        #[source]
        source: saturate_profile::ProfileError,
    },
    /// An error of the study layer.
    #[error(transparent)]
    Study(#[from] StudyError),
    /// An error of a group's module (member count, indices).
    #[error(transparent)]
    Vmap(#[from] VmapError),
    /// An error of a group's optimizer.
    #[error(transparent)]
    Optim(#[from] OptimError),
}
