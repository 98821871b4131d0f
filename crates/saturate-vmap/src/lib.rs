//! `Vmap<B>`: a Burn backend decorator that adds a leading member axis to every tensor, so
//! any unmodified Burn module trains K independent copies of itself as one batched model.
//!
//! ```
//! use burn::backend::{Autodiff, NdArray};
//! use burn::nn::loss::{MseLoss, Reduction};
//! use burn::nn::{Linear, LinearConfig};
//! use burn::tensor::Tensor;
//! use saturate_vmap::{Batched, Vmap, member_values};
//!
//! type B = Autodiff<Vmap<NdArray>>;
//! let group: Batched<Linear<B>> =
//!     Batched::init(4, &Default::default(), |device| LinearConfig::new(3, 1).init(device))?;
//! let device = group.device();
//! let x = Tensor::<B, 2>::ones([8, 3], &device);   // built from data: shared by all members
//! let loss = MseLoss::new().forward(group.forward(x), Tensor::zeros([8, 1], &device), Reduction::Mean);
//! assert_eq!(member_values(loss.clone())?.len(), 4); // one loss per member
//! let grads = loss.backward();                        // exact per-member gradients
//! let first: Linear<B> = group.member(0)?;            // an ordinary one-member module
//! # Ok::<(), saturate_vmap::VmapError>(())
//! ```
//!
//! ## The model
//!
//! A tensor of `Vmap<B>` ([`VmapTensor`]) is either *batched*, physically `[K, ...logical]`
//! with one slice per member, or *unbatched*, shared by all members. Shape queries answer the
//! logical shape, so module code never sees the member axis. Every op of burn's backend traits
//! has a batching rule for every mix of batched and unbatched operands. Random tensors are
//! batched (K independent draws: initialisations, dropout masks); tensors built from data,
//! zeros, ones or a constant are shared.
//!
//! Per-member results equal the same member trained alone on the inner backend, within
//! floating-point tolerance (bit for bit in most models). One inner op is never trusted:
//! burn-ndarray's `simd` feature computes `recip` with a hardware estimate whose result for an
//! element depends on where it sits in the buffer, so where the inner `recip` is approximate,
//! `Vmap` computes reciprocals by exact division instead (probed once per backend). saturate
//! builds burn-ndarray without `simd`, where `recip` is exact.
//!
//! Reading a batched tensor with burn's `into_data` fails with a message pointing to
//! [`member_data`] / [`member_values`]. Quantized tensors, and ops whose output shape depends
//! on the data (`argwhere` / `nonzero`) applied to a batched tensor, are not supported: they
//! panic with a message naming the op.

mod any_backend;
pub mod backend;
pub mod batched;
pub mod device;
pub mod error;
pub mod fused;
pub mod group_model;
pub mod host_pool;
mod kernels;
mod lowering;
pub mod member;
pub mod nn;
mod ops;
pub mod tensor;
pub mod vmap_backend;

pub use any_backend::values_per_member;
pub use backend::Vmap;
pub use batched::{Batched, DeepCopy};
pub use device::VmapDevice;
pub use error::VmapError;
pub use group_model::{GroupModel, MemberRecords};
pub use host_pool::{join_host_pool, join_host_pool_for, HostPoolError};
pub use lowering::{conv_lowering, set_conv_lowering, ConvLowering, ParseConvLoweringError};
pub use member::{
    append_zero_float_members, float_with_member_axis, is_batched, member_data, member_tensor,
    member_values, per_member, select_float_members, stack_members,
};
pub use tensor::{VmapQTensor, VmapTensor};
pub use vmap_backend::VmapBackend;
