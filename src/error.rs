//! One error type for programs that use several of saturate's crates.

use saturate_data::DataError;
use saturate_optim::OptimError;
use saturate_profile::ProfileError;
use saturate_study::study::ObjectiveError;
use saturate_study::StudyError;
use saturate_train::TrainError;
use saturate_vmap::VmapError;

/// Any error of saturate's crates, so that `?` works across them in one function
/// (`fn main() -> saturate::Result<()>`). Each variant wraps one crate's error and shows its
/// message unchanged; match on the inner error for the details and what to do.
///
/// ```
/// use saturate::prelude::*;
///
/// fn tune() -> saturate::Result<f64> {
///     let study = StudyConfig::new()
///         .with_sampler(TpeSamplerConfig::new().with_seed(0).init()?) // StudyError
///         .init()?;
///     let summary = run(&study, &RunConfig::new().with_group_size(2).with_n_trials(2), |g| {
///         Ok(g.member().suggest_float("x", 0.0, 1.0)?)
///     })?; // TrainError
///     assert_eq!(summary.complete, 2);
///     Ok(study.best_value()?)
/// }
/// assert!(tune()? < 1.0);
/// # Ok::<(), saturate::Error>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A group or member operation failed (saturate-vmap).
    #[error(transparent)]
    Vmap(#[from] VmapError),
    /// An optimizer could not be built or stepped (saturate-optim).
    #[error(transparent)]
    Optim(#[from] OptimError),
    /// A study, sampler, pruner or storage failed (saturate-study).
    #[error(transparent)]
    Study(#[from] StudyError),
    /// The runner or trainer failed (saturate-train).
    #[error(transparent)]
    Train(#[from] TrainError),
    /// A dataset could not be found or read (saturate-data).
    #[error(transparent)]
    Data(#[from] DataError),
    /// Profiling failed (saturate-profile).
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// An objective's or a task's own error.
    #[error(transparent)]
    Objective(ObjectiveError),
    /// Reading or writing a file of the program.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<ObjectiveError> for Error {
    fn from(error: ObjectiveError) -> Self {
        Error::Objective(error)
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
