//! What a profile measured, and how it prints: a table ([`Display`](std::fmt::Display)),
//! JSON (serde) and CSV rows.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What [`profile`](crate::profile) or [`Profiler::finish`](crate::Profiler::finish)
/// measured. A quantity the platform or device cannot report is `None`, never 0.
///
/// ```
/// let (_, profile) = saturate_profile::profile(|| (0..1000u64).sum::<u64>());
/// println!("{profile}");
/// let json = serde_json::to_string(&profile).unwrap();
/// let back: saturate_profile::Profile = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, profile);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Wall-clock time of the work, seconds.
    pub wall_seconds: f64,
    /// CPU time (user + system, all threads) the process used during the work, seconds.
    pub cpu_seconds: Option<f64>,
    /// The process's peak resident memory since it started, bytes (Linux only). It
    /// includes the work's peak, and everything before it.
    pub peak_resident_bytes: Option<u64>,
    /// GPU telemetry, when the profiler had a [`GpuSource`](crate::GpuSource).
    pub gpu: Option<GpuProfile>,
}

/// GPU telemetry aggregated over a profile's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuProfile {
    /// The device, as its source names it.
    pub device: String,
    /// Samples taken (including failed ones).
    pub samples: u64,
    /// Samples in which at least one counter failed to read.
    pub failed_samples: u64,
    /// The first read failure's message, if any.
    pub first_error: Option<String>,
    /// Samples per second actually achieved (each read takes time, and the OS wakes
    /// the sampler late), over the sampled interval.
    pub sampling_rate_hz: f64,
    /// Share (0..=1) of utilisation samples in which the device was running a kernel
    /// (utilisation > 0). `None` if the device reports no utilisation.
    pub busy_fraction: Option<f64>,
    /// Mean utilisation over the samples, percent (0..=100).
    pub mean_utilization_percent: Option<f64>,
    /// Energy the device used between the first and last sample, joules (the driver's
    /// total-energy counter). `None` if the device has no such counter.
    pub energy_joules: Option<f64>,
    /// The most device memory in use at any sample, bytes (by every process).
    pub peak_memory_used_bytes: Option<u64>,
}

impl Profile {
    /// Wall-clock time of the work.
    pub fn wall(&self) -> Duration {
        Duration::from_secs_f64(self.wall_seconds)
    }

    /// How many cores were busy on average: CPU time / wall time.
    pub fn cpu_cores_busy(&self) -> Option<f64> {
        let cpu = self.cpu_seconds?;
        (self.wall_seconds > 0.0).then(|| cpu / self.wall_seconds)
    }

    /// The column names of [`to_csv_row`](Self::to_csv_row), comma-separated.
    ///
    /// ```
    /// let (_, profile) = saturate_profile::profile(|| ());
    /// let header = saturate_profile::Profile::csv_header();
    /// assert_eq!(header.split(',').count(), profile.to_csv_row().split(',').count());
    /// ```
    pub fn csv_header() -> &'static str {
        "wall_seconds,cpu_seconds,peak_resident_bytes,gpu_device,gpu_samples,gpu_failed_samples,\
         gpu_sampling_rate_hz,gpu_busy_fraction,gpu_mean_utilization_percent,gpu_energy_joules,\
         gpu_peak_memory_used_bytes"
    }

    /// One CSV row (no line ending) in the order of [`csv_header`](Self::csv_header);
    /// a missing quantity is an empty field.
    pub fn to_csv_row(&self) -> String {
        let gpu = self.gpu.as_ref();
        [
            self.wall_seconds.to_string(),
            field(self.cpu_seconds),
            field(self.peak_resident_bytes),
            gpu.map(|g| csv_quote(&g.device)).unwrap_or_default(),
            field(gpu.map(|g| g.samples)),
            field(gpu.map(|g| g.failed_samples)),
            field(gpu.map(|g| g.sampling_rate_hz)),
            field(gpu.and_then(|g| g.busy_fraction)),
            field(gpu.and_then(|g| g.mean_utilization_percent)),
            field(gpu.and_then(|g| g.energy_joules)),
            field(gpu.and_then(|g| g.peak_memory_used_bytes)),
        ]
        .join(",")
    }
}

fn field<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

/// RFC 4180 quoting, only where the text needs it.
fn csv_quote(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

const MISSING: &str = "n/a";

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        row(f, "wall time", format!("{:.3} s", self.wall_seconds))?;
        let cpu = match (self.cpu_seconds, self.cpu_cores_busy()) {
            (Some(cpu), Some(cores)) => format!("{cpu:.3} s ({cores:.2} cores busy)"),
            (Some(cpu), None) => format!("{cpu:.3} s"),
            _ => MISSING.into(),
        };
        row(f, "CPU time", cpu)?;
        row(
            f,
            "peak RSS",
            self.peak_resident_bytes.map_or(MISSING.into(), mebibytes),
        )?;
        match &self.gpu {
            Some(gpu) => write!(f, "{gpu}"),
            None => row(f, "GPU", "not sampled".into()),
        }
    }
}

impl fmt::Display for GpuProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        row(f, "GPU", self.device.clone())?;
        row(
            f,
            "GPU samples",
            format!(
                "{} ({} failed) at {:.1} Hz",
                self.samples, self.failed_samples, self.sampling_rate_hz
            ),
        )?;
        let percent = |value: Option<f64>| value.map_or(MISSING.into(), |v| format!("{v:.1} %"));
        row(
            f,
            "GPU busy",
            percent(self.busy_fraction.map(|v| v * 100.0)),
        )?;
        row(f, "GPU mean util", percent(self.mean_utilization_percent))?;
        row(
            f,
            "GPU energy",
            self.energy_joules
                .map_or(MISSING.into(), |joules| format!("{joules:.1} J")),
        )?;
        row(
            f,
            "GPU peak memory",
            self.peak_memory_used_bytes
                .map_or(MISSING.into(), mebibytes),
        )?;
        if let Some(error) = &self.first_error {
            row(f, "GPU first error", error.clone())?;
        }
        Ok(())
    }
}

fn row(f: &mut fmt::Formatter<'_>, name: &str, value: String) -> fmt::Result {
    writeln!(f, "{name:<16} {value}")
}

fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}
