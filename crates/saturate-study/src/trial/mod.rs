//! Trials: states, stored snapshots and the define-by-run handle.

mod frozen;
mod state;
#[allow(clippy::module_inception)]
mod trial;

pub use frozen::{FrozenTrial, Param, CONSTRAINTS_KEY};
pub use state::{StudyDirection, TrialState};
pub use trial::{Trial, TrialPruned};
