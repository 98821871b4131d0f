//! Stochastic gradient descent with momentum and weight decay, one hyperparameter value per
//! member.

use burn::config::Config;
use burn::module::AutodiffModule;
use burn::serde::{Deserialize, Serialize};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::Tensor;
use saturate_vmap::VmapBackend;

use crate::base::{MemberState, UpdateRule};
use crate::decay::GroupWeightDecayConfig;
use crate::error::OptimError;
use crate::grad_clipping::GroupGradientClippingConfig;
use crate::group::GroupOptimizer;
use crate::hyper::{append_optional, pick, resolve, resolve_f32, Bound};
use crate::members::{MemberOps, Scalars};
use crate::momentum::GroupMomentumConfig;

/// Configuration of [`GroupSgd`], field for field burn's `SgdConfig`, with every scalar given once or
/// per member ([`HyperParam`](crate::HyperParam)).
///
/// Stochastic gradient descent: Robbins & Monro, *A Stochastic Approximation Method*, Annals of
/// Mathematical Statistics 1951; momentum: Polyak, *Some methods of speeding up the convergence
/// of iteration methods*, 1964; Nesterov's variant as in Sutskever et al., ICML 2013.
///
/// The update of member k, with learning rate `lr[k]`, is burn's:
/// `g += penalty[k] * p` (weight decay), then momentum (see [`GroupMomentumConfig`]), then
/// `p -= lr[k] * g`. Gradient clipping, if any, is applied to `g` first.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(crate = "burn::serde")]
pub struct GroupSgdConfig {
    /// L2 weight decay (default none).
    pub weight_decay: Option<GroupWeightDecayConfig>,
    /// Momentum (default none).
    pub momentum: Option<GroupMomentumConfig>,
    /// Gradient clipping (default none).
    pub gradient_clipping: Option<GroupGradientClippingConfig>,
}

impl Config for GroupSgdConfig {}

impl GroupSgdConfig {
    /// Plain SGD: no weight decay, no momentum, no clipping (burn's defaults).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the weight decay.
    pub fn with_weight_decay(mut self, weight_decay: Option<GroupWeightDecayConfig>) -> Self {
        self.weight_decay = weight_decay;
        self
    }

    /// Sets the momentum.
    pub fn with_momentum(mut self, momentum: Option<GroupMomentumConfig>) -> Self {
        self.momentum = momentum;
        self
    }

    /// Sets the gradient clipping.
    pub fn with_gradient_clipping(mut self, clipping: Option<GroupGradientClippingConfig>) -> Self {
        self.gradient_clipping = clipping;
        self
    }

    /// An optimizer for a group of `members` members.
    ///
    /// # Errors
    /// [`OptimError::WrongLength`] if a per-member list does not have `members` values;
    /// [`OptimError::OutOfRange`] for a negative penalty or momentum, a dampening outside
    /// `[0, 1]` or a clipping threshold <= 0.
    pub fn init<B, M>(&self, members: usize) -> Result<GroupOptimizer<GroupSgd, M, B>, OptimError>
    where
        B: AutodiffBackend,
        B::InnerBackend: VmapBackend,
        M: AutodiffModule<B>,
    {
        GroupOptimizer::new(self, members)
    }
}

/// Resolved momentum: burn converts the momentum factor to the float type, the dampening is
/// used in `f64` (`1 - dampening`).
#[derive(Debug, Clone)]
struct Momentum {
    momentum: Vec<f32>,
    dampening: Vec<f64>,
    nesterov: bool,
}

/// Stochastic gradient descent for a group, with per-member weight decay, momentum and
/// dampening; built from [`GroupSgdConfig`].
#[derive(Debug, Clone)]
pub struct GroupSgd {
    weight_decay: Option<Vec<f32>>,
    momentum: Option<Momentum>,
    members: usize,
}

impl UpdateRule for GroupSgd {
    type Config = GroupSgdConfig;

