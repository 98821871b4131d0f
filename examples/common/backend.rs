//! The backend the examples train on, chosen by cargo feature: NdArray on the CPU by default,
//! `--features wgpu` for wgpu (Vulkan, Metal, DX12: AMD, Intel and Apple GPUs), `--features cuda`
//! for CUDA, `--features tch` for LibTorch (`cargo run --release --features cuda --example NAME`).
//! An example trains on `Autodiff<Vmap<Inner>>` (its groups) and evaluates on `Vmap<Inner>`.
//! When several are enabled, CUDA wins over wgpu, wgpu over LibTorch.

/// The inner backend under saturate's member axis: CUDA (`--features cuda`).
#[cfg(feature = "cuda")]
pub type Inner = burn::backend::Cuda;

/// The inner backend under saturate's member axis: wgpu (`--features wgpu`).
#[cfg(all(feature = "wgpu", not(feature = "cuda")))]
pub type Inner = burn::backend::Wgpu;

/// The inner backend under saturate's member axis: LibTorch (`--features tch`).
#[cfg(all(feature = "tch", not(any(feature = "cuda", feature = "wgpu"))))]
pub type Inner = burn::backend::LibTorch;

/// The inner backend under saturate's member axis: NdArray on the CPU (the default).
#[cfg(not(any(feature = "cuda", feature = "wgpu", feature = "tch")))]
pub type Inner = burn::backend::NdArray;

/// Burn's name for [`Inner`] on its default device (e.g. `ndarray`, `fusion<cubecl<wgpu>>`),
/// printed by the examples so a log says where it ran.
#[allow(dead_code)] // every example includes this module; not every one prints the name
pub fn name() -> String {
    use burn::tensor::backend::Backend;
    Inner::name(&Default::default())
}
