//! The pruner contract.

use crate::error::Result;
use crate::study::StudyView;
use crate::trial::FrozenTrial;

/// Decides whether a running trial should stop early (Optuna's `BasePruner`).
///
/// # Contract
///
/// `prune` is called by [`Trial::should_prune`](crate::trial::Trial::should_prune) with
/// the trial as stored after its latest `report`. It reads the study through the view
/// (other trials' intermediate values) and may record what it needs in the trial's
/// system attributes through the view. A trial with no intermediate value is never pruned.
pub trait Pruner: Send + Sync {
    /// `true` if `trial` should be pruned now.
    fn prune(&self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<bool>;
}

impl<P: Pruner + ?Sized> Pruner for Box<P> {
    fn prune(&self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<bool> {
        (**self).prune(study, trial)
    }
}
