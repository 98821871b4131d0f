//! Helpers shared by the runner's tests.

use std::collections::BTreeSet;
use std::sync::Arc;

use saturate_study::prelude::*;
use saturate_study::study::StudyView;
use saturate_train::RunConfig;

/// A quiet config (no progress bar, SIGINT left alone) for tests.
pub fn quiet(k: usize, n_trials: usize) -> RunConfig {
    RunConfig::new()
        .with_group_size(k)
        .with_n_trials(n_trials)
        .with_progress(false)
        .with_handle_interrupt(false)
}

/// An in-memory study with a seeded random sampler and no pruner.
pub fn random_study(seed: u64) -> DefaultStudy {
    StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(seed).init())
        .with_pruner(NopPruner)
        .init()
        .unwrap()
}

/// Prunes the listed trial numbers at their first report at or after `step`.
#[derive(Debug, Clone)]
pub struct PruneNumbers {
    pub numbers: BTreeSet<u64>,
    pub step: i64,
}

impl Pruner for PruneNumbers {
    fn prune(&self, _study: &StudyView<'_>, trial: &FrozenTrial) -> saturate_study::Result<bool> {
        Ok(self.numbers.contains(&trial.number)
            && trial.last_step().is_some_and(|(step, _)| step >= self.step))
    }
}

/// The trials of a study, by number.
pub fn trials(study: &DefaultStudy) -> Vec<Arc<FrozenTrial>> {
    study.trials(None).unwrap()
}
