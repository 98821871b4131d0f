use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::{GpuProfile, GpuSource, ProfileError};

/// The GPU sampler's default polling interval.
///
/// NVML refreshes utilisation about every 1/6 s to 1 s depending on the device; 10 ms
/// catches every refresh at negligible cost (a read takes microseconds).
pub const DEFAULT_SAMPLING_INTERVAL: Duration = Duration::from_millis(10);

/// Aggregates GPU samples into a [`GpuProfile`].
///
/// The profiler's sampler thread drives one; it is public for callers who poll a
/// [`GpuSource`] on their own schedule (and for tests, which pass the elapsed time
/// instead of reading a clock).
///
/// ```
/// # use saturate_profile::{GpuAccumulator, GpuSource, ProfileError};
/// # struct Fixed(u32);
/// # impl GpuSource for Fixed {
/// #     fn name(&self) -> String { "fixed".into() }
/// #     fn utilization(&mut self) -> Result<Option<u32>, ProfileError> { Ok(Some(self.0)) }
/// #     fn memory_used(&mut self) -> Result<Option<u64>, ProfileError> { Ok(None) }
/// #     fn total_energy_mj(&mut self) -> Result<Option<u64>, ProfileError> { Ok(None) }
/// # }
/// let mut accumulator = GpuAccumulator::new("fixed".into());
/// for busy in [0, 80, 40, 0] {
///     accumulator.sample(&mut Fixed(busy));
/// }
/// let gpu = accumulator.finish(std::time::Duration::from_secs(2));
/// assert_eq!(gpu.samples, 4);
/// assert_eq!(gpu.sampling_rate_hz, 2.0);
/// assert_eq!(gpu.busy_fraction, Some(0.5));
/// assert_eq!(gpu.mean_utilization_percent, Some(30.0));
/// ```
#[derive(Debug, Clone)]
pub struct GpuAccumulator {
    device: String,
    samples: u64,
    failed_samples: u64,
    first_error: Option<String>,
    utilization_samples: u64,
    busy_samples: u64,
    utilization_sum: u64,
    peak_memory_used: Option<u64>,
    first_energy_mj: Option<u64>,
    last_energy_mj: Option<u64>,
}

impl GpuAccumulator {
    /// An empty accumulator for the device named `device`.
    pub fn new(device: String) -> Self {
        Self {
            device,
            samples: 0,
            failed_samples: 0,
            first_error: None,
            utilization_samples: 0,
            busy_samples: 0,
            utilization_sum: 0,
            peak_memory_used: None,
            first_energy_mj: None,
            last_energy_mj: None,
        }
    }

    /// Reads every counter of `source` once. A failed read marks the sample failed (the
    /// first failure's message is kept for the report); the counters that did read
    /// still count.
    pub fn sample(&mut self, source: &mut dyn GpuSource) {
        if let Err(error) = self.try_sample(source) {
            self.failed_samples += 1;
            self.first_error.get_or_insert_with(|| error.to_string());
        }
    }

    /// Like [`sample`](Self::sample), but returns the first failed read instead of
    /// counting it (the sample is still counted, with what was read before the failure).
    pub fn try_sample(&mut self, source: &mut dyn GpuSource) -> Result<(), ProfileError> {
        self.samples += 1;
        let utilization = source.utilization();
        if let Ok(Some(percent)) = utilization {
            self.utilization_samples += 1;
            self.busy_samples += u64::from(percent > 0);
            self.utilization_sum += u64::from(percent);
        }
        let memory = source.memory_used();
        if let Ok(Some(bytes)) = memory {
            self.peak_memory_used = Some(self.peak_memory_used.map_or(bytes, |p| p.max(bytes)));
        }
        let energy = source.total_energy_mj();
        if let Ok(Some(millijoules)) = energy {
            self.first_energy_mj.get_or_insert(millijoules);
            self.last_energy_mj = Some(millijoules);
        }
        utilization?;
        memory?;
        energy?;
        Ok(())
    }

    /// The profile of the samples so far, `elapsed` being the time from the first sample
    /// to the last (the effective rate is `samples / elapsed`).
    pub fn finish(self, elapsed: Duration) -> GpuProfile {
        let seconds = elapsed.as_secs_f64();
        let per_utilization_sample = |count: u64| {
            (self.utilization_samples > 0).then(|| count as f64 / self.utilization_samples as f64)
        };
        GpuProfile {
            busy_fraction: per_utilization_sample(self.busy_samples),
            mean_utilization_percent: per_utilization_sample(self.utilization_sum),
            // A counter that went backwards (driver reload) gives no energy, not a wrong one.
            energy_joules: self
                .first_energy_mj
                .zip(self.last_energy_mj)
                .and_then(|(first, last)| last.checked_sub(first))
                .map(|millijoules| millijoules as f64 / 1000.0),
            peak_memory_used_bytes: self.peak_memory_used,
            sampling_rate_hz: if seconds > 0.0 {
                self.samples as f64 / seconds
            } else {
                0.0
            },
            samples: self.samples,
            failed_samples: self.failed_samples,
            first_error: self.first_error,
            device: self.device,
        }
    }
}

/// A thread that samples a [`GpuSource`] until stopped.
pub(crate) struct GpuSampler {
    stop: mpsc::Sender<()>,
    started: Instant,
    /// Shared with the thread so that [`snapshot`](Self::snapshot) can read the samples
    /// so far without stopping it.
    accumulator: Arc<Mutex<GpuAccumulator>>,
    thread: JoinHandle<()>,
}

impl GpuSampler {
    /// Takes the first sample on the calling thread, so that a source that cannot be
    /// read fails here, before the profiled work starts; then samples every `interval`
    /// on a thread of its own.
    pub(crate) fn start(
        mut source: Box<dyn GpuSource>,
        interval: Duration,
    ) -> Result<Self, ProfileError> {
        if interval.is_zero() {
            return Err(ProfileError::InvalidInterval { interval });
        }
        let mut first = GpuAccumulator::new(source.name());
        let started = Instant::now();
        first.try_sample(&mut *source)?;
        let accumulator = Arc::new(Mutex::new(first));
        let shared = Arc::clone(&accumulator);
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("saturate-gpu-sampler".into())
            .spawn(move || {
                let sample = |source: &mut dyn GpuSource| {
                    // The lock is held for one sample only; a snapshot that panicked while
                    // holding it cannot leave the counters half-updated, so poison is moot.
                    shared
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .sample(source);
                };
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                    sample(&mut *source);
                }
                // The last sample closes the energy interval at the end of the work.
                sample(&mut *source);
            })
            .map_err(|source| ProfileError::SpawnSampler { source })?;
        Ok(Self {
            stop,
            started,
            accumulator,
            thread,
        })
    }

    /// The aggregate of the samples taken so far; sampling goes on.
    pub(crate) fn snapshot(&self) -> GpuProfile {
        let accumulator = self
            .accumulator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        accumulator.finish(self.started.elapsed())
    }

    /// Stops sampling and returns the aggregate. A panic in the source is re-raised here.
    pub(crate) fn finish(self) -> GpuProfile {
        // The thread may already have ended (by a panic); the join below reports that.
        let _ = self.stop.send(());
        if let Err(panic) = self.thread.join() {
            std::panic::resume_unwind(panic);
        }
        let elapsed = self.started.elapsed();
        let accumulator = Arc::try_unwrap(self.accumulator)
            .map(|mutex| mutex.into_inner().unwrap_or_else(PoisonError::into_inner))
            .unwrap_or_else(|shared| {
                shared
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
            });
        accumulator.finish(elapsed)
    }
}
