//! Pruners: which running trials to stop early.
//!
//! Each pruner is built from its config, as Burn's components are:
//! `MedianPrunerConfig::new().with_n_warmup_steps(2).init()?`; the configs hold Optuna's
//! defaults, and `init` reports an argument out of its range as
//! [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument).

mod base;
mod hyperband;
mod nop;
mod patient;
mod percentile;
mod successive_halving;
mod threshold;
mod wilcoxon;

pub use base::Pruner;
pub use hyperband::{HyperbandPruner, HyperbandPrunerConfig};
pub use nop::NopPruner;
pub use patient::{PatientPruner, PatientPrunerConfig};
pub use percentile::{MedianPruner, MedianPrunerConfig, PercentilePruner, PercentilePrunerConfig};
pub use successive_halving::{SuccessiveHalvingPruner, SuccessiveHalvingPrunerConfig};
pub use threshold::{ThresholdPruner, ThresholdPrunerConfig};
pub use wilcoxon::{WilcoxonPruner, WilcoxonPrunerConfig};
