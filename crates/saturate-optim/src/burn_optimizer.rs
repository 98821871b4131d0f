//! burn's [`Optimizer`] for a group, so burn-train's `Learner` can train a
//! [`GroupModel`](saturate_vmap::GroupModel): [`GroupOptimizer`] itself (every member takes the
//! scheduler's learning rate) and [`GroupOptimizerAdaptor`] (each member scales it by its own
//! factor, or keeps a fixed rate of its own).
//!
//! burn's trait is implemented for `Optimizer<GroupModel<M>, Autodiff<Vmap<I>, C>>`: the model a
//! `Learner` holds must be a burn `Module`, and a [`Batched`](saturate_vmap::Batched) group is
//! one as a `GroupModel`. A burn-train learning-rate scheduler gives one rate per step; per-member
//! schedules ([`MemberSchedulers`](crate::MemberSchedulers)) need saturate's own loop.
//!
//! burn's `step` and `load_record` cannot return an error. Where [`GroupOptimizer::step`] or
//! [`GroupOptimizer::load_record`] would, these implementations panic with its message: a group
//! with another member count than the optimizer, a negative or non-finite learning rate from the
//! scheduler, an optimizer record of another group.

use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::Autodiff;
use burn::module::{AutodiffModule, ModuleVisitor, Param};
use burn::optim::{GradientsParams, LearningRate, MultiGradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::ops::FloatTensor;
use burn::tensor::Tensor;
use saturate_vmap::{GroupModel, Vmap, VmapBackend};

use crate::base::{MemberState, UpdateRule};
use crate::error::OptimError;
use crate::group::GroupOptimizer;
use crate::hyper::{resolve, Bound, HyperParam};
use crate::record::GroupOptimizerRecord;

/// How the one learning rate of burn's `Optimizer::step` (a burn-train scheduler's value)
/// becomes one rate per member.
#[derive(Clone, Debug, PartialEq)]
pub enum MemberLearningRates {
    /// Member k's rate is the scheduler's rate times `factors[k]`.
    Scaled(Vec<f64>),
    /// Member k's rate is `rates[k]` on every step; the scheduler's rate is ignored.
    Fixed(Vec<f64>),
}

impl MemberLearningRates {
    /// The K rates of one step whose scheduler gave `lr`.
    pub fn rates(&self, lr: LearningRate) -> Vec<f64> {
        match self {
            Self::Scaled(factors) => factors.iter().map(|f| lr * f).collect(),
            Self::Fixed(rates) => rates.clone(),
        }
    }

    /// The number of members the rates are for.
    pub fn members(&self) -> usize {
        match self {
            Self::Scaled(values) | Self::Fixed(values) => values.len(),
        }
    }
}

/// A [`GroupOptimizer`] with a rule from burn's single learning rate to K rates: burn's
/// [`Optimizer`] for a `GroupModel` whose members learn at different rates under one
/// burn-train scheduler.
///
/// Built by [`GroupOptimizer::with_lr_factors`] or [`GroupOptimizer::with_fixed_lrs`]. Its
/// record is the optimizer's state ([`GroupOptimizerRecord`]); the rates are part of its
/// construction, like the rule's hyperparameters, and are not recorded.
///
/// ```
/// use burn::backend::{Autodiff, NdArray};
/// use burn::nn::{Linear, LinearConfig};
/// use burn::optim::{GradientsParams, Optimizer};
/// use burn::tensor::Tensor;
/// use saturate_optim::GroupAdamConfig;
/// use saturate_vmap::{Batched, GroupModel, Vmap};
///
/// type B = Autodiff<Vmap<NdArray>>;
/// let model: GroupModel<Linear<B>> =
///     Batched::init(3, &Default::default(), |d| LinearConfig::new(4, 2).init(d))?.into();
/// let mut optim = GroupAdamConfig::new().init(3)?.with_lr_factors([1.0, 0.5, 0.1])?;
///
/// let x = Tensor::<B, 2>::ones([5, 4], &model.device());
/// let grads = GradientsParams::from_grads(model.forward(x).mean().backward(), &model);
/// // burn-train's Learner calls this with its scheduler's rate: members step with 1e-2,
/// // 5e-3 and 1e-3.
/// let model = Optimizer::step(&mut optim, 1e-2, model, grads);
/// assert_eq!(model.members(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct GroupOptimizerAdaptor<R, M, B>
where
    B: AutodiffBackend,
    B::InnerBackend: VmapBackend,
{
    optim: GroupOptimizer<R, M, B>,
    rates: MemberLearningRates,
}

impl<R: Clone, M, B> Clone for GroupOptimizerAdaptor<R, M, B>
where
    B: AutodiffBackend,
    B::InnerBackend: VmapBackend,
{
    fn clone(&self) -> Self {
        Self {
            optim: self.optim.clone(),
            rates: self.rates.clone(),
        }
    }
}

impl<R: core::fmt::Debug, M, B> core::fmt::Debug for GroupOptimizerAdaptor<R, M, B>
where
    B: AutodiffBackend,
    B::InnerBackend: VmapBackend,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GroupOptimizerAdaptor")
            .field("optim", &self.optim)
            .field("rates", &self.rates)
            .finish()
    }
}

