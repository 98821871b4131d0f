//! Gradient clipping by value or by norm, with one threshold per member.

use burn::config::Config;
use burn::serde::{Deserialize, Serialize};
use burn::tensor::Tensor;
use saturate_vmap::VmapBackend;

use crate::error::OptimError;
use crate::hyper::{pick, resolve_f32, same, Bound, HyperParam};
use crate::members::{MemberOps, Scalars};

/// Gradient clipping, as burn's `GradientClippingConfig`, with one threshold per member.
///
/// Clipping applies to each parameter tensor on its own, as in burn; under a group, each member
/// is clipped by **its own** threshold and, for [`Norm`](Self::Norm), by the norm of its own
/// gradient. A member that should not be clipped gets the threshold `f64::INFINITY`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(crate = "burn::serde")]
pub enum GroupGradientClippingConfig {
    /// Clamp every gradient element to `[-threshold, threshold]`.
    Value(HyperParam),
    /// Scale the gradient so that its L2 norm is at most the threshold.
    Norm(HyperParam),
}

impl Config for GroupGradientClippingConfig {}

impl GroupGradientClippingConfig {
    /// Clipping by value with the given threshold(s).
    pub fn value(threshold: impl Into<HyperParam>) -> Self {
        Self::Value(threshold.into())
    }

    /// Clipping by norm with the given maximum norm(s).
    pub fn norm(max_norm: impl Into<HyperParam>) -> Self {
        Self::Norm(max_norm.into())
    }

    pub(crate) fn resolve(&self, members: usize) -> Result<GradientClipping, OptimError> {
        Ok(match self {
            Self::Value(t) => GradientClipping::Value(resolve_f32(
                t,
                "gradient_clipping.value",
                members,
                Bound::PositiveOrInfinite,
            )?),
            Self::Norm(t) => GradientClipping::Norm(resolve_f32(
                t,
                "gradient_clipping.norm",
                members,
                Bound::PositiveOrInfinite,
            )?),
        })
    }
}

/// Resolved gradient clipping: one threshold per member.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum GradientClipping {
    Value(Vec<f32>),
    Norm(Vec<f32>),
}

impl GradientClipping {
    fn kind(&self) -> &'static str {
        match self {
            Self::Value(_) => "clipping by value",
            Self::Norm(_) => "clipping by norm",
        }
    }

    fn thresholds(&mut self) -> &mut Vec<f32> {
        match self {
            Self::Value(t) | Self::Norm(t) => t,
        }
    }

    pub(crate) fn retain(&mut self, indices: &[usize]) {
        let t = self.thresholds();
        *t = pick(t, indices);
    }

    /// Appends new members' clipping; a side without clipping gets infinite thresholds.
    pub(crate) fn append(
        mine: Option<Self>,
        my_members: usize,
        theirs: Option<Self>,
        their_members: usize,
    ) -> Result<Option<Self>, OptimError> {
        Ok(match (mine, theirs) {
            (None, None) => None,
            (Some(mut mine), None) => {
                mine.thresholds()
                    .extend(core::iter::repeat_n(f32::INFINITY, their_members));
                Some(mine)
            }
            (None, Some(mut theirs)) => {
                let t = theirs.thresholds();
                let mut all = vec![f32::INFINITY; my_members];
                all.append(t);
                *t = all;
                Some(theirs)
            }
            (Some(mut mine), Some(mut theirs)) => {
                same("gradient_clipping", mine.kind(), theirs.kind())?;
                let new = core::mem::take(theirs.thresholds());
                mine.thresholds().extend(new);
                Some(mine)
            }
        })
    }

    /// Clips a parameter's gradient, member by member (burn's formulas).
    pub(crate) fn clip<B: VmapBackend, const D: usize>(&self, grad: Tensor<B, D>) -> Tensor<B, D> {
        let device = grad.device();
        match self {
            Self::Value(t) => match Scalars::f32(t) {
                Scalars::Shared(threshold) => {
                    let greater_mask = grad.clone().greater_elem(threshold);
                    let lower_mask = grad.clone().lower_elem(-threshold);
                    grad.mask_fill(greater_mask, threshold)
                        .mask_fill(lower_mask, -threshold)
                }
                per_member => {
                    let shape = grad.shape();
                    let upper = per_member.tensor::<B, D>(&device).expand(shape);
                    let lower = upper.clone().neg();
                    let greater_mask = grad.clone().greater(upper.clone());
                    let lower_mask = grad.clone().lower(lower.clone());
                    grad.mask_where(greater_mask, upper)
                        .mask_where(lower_mask, lower)
                }
            },
            Self::Norm(t) => {
                let norm = grad.clone().square().sum().sqrt();
                let min_positive = grad
                    .dtype()
                    .finfo()
                    .unwrap_or(burn::tensor::FloatDType::F32.finfo())
                    .min_positive;
                // burn computes `threshold / (norm + min_positive)` as a reciprocal times the
                // threshold; the same order keeps the result bit for bit.
                let clip_coef = norm
                    .add_scalar(min_positive)
                    .recip()
                    .mul_members(&Scalars::f32(t));
                let clip_coef_clamped = clip_coef.clamp_max(1.0);
                grad.mul(clip_coef_clamped.unsqueeze())
            }
        }
    }
}
