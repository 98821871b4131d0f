//! How long a piece of work took, what it cost the CPU and memory, and how busy it kept
//! the GPU; and which group size K to train at.
//!
//! - [`profile`] / [`Profiler`]: wall time, process CPU time and peak resident memory;
//!   with a [`GpuSource`] (e.g. `NvmlSource`, feature `nvml`) a sampler thread adds the
//!   GPU's busy fraction, mean utilisation, energy and peak memory ([`GpuProfile`]).
//!   A [`Profile`] prints as a table, serialises to JSON and writes CSV rows.
//! - [`recommend_group_size`] / [`GroupSizeSearch`]: measures a few training steps at
//!   K = 1, 2, 4, ..., fits memory as `base + per_member * K`, and recommends the largest
//!   K that fits a memory budget without going past the point where throughput stops
//!   growing. It takes a closure, so it needs no Burn dependency.
//!
//! ```
//! use saturate_profile::ProfilerConfig;
//!
//! let (checksum, profile) = ProfilerConfig::new().profile(|| (0..1_000u64).sum::<u64>())?;
//! assert_eq!(checksum, 499_500);
//! println!("{profile}");
//! println!("{}\n{}", saturate_profile::Profile::csv_header(), profile.to_csv_row());
//! # Ok::<(), saturate_profile::ProfileError>(())
//! ```
//!
//! ## Platforms
//!
//! CPU time is read on every platform; peak and current resident memory on Linux only
//! (`/proc/self/status`), elsewhere they are missing (`None` in a profile,
//! [`ProfileError::Unsupported`] from [`peak_resident_bytes`]).
//!
//! ## Features
//!
//! | feature | what it does                                                                  | default |
//! |---------|-------------------------------------------------------------------------------|---------|
//! | `nvml`  | `NvmlSource`: NVIDIA GPU telemetry; libnvidia-ml is loaded at run time, so it builds without a GPU | no |

mod error;
mod gpu;
mod group_size;
mod process;
mod profiler;
mod report;

pub use error::ProfileError;
#[cfg(feature = "nvml")]
pub use gpu::NvmlSource;
pub use gpu::{GpuAccumulator, GpuSource, DEFAULT_SAMPLING_INTERVAL};
pub use group_size::{
    recommend_group_size, GroupSizeMeasurement, GroupSizeSearch, LinearFit, Recommendation,
    StepMeasurement,
};
pub use process::{current_resident_bytes, peak_resident_bytes, process_cpu_time};
pub use profiler::{profile, Profiler, ProfilerConfig};
pub use report::{GpuProfile, Profile};
