//! Tensor helpers on the member axis: per-member scalars that broadcast against a parameter,
//! and selecting / appending members of optimizer state.

use burn::tensor::backend::BackendTypes;
use burn::tensor::ops::FloatTensor;
use burn::tensor::ops::{FloatTensorOps, IntTensorOps};
use burn::tensor::{Shape, Tensor, TensorData, TensorMetadata};
use saturate_vmap::tensor::from_inner;
use saturate_vmap::{per_member, VmapBackend};

/// A batched tensor of logical shape `[1; D]` holding `values[k]` for member k: multiplying a
/// parameter-shaped tensor by it scales each member by its own value.
///
/// The values are converted to the backend's float type exactly as burn converts the scalar of
/// `mul_scalar`, so `t * member_scalars(v)` equals `t.mul_scalar(v[k])` member by member.
pub(crate) fn member_scalars<B: VmapBackend, const D: usize>(
    values: impl IntoIterator<Item = f64>,
    device: &B::Device,
) -> Tensor<B, D> {
    let values: Vec<f64> = values.into_iter().collect();
    per_member::<B>(&values, device)
        .expect("saturate-optim: per-member values are resolved to the group size")
        .reshape(Shape::new([1; D]))
}

/// The members `indices` of a state tensor (a shared, unbatched tensor stays shared).
pub(crate) fn select_members<B: VmapBackend>(
    tensor: FloatTensor<B>,
    indices: &[usize],
) -> FloatTensor<B> {
    let tensor = B::float_to_vmap(tensor);
    if !tensor.is_batched() {
        return B::float_from_vmap(from_inner(tensor.into_inner(), false, indices.len()));
    }
    let inner = tensor.into_inner();
    let device = B::Inner::float_device(&inner);
    let data: Vec<i64> = indices.iter().map(|&i| i as i64).collect();
    let data =
        TensorData::new(data, [indices.len()]).convert::<<B::Inner as BackendTypes>::IntElem>();
    let indices_tensor = B::Inner::int_from_data(data, &device);
    let selected = B::Inner::float_select(inner, 0, indices_tensor);
    B::float_from_vmap(from_inner(selected, true, indices.len()))
}

/// A state tensor with `new` members of zeros appended (fresh state: a moment or velocity that
/// has seen no gradient).
pub(crate) fn append_zero_members<B: VmapBackend>(
    tensor: FloatTensor<B>,
    new: usize,
) -> FloatTensor<B> {
    let tensor = B::float_to_vmap(tensor);
    let members = tensor.members();
    let logical = tensor.shape();
    let inner = physical::<B>(tensor.is_batched(), tensor.into_inner(), members);
    let device = B::Inner::float_device(&inner);
    let mut zeros_shape = logical;
    zeros_shape.insert(0, new);
    let zeros = TensorData::zeros::<<B::Inner as BackendTypes>::FloatElem, _>(zeros_shape);
    let zeros = B::Inner::float_from_data(zeros, &device);
    let joined = B::Inner::float_cat(vec![inner, zeros], 0);
    B::float_from_vmap(from_inner(joined, true, members + new))
}

/// The inner tensor with a real member axis in front (`[K, ...logical]`).
pub(crate) fn physical<B: VmapBackend>(
    batched: bool,
    inner: FloatTensor<B::Inner>,
    members: usize,
) -> FloatTensor<B::Inner> {
    if batched {
        return inner;
    }
    let mut shape = inner.shape();
    shape.insert(0, 1);
    let front = B::Inner::float_reshape(inner, shape);
    // A copy, not a view: the state is updated member by member afterwards.
    B::Inner::float_repeat_dim(front, 0, members)
}

/// A float tensor of `B` from an inner tensor whose first axis is the member axis.
pub(crate) fn batched_from_inner<B: VmapBackend>(
    inner: FloatTensor<B::Inner>,
    members: usize,
) -> FloatTensor<B> {
    B::float_from_vmap(from_inner(inner, true, members))
}

/// One value per member, applied to a tensor: as burn's scalar op when every member has the
/// same value (the common case for most hyperparameters; the fastest path), else as a
/// broadcast per-member tensor. Both give the same values bit for bit.
#[derive(Debug, Clone)]
pub(crate) enum Scalars {
    Shared(f64),
    PerMember(Vec<f64>),
}

impl Scalars {
    pub(crate) fn new(values: impl IntoIterator<Item = f64>) -> Self {
        let values: Vec<f64> = values.into_iter().collect();
        match values.first() {
            Some(first) if values.iter().all(|v| v.to_bits() == first.to_bits()) => {
                Scalars::Shared(*first)
            }
            _ => Scalars::PerMember(values),
        }
    }

    /// Values burn stores as `f32`.
    pub(crate) fn f32(values: &[f32]) -> Self {
        Self::new(values.iter().map(|&v| v as f64))
    }

    /// The values as a batched `[1; D]` tensor.
    pub(crate) fn tensor<B: VmapBackend, const D: usize>(
        &self,
        device: &B::Device,
    ) -> Tensor<B, D> {
        match self {
            Scalars::Shared(v) => member_scalars(vec![*v; device.members], device),
            Scalars::PerMember(values) => member_scalars(values.iter().copied(), device),
        }
    }
}

/// Elementwise ops with one value per member.
pub(crate) trait MemberOps {
    /// `self * values[k]` for member k.
    fn mul_members(self, values: &Scalars) -> Self;
    /// `self + values[k]` for member k.
    fn add_members(self, values: &Scalars) -> Self;
    /// `self / values[k]` for member k.
    fn div_members(self, values: &Scalars) -> Self;
}

impl<B: VmapBackend, const D: usize> MemberOps for Tensor<B, D> {
    fn mul_members(self, values: &Scalars) -> Self {
        match values {
            Scalars::Shared(v) => self.mul_scalar(*v),
            per_member => {
                let device = self.device();
                self.mul(per_member.tensor::<B, D>(&device))
            }
        }
    }

    fn add_members(self, values: &Scalars) -> Self {
        match values {
            Scalars::Shared(v) => self.add_scalar(*v),
            per_member => {
                let device = self.device();
                self.add(per_member.tensor::<B, D>(&device))
            }
        }
    }

    fn div_members(self, values: &Scalars) -> Self {
        match values {
            Scalars::Shared(v) => self.div_scalar(*v),
            per_member => {
                let device = self.device();
                self.div(per_member.tensor::<B, D>(&device))
            }
        }
    }
}
