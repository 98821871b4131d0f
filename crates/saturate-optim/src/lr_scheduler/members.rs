//! [`MemberSchedulers`]: one burn learning-rate scheduler per member.

use burn::optim::lr_scheduler::LrScheduler;
use burn::optim::LearningRate;
use burn::tensor::backend::Backend;
use saturate_vmap::VmapError;

use super::SchedulerConfig;
use crate::error::OptimError;

/// One learning-rate scheduler per member: each [`step`](Self::step) advances all K schedulers
/// and returns K learning rates, ready for [`GroupOptimizer::step`](crate::GroupOptimizer::step).
///
/// ```
/// use burn::optim::lr_scheduler::exponential::ExponentialLrSchedulerConfig;
/// use saturate_optim::MemberSchedulers;
///
/// let configs = [0.1, 0.01].map(|lr| ExponentialLrSchedulerConfig::new(lr, 0.5));
/// let mut schedulers = MemberSchedulers::init(&configs).unwrap();
/// assert_eq!(schedulers.step(), vec![0.1, 0.01]);
/// assert_eq!(schedulers.step(), vec![0.05, 0.005]);
/// ```
///
/// Members follow the group: [`retain`](Self::retain) and [`extend`](Self::extend) (a new
/// member's scheduler starts from its first step).
#[derive(Clone, Debug)]
pub struct MemberSchedulers<S> {
    schedulers: Vec<S>,
}

impl<S: LrScheduler> MemberSchedulers<S> {
    /// From one scheduler per member.
    ///
    /// # Errors
    /// [`OptimError::Vmap`] for an empty list.
    pub fn new(schedulers: Vec<S>) -> Result<Self, OptimError> {
        if schedulers.is_empty() {
            return Err(VmapError::NoMembers.into());
        }
        Ok(Self { schedulers })
    }

    /// From one config per member.
    ///
    /// # Errors
    /// [`OptimError::Scheduler`] naming the member whose config burn rejects;
    /// [`OptimError::Vmap`] for an empty list.
    pub fn init<C: SchedulerConfig<Scheduler = S>>(configs: &[C]) -> Result<Self, OptimError> {
        let schedulers = configs
            .iter()
            .enumerate()
            .map(|(member, c)| {
                c.build_scheduler()
                    .map_err(|reason| OptimError::Scheduler { member, reason })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(schedulers)
    }

    /// The same schedule for all `members` members.
    ///
    /// # Errors
    /// As [`init`](Self::init).
    pub fn shared<C: SchedulerConfig<Scheduler = S>>(
        config: &C,
        members: usize,
    ) -> Result<Self, OptimError> {
        if members == 0 {
            return Err(VmapError::NoMembers.into());
        }
        let scheduler = config
            .build_scheduler()
            .map_err(|reason| OptimError::Scheduler { member: 0, reason })?;
        Self::new(vec![scheduler; members])
    }

    /// The number of members.
    pub fn members(&self) -> usize {
        self.schedulers.len()
    }

    /// Advances every member's scheduler: the K learning rates of this step.
    pub fn step(&mut self) -> Vec<LearningRate> {
        self.schedulers.iter_mut().map(|s| s.step()).collect()
    }

    /// Keeps the schedulers of members `indices`, in that order.
    ///
    /// # Errors
    /// [`OptimError::Vmap`] for an empty list, an index out of range or a repeated index.
    pub fn retain(&mut self, indices: &[usize]) -> Result<(), OptimError> {
        if indices.is_empty() {
            return Err(VmapError::NoMembers.into());
        }
        for (pos, &index) in indices.iter().enumerate() {
            if index >= self.schedulers.len() {
                return Err(VmapError::MemberOutOfRange {
                    index,
                    members: self.schedulers.len(),
                }
                .into());
            }
            if indices[..pos].contains(&index) {
                return Err(VmapError::DuplicateMember { index }.into());
            }
        }
        self.schedulers = indices
            .iter()
            .map(|&i| self.schedulers[i].clone())
            .collect();
        Ok(())
    }

    /// Appends the schedulers of new members (fresh ones start at their first step).
    pub fn extend(&mut self, schedulers: impl IntoIterator<Item = S>) {
        self.schedulers.extend(schedulers);
    }

    /// Every member's scheduler state, for burn's recorders.
    pub fn to_record<B: Backend>(&self) -> Vec<S::Record<B>> {
        self.schedulers.iter().map(|s| s.to_record::<B>()).collect()
    }

    /// Restores the state saved by [`to_record`](Self::to_record).
    ///
    /// # Errors
    /// [`OptimError::MemberCountMismatch`] if the record has a different member count.
    pub fn load_record<B: Backend>(self, record: Vec<S::Record<B>>) -> Result<Self, OptimError> {
        if record.len() != self.schedulers.len() {
            return Err(OptimError::MemberCountMismatch {
                what: "the scheduler record".into(),
                expected: self.schedulers.len(),
                got: record.len(),
            });
        }
        Ok(Self {
            schedulers: self
                .schedulers
                .into_iter()
                .zip(record)
                .map(|(s, r)| s.load_record::<B>(r))
                .collect(),
        })
    }
}
