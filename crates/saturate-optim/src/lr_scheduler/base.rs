//! [`SchedulerConfig`]: what [`MemberSchedulers`](super::MemberSchedulers) builds one scheduler
//! per member from.

use burn::optim::lr_scheduler::composed::{ComposedLrScheduler, ComposedLrSchedulerConfig};
use burn::optim::lr_scheduler::constant::ConstantLr;
use burn::optim::lr_scheduler::cosine::{
    CosineAnnealingLrScheduler, CosineAnnealingLrSchedulerConfig,
};
use burn::optim::lr_scheduler::exponential::{
    ExponentialLrScheduler, ExponentialLrSchedulerConfig,
};
use burn::optim::lr_scheduler::linear::{LinearLrScheduler, LinearLrSchedulerConfig};
use burn::optim::lr_scheduler::noam::{NoamLrScheduler, NoamLrSchedulerConfig};
use burn::optim::lr_scheduler::step::{StepLrScheduler, StepLrSchedulerConfig};
use burn::optim::lr_scheduler::LrScheduler;
use burn::optim::LearningRate;

/// A burn learning-rate scheduler config: anything that builds an `LrScheduler`.
///
/// Implemented for every scheduler config of burn-optim 0.21 (step, exponential, cosine
/// annealing, linear, Noam, composed) and for constant rates (`f64`, `ConstantLr`).
pub trait SchedulerConfig {
    /// The scheduler the config builds.
    type Scheduler: LrScheduler;

    /// Builds the scheduler (burn's `init`).
    ///
    /// # Errors
    /// burn's message if the config is invalid.
    fn build_scheduler(&self) -> Result<Self::Scheduler, String>;
}

macro_rules! scheduler_config {
    ($($config:ty => $scheduler:ty),* $(,)?) => {$(
        impl SchedulerConfig for $config {
            type Scheduler = $scheduler;

            fn build_scheduler(&self) -> Result<$scheduler, String> {
                self.init()
            }
        }
    )*};
}

scheduler_config! {
    StepLrSchedulerConfig => StepLrScheduler,
    ExponentialLrSchedulerConfig => ExponentialLrScheduler,
    CosineAnnealingLrSchedulerConfig => CosineAnnealingLrScheduler,
    LinearLrSchedulerConfig => LinearLrScheduler,
    NoamLrSchedulerConfig => NoamLrScheduler,
    ComposedLrSchedulerConfig => ComposedLrScheduler,
}

impl SchedulerConfig for LearningRate {
    type Scheduler = LearningRate;

    fn build_scheduler(&self) -> Result<LearningRate, String> {
        Ok(*self)
    }
}

impl SchedulerConfig for ConstantLr {
    type Scheduler = ConstantLr;

    fn build_scheduler(&self) -> Result<ConstantLr, String> {
        Ok(self.clone())
    }
}
