//! The crate's error type.

use std::path::PathBuf;
use std::time::Duration;

use crate::trial::TrialState;

/// Everything that can go wrong in a study, a sampler, a pruner or a storage.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// A distribution's parameters are inconsistent (low > high, log with low <= 0, a
    /// step that is not positive, log combined with a step, no categorical choices).
    #[error("invalid distribution: {reason}")]
    InvalidDistribution {
        /// What is wrong.
        reason: String,
    },
    /// An argument of a pruner or a trial method is out of its range.
    #[error("invalid {what}: {reason}")]
    InvalidArgument {
        /// The argument's name, as in the signature (`n_warmup_steps`, `step`).
        what: &'static str,
        /// What is wrong and what is accepted.
        reason: String,
    },
    /// A parameter name was suggested again in the same trial with another distribution.
    #[error("parameter `{name}` was suggested as {existing} and now as {requested}")]
    IncompatibleDistribution {
        /// The parameter name.
        name: String,
        /// The distribution it was first suggested with, as Optuna's JSON.
        existing: String,
        /// The distribution of the new call, as Optuna's JSON.
        requested: String,
    },
    /// A parameter name that other trials of the study used with another distribution kind
    /// (float, int, categorical), another log setting, or other categorical choices: Optuna
    /// refuses the same (`check_distribution_compatibility`), and a study that mixed them
    /// would break every Python worker that reads it.
    #[error(
        "parameter `{name}` is {existing} in the study's other trials and cannot be \
         {requested}: {reason}; use another name for the new search space"
    )]
    DistributionConflict {
        /// The parameter name.
        name: String,
        /// The study's distribution for it, as Optuna's JSON.
        existing: String,
        /// The refused one, as Optuna's JSON.
        requested: String,
        /// What differs.
        reason: &'static str,
    },
    /// A value is not inside the distribution it is given for (fixed parameters, `tell`
    /// of enqueued values, grids).
    #[error("value {value} of parameter `{name}` is not in {distribution}")]
    ParamOutOfDistribution {
        /// The parameter name.
        name: String,
        /// The offending value, as text.
        value: String,
        /// The distribution, as Optuna's JSON.
        distribution: String,
    },
    /// A sampler returned a value outside the distribution it was asked for, NaN included.
    /// Nothing was stored: the sampler has a bug.
    #[error(
        "the sampler returned {value} for parameter `{name}`, which is not in {distribution}; \
         nothing was stored (this is a bug in the sampler)"
    )]
    SampledOutOfDistribution {
        /// The parameter name.
        name: String,
        /// The value the sampler returned (internal representation).
        value: f64,
        /// The distribution, as Optuna's JSON.
        distribution: String,
    },
    /// No study with this name in the storage.
    #[error("no study named `{name}`")]
    UnknownStudy {
        /// The name looked up.
        name: String,
    },
    /// No study with this id in the storage (deleted, or never created).
    #[error("no study with id {study_id}")]
    UnknownStudyId {
        /// The id looked up.
        study_id: u64,
    },
    /// A study with this name exists and `load_if_exists` was not set.
    #[error("a study named `{name}` already exists")]
    DuplicateStudy {
        /// The name.
        name: String,
    },
    /// No trial with this id (or number) in the storage.
    #[error("no trial with id {trial_id}")]
    UnknownTrial {
        /// The id looked up.
        trial_id: u64,
    },
    /// No trial with this number in the study.
    #[error("the study has no trial number {number}")]
    UnknownTrialNumber {
        /// The number looked up.
        number: u64,
    },
    /// Finished trials are immutable.
    #[error("trial {trial_id} is already finished ({state:?})")]
    TrialFinished {
        /// The trial's id.
        trial_id: u64,
        /// Its final state.
        state: TrialState,
    },
    /// A trial can only be told COMPLETE, PRUNED or FAIL.
    #[error("a trial cannot be told {state:?}; use Complete, Pruned or Fail")]
    InvalidTellState {
        /// The state asked for.
        state: TrialState,
    },
    /// `tell` got a different number of values than the study has objectives.
    #[error("the study has {expected} objective(s) but {got} value(s) were given")]
    WrongNumberOfValues {
        /// Number of directions of the study.
        expected: usize,
        /// Number of values given.
        got: usize,
    },
    /// An operation that needs exactly one objective was used on a multi-objective study.
    #[error("`{operation}` needs a single-objective study, this one has {objectives} objectives")]
    MultiObjective {
        /// The operation.
        operation: &'static str,
        /// Number of objectives of the study.
        objectives: usize,
    },
    /// The study has no completed trial yet.
    #[error("the study has no completed trial")]
    NoCompletedTrial,
    /// The study has completed trials, but every one violates a constraint
    /// ([`Trial::set_constraint`](crate::trial::Trial::set_constraint): a value above 0).
    #[error(
        "no completed trial is feasible (every one has a constraint value above 0); run more \
         trials, or look at `Study::trials` to see which constraints fail"
    )]
    NoFeasibleTrial,
    /// A journal line is not valid and more lines follow it (a torn last line is not an
    /// error: it is ignored until completed).
    #[error("{}:{line}: corrupt journal line: {reason}", path.display())]
    CorruptJournal {
        /// The journal file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What the reader could not accept.
        reason: String,
    },
    /// The journal lock was not acquired within the configured timeout.
    #[error("timed out after {waited:?} waiting for lock {}", path.display())]
    LockTimeout {
        /// The lock path (`<journal>.lock`).
        path: PathBuf,
        /// How long the caller waited.
        waited: Duration,
    },
    /// An I/O error on a file.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The objective function returned an error or panicked; the trial was marked FAIL.
    #[error("objective failed in trial {number}: {message}")]
    ObjectiveFailed {
        /// The trial's number.
        number: u64,
        /// The error or panic message.
        message: String,
    },
    /// A sampler cannot work with what it was given (e.g. a grid that lacks a parameter).
    #[error("sampler: {reason}")]
    Sampler {
        /// Why.
        reason: String,
    },
    /// An RDB storage URL saturate cannot use. The URL is shown with its password redacted.
    #[error("invalid storage URL `{url}`: {reason}")]
    InvalidStorageUrl {
        /// The URL, password redacted.
        url: String,
        /// Why, and the forms that work.
        reason: String,
    },
    /// The database of an RDB storage failed (connection, SQL or I/O). The URL is shown with
    /// its password redacted.
    #[error("database error on `{url}`: {reason}")]
    Database {
        /// The URL, password redacted.
        url: String,
        /// The database's message.
        reason: String,
    },
    /// The database lacks Optuna's tables where they must exist already
    /// ([`RdbStorage::open_existing`](crate::storage::RdbStorage::open_existing): a
    /// read-only command, say), so nothing was created.
    #[error(
        "`{url}` holds no Optuna study storage (missing tables: {missing}): check the URL's \
         database name, or create a study there first (`saturate --storage URL create-study`, \
         `optuna create-study`)"
    )]
    MissingSchema {
        /// The URL, password redacted.
        url: String,
        /// The missing tables, comma-separated.
        missing: String,
    },
    /// The database holds an Optuna RDB schema that saturate does not know.
    #[error(
        "`{url}` has Optuna RDB schema {found}, saturate knows {expected}: migrate it with \
         `optuna storage upgrade --storage URL` (Python Optuna 4.9/5.0) if it is older, or use \
         a fresh database if it was written by a newer Optuna"
    )]
    UnsupportedSchema {
        /// The URL, password redacted.
        url: String,
        /// The schema found (alembic revision / schema version).
        found: String,
        /// The schema saturate writes and reads.
        expected: String,
    },
}

/// Result alias for this crate.
pub type Result<T, E = StudyError> = std::result::Result<T, E>;

pub(crate) fn invalid_argument(what: &'static str, reason: impl Into<String>) -> StudyError {
    StudyError::InvalidArgument {
        what,
        reason: reason.into(),
    }
}

pub(crate) fn invalid(reason: impl Into<String>) -> StudyError {
    StudyError::InvalidDistribution {
        reason: reason.into(),
    }
}
