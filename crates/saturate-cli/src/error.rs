//! The CLI's errors: each says what to do, and maps to an exit code.

use saturate_study::StudyError;

/// Everything the `saturate` command can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// No `--storage` and no `OPTUNA_STORAGE`.
    #[error(
        "no storage given: pass `--storage PATH` (a journal file), `--storage sqlite:///PATH` or \
         `--storage postgresql://USER@HOST/DB`, or set OPTUNA_STORAGE"
    )]
    MissingStorage,
    /// A storage URL whose scheme saturate does not speak.
    #[error(
        "unsupported storage `{url}`: {reason}; saturate reads journal files (a path), \
         `sqlite:///PATH` and `postgresql://USER@HOST/DB`"
    )]
    UnsupportedStorage {
        /// The URL, with any password replaced by `***`.
        url: String,
        /// Why.
        reason: String,
    },
    /// A journal file that does not exist, for a command that only reads.
    #[error(
        "no journal file at `{path}`: check the path, or create a study there first with \
         `saturate --storage {path} create-study --study-name NAME`"
    )]
    MissingJournal {
        /// The path given.
        path: String,
    },
    /// A SQLite file that does not exist, for a command that only reads.
    #[error(
        "no SQLite database at `{path}` (from `{url}`): check the path (`sqlite:///relative.db`, \
         `sqlite:////absolute.db`), or create a study there first with `saturate create-study`"
    )]
    MissingDatabase {
        /// The URL, password redacted.
        url: String,
        /// The file it names.
        path: String,
    },
    /// An argument that clap cannot check (JSON arguments, combinations).
    #[error("invalid {what}: {reason}")]
    Usage {
        /// The argument.
        what: &'static str,
        /// What is wrong and what is accepted.
        reason: String,
    },
    /// The study or the storage refused the operation.
    #[error("{0}")]
    Study(#[from] StudyError),
    /// Writing the output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

impl CliError {
    /// The process exit code: 2 usage, 3 storage cannot be opened, 4 study or trial not
    /// found, 1 any other failure of an operation.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::MissingStorage
            | CliError::UnsupportedStorage { .. }
            | CliError::Usage { .. } => 2,
            CliError::MissingJournal { .. } | CliError::MissingDatabase { .. } => 3,
            CliError::Study(StudyError::InvalidStorageUrl { .. }) => 2,
            CliError::Study(
                StudyError::UnknownStudy { .. }
                | StudyError::UnknownStudyId { .. }
                | StudyError::UnknownTrial { .. }
                | StudyError::UnknownTrialNumber { .. },
            ) => 4,
            CliError::Study(
                StudyError::Io { .. }
                | StudyError::CorruptJournal { .. }
                | StudyError::LockTimeout { .. }
                | StudyError::Database { .. }
                | StudyError::UnsupportedSchema { .. }
                | StudyError::MissingSchema { .. },
            ) => 3,
            CliError::Study(_) | CliError::Output(_) => 1,
        }
    }

    /// A hint printed under the message, when there is one.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            CliError::Study(StudyError::UnknownStudy { .. }) => {
                Some("`saturate --storage URL studies` lists the studies there")
            }
            CliError::Study(StudyError::DuplicateStudy { .. }) => {
                Some("pass `--skip-if-exists` to reuse it, or choose another `--study-name`")
            }
            CliError::Study(StudyError::TrialFinished { .. }) => {
                Some("pass `--skip-if-finished` to ignore a trial that is already finished")
            }
            _ => None,
        }
    }
}

/// Result alias for the CLI.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// A [`CliError::Usage`].
pub fn usage(what: &'static str, reason: impl Into<String>) -> CliError {
    CliError::Usage {
        what,
        reason: reason.into(),
    }
}
