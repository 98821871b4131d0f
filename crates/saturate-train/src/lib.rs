//! The group runner: a study drives groups of K trials trained as one
//! [`Batched`](saturate_vmap::Batched) model.
//!
//! A **group** is K trials of one study that share the values of every *shared*
//! hyperparameter (sampled once; they may change shapes: width, depth) and differ in their
//! *member* hyperparameters (sampled per trial: learning rate, momentum, dropout...). The
//! group trains as one batched model; each member's results are told to its own trial, so the
//! study (and Python Optuna or optuna-dashboard reading its journal) sees K ordinary trials.
//! The group's id is in every trial's `saturate:group` system attribute; with
//! [`RunConfig::with_profile`] on, the group's profile (wall time, CPU time, peak memory, GPU
//! busy fraction and energy) is in `saturate:profile`.
//!
//! Two levels:
//! - [`run`] with an objective `FnMut(&mut GroupTrial) -> Result<Members<f64>, _>`: you write
//!   the training loop; [`GroupTrial::report`] asks the pruner about each member and says
//!   which go on (you keep them in your model, optimizer and per-member values with one
//!   [`Retain::retain_members`] call);
//! - [`GroupTrainer`] (with [`run_trainer`]): you describe the model, the step and the
//!   evaluation ([`GroupTask`]); the trainer owns the model, the optimizer, the per-member
//!   hyperparameters and the data loop, so pruning shrinks all of them in one place, and with
//!   refill on, freed slots take new trials with the group's shared values (continuous
//!   batching).
//!
//! ```
//! use saturate_study::prelude::*;
//! use saturate_train::{run, RunConfig};
//!
//! let study = StudyConfig::new()
//!     .with_sampler(TpeSamplerConfig::new().with_seed(1).with_constant_liar(true).init()?)
//!     .init()?;
//! let summary = run(&study, &RunConfig::new().with_group_size(4).with_n_trials(8).with_progress(false), |g| {
//!     let depth = g.shared().suggest_int("depth", 1, 3)?; // one value for the group
//!     let lr = g.member().suggest_float_log("lr", 1e-4, 1e-1)?; // Members<f64>: one per trial
//!     // ... build a Batched model of g.members() members, train with `lr` ...
//!     Ok(lr.map(|lr| (lr.log10() + 2.0).abs() + depth as f64))
//! })?;
//! assert_eq!(summary.complete, 8);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod enqueued;
mod error;
mod group;
mod halving;
mod interrupt;
#[cfg(feature = "burn-train")]
pub mod learner;
mod members;
pub mod pbt;
mod profile;
mod retain;
mod run;
mod trainer;

pub use enqueued::SHARED_PARAMS_ATTR;
pub use error::{Result, TrainError};
pub use group::{
    GroupTrial, MemberOutcome, MemberScope, SharedScope, GROUP_ATTR, STOPPED_ATTR, WORKER_ATTR,
};
pub use members::{MemberValues, Members};
pub use pbt::PbtConfig;
pub use profile::{GpuSourceFactory, PROFILE_ATTR};
pub use retain::Retain;
pub use run::{run, Progress, RunConfig, RunSummary, TimeoutPolicy};
pub use trainer::{
    run_trainer, GroupBackend, GroupTask, GroupTrainer, MemberHyper, Occupancy, TrainerConfig,
    DEFAULT_TRIALS_PER_GROUP_FACTOR,
};