    fn resolve(config: &GroupSgdConfig, members: usize) -> Result<Self, OptimError> {
        let weight_decay = config
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
            .transpose()?;
        let momentum = config
            .momentum
            .as_ref()
            .map(|m| -> Result<Momentum, OptimError> {
                Ok(Momentum {
                    momentum: resolve_f32(
                        &m.momentum,
                        "momentum.momentum",
                        members,
                        Bound::NonNegative,
                    )?,
                    dampening: resolve(
                        &m.dampening,
                        "momentum.dampening",
                        members,
                        Bound::UnitClosed,
                    )?,
                    nesterov: m.nesterov,
                })
            })
            .transpose()?;
        Ok(Self {
            weight_decay,
            momentum,
            members,
        })
    }

    fn clipping(config: &GroupSgdConfig) -> Option<&GroupGradientClippingConfig> {
        config.gradient_clipping.as_ref()
    }

    fn retain(&mut self, indices: &[usize]) {
        if let Some(wd) = &mut self.weight_decay {
            *wd = pick(wd, indices);
        }
        if let Some(m) = &mut self.momentum {
            m.momentum = pick(&m.momentum, indices);
            m.dampening = pick(&m.dampening, indices);
        }
        self.members = indices.len();
    }

    fn append(&mut self, new: Self) -> Result<(), OptimError> {
        let (mine, theirs) = (self.members, new.members);
        // A side without momentum gets momentum 0 and dampening 0: plain SGD, exactly.
        let nesterov = match (&self.momentum, &new.momentum) {
            (Some(a), Some(b)) => {
                crate::hyper::same("momentum.nesterov", a.nesterov, b.nesterov)?;
                a.nesterov
            }
            (Some(m), None) | (None, Some(m)) => m.nesterov,
            (None, None) => false,
        };
        let momentum = append_optional(
            self.momentum.as_ref().map(|m| m.momentum.clone()),
            mine,
            new.momentum.as_ref().map(|m| m.momentum.clone()),
            theirs,
            0.0,
        );
        let dampening = append_optional(
            self.momentum.as_ref().map(|m| m.dampening.clone()),
            mine,
            new.momentum.as_ref().map(|m| m.dampening.clone()),
            theirs,
            0.0,
        );
        self.momentum = momentum
            .zip(dampening)
            .map(|(momentum, dampening)| Momentum {
                momentum,
                dampening,
                nesterov,
            });
        self.weight_decay = append_optional(
            self.weight_decay.take(),
            mine,
            new.weight_decay,
            theirs,
            0.0,
        );
        self.members = mine + theirs;
        Ok(())
    }

    fn step<B: VmapBackend, const D: usize>(
        &self,
        lr: &[f64],
        tensor: Tensor<B, D>,
        mut grad: Tensor<B, D>,
        state: Option<MemberState<B>>,
    ) -> (Tensor<B, D>, Option<MemberState<B>>) {
        if let Some(penalty) = &self.weight_decay {
            grad = tensor.clone().mul_members(&Scalars::f32(penalty)).add(grad);
        }

        let mut new_state = None;
        if let Some(m) = &self.momentum {
            let momentum = Scalars::f32(&m.momentum);
            let (velocity, steps) = match state {
                // burn's first step: the velocity is the gradient, undampened.
                None => (grad.clone(), vec![1; self.members]),
                Some(state) => {
                    let (steps, tensors) = state.into_parts::<D>();
                    let previous = tensors
                        .into_iter()
                        .next()
                        .expect("saturate-optim: SGD state holds the velocity");
                    // Members on their first step (added by `extend`) have a zero velocity and
                    // take the gradient undampened, as burn does on its first step.
                    let grad_factor =
                        steps
                            .iter()
                            .zip(&m.dampening)
                            .map(|(&steps, &d)| if steps == 0 { 1.0 } else { 1.0 - d });
                    let velocity = grad
                        .clone()
                        .mul_members(&Scalars::new(grad_factor))
                        .add(previous.mul_members(&momentum));
                    let steps = steps.iter().map(|s| s + 1).collect();
                    (velocity, steps)
                }
            };
            grad = if m.nesterov {
                velocity.clone().mul_members(&momentum).add(grad)
            } else {
                velocity.clone()
            };
            new_state = Some(MemberState::new(steps, vec![velocity]));
        }

        let delta = grad.mul_members(&Scalars::new(lr.iter().copied()));
        (tensor - delta, new_state)
    }
}
