//! `Vmap<B>`: a Burn backend decorator that adds a leading member axis to every tensor, so
//! any unmodified Burn module trains K independent copies of itself as one batched model.

pub mod backend;
pub mod batched;
pub mod device;
pub mod error;
pub mod member;
pub mod nn;
mod ops;
pub mod tensor;
pub mod vmap_backend;

pub use backend::Vmap;
pub use batched::Batched;
pub use device::VmapDevice;
pub use error::VmapError;
pub use member::{
    is_batched, member_data, member_tensor, member_values, per_member, stack_members,
};
pub use tensor::{VmapQTensor, VmapTensor};
pub use vmap_backend::VmapBackend;
