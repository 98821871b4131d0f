use std::error::Error as StdError;

/// Everything that can go wrong while profiling or recommending a group size.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// The platform offers no way to read this quantity.
    #[error("{what} cannot be read on {platform}; the profile reports it as missing")]
    Unsupported {
        /// The quantity, e.g. "peak resident memory".
        what: &'static str,
        /// The operating system (`std::env::consts::OS`).
        platform: &'static str,
    },

    /// An operating-system counter could not be read.
    #[error("could not read {what}: {source}")]
    Os {
        /// The quantity, e.g. "process CPU time".
        what: &'static str,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A `/proc` file was read but lacked the expected field.
    #[error("{path} has no parsable {field} line; is /proc mounted?")]
    ProcField {
        /// The file, e.g. `/proc/self/status`.
        path: &'static str,
        /// The missing field, e.g. `VmHWM`.
        field: &'static str,
    },

    /// The GPU sampling interval was zero.
    #[error("the GPU sampling interval must be positive (got {interval:?}); the default is 10 ms")]
    InvalidInterval {
        /// The rejected interval.
        interval: std::time::Duration,
    },

    /// The sampler thread could not be started.
    #[error("could not start the GPU sampler thread: {source}")]
    SpawnSampler {
        /// The error from `std::thread::Builder::spawn`.
        #[source]
        source: std::io::Error,
    },

    /// A GPU counter failed to read (from any [`GpuSource`](crate::GpuSource)).
    #[error("reading GPU {counter} from {device} failed: {message}")]
    GpuCounter {
        /// The counter: "utilization", "memory used" or "total energy".
        counter: &'static str,
        /// The device, as [`GpuSource::name`](crate::GpuSource::name) reports it.
        device: String,
        /// What the source said.
        message: String,
    },

    /// The NVML library (libnvidia-ml) could not be loaded or initialised.
    #[error(
        "NVML is not available ({reason}); install the NVIDIA driver (it ships libnvidia-ml.so / nvml.dll), \
         or profile without a GPU source"
    )]
    NvmlUnavailable {
        /// Why loading or initialisation failed.
        reason: String,
    },

    /// NVML works but sees no GPU.
    #[error("NVML found no NVIDIA GPU; check `nvidia-smi`, or profile without a GPU source")]
    NoGpu,

    /// The requested GPU index does not exist.
    #[error("GPU index {index} is out of range: NVML sees {count} device(s), indices 0..{count}")]
    DeviceOutOfRange {
        /// The requested index.
        index: u32,
        /// How many devices NVML sees.
        count: u32,
    },

    /// An NVML call failed for another reason.
    #[error("NVML call {call} failed: {message}")]
    Nvml {
        /// The NVML function, e.g. `device_by_index`.
        call: &'static str,
        /// NVML's message.
        message: String,
    },

    /// `max_group_size` was zero.
    #[error("max_group_size must be at least 1")]
    InvalidMaxGroupSize,

    /// The saturation gain threshold was not a finite positive number.
    #[error(
        "the saturation gain must be finite and positive (got {gain}); 0.1 means 10% per doubling"
    )]
    InvalidSaturationGain {
        /// The rejected threshold.
        gain: f64,
    },

    /// Even one member does not fit in the memory budget.
    #[error(
        "group size 1 used {measured_bytes} bytes, more than the budget of {budget_bytes} bytes; \
         raise the budget or shrink the model or batch"
    )]
    BudgetTooSmall {
        /// The memory budget given.
        budget_bytes: u64,
        /// The memory measured at group size 1.
        measured_bytes: u64,
    },

    /// A measurement reported a step time that is zero or not finite.
    #[error("the measurement at group size {group_size} reported step time {step_seconds} s; it must be positive")]
    InvalidStepTime {
        /// The group size measured.
        group_size: usize,
        /// The reported step time in seconds.
        step_seconds: f64,
    },

    /// The caller's measurement closure failed.
    #[error("measuring group size {group_size} failed: {source}")]
    Measurement {
        /// The group size being measured.
        group_size: usize,
        /// The caller's error.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
}
