//! Adam (Kingma & Ba 2015) with optional AMSGrad and L2 weight decay, one hyperparameter value
//! per member.

use burn::config::Config;
use burn::module::AutodiffModule;
use burn::serde::{Deserialize, Serialize};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::Tensor;
use saturate_vmap::fused::AdamStepScalars;
use saturate_vmap::VmapBackend;

use crate::base::{MemberState, UpdateRule};
use crate::decay::GroupWeightDecayConfig;
use crate::error::OptimError;
use crate::grad_clipping::GroupGradientClippingConfig;
use crate::group::GroupOptimizer;
use crate::hyper::{append_optional, pick, resolve_f32, same, Bound, HyperParam};
use crate::members::{MemberOps, Scalars};

/// Configuration of [`GroupAdam`], field for field burn's `AdamConfig` (same defaults), with every
/// scalar given once or per member ([`HyperParam`]).
///
/// Adam: Kingma & Ba, *Adam: A Method for Stochastic Optimization*, ICLR 2015
/// (<https://arxiv.org/abs/1412.6980>); AMSGrad: Reddi, Kale & Kumar, *On the Convergence of
/// Adam and Beyond*, ICLR 2018.
///
/// Member k's update is burn's, with member k's own step count `t` (so a member added to the
/// group later gets the bias correction of its own first steps):
/// `g += penalty * p`; `m = β1 m + (1-β1) g`; `v = β2 v + (1-β2) g²`;
/// `p -= lr * (m · √(1-β2ᵗ)/(1-β1ᵗ)) / (√v + ε √(1-β2ᵗ))`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(crate = "burn::serde")]
pub struct GroupAdamConfig {
    /// β1, the decay of the first moment (default 0.9), in `[0, 1)`.
    pub beta_1: HyperParam,
    /// β2, the decay of the second moment (default 0.999), in `[0, 1)`.
    pub beta_2: HyperParam,
    /// ε, for numerical stability (default 1e-5), > 0.
    pub epsilon: HyperParam,
    /// AMSGrad: use the running maximum of the second moment (default false); shared by all
    /// members.
    pub amsgrad: bool,
    /// L2 weight decay added to the gradient (default none). For decoupled weight decay use
    /// [`GroupAdamWConfig`](crate::GroupAdamWConfig).
    pub weight_decay: Option<GroupWeightDecayConfig>,
    /// Gradient clipping (default none).
    pub grad_clipping: Option<GroupGradientClippingConfig>,
}

impl Config for GroupAdamConfig {}

impl Default for GroupAdamConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl GroupAdamConfig {
    /// burn's defaults: β1 0.9, β2 0.999, ε 1e-5, no AMSGrad, no weight decay, no clipping.
    pub fn new() -> Self {
        Self {
            beta_1: HyperParam::Shared(0.9),
            beta_2: HyperParam::Shared(0.999),
            epsilon: HyperParam::Shared(1e-5),
            amsgrad: false,
            weight_decay: None,
            grad_clipping: None,
        }
    }

    /// Sets β1 (one value, or one per member).
    pub fn with_beta_1(mut self, beta_1: impl Into<HyperParam>) -> Self {
        self.beta_1 = beta_1.into();
        self
    }

    /// Sets β2 (one value, or one per member).
    pub fn with_beta_2(mut self, beta_2: impl Into<HyperParam>) -> Self {
        self.beta_2 = beta_2.into();
        self
    }

    /// Sets ε (one value, or one per member).
    pub fn with_epsilon(mut self, epsilon: impl Into<HyperParam>) -> Self {
        self.epsilon = epsilon.into();
        self
    }

    /// Enables or disables AMSGrad for all members.
    pub fn with_amsgrad(mut self, amsgrad: bool) -> Self {
        self.amsgrad = amsgrad;
        self
    }

    /// Sets the L2 weight decay.
    pub fn with_weight_decay(mut self, weight_decay: Option<GroupWeightDecayConfig>) -> Self {
        self.weight_decay = weight_decay;
        self
    }

    /// Sets the gradient clipping.
    pub fn with_grad_clipping(mut self, clipping: Option<GroupGradientClippingConfig>) -> Self {
        self.grad_clipping = clipping;
        self
    }

    /// An optimizer for a group of `members` members.
    ///
    /// # Errors
    /// [`OptimError::WrongLength`] if a per-member list does not have `members` values;
    /// [`OptimError::OutOfRange`] for a beta outside `[0, 1)`, ε <= 0, a negative penalty or a
    /// clipping threshold <= 0.
    pub fn init<B, M>(&self, members: usize) -> Result<GroupOptimizer<GroupAdam, M, B>, OptimError>
    where
        B: AutodiffBackend,
        B::InnerBackend: VmapBackend,
        M: AutodiffModule<B>,
    {
        GroupOptimizer::new(self, members)
    }
}

/// Resolved β1, β2, ε (burn stores them as `f32`) and the AMSGrad switch.
#[derive(Debug, Clone)]
pub(crate) struct AdaptiveMomentum {
    pub(crate) beta_1: Vec<f32>,
    pub(crate) beta_2: Vec<f32>,
    pub(crate) epsilon: Vec<f32>,
    pub(crate) amsgrad: bool,
}

