//! [`UpdateRule`]: the per-parameter update of an optimizer whose hyperparameters have one value
//! per member, and [`MemberState`], its state with the member axis.

use burn::tensor::ops::FloatTensor;
use burn::tensor::{Tensor, TensorPrimitive};
use saturate_vmap::{append_zero_float_members, select_float_members, VmapBackend};

use crate::error::OptimError;
use crate::grad_clipping::GroupGradientClippingConfig;

/// The optimizer state of one parameter for all K members of a group.
///
/// Each tensor has the parameter's logical shape and carries the member axis (physically
/// `[K, ...shape]`); `steps[k]` counts the updates member k has received, so a member that
/// joined the group late gets its own bias correction.
#[derive(Clone, Debug)]
pub struct MemberState<B: VmapBackend> {
    /// The number of updates each member has received.
    pub steps: Vec<usize>,
    /// The state tensors (SGD: the velocity; Adam/AdamW: the first moment, the second moment
    /// and, with AMSGrad, the running maximum of the second moment).
    pub tensors: Vec<FloatTensor<B>>,
}

impl<B: VmapBackend> MemberState<B> {
    /// A state of rank `D` from tensors of the update.
    pub fn new<const D: usize>(steps: Vec<usize>, tensors: Vec<Tensor<B, D>>) -> Self {
        Self {
            steps,
            tensors: tensors
                .into_iter()
                .map(|t| t.into_primitive().tensor())
                .collect(),
        }
    }

    /// State tensor `index` as a tensor of rank `D` (the parameter's rank).
    pub fn tensor<const D: usize>(&self, index: usize) -> Option<Tensor<B, D>> {
        self.tensors
            .get(index)
            .map(|t| Tensor::from_primitive(TensorPrimitive::Float(t.clone())))
    }

    /// The step counts and the state tensors as tensors of rank `D`, by value (so that the
    /// update can work in place).
    pub fn into_parts<const D: usize>(self) -> (Vec<usize>, Vec<Tensor<B, D>>) {
        let tensors = self
            .tensors
            .into_iter()
            .map(|t| Tensor::from_primitive(TensorPrimitive::Float(t)))
            .collect();
        (self.steps, tensors)
    }

    /// The number of members.
    pub fn members(&self) -> usize {
        self.steps.len()
    }

    /// Keeps the members `indices` (already checked), in that order.
    pub(crate) fn retain(self, indices: &[usize]) -> Self {
        Self {
            steps: indices.iter().map(|&i| self.steps[i]).collect(),
            tensors: self
                .tensors
                .into_iter()
                .map(|t| {
                    let kept = select_float_members::<B::Inner>(B::float_to_vmap(t), indices)
                        .expect("saturate-optim: member indices are checked before retain");
                    B::float_from_vmap(kept)
                })
                .collect(),
        }
    }

    /// Appends `new` members with fresh state: zero tensors and zero steps.
    pub(crate) fn extend(mut self, new: usize) -> Self {
        self.steps.extend(core::iter::repeat_n(0, new));
        self.tensors = self
            .tensors
            .into_iter()
            .map(|t| {
                B::float_from_vmap(append_zero_float_members::<B::Inner>(
                    B::float_to_vmap(t),
                    new,
                ))
            })
            .collect();
        self
    }
}

/// The update of one optimizer (SGD, Adam, AdamW) for K members at once, with hyperparameters
/// resolved to one value per member. This is saturate's counterpart of burn's
/// `SimpleOptimizer`; [`GroupOptimizer`](crate::GroupOptimizer) applies it to every parameter of
/// a [`Batched`](saturate_vmap::Batched) module.
pub trait UpdateRule: Clone + Send + Sized {
    /// The config the rule is built from (e.g. [`GroupAdamConfig`](crate::GroupAdamConfig)).
    type Config;

    /// Resolves and checks the config's hyperparameters for a group of `members` members.
    ///
    /// # Errors
    /// [`OptimError::WrongLength`] / [`OptimError::OutOfRange`] naming the field.
    fn resolve(config: &Self::Config, members: usize) -> Result<Self, OptimError>;

    /// The gradient clipping the config asks for.
    fn clipping(config: &Self::Config) -> Option<&GroupGradientClippingConfig>;

    /// Keeps the hyperparameters of members `indices`, in that order.
    fn retain(&mut self, indices: &[usize]);

    /// Appends the hyperparameters of new members.
    ///
    /// # Errors
    /// [`OptimError::Incompatible`] if a setting shared by all members (a boolean option)
    /// differs.
    fn append(&mut self, new: Self) -> Result<(), OptimError>;

    /// One update of a parameter for all members: `lr[k]` is member k's learning rate, `grad`
    /// the (clipped) gradient, `state` the state after the previous update (`None` before the
    /// first). Returns the updated parameter and the new state.
    fn step<B: VmapBackend, const D: usize>(
        &self,
        lr: &[f64],
        tensor: Tensor<B, D>,
        grad: Tensor<B, D>,
        state: Option<MemberState<B>>,
    ) -> (Tensor<B, D>, Option<MemberState<B>>);
}
