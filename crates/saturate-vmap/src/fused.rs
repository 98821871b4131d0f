//! Fused optimizer steps for host backends: one pass over a parameter tensor of a group
//! instead of one whole-tensor op per term of the update rule. saturate-optim calls them and
//! falls back to its op-by-op form when they hand the tensors back (another backend, a layout
//! they do not take). They give the op-by-op form's values bit for bit.

use burn::tensor::{Tensor, TensorPrimitive};

use crate::{VmapBackend, VmapTensor};

/// Every per-member scalar of one Adam step (burn's Adam, with L2 weight decay), one value
/// per member, already converted to `f32` as burn converts a scalar operand.
#[derive(Debug, Clone, PartialEq)]
pub struct AdamStepScalars {
    /// β1: the previous first moment's factor.
    pub beta_1: Vec<f32>,
    /// 1 - β1: the gradient's factor in the first moment.
    pub factor_1: Vec<f32>,
    /// β2: the previous second moment's factor.
    pub beta_2: Vec<f32>,
    /// 1 - β2: the squared gradient's factor in the second moment.
    pub factor_2: Vec<f32>,
    /// The L2 penalty added to the gradient (`g + penalty * p`), if any.
    pub penalty: Option<Vec<f32>>,
    /// `√(1 - β2ᵗ) / (1 - β1ᵗ)`: the first moment's bias correction.
    pub combined: Vec<f32>,
    /// `ε √(1 - β2ᵗ)`: added to the square root of the second moment.
    pub epsilon: Vec<f32>,
    /// The learning rate.
    pub lr: Vec<f32>,
}

/// A parameter tensor, its gradient and its Adam moments (none before the first step).
pub type AdamInputs<B, const D: usize> = (
    Tensor<B, D>,
    Tensor<B, D>,
    Option<(Tensor<B, D>, Tensor<B, D>)>,
);

/// A parameter tensor and its two Adam moments after a step.
pub type AdamOutputs<B, const D: usize> = (Tensor<B, D>, Tensor<B, D>, Tensor<B, D>);

/// One Adam step of every member of a batched parameter tensor in a single pass, on host
/// backends whose buffers the crate reads (NdArray): `(parameter, first moment, second
/// moment)` after the step, equal bit for bit to burn's Adam applied op by op per member:
///
/// `g += penalty p`; `m1 = β1 m1 + (1-β1) g`; `m2 = β2 m2 + (1-β2) g²`;
/// `p -= lr (m1 · combined) / (√m2 + ε')`.
///
/// # Errors
/// The inputs, unchanged, when the backend has no fused step or a tensor is not a batched
/// row-major array of the parameter's shape; the caller then applies the rule op by op.
pub fn adam_step<B: VmapBackend, const D: usize>(
    inputs: AdamInputs<B, D>,
    scalars: &AdamStepScalars,
) -> Result<AdamOutputs<B, D>, AdamInputs<B, D>> {
    let (param, grad, moments) = inputs;
    let members = scalars.lr.len();
    let to_vmap = |t: Tensor<B, D>| B::float_to_vmap(t.into_primitive().tensor());
    let from_vmap = |t: VmapTensor<_>| {
        Tensor::<B, D>::from_primitive(TensorPrimitive::Float(B::float_from_vmap(t)))
    };
    let (p, g) = (to_vmap(param), to_vmap(grad));
    let m = moments.map(|(a, b)| (to_vmap(a), to_vmap(b)));
    let all_batched = p.batched
        && g.batched
        && p.members == members
        && g.members == members
        && m.as_ref().is_none_or(|(a, b)| a.batched && b.batched);
    if !all_batched {
        return Err((
            from_vmap(p),
            from_vmap(g),
            m.map(|(a, b)| (from_vmap(a), from_vmap(b))),
        ));
    }
    let wrap = |inner| from_vmap(VmapTensor::batched(inner, members));
    match crate::kernels::ndarray::adam_step(
        p.inner,
        g.inner,
        m.map(|(a, b)| (a.inner, b.inner)),
        scalars,
    ) {
        Ok((p, m1, m2)) => Ok((wrap(p), wrap(m1), wrap(m2))),
        Err((p, g, m)) => Err((wrap(p), wrap(g), m.map(|(a, b)| (wrap(a), wrap(b))))),
    }
}
