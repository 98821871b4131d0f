//! An Optuna-style, define-by-run hyperparameter study in native Rust.
//!
//! - [`Study`] / [`DefaultStudy`]: ask, tell, enqueue, optimize; trials suggest
//!   parameters on first use ([`Trial`]).
//! - [`samplers`]: random, grid, quasi-Monte Carlo, TPE and the Gaussian-process sampler
//!   (Optuna's algorithms), CMA-ES.
//! - [`pruners`]: median, percentile, successive halving, Hyperband, threshold, patient,
//!   Wilcoxon.
//! - [`testing`]: the sampler and storage conformance suites, public for your own
//!   implementations.
//! - [`storage`]: in memory, and Optuna's JournalStorage file format, which Python Optuna
//!   and optuna-dashboard read and write alongside saturate.
//!
//! ```
//! use saturate_study::prelude::*;
//!
//! let study = StudyConfig::new()
//!     .with_direction(StudyDirection::Minimize)
//!     .with_sampler(RandomSamplerConfig::new().with_seed(1).init())
//!     .init()?;
//! let mut trial = study.ask()?;
//! let lr = trial.suggest_float_log("lr", 1e-5, 1e-1)?;
//! let layers = trial.suggest_int("layers", 1, 4)?;
//! let act = trial.suggest_categorical("act", ["relu", "gelu"])?;
//! study.tell(&trial, &[lr * layers as f64])?;
//! assert_eq!(study.trials(None)?.len(), 1);
//! # let _ = act;
//! # Ok::<(), saturate_study::StudyError>(())
//! ```
//!
//! No features, no Burn dependency.

pub mod distributions;
mod error;
pub(crate) mod json;
pub mod lineage;
mod normal;
pub mod pruners;
mod random_id;
pub mod samplers;
pub mod storage;
pub mod study;
pub mod testing;
pub mod trial;

pub use distributions::{Choice, Distribution, ParamValue};
pub use error::{Result, StudyError};
pub use json::{python_float_repr, python_json_string};
pub use study::{delete_study, DefaultStudy, Study, StudyConfig};
pub use trial::{FrozenTrial, StudyDirection, Trial, TrialPruned, TrialState};

/// The names most programs need.
pub mod prelude {
    pub use crate::distributions::{
        CategoricalDistribution, Choice, Distribution, FloatDistribution, IntDistribution,
        ParamValue,
    };
    pub use crate::pruners::{
        HyperbandPruner, HyperbandPrunerConfig, MedianPruner, MedianPrunerConfig, NopPruner,
        PatientPruner, PatientPrunerConfig, PercentilePruner, PercentilePrunerConfig, Pruner,
        SuccessiveHalvingPruner, SuccessiveHalvingPrunerConfig, ThresholdPruner,
        ThresholdPrunerConfig, WilcoxonPruner, WilcoxonPrunerConfig,
    };
    pub use crate::samplers::{
        CmaEsSampler, CmaEsSamplerConfig, GpSampler, GpSamplerConfig, GridSampler,
        GridSamplerConfig, OptunaDefaults, QmcKind, QmcSampler, QmcSamplerConfig, RandomSampler,
        RandomSamplerConfig, Sampler, TpeSampler, TpeSamplerConfig,
    };
    pub use crate::storage::{InMemoryStorage, JournalStorage, Storage};
    pub use crate::study::{
        delete_study, DefaultStudy, FixedParams, ObjectiveError, Study, StudyConfig,
    };
    pub use crate::trial::{FrozenTrial, StudyDirection, Trial, TrialPruned, TrialState};
    pub use crate::{Result, StudyError};
}
