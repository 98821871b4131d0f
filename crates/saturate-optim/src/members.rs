//! Per-member scalars that broadcast against a parameter. Selecting, copying and appending
//! members of optimizer state use saturate-vmap's public member primitives
//! ([`saturate_vmap::select_float_members`] and its neighbours).

use burn::tensor::{Shape, Tensor};
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