/// The moments after one update, for all members.
pub(crate) struct Moments<B: VmapBackend, const D: usize> {
    pub(crate) moment_1: Tensor<B, D>,
    pub(crate) moment_2: Tensor<B, D>,
    pub(crate) max_moment_2: Option<Tensor<B, D>>,
    /// Each member's step count, including this update.
    pub(crate) steps: Vec<usize>,
}

impl<B: VmapBackend, const D: usize> Moments<B, D> {
    /// The second moment the update divides by (the running maximum with AMSGrad).
    pub(crate) fn second(&self) -> Tensor<B, D> {
        self.max_moment_2
            .clone()
            .unwrap_or_else(|| self.moment_2.clone())
    }

    pub(crate) fn into_state(self) -> MemberState<B> {
        let mut tensors = vec![self.moment_1, self.moment_2];
        tensors.extend(self.max_moment_2);
        MemberState::new(self.steps, tensors)
    }
}

impl AdaptiveMomentum {
    pub(crate) fn resolve(
        beta_1: &HyperParam,
        beta_2: &HyperParam,
        epsilon: &HyperParam,
        amsgrad: bool,
        members: usize,
    ) -> Result<Self, OptimError> {
        Ok(Self {
            beta_1: resolve_f32(beta_1, "beta_1", members, Bound::UnitOpen)?,
            beta_2: resolve_f32(beta_2, "beta_2", members, Bound::UnitOpen)?,
            epsilon: resolve_f32(epsilon, "epsilon", members, Bound::Positive)?,
            amsgrad,
        })
    }

    pub(crate) fn members(&self) -> usize {
        self.beta_1.len()
    }

    pub(crate) fn retain(&mut self, indices: &[usize]) {
        self.beta_1 = pick(&self.beta_1, indices);
        self.beta_2 = pick(&self.beta_2, indices);
        self.epsilon = pick(&self.epsilon, indices);
    }

    pub(crate) fn append(&mut self, new: Self) -> Result<(), OptimError> {
        same("amsgrad", self.amsgrad, new.amsgrad)?;
        self.beta_1.extend(new.beta_1);
        self.beta_2.extend(new.beta_2);
        self.epsilon.extend(new.epsilon);
        Ok(())
    }

    /// burn's moment updates (shared by Adam and AdamW). A member on its first step has zero
    /// moments, which gives burn's first-step values exactly.
    pub(crate) fn update<B: VmapBackend, const D: usize>(
        &self,
        grad: Tensor<B, D>,
        state: Option<MemberState<B>>,
    ) -> Moments<B, D> {
        let factor_1 = Scalars::new(self.beta_1.iter().map(|b| (1.0 - b) as f64));
        let factor_2 = Scalars::new(self.beta_2.iter().map(|b| (1.0 - b) as f64));
        match state {
            None => {
                let moment_1 = grad.clone().mul_members(&factor_1);
                let moment_2 = grad.square().mul_members(&factor_2);
                let max_moment_2 = self.amsgrad.then(|| moment_2.clone());
                Moments {
                    moment_1,
                    moment_2,
                    max_moment_2,
                    steps: vec![1; self.members()],
                }
            }
            Some(state) => {
                let (steps, tensors) = state.into_parts::<D>();
                let mut tensors = tensors.into_iter();
                let moment_1 = tensors
                    .next()
                    .expect("saturate-optim: Adam state holds the first moment")
                    .mul_members(&Scalars::f32(&self.beta_1))
                    .add(grad.clone().mul_members(&factor_1));
                let moment_2 = tensors
                    .next()
                    .expect("saturate-optim: Adam state holds the second moment")
                    .mul_members(&Scalars::f32(&self.beta_2))
                    .add(grad.square().mul_members(&factor_2));
                let previous_max = tensors.next();
                let max_moment_2 = self.amsgrad.then(|| {
                    previous_max
                        .unwrap_or_else(|| moment_2.clone())
                        .max_pair(moment_2.clone())
                });
                Moments {
                    moment_1,
                    moment_2,
                    max_moment_2,
                    steps: steps.iter().map(|s| s + 1).collect(),
                }
            }
        }
    }
}

/// `β^t` for member k's step count, as burn computes it (`f32::powi`).
pub(crate) fn powers(betas: &[f32], steps: &[usize]) -> Vec<f32> {
    betas
        .iter()
        .zip(steps)
        .map(|(b, &t)| b.powi(t as i32))
        .collect()
}

/// Adam for a group, with per-member β1, β2, ε and weight decay; built from [`GroupAdamConfig`].
#[derive(Debug, Clone)]
pub struct GroupAdam {
    momentum: AdaptiveMomentum,
    weight_decay: Option<Vec<f32>>,
}

impl UpdateRule for GroupAdam {
    type Config = GroupAdamConfig;

