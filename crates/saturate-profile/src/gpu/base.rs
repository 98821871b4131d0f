use crate::ProfileError;

/// A device whose counters the GPU sampler polls.
///
/// Each read returns `Ok(None)` when the device does not offer that counter (energy on
/// many consumer GPUs): the profile then reports the quantity as missing, never as 0.
/// `Err` means the counter exists but this read failed; the sampler counts such samples
/// as failed and keeps going, except for the first sample, whose error ends
/// [`ProfilerConfig::init`](crate::ProfilerConfig::init) before any work runs.
///
/// The sampler moves the source to its own thread, hence `Send`; it calls the three
/// reads in the order utilisation, memory, energy, once per sample.
///
/// ```
/// use saturate_profile::{GpuSource, ProfileError};
///
/// /// A device that is always half busy and reports no energy.
/// struct HalfBusy;
///
/// impl GpuSource for HalfBusy {
///     fn name(&self) -> String { "half-busy".into() }
///     fn utilization(&mut self) -> Result<Option<u32>, ProfileError> { Ok(Some(50)) }
///     fn memory_used(&mut self) -> Result<Option<u64>, ProfileError> { Ok(Some(1 << 20)) }
///     fn total_energy_mj(&mut self) -> Result<Option<u64>, ProfileError> { Ok(None) }
/// }
///
/// let (_, profile) = saturate_profile::ProfilerConfig::new().with_gpu(HalfBusy).profile(|| ())?;
/// let gpu = profile.gpu.expect("a GPU source was given");
/// assert_eq!(gpu.mean_utilization_percent, Some(50.0));
/// assert_eq!(gpu.energy_joules, None);
/// # Ok::<(), ProfileError>(())
/// ```
pub trait GpuSource: Send {
    /// A human-readable device name for reports, e.g. `"NVIDIA H200 (GPU 0)"`.
    fn name(&self) -> String;

    /// Percent (0..=100) of the last sample period during which a kernel ran.
    fn utilization(&mut self) -> Result<Option<u32>, ProfileError>;

    /// Device memory in use, bytes (by every process on the device).
    fn memory_used(&mut self) -> Result<Option<u64>, ProfileError>;

    /// Energy the device has used since the driver loaded, millijoules.
    fn total_energy_mj(&mut self) -> Result<Option<u64>, ProfileError>;
}

/// A boxed source is a source (e.g. one made at run time by a factory).
impl<G: GpuSource + ?Sized> GpuSource for Box<G> {
    fn name(&self) -> String {
        (**self).name()
    }

    fn utilization(&mut self) -> Result<Option<u32>, ProfileError> {
        (**self).utilization()
    }

    fn memory_used(&mut self) -> Result<Option<u64>, ProfileError> {
        (**self).memory_used()
    }

    fn total_energy_mj(&mut self) -> Result<Option<u64>, ProfileError> {
        (**self).total_energy_mj()
    }
}
