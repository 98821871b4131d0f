//! The backend the examples train on, chosen by cargo feature: NdArray on the CPU by default,
//! burn-cuda with `--features cuda` (`cargo run --release --features cuda --example NAME`).
//! An example trains on `Autodiff<Vmap<Inner>>` (its groups) and evaluates on `Vmap<Inner>`.

/// The inner backend under saturate's member axis: CUDA (`--features cuda`).
#[cfg(feature = "cuda")]
pub type Inner = burn::backend::Cuda;

/// The inner backend under saturate's member axis: NdArray on the CPU (the default; build
/// with `--features cuda` for CUDA).
#[cfg(not(feature = "cuda"))]
pub type Inner = burn::backend::NdArray;
