//! The pruner that never prunes.

use crate::error::Result;
use crate::pruners::base::Pruner;
use crate::study::StudyView;
use crate::trial::FrozenTrial;

/// Never prunes (Optuna's `NopPruner`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NopPruner;

impl Pruner for NopPruner {
    fn prune(&self, _study: &StudyView<'_>, _trial: &FrozenTrial) -> Result<bool> {
        Ok(false)
    }
}
