//! The CubeCL test binary (`cargo test -p saturate-vmap --features wgpu --test cubecl`): the
//! module and optimizer parity suites on `Vmap<Wgpu>`, burn's default wgpu backend (fusion over
//! `CubeBackend<WgpuRuntime>`, the code path CUDA, ROCm and Metal share), and CubeCL-specific
//! checks. On a machine without a GPU it runs on Mesa's lavapipe (`scripts/setup-vulkan.sh`); it
//! fails, never skips, when no wgpu device comes up.

/// The backend under the member axis in this binary's parity suite.
pub type Inner = burn::backend::Wgpu;

/// Whether [`Inner`] holds at most 6 dimensions (NdArray), which a few tests document.
pub const INNER_MAX_RANK_6: bool = false;

/// The device type of [`Inner`].
pub type InnerDevice = burn::backend::wgpu::WgpuDevice;

/// The device of [`Inner`]: wgpu's default (the best adapter it finds).
pub fn inner_device() -> burn::backend::wgpu::WgpuDevice {
    burn::backend::wgpu::WgpuDevice::default()
}

#[path = "dropout.rs"]
mod dropout;
#[path = "cubecl/fusion.rs"]
mod fusion;
#[path = "cubecl/parity.rs"]
mod parity;
#[path = "cubecl/pool.rs"]
mod pool;