impl<R, M, B> GroupOptimizerAdaptor<R, M, B>
where
    B: AutodiffBackend,
    B::InnerBackend: VmapBackend,
{
    /// How the scheduler's rate becomes K rates.
    pub fn rates(&self) -> &MemberLearningRates {
        &self.rates
    }

    /// The group optimizer.
    pub fn optimizer(&self) -> &GroupOptimizer<R, M, B> {
        &self.optim
    }

    /// The group optimizer, e.g. to change hyperparameters with `set_config` between two
    /// burn-train runs.
    pub fn optimizer_mut(&mut self) -> &mut GroupOptimizer<R, M, B> {
        &mut self.optim
    }

    /// Consumes the adaptor and returns the group optimizer.
    pub fn into_optimizer(self) -> GroupOptimizer<R, M, B> {
        self.optim
    }
}

impl<R, M, B> GroupOptimizer<R, M, B>
where
    R: UpdateRule,
    B: AutodiffBackend,
    B::InnerBackend: VmapBackend,
    M: AutodiffModule<B>,
{
    /// burn's [`Optimizer`] whose member k steps with the scheduler's learning rate times
    /// `factors[k]` (one factor shared by all members, or one per member).
    ///
    /// # Errors
    /// [`OptimError::WrongLength`] / [`OptimError::OutOfRange`] (field `lr_factors`) for a list
    /// of the wrong length or a negative or non-finite factor.
    pub fn with_lr_factors(
        self,
        factors: impl Into<HyperParam>,
    ) -> Result<GroupOptimizerAdaptor<R, M, B>, OptimError> {
        let factors = resolve(
            &factors.into(),
            "lr_factors",
            self.members(),
            Bound::NonNegative,
        )?;
        Ok(GroupOptimizerAdaptor {
            optim: self,
            rates: MemberLearningRates::Scaled(factors),
        })
    }

    /// burn's [`Optimizer`] whose member k steps with `lrs[k]` on every step, whatever rate
    /// burn-train's scheduler gives (give the `Learner` a constant rate such as `1.0`; it is
    /// what burn-train's `LearningRate` metric shows).
    ///
    /// # Errors
    /// [`OptimError::WrongLength`] / [`OptimError::OutOfRange`] (field `lr`) for a list of the
    /// wrong length or a negative or non-finite rate.
    pub fn with_fixed_lrs(
        self,
        lrs: impl Into<HyperParam>,
    ) -> Result<GroupOptimizerAdaptor<R, M, B>, OptimError> {
        let lrs = resolve(&lrs.into(), "lr", self.members(), Bound::NonNegative)?;
        Ok(GroupOptimizerAdaptor {
            optim: self,
            rates: MemberLearningRates::Fixed(lrs),
        })
    }
}

/// The optimizer's state as a record of the training backend, where burn-train's
/// checkpointer saves an optimizer's record: the same state, its tensors wrapped as leaves of
/// the autodiff backend (no copy). The saved item is the one `GroupOptimizer::to_record` gives.
fn record_on_autodiff<I: Backend, C: CheckpointStrategy>(
    record: GroupOptimizerRecord<Vmap<I>>,
) -> GroupOptimizerRecord<Autodiff<Vmap<I>, C>> {
    map_record_tensors(
        record,
        <Autodiff<Vmap<I>, C> as AutodiffBackend>::from_inner,
    )
}

/// The inverse of [`record_on_autodiff`].
fn record_on_inner<I: Backend, C: CheckpointStrategy>(
    record: GroupOptimizerRecord<Autodiff<Vmap<I>, C>>,
) -> GroupOptimizerRecord<Vmap<I>> {
    map_record_tensors(record, <Autodiff<Vmap<I>, C> as AutodiffBackend>::inner)
}

/// `record` with every state tensor passed through `convert` (steps and members unchanged).
fn map_record_tensors<A: VmapBackend, B: VmapBackend>(
    record: GroupOptimizerRecord<A>,
    convert: impl Fn(FloatTensor<A>) -> FloatTensor<B>,
) -> GroupOptimizerRecord<B> {
    let members = record.members();
    let states = record
        .into_states()
        .into_iter()
        .map(|(id, state)| {
            let tensors = state.tensors.into_iter().map(&convert).collect();
            (
                id,
                MemberState {
                    steps: state.steps,
                    tensors,
                },
            )
        })
        .collect();
    GroupOptimizerRecord::new(members, states)
}

/// One step of burn's `Optimizer` with the K rates `lr`.
fn learner_step<R, M, I, C>(
    optim: &mut GroupOptimizer<R, M, Autodiff<Vmap<I>, C>>,
    lr: HyperParam,
    model: GroupModel<M>,
    grads: GradientsParams,
) -> GroupModel<M>
where
    R: UpdateRule,
    I: Backend,
    C: CheckpointStrategy,
    M: AutodiffModule<Autodiff<Vmap<I>, C>>,
{
    match GroupOptimizer::step(optim, lr, model.into_batched(), grads) {
        Ok(group) => GroupModel::from(group),
        Err(e) => panic!(
            "saturate-optim: burn's Optimizer::step cannot return an error: {e} (build the \
             optimizer for the group's member count, and give the Learner a scheduler whose \
             rates are finite and non-negative)"
        ),
    }
}

