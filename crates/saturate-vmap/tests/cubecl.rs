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
/// `SATURATE_CONV_LOWERING=gemm` (or `inner`) sets the convolution lowering for the whole run
/// first: wgpu's default is the grouped convolution, and `scripts/test.sh` reruns the
/// convolution tests under `gemm`, the unfold + K-batched matmul that the other CubeCL
/// backends (CUDA, ROCm, Metal) get by default, so that their path stays tested too.
pub fn inner_device() -> burn::backend::wgpu::WgpuDevice {
    static LOWERING: std::sync::Once = std::sync::Once::new();
    LOWERING.call_once(|| {
        use saturate_vmap::{set_conv_lowering, ConvLowering};
        match std::env::var("SATURATE_CONV_LOWERING").as_deref() {
            Ok("gemm") => set_conv_lowering::<Inner>(ConvLowering::BatchedGemm),
            Ok("inner") => set_conv_lowering::<Inner>(ConvLowering::InnerConvolution),
            Ok(other) => panic!("SATURATE_CONV_LOWERING={other}: expected gemm or inner"),
            Err(_) => {}
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
