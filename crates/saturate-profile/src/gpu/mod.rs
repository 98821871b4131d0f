//! GPU telemetry: the [`GpuSource`] contract, the sampler that aggregates it, and the
//! NVML source (feature `nvml`).

mod base;
#[cfg(feature = "nvml")]
mod nvml;
mod sampler;

pub use base::GpuSource;
#[cfg(feature = "nvml")]
pub use nvml::NvmlSource;
pub(crate) use sampler::GpuSampler;
pub use sampler::{GpuAccumulator, DEFAULT_SAMPLING_INTERVAL};