/// burn's `load_record`, which cannot return an error.
fn learner_load<R, M, I, C>(
    optim: GroupOptimizer<R, M, Autodiff<Vmap<I>, C>>,
    record: GroupOptimizerRecord<Autodiff<Vmap<I>, C>>,
) -> GroupOptimizer<R, M, Autodiff<Vmap<I>, C>>
where
    R: UpdateRule,
    I: Backend,
    C: CheckpointStrategy,
    M: AutodiffModule<Autodiff<Vmap<I>, C>>,
{
    GroupOptimizer::load_record(optim, record_on_inner(record)).unwrap_or_else(|e| {
        panic!(
            "saturate-optim: burn's Optimizer::load_record cannot return an error: {e} (resume \
             from a checkpoint of a group with as many members)"
        )
    })
}

/// Merges the gradients of several devices (burn-train's multi-device strategy) into one
/// [`GradientsParams`], each on its parameter's device.
struct MergeDevices<'a> {
    grads: &'a mut MultiGradientsParams,
    merged: GradientsParams,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for MergeDevices<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some((grad, _)) = self.grads.remove::<B::InnerBackend, D>(param.id) {
            let grad = grad.to_device(&param.val().device());
            self.merged.register::<B::InnerBackend, D>(param.id, grad);
        }
    }
}

fn merge_devices<B: AutodiffBackend, M: AutodiffModule<B>>(
    model: &M,
    mut grads: MultiGradientsParams,
) -> GradientsParams {
    let mut merge = MergeDevices {
        grads: &mut grads,
        merged: GradientsParams::new(),
    };
    model.visit(&mut merge);
    merge.merged
}

/// burn's optimizer for a [`GroupModel`]: every member steps with the scheduler's learning
/// rate (see [`GroupOptimizer::with_lr_factors`] for one rate per member).
///
/// # Panics
/// `step` if the group does not have the optimizer's member count or the rate is negative or
/// not finite; `load_record` for a record of another member count.
impl<R, M, I, C> Optimizer<GroupModel<M>, Autodiff<Vmap<I>, C>>
    for GroupOptimizer<R, M, Autodiff<Vmap<I>, C>>
where
    R: UpdateRule,
    I: Backend,
    C: CheckpointStrategy,
    M: AutodiffModule<Autodiff<Vmap<I>, C>>,
    GroupModel<M>: AutodiffModule<Autodiff<Vmap<I>, C>>,
{
    type Record = GroupOptimizerRecord<Autodiff<Vmap<I>, C>>;

    fn step(
        &mut self,
        lr: LearningRate,
        model: GroupModel<M>,
        grads: GradientsParams,
    ) -> GroupModel<M> {
        learner_step(self, lr.into(), model, grads)
    }

    fn step_multi(
        &mut self,
        lr: LearningRate,
        model: GroupModel<M>,
        grads: MultiGradientsParams,
    ) -> GroupModel<M> {
        let grads = merge_devices(&model, grads);
        learner_step(self, lr.into(), model, grads)
    }

    fn to_record(&self) -> Self::Record {
        record_on_autodiff(GroupOptimizer::to_record(self))
    }

    fn load_record(self, record: Self::Record) -> Self {
        learner_load(self, record)
    }
}

/// burn's optimizer for a [`GroupModel`] whose member k steps with its own rate (see
/// [`MemberLearningRates`]).
///
/// # Panics
/// As [`GroupOptimizer`]'s implementation.
impl<R, M, I, C> Optimizer<GroupModel<M>, Autodiff<Vmap<I>, C>>
    for GroupOptimizerAdaptor<R, M, Autodiff<Vmap<I>, C>>
where
    R: UpdateRule,
    I: Backend,
    C: CheckpointStrategy,
    M: AutodiffModule<Autodiff<Vmap<I>, C>>,
    GroupModel<M>: AutodiffModule<Autodiff<Vmap<I>, C>>,
{
    type Record = GroupOptimizerRecord<Autodiff<Vmap<I>, C>>;

    fn step(
        &mut self,
        lr: LearningRate,
        model: GroupModel<M>,
        grads: GradientsParams,
    ) -> GroupModel<M> {
        let rates = self.rates.rates(lr);
        learner_step(&mut self.optim, rates.into(), model, grads)
    }

    fn step_multi(
        &mut self,
        lr: LearningRate,
        model: GroupModel<M>,
        grads: MultiGradientsParams,
    ) -> GroupModel<M> {
        let grads = merge_devices(&model, grads);
        let rates = self.rates.rates(lr);
        learner_step(&mut self.optim, rates.into(), model, grads)
    }

    fn to_record(&self) -> Self::Record {
        record_on_autodiff(self.optim.to_record())
    }

    fn load_record(mut self, record: Self::Record) -> Self {
        self.optim = learner_load(self.optim, record);
        self
    }
}
