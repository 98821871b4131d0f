//! Batching rule for the fused `layer_norm` op.

use super::*;

/// A batched `[K, d]` vector shaped to broadcast against `[K, ..., d]` of physical rank `rank`.
fn row_vector<B: Backend>(v: VmapTensor<FloatPrim<B>>, rank: usize) -> FloatPrim<B> {
    let k = v.members;
    let batched = v.batched;
    let p = v.inner;
    let d = *shape_dims(&p).last().unwrap_or(&1);
    let mut shape = vec![1usize; rank];
    shape[0] = if batched { k } else { 1 };
    shape[rank - 1] = d;
    reshape_float::<B>(p, shape)
}

pub(super) fn layer_norm<B: Backend>(
    tensor: FloatTensor<Vmap<B>>,
    gamma: FloatTensor<Vmap<B>>,
    beta: Option<FloatTensor<Vmap<B>>>,
    epsilon: f64,
) -> FloatTensor<Vmap<B>> {
    let mut counts = vec![tensor.members, gamma.members];
    counts.extend(beta.iter().map(|b| b.members));
    let k = common_members("layer_norm", &counts);
    let affine_batched = gamma.batched || beta.as_ref().is_some_and(|b| b.batched);
    if !affine_batched {
        let batched = tensor.batched;
        let out = B::layer_norm(tensor.inner, gamma.inner, beta.map(|b| b.inner), epsilon);
        return VmapTensor::new(out, batched, k);
    }
    // Normalize with a unit scale (exact), then the per-member affine transform.
    let d = *gamma.shape().to_vec().last().unwrap_or(&1);
    let device = B::float_device(&tensor.inner);
    let dtype = tensor.inner.dtype();
    let ones = B::float_ones(Shape::from(vec![d]), &device, dtype.into());
    let normalized = tensor.map(|t| B::layer_norm(t, ones, None, epsilon));
    let normalized = front::<B, FloatKind>(normalized);
    let rank = shape_dims(&normalized).len();
    let scaled = mul_broadcast::<B>(normalized, row_vector::<B>(gamma, rank));
    let out = match beta {
        Some(b) => add_broadcast::<B>(scaled, row_vector::<B>(b, rank)),
        None => scaled,
    };
    VmapTensor::batched(out, k)
}
