//! AdamW (Loshchilov & Hutter 2019): Adam with decoupled weight decay, one hyperparameter value
//! per member.

use burn::config::Config;
use burn::module::AutodiffModule;
use burn::serde::{Deserialize, Serialize};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::Tensor;
use saturate_vmap::VmapBackend;

use crate::adam::{powers, AdaptiveMomentum};
use crate::base::{MemberState, UpdateRule};
use crate::error::OptimError;
use crate::grad_clipping::GroupGradientClippingConfig;
use crate::group::GroupOptimizer;
use crate::hyper::{pick, resolve_f32, same, Bound, HyperParam};
use crate::members::{MemberOps, Scalars};

/// Configuration of [`GroupAdamW`], field for field burn's `AdamWConfig` (same defaults), with every
/// scalar given once or per member ([`HyperParam`]).
///
/// AdamW: Loshchilov & Hutter, *Decoupled Weight Decay Regularization*, ICLR 2019
/// (<https://arxiv.org/abs/1711.05101>). Cautious weight decay: Chen et al. 2025
/// (<https://arxiv.org/abs/2510.12402>).
///
/// Member k's update is burn's, with its own step count `t`:
/// `m = β1 m + (1-β1) g`; `v = β2 v + (1-β2) g²`;
/// `p = p · (1 - lr·λ) - lr · (m/(1-β1ᵗ)) / (√(v/(1-β2ᵗ)) + ε)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(crate = "burn::serde")]
pub struct GroupAdamWConfig {
    /// β1, the decay of the first moment (default 0.9), in `[0, 1)`.
    pub beta_1: HyperParam,
    /// β2, the decay of the second moment (default 0.999), in `[0, 1)`.
    pub beta_2: HyperParam,
    /// ε, for numerical stability (default 1e-5), > 0.
    pub epsilon: HyperParam,
    /// λ, the decoupled weight decay (default 1e-4), >= 0.
    pub weight_decay: HyperParam,
    /// Cautious weight decay: decay only where the parameter and the first moment have the
    /// same sign (default false); shared by all members.
    pub cautious_weight_decay: bool,
    /// AMSGrad (default false); shared by all members.
    pub amsgrad: bool,
    /// Gradient clipping (default none).
    pub grad_clipping: Option<GroupGradientClippingConfig>,
}

impl Config for GroupAdamWConfig {}

impl Default for GroupAdamWConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl GroupAdamWConfig {
    /// burn's defaults: β1 0.9, β2 0.999, ε 1e-5, λ 1e-4, not cautious, no AMSGrad, no
    /// clipping.
    pub fn new() -> Self {
        Self {
            beta_1: HyperParam::Shared(0.9),
            beta_2: HyperParam::Shared(0.999),
            epsilon: HyperParam::Shared(1e-5),
            weight_decay: HyperParam::Shared(1e-4),
            cautious_weight_decay: false,
            amsgrad: false,
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

    /// Sets λ, the decoupled weight decay (one value, or one per member).
    pub fn with_weight_decay(mut self, weight_decay: impl Into<HyperParam>) -> Self {
        self.weight_decay = weight_decay.into();
        self
    }

    /// Enables or disables cautious weight decay for all members.
    pub fn with_cautious_weight_decay(mut self, cautious: bool) -> Self {
        self.cautious_weight_decay = cautious;
        self
    }

    /// Enables or disables AMSGrad for all members.
    pub fn with_amsgrad(mut self, amsgrad: bool) -> Self {
        self.amsgrad = amsgrad;
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
    /// [`OptimError::OutOfRange`] for a beta outside `[0, 1)`, ε <= 0, a negative λ or a
    /// clipping threshold <= 0.
    pub fn init<B, M>(&self, members: usize) -> Result<GroupOptimizer<GroupAdamW, M, B>, OptimError>
    where
        B: AutodiffBackend,
        B::InnerBackend: VmapBackend,
        M: AutodiffModule<B>,
    {
        GroupOptimizer::new(self, members)
    }
}

/// AdamW for a group, with per-member β1, β2, ε and λ; built from [`GroupAdamWConfig`].
#[derive(Debug, Clone)]
pub struct GroupAdamW {
    momentum: AdaptiveMomentum,
    weight_decay: Vec<f32>,
    cautious_weight_decay: bool,
}

impl UpdateRule for GroupAdamW {
    type Config = GroupAdamWConfig;

    fn resolve(config: &GroupAdamWConfig, members: usize) -> Result<Self, OptimError> {
        Ok(Self {
            momentum: AdaptiveMomentum::resolve(
                &config.beta_1,
                &config.beta_2,
                &config.epsilon,
                config.amsgrad,
                members,
            )?,
            weight_decay: resolve_f32(
                &config.weight_decay,
                "weight_decay",
                members,
                Bound::NonNegative,
            )?,
            cautious_weight_decay: config.cautious_weight_decay,
        })
    }

    fn clipping(config: &GroupAdamWConfig) -> Option<&GroupGradientClippingConfig> {
        config.grad_clipping.as_ref()
    }

    fn retain(&mut self, indices: &[usize]) {
        self.momentum.retain(indices);
        self.weight_decay = pick(&self.weight_decay, indices);
    }

    fn append(&mut self, new: Self) -> Result<(), OptimError> {
        same(
            "cautious_weight_decay",
            self.cautious_weight_decay,
            new.cautious_weight_decay,
        )?;
        self.momentum.append(new.momentum)?;
        self.weight_decay.extend(new.weight_decay);
        Ok(())
    }

    fn step<B: VmapBackend, const D: usize>(
        &self,
        lr: &[f64],
        tensor: Tensor<B, D>,
        grad: Tensor<B, D>,
        state: Option<MemberState<B>>,
    ) -> (Tensor<B, D>, Option<MemberState<B>>) {
        let moments = self.momentum.update(grad, state);

        let m = &self.momentum;
        let bias_1: Vec<f32> = powers(&m.beta_1, &moments.steps)
            .into_iter()
            .map(|p| 1.0 - p)
            .collect();
        let bias_2: Vec<f32> = powers(&m.beta_2, &moments.steps)
            .into_iter()
            .map(|p| 1.0 - p)
            .collect();
        let moment_1_corrected = moments.moment_1.clone().div_members(&Scalars::f32(&bias_1));
        let moment_2_corrected = moments.second().div_members(&Scalars::f32(&bias_2));
        let update_delta = moment_1_corrected.div(
            moment_2_corrected
                .sqrt()
                .add_members(&Scalars::f32(&m.epsilon)),
        );

        // burn computes the decay rate `lr * λ` in f64.
        let decay_rate: Vec<f64> = lr
            .iter()
            .zip(&self.weight_decay)
            .map(|(&lr, &wd)| lr * wd as f64)
            .collect();
        let decayed = if decay_rate.iter().all(|&r| r == 0.0) {
            tensor.clone()
        } else if self.cautious_weight_decay {
            let tensor_positive = tensor.clone().greater_equal_elem(0.0);
            let moment_positive = moments.moment_1.clone().greater_equal_elem(0.0);
            let differ = tensor_positive.not_equal(moment_positive);
            tensor.clone()
                - tensor
                    .clone()
                    .mul_members(&Scalars::new(decay_rate))
                    .mask_fill(differ, 0.0)
        } else {
            let keep = decay_rate.iter().map(|r| 1.0 - r);
            tensor.clone().mul_members(&Scalars::new(keep))
        };
        let delta = update_delta.mul_members(&Scalars::new(lr.iter().copied()));
        (decayed - delta, Some(moments.into_state()))
    }
}
