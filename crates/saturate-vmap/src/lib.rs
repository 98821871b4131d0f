//! `Vmap<B>`: a Burn backend decorator that adds a leading member axis to every tensor, so
//! any unmodified Burn module trains K independent copies of itself as one batched model.

pub mod backend;
pub mod device;
mod ops;
pub mod tensor;

pub use backend::Vmap;
pub use device::VmapDevice;
pub use tensor::{VmapQTensor, VmapTensor};
