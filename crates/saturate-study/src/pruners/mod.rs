//! Pruners: which running trials to stop early.

mod base;
mod hyperband;
mod nop;
mod patient;
mod percentile;
mod successive_halving;
mod threshold;
mod wilcoxon;

pub use base::Pruner;
pub use hyperband::HyperbandPruner;
pub use nop::NopPruner;
pub use patient::PatientPruner;
pub use percentile::{MedianPruner, PercentilePruner};
pub use successive_halving::SuccessiveHalvingPruner;
pub use threshold::ThresholdPruner;
pub use wilcoxon::WilcoxonPruner;
