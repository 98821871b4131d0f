//! The one integration-test binary of saturate-vmap (every binary that instantiates
//! `Autodiff<Vmap<NdArray>>` costs about a minute to link). The parity suite also runs on CubeCL
//! in the `cubecl` binary (`--features wgpu`).

/// The backend under the member axis in this binary's parity suite.
pub type Inner = burn::backend::NdArray;

/// Whether [`Inner`] holds at most 6 dimensions (NdArray), which a few tests document.
pub const INNER_MAX_RANK_6: bool = true;

/// The device type of [`Inner`].
pub type InnerDevice = burn::backend::ndarray::NdArrayDevice;

/// The device of [`Inner`].
pub fn inner_device() -> burn::backend::ndarray::NdArrayDevice {
    burn::backend::ndarray::NdArrayDevice::Cpu
}

#[macro_use]
pub mod harness;
mod batched;
mod coverage;
mod dropout;
mod group_model;
mod lane;
mod ops;
mod parity;
