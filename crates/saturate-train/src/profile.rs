//! Per-group profiles ([`RunConfig::with_profile`](crate::RunConfig::with_profile)): each
//! group's training measured with [`saturate_profile`] and written on its trials.

use std::fmt;
use std::sync::Arc;

use saturate_profile::{GpuSource, Profile, ProfileError, Profiler, ProfilerConfig};

/// System attribute: the profile of the group a trial was trained in, as JSON (the fields of
/// [`saturate_profile::Profile`]: `wall_seconds`, `cpu_seconds`, `peak_resident_bytes` and,
/// with a GPU source, `gpu` with the busy fraction, mean utilisation, energy and peak
/// memory), measured from the group's start until the trial finished. Written only when
/// [`RunConfig::with_profile`](crate::RunConfig::with_profile) is on.
pub const PROFILE_ATTR: &str = "saturate:profile";

type MakeSource = dyn Fn() -> Result<Box<dyn GpuSource>, ProfileError> + Send + Sync;

/// Makes the GPU source that a group's profiler samples (one per group: a source is moved
/// to the sampler thread). Set with
/// [`RunConfig::profile_gpu`](crate::RunConfig::profile_gpu).
#[derive(Clone)]
pub struct GpuSourceFactory(Arc<MakeSource>);

impl GpuSourceFactory {
    /// A factory calling `make` once per group.
    pub fn new<G, F>(make: F) -> Self
    where
        G: GpuSource + 'static,
        F: Fn() -> Result<G, ProfileError> + Send + Sync + 'static,
    {
        Self(Arc::new(move || {
            make().map(|source| Box::new(source) as Box<dyn GpuSource>)
        }))
    }

    fn make(&self) -> Result<Box<dyn GpuSource>, ProfileError> {
        (self.0)()
    }
}

impl fmt::Debug for GpuSourceFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GpuSourceFactory(..)")
    }
}

/// The profiler of one group, started before its trials are asked.
pub(crate) struct GroupProfiler {
    profiler: Profiler,
    /// The snapshot written on the trials finished together (by one `report`, or at the
    /// group's end), so that they carry the same profile; cleared after each batch.
    batch: Option<serde_json::Value>,
}

impl GroupProfiler {
    /// Starts profiling; with a GPU factory, its source is made and sampled.
    pub(crate) fn start(gpu: Option<&GpuSourceFactory>) -> Result<Self, ProfileError> {
        let profiler = match gpu {
            None => Profiler::start(),
            Some(factory) => {
                let source = factory.make()?;
                ProfilerConfig::new().with_gpu(source).init()?
            }
        };
        Ok(Self {
            profiler,
            batch: None,
        })
    }

    /// The profile so far as JSON, the same value for every trial of the current batch.
    pub(crate) fn snapshot_json(&mut self) -> serde_json::Value {
        self.batch
            .get_or_insert_with(|| to_json(&self.profiler.snapshot()))
            .clone()
    }

    /// Ends the current batch of finished trials.
    pub(crate) fn end_batch(&mut self) {
        self.batch = None;
    }
}

fn to_json(profile: &Profile) -> serde_json::Value {
    // A Profile is numbers, strings and options: serde_json cannot fail on it (a non-finite
    // float becomes null).
    serde_json::to_value(profile).unwrap_or(serde_json::Value::Null)
}
