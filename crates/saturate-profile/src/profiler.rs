//! Measuring a piece of work: [`profile`], [`Profiler`], [`ProfilerConfig`].

use std::time::{Duration, Instant};

use crate::gpu::{GpuSampler, DEFAULT_SAMPLING_INTERVAL};
use crate::{peak_resident_bytes, process_cpu_time, GpuProfile, GpuSource, Profile, ProfileError};

/// Runs `work` and measures its wall time, the process's CPU time and peak resident
/// memory. No GPU: use [`ProfilerConfig`] with a [`GpuSource`] for that.
///
/// ```
/// let (sum, profile) = saturate_profile::profile(|| (0..1_000_000u64).sum::<u64>());
/// assert_eq!(sum, 499_999_500_000);
/// assert!(profile.wall_seconds > 0.0);
/// assert!(profile.gpu.is_none());
/// ```
pub fn profile<T>(work: impl FnOnce() -> T) -> (T, Profile) {
    let profiler = Profiler::start();
    let result = work();
    (result, profiler.finish())
}

/// A measurement in progress: [`start`](Self::start) it, do the work,
/// [`finish`](Self::finish) it.
///
/// ```
/// use saturate_profile::Profiler;
///
/// let profiler = Profiler::start();
/// let v: Vec<u64> = (0..10_000).collect();
/// let profile = profiler.finish();
/// assert!(profile.wall_seconds > 0.0);
/// # drop(v);
/// ```
///
/// Dropping a profiler without finishing it stops its sampler thread.
pub struct Profiler {
    started: Instant,
    cpu_at_start: Option<Duration>,
    gpu: Option<GpuSampler>,
}

impl std::fmt::Debug for Profiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiler")
            .field("started", &self.started)
            .field("cpu_at_start", &self.cpu_at_start)
            .field("samples_gpu", &self.gpu.is_some())
            .finish()
    }
}

impl Profiler {
    /// Starts measuring wall time, CPU time and peak resident memory (no GPU).
    pub fn start() -> Self {
        Self {
            started: Instant::now(),
            cpu_at_start: process_cpu_time().ok(),
            gpu: None,
        }
    }

    /// What was measured from the start until now; measuring goes on (the GPU sampler
    /// keeps sampling). The group runner writes one on each trial as it finishes.
    ///
    /// ```
    /// let profiler = saturate_profile::Profiler::start();
    /// let so_far = profiler.snapshot();
    /// let at_end = profiler.finish();
    /// assert!(so_far.wall_seconds <= at_end.wall_seconds);
    /// ```
    pub fn snapshot(&self) -> Profile {
        self.measure(self.gpu.as_ref().map(GpuSampler::snapshot))
    }

    /// Stops measuring. A panic in the GPU source is re-raised here.
    pub fn finish(mut self) -> Profile {
        // Stop the sampler first, so its last sample is as close to the work's end as
        // the wall-clock reading.
        let gpu = self.gpu.take().map(GpuSampler::finish);
        self.measure(gpu)
    }

    fn measure(&self, gpu: Option<GpuProfile>) -> Profile {
        let wall_seconds = self.started.elapsed().as_secs_f64();
        let cpu_seconds = self
            .cpu_at_start
            .zip(process_cpu_time().ok())
            .map(|(start, end)| end.saturating_sub(start).as_secs_f64());
        Profile {
            wall_seconds,
            cpu_seconds,
            peak_resident_bytes: peak_resident_bytes().ok(),
            gpu,
        }
    }
}

/// Options of a [`Profiler`]: a GPU source and its sampling interval.
pub struct ProfilerConfig {
    interval: Duration,
    gpu: Option<Box<dyn GpuSource>>,
}

impl Default for ProfilerConfig {
    fn default() -> Self {
        Self {
            interval: DEFAULT_SAMPLING_INTERVAL,
            gpu: None,
        }
    }
}

impl std::fmt::Debug for ProfilerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfilerConfig")
            .field("interval", &self.interval)
            .field("gpu", &self.gpu.as_ref().map(|source| source.name()))
            .finish()
    }
}

impl ProfilerConfig {
    /// No GPU source, sampled every [`DEFAULT_SAMPLING_INTERVAL`] once one is set.
    pub fn new() -> Self {
        Self::default()
    }

    /// How often the GPU is sampled ([`DEFAULT_SAMPLING_INTERVAL`] unless set). Must be
    /// positive.
    pub fn with_interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// Samples `source` during the work.
    pub fn with_gpu(mut self, source: impl GpuSource + 'static) -> Self {
        self.gpu = Some(Box::new(source));
        self
    }

    /// Samples NVIDIA GPU `index` through NVML (feature `nvml`); see
    /// [`NvmlSource::new`](crate::NvmlSource::new) for the errors.
    #[cfg(feature = "nvml")]
    pub fn with_nvml(self, index: u32) -> Result<Self, ProfileError> {
        Ok(self.with_gpu(crate::NvmlSource::new(index)?))
    }

    /// Starts measuring ([`Profiler::start`] is the same without a GPU source).
    ///
    /// # Errors
    ///
    /// [`ProfileError::InvalidInterval`] for a zero interval with a GPU source; the
    /// source's error if its first sample fails; [`ProfileError::SpawnSampler`] if the
    /// sampler thread cannot start.
    pub fn init(self) -> Result<Profiler, ProfileError> {
        let gpu = self
            .gpu
            .map(|source| GpuSampler::start(source, self.interval))
            .transpose()?;
        let mut profiler = Profiler::start();
        profiler.gpu = gpu;
        Ok(profiler)
    }

    /// Runs `work` under a profiler started with these options. The work does not run
    /// if starting fails.
    pub fn profile<T>(self, work: impl FnOnce() -> T) -> Result<(T, Profile), ProfileError> {
        let profiler = self.init()?;
        let result = work();
        Ok((result, profiler.finish()))
    }
}
