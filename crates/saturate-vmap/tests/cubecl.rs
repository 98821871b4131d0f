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
///
/// `SATURATE_CONV_LOWERING=gemm` (or `inner`, `host`) sets the convolution lowering for the
/// whole run first: every CubeCL backend's default is the grouped convolution, and
/// `scripts/test.sh` reruns the convolution tests under `gemm`, the unfold + K-batched matmul
/// (`ConvLowering::BatchedGemm`, which a program can choose with `set_conv_lowering`), so that
/// its path stays tested on a CubeCL backend too.
pub fn inner_device() -> burn::backend::wgpu::WgpuDevice {
    static LOWERING: std::sync::Once = std::sync::Once::new();
    LOWERING.call_once(|| {
        use saturate_vmap::{set_conv_lowering, ConvLowering};
        if let Ok(name) = std::env::var("SATURATE_CONV_LOWERING") {
            let lowering: ConvLowering = name
                .parse()
                .unwrap_or_else(|e| panic!("SATURATE_CONV_LOWERING: {e}"));
            set_conv_lowering::<Inner>(lowering);
        }
    });
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