    fn resolve(config: &GroupAdamConfig, members: usize) -> Result<Self, OptimError> {
        Ok(Self {
            momentum: AdaptiveMomentum::resolve(
                &config.beta_1,
                &config.beta_2,
                &config.epsilon,
                config.amsgrad,
                members,
            )?,
            weight_decay: config
                .weight_decay
                .as_ref()
                .map(|wd| {
                    resolve_f32(
                        &wd.penalty,
                        "weight_decay.penalty",
                        members,
                        Bound::NonNegative,
                    )
                })
                .transpose()?,
        })
    }

    fn clipping(config: &GroupAdamConfig) -> Option<&GroupGradientClippingConfig> {
        config.grad_clipping.as_ref()
    }

    fn retain(&mut self, indices: &[usize]) {
        self.momentum.retain(indices);
        if let Some(wd) = &mut self.weight_decay {
            *wd = pick(wd, indices);
        }
    }

    fn append(&mut self, new: Self) -> Result<(), OptimError> {
        let (mine, theirs) = (self.momentum.members(), new.momentum.members());
        self.momentum.append(new.momentum)?;
        self.weight_decay = append_optional(
            self.weight_decay.take(),
            mine,
            new.weight_decay,
            theirs,
            0.0,
        );
        Ok(())
    }

    fn step<B: VmapBackend, const D: usize>(
        &self,
        lr: &[f64],
        tensor: Tensor<B, D>,
        grad: Tensor<B, D>,
        state: Option<MemberState<B>>,
    ) -> (Tensor<B, D>, Option<MemberState<B>>) {
        // One pass per parameter tensor on host backends (the same values); op by op
        // elsewhere, and with AMSGrad.
        if self.momentum.amsgrad {
            return self.step_op_by_op(lr, tensor, grad, state);
        }
        let (steps, moments) = match state {
            None => (vec![1; self.momentum.members()], None),
            Some(state) => {
                let (steps, tensors) = state.into_parts::<D>();
                let mut tensors = tensors.into_iter();
                let moments = tensors.next().zip(tensors.next());
                (steps.iter().map(|s| s + 1).collect(), moments)
            }
        };
        let m = &self.momentum;
        let (combined, epsilon) = bias_corrections(m, &steps);
        let scalars = AdamStepScalars {
            beta_1: m.beta_1.clone(),
            factor_1: m.beta_1.iter().map(|b| 1.0 - b).collect(),
            beta_2: m.beta_2.clone(),
            factor_2: m.beta_2.iter().map(|b| 1.0 - b).collect(),
            penalty: self.weight_decay.clone(),
            combined,
            epsilon,
            lr: lr.iter().map(|&v| v as f32).collect(),
        };
        match saturate_vmap::fused::adam_step((tensor, grad, moments), &scalars) {
            Ok((tensor, m1, m2)) => (tensor, Some(MemberState::new(steps, vec![m1, m2]))),
            Err((tensor, grad, moments)) => {
                let state = moments.map(|(m1, m2)| {
                    let previous: Vec<usize> = steps.iter().map(|s| s - 1).collect();
                    MemberState::new(previous, vec![m1, m2])
                });
                self.step_op_by_op(lr, tensor, grad, state)
            }
        }
    }
}

/// Adam's bias corrections for each member's step count `t`, as burn computes them:
/// `√(1-β2ᵗ) / (1-β1ᵗ)` (the first moment's factor) and `ε √(1-β2ᵗ)`.
fn bias_corrections(m: &AdaptiveMomentum, steps: &[usize]) -> (Vec<f32>, Vec<f32>) {
    let beta_1_t = powers(&m.beta_1, steps);
    let beta_2_t = powers(&m.beta_2, steps);
    let mut combined_factor = Vec::with_capacity(beta_1_t.len());
    let mut epsilon = Vec::with_capacity(beta_1_t.len());
    for k in 0..beta_1_t.len() {
        let bias_correction2_sqrt = (1.0 - beta_2_t[k]).sqrt();
        combined_factor.push(bias_correction2_sqrt / (1.0 - beta_1_t[k]));
        epsilon.push(m.epsilon[k] * bias_correction2_sqrt);
    }
    (combined_factor, epsilon)
}

impl GroupAdam {
    /// The step as whole-tensor ops (any backend; AMSGrad).
    fn step_op_by_op<B: VmapBackend, const D: usize>(
        &self,
        lr: &[f64],
        tensor: Tensor<B, D>,
        mut grad: Tensor<B, D>,
        state: Option<MemberState<B>>,
    ) -> (Tensor<B, D>, Option<MemberState<B>>) {
        if let Some(penalty) = &self.weight_decay {
            grad = tensor.clone().mul_members(&Scalars::f32(penalty)).add(grad);
        }
        let moments = self.momentum.update(grad, state);

        let (combined_factor, epsilon) = bias_corrections(&self.momentum, &moments.steps);
        let update = moments
            .moment_1
            .clone()
            .mul_members(&Scalars::f32(&combined_factor))
            .div(moments.second().sqrt().add_members(&Scalars::f32(&epsilon)));
        let delta = update.mul_members(&Scalars::new(lr.iter().copied()));
        (tensor - delta, Some(moments.into_state()))
    }
}
