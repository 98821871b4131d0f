//! [`AnyLrScheduler`]: any of burn's schedulers, so that members of one group can follow
//! schedules of different kinds (the kind of schedule is a shape-preserving hyperparameter).

use burn::optim::lr_scheduler::composed::{ComposedLrScheduler, ComposedLrSchedulerConfig};
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
use burn::record::Record;
use burn::tensor::backend::Backend;

use super::SchedulerConfig;

/// The config of any of burn-optim's learning-rate schedulers; every burn scheduler config
/// converts into it.
///
/// ```
/// use burn::optim::lr_scheduler::cosine::CosineAnnealingLrSchedulerConfig;
/// use burn::optim::lr_scheduler::step::StepLrSchedulerConfig;
/// use saturate_optim::{AnyLrSchedulerConfig, MemberSchedulers};
///
/// let configs: [AnyLrSchedulerConfig; 3] = [
///     0.01.into(),                                              // constant
///     StepLrSchedulerConfig::new(0.1, 10).into(),               // step decay
///     CosineAnnealingLrSchedulerConfig::new(0.05, 100).into(),  // cosine annealing
/// ];
/// let mut lrs = MemberSchedulers::init(&configs).unwrap();
/// assert_eq!(lrs.step(), vec![0.01, 0.1, 0.05]);
/// ```
#[derive(Debug, Clone)]
pub enum AnyLrSchedulerConfig {
    /// A constant learning rate.
    Constant(LearningRate),
    /// burn's step decay.
    Step(StepLrSchedulerConfig),
    /// burn's exponential decay.
    Exponential(ExponentialLrSchedulerConfig),
    /// burn's cosine annealing.
    CosineAnnealing(CosineAnnealingLrSchedulerConfig),
    /// burn's linear schedule.
    Linear(LinearLrSchedulerConfig),
    /// burn's Noam schedule.
    Noam(NoamLrSchedulerConfig),
    /// burn's composition of schedules.
    Composed(ComposedLrSchedulerConfig),
}

/// A scheduler built from an [`AnyLrSchedulerConfig`].
#[derive(Clone)]
pub enum AnyLrScheduler {
    /// A constant learning rate.
    Constant(LearningRate),
    /// burn's step decay.
    Step(StepLrScheduler),
    /// burn's exponential decay.
    Exponential(ExponentialLrScheduler),
    /// burn's cosine annealing.
    CosineAnnealing(CosineAnnealingLrScheduler),
    /// burn's linear schedule.
    Linear(LinearLrScheduler),
    /// burn's Noam schedule.
    Noam(NoamLrScheduler),
    /// burn's composition of schedules.
    Composed(ComposedLrScheduler),
}

impl core::fmt::Debug for AnyLrScheduler {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let kind = match self {
            Self::Constant(lr) => return write!(f, "Constant({lr})"),
            Self::Step(_) => "Step",
            Self::Exponential(_) => "Exponential",
            Self::CosineAnnealing(_) => "CosineAnnealing",
            Self::Linear(_) => "Linear",
            Self::Noam(_) => "Noam",
            Self::Composed(_) => "Composed",
        };
        write!(f, "{kind}(..)")
    }
}

/// The record of an [`AnyLrScheduler`]: the record of the scheduler it holds.
#[derive(Record, Clone)]
pub enum AnyLrSchedulerRecord<B: Backend> {
    /// A constant learning rate has no state.
    Constant(<LearningRate as LrScheduler>::Record<B>),
    /// Step decay.
    Step(<StepLrScheduler as LrScheduler>::Record<B>),
    /// Exponential decay.
    Exponential(<ExponentialLrScheduler as LrScheduler>::Record<B>),
    /// Cosine annealing.
    CosineAnnealing(<CosineAnnealingLrScheduler as LrScheduler>::Record<B>),
    /// Linear schedule.
    Linear(<LinearLrScheduler as LrScheduler>::Record<B>),
    /// Noam schedule.
    Noam(<NoamLrScheduler as LrScheduler>::Record<B>),
    /// Composition of schedules.
    Composed(<ComposedLrScheduler as LrScheduler>::Record<B>),
}

macro_rules! dispatch {
    ($($variant:ident: $config:ty),* $(,)?) => {
        $(
            impl From<$config> for AnyLrSchedulerConfig {
                fn from(config: $config) -> Self {
                    Self::$variant(config)
                }
            }
        )*

        impl SchedulerConfig for AnyLrSchedulerConfig {
            type Scheduler = AnyLrScheduler;

            fn build_scheduler(&self) -> Result<AnyLrScheduler, String> {
                Ok(match self {
                    Self::Constant(lr) => AnyLrScheduler::Constant(*lr),
                    $(Self::$variant(config) => AnyLrScheduler::$variant(config.init()?),)*
                })
            }
        }

        impl LrScheduler for AnyLrScheduler {
            type Record<B: Backend> = AnyLrSchedulerRecord<B>;

            fn step(&mut self) -> LearningRate {
                match self {
                    Self::Constant(lr) => *lr,
                    $(Self::$variant(s) => s.step(),)*
                }
            }

            fn to_record<B: Backend>(&self) -> AnyLrSchedulerRecord<B> {
                match self {
                    Self::Constant(lr) => AnyLrSchedulerRecord::Constant(lr.to_record::<B>()),
                    $(Self::$variant(s) => AnyLrSchedulerRecord::$variant(s.to_record::<B>()),)*
                }
            }

            /// # Panics
            /// If the record belongs to a scheduler of another kind (burn's composed
            /// scheduler panics the same way).
            fn load_record<B: Backend>(self, record: AnyLrSchedulerRecord<B>) -> Self {
                match (self, record) {
                    (Self::Constant(lr), AnyLrSchedulerRecord::Constant(_)) => Self::Constant(lr),
                    $(
                        (Self::$variant(s), AnyLrSchedulerRecord::$variant(r)) => {
                            Self::$variant(s.load_record::<B>(r))
                        }
                    )*
                    (scheduler, _) => panic!(
                        "saturate-optim: a learning-rate scheduler record of another kind \
                         cannot be loaded into {scheduler:?}"
                    ),
                }
            }
        }
    };
}

dispatch! {
    Step: StepLrSchedulerConfig,
    Exponential: ExponentialLrSchedulerConfig,
    CosineAnnealing: CosineAnnealingLrSchedulerConfig,
    Linear: LinearLrSchedulerConfig,
    Noam: NoamLrSchedulerConfig,
    Composed: ComposedLrSchedulerConfig,
}

impl From<LearningRate> for AnyLrSchedulerConfig {
    fn from(lr: LearningRate) -> Self {
        Self::Constant(lr)
    }
}
