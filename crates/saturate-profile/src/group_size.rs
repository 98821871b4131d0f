//! Choosing the group size K: as large as memory allows, no larger than the point where
//! throughput stops growing.

use std::error::Error as StdError;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ProfileError;

/// What the caller's measurement reports for one group size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepMeasurement {
    /// Time of one training step of the whole group (all K members), e.g. the mean of a
    /// few steps after a warm-up step.
    pub step_time: Duration,
    /// Memory in use while training at this group size, bytes: device memory on a GPU
    /// (backend statistics or NVML), resident memory on a CPU
    /// ([`current_resident_bytes`](crate::current_resident_bytes)).
    pub memory_bytes: u64,
}

/// One measured group size, as [`Recommendation::measurements`] lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSizeMeasurement {
    /// The group size K.
    pub group_size: usize,
    /// What the caller measured.
    pub measurement: StepMeasurement,
    /// Members x steps per second: K / step time.
    pub member_steps_per_second: f64,
}

/// A least-squares line `intercept + slope * k`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    /// The value at k = 0 (for memory: what the group needs regardless of K).
    pub intercept: f64,
    /// The increase per unit of k (for memory: bytes per member).
    pub slope: f64,
}

impl LinearFit {
    /// Fits `points` (k, y) by least squares. With one distinct k there is no slope to
    /// separate from the intercept: the line goes through the origin and the point,
    /// which attributes everything to the members (an overestimate, so a safe one).
    fn least_squares(points: &[(f64, f64)]) -> Self {
        let n = points.len() as f64;
        let mean_k = points.iter().map(|p| p.0).sum::<f64>() / n;
        let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
        let covariance: f64 = points
            .iter()
            .map(|(k, y)| (k - mean_k) * (y - mean_y))
            .sum();
        let variance: f64 = points.iter().map(|(k, _)| (k - mean_k).powi(2)).sum();
        if variance == 0.0 {
            return Self {
                intercept: 0.0,
                slope: mean_y / mean_k,
            };
        }
        let slope = covariance / variance;
        Self {
            intercept: mean_y - slope * mean_k,
            slope,
        }
    }

    /// The line's value at `k`.
    pub fn at(&self, k: usize) -> f64 {
        self.intercept + self.slope * k as f64
    }
}

/// What [`GroupSizeSearch::run`] found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// The group size to use: `min(memory_limited_k, saturation_k)`, where a missing
    /// `saturation_k` (throughput still growing) counts as the search's maximum.
    pub recommended: usize,
    /// The largest K (at most the search's maximum, at least 1) whose predicted memory
    /// fits the budget.
    pub memory_limited_k: usize,
    /// The K after which doubling the group raised member-steps per second by less than
    /// the saturation gain; `None` if throughput still grew at the largest K measured.
    pub saturation_k: Option<usize>,
    /// The memory budget the search was given, bytes.
    pub memory_budget_bytes: u64,
    /// Memory in bytes as `intercept + slope * K` (least squares over the measurements).
    pub memory_fit: LinearFit,
    /// Every group size measured, in increasing order.
    pub measurements: Vec<GroupSizeMeasurement>,
}

impl Recommendation {
    /// Predicted memory at group size `k`, bytes (from [`memory_fit`](Self::memory_fit)).
    pub fn predicted_memory(&self, k: usize) -> f64 {
        self.memory_fit.at(k)
    }
}

/// Measures K = 1, 2, 4, 8, ... and recommends a group size; see
/// [`recommend_group_size`] for the shortcut with default options.
///
/// The search stops measuring as soon as throughput has saturated, a measurement went
/// over the memory budget, or the memory fit predicts the next K would (so as not to
/// run out of memory); the memory limit is then extrapolated from the fit.
///
/// ```
/// use std::time::Duration;
/// use saturate_profile::{GroupSizeSearch, StepMeasurement};
///
/// // A device that runs up to 8 members in the time of one, and 100 MiB + 10 MiB per member.
/// let recommendation = GroupSizeSearch::new(1 << 30)
///     .max_group_size(128)
///     .saturation_gain(0.1)
///     .run(|k| {
///         // Here: build a K-member group, run a few steps, time them, read memory.
///         let step_time = Duration::from_millis(10 * (k as u64).div_ceil(8));
///         let memory_bytes = (100 + 10 * k as u64) << 20;
///         Ok::<_, std::convert::Infallible>(StepMeasurement { step_time, memory_bytes })
///     })?;
/// assert_eq!(recommendation.saturation_k, Some(8));
/// assert_eq!(recommendation.memory_limited_k, 92); // (1024 - 100) / 10 MiB
/// assert_eq!(recommendation.recommended, 8);
/// # Ok::<(), saturate_profile::ProfileError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GroupSizeSearch {
    memory_budget_bytes: u64,
    max_group_size: usize,
    saturation_gain: f64,
}

impl GroupSizeSearch {
    /// A search under `memory_budget_bytes`, with K up to 256 and a saturation gain of
    /// 10% per doubling.
    pub fn new(memory_budget_bytes: u64) -> Self {
        Self {
            memory_budget_bytes,
            max_group_size: 256,
            saturation_gain: 0.1,
        }
    }

    /// The largest K to consider (measured K are the powers of two up to it).
    pub fn max_group_size(mut self, max_group_size: usize) -> Self {
        self.max_group_size = max_group_size;
        self
    }

    /// Throughput has saturated when doubling K raises member-steps per second by less
    /// than this fraction (0.1 = 10%).
    pub fn saturation_gain(mut self, gain: f64) -> Self {
        self.saturation_gain = gain;
        self
    }

    /// Calls `measure(k)` for K = 1, 2, 4, ... and recommends a group size.
    ///
    /// # Errors
    ///
    /// [`ProfileError::BudgetTooSmall`] if K = 1 already exceeds the budget;
    /// [`ProfileError::Measurement`] wrapping the closure's error;
    /// [`ProfileError::InvalidStepTime`] for a zero step time;
    /// [`ProfileError::InvalidMaxGroupSize`] / [`ProfileError::InvalidSaturationGain`]
    /// for bad options.
    pub fn run<F, E>(&self, mut measure: F) -> Result<Recommendation, ProfileError>
    where
        F: FnMut(usize) -> Result<StepMeasurement, E>,
        E: Into<Box<dyn StdError + Send + Sync>>,
    {
        if self.max_group_size == 0 {
            return Err(ProfileError::InvalidMaxGroupSize);
        }
        let gain = self.saturation_gain;
        if !(gain.is_finite() && gain > 0.0) {
            return Err(ProfileError::InvalidSaturationGain { gain });
        }
        let budget = self.memory_budget_bytes as f64;
        let mut measurements: Vec<GroupSizeMeasurement> = Vec::new();
        let mut saturation_k = None;
        let candidates = std::iter::successors(Some(1usize), |k| k.checked_mul(2))
            .take_while(|&k| k <= self.max_group_size);
        for group_size in candidates {
            if measurements.len() >= 2 && memory_fit(&measurements).at(group_size) > budget {
                break;
            }
            let measurement = measure(group_size).map_err(|error| ProfileError::Measurement {
                group_size,
                source: error.into(),
            })?;
            let step_seconds = measurement.step_time.as_secs_f64();
            if step_seconds <= 0.0 {
                return Err(ProfileError::InvalidStepTime {
                    group_size,
                    step_seconds,
                });
            }
            if group_size == 1 && measurement.memory_bytes > self.memory_budget_bytes {
                return Err(ProfileError::BudgetTooSmall {
                    budget_bytes: self.memory_budget_bytes,
                    measured_bytes: measurement.memory_bytes,
                });
            }
            let over_budget = measurement.memory_bytes > self.memory_budget_bytes;
            measurements.push(GroupSizeMeasurement {
                group_size,
                measurement,
                member_steps_per_second: group_size as f64 / step_seconds,
            });
            if let [.., previous, last] = measurements.as_slice() {
                if last.member_steps_per_second < previous.member_steps_per_second * (1.0 + gain) {
                    saturation_k = Some(previous.group_size);
                    break;
                }
            }
            if over_budget {
                break;
            }
        }
        let memory_fit = memory_fit(&measurements);
        let memory_limited_k = self.memory_limited_k(memory_fit);
        Ok(Recommendation {
            recommended: memory_limited_k.min(saturation_k.unwrap_or(self.max_group_size)),
            memory_limited_k,
            saturation_k,
            memory_budget_bytes: self.memory_budget_bytes,
            memory_fit,
            measurements,
        })
    }

    fn memory_limited_k(&self, fit: LinearFit) -> usize {
        let budget = self.memory_budget_bytes as f64;
        if fit.slope <= 0.0 {
            return self.max_group_size;
        }
        let estimate = ((budget - fit.intercept) / fit.slope).floor();
        let mut k = estimate.clamp(1.0, self.max_group_size as f64) as usize;
        // Rounding in the division may leave k one past the budget.
        while k > 1 && fit.at(k) > budget {
            k -= 1;
        }
        k
    }
}

fn memory_fit(measurements: &[GroupSizeMeasurement]) -> LinearFit {
    let points: Vec<(f64, f64)> = measurements
        .iter()
        .map(|m| (m.group_size as f64, m.measurement.memory_bytes as f64))
        .collect();
    LinearFit::least_squares(&points)
}

/// [`GroupSizeSearch`] with K up to `max_group_size` and a saturation gain of 10%.
///
/// ```
/// use std::time::Duration;
/// use saturate_profile::{recommend_group_size, StepMeasurement};
///
/// let recommendation = recommend_group_size(1_000, 64, |k| {
///     Ok::<_, std::convert::Infallible>(StepMeasurement {
///         step_time: Duration::from_millis(k as u64), // no gain from batching at all
///         memory_bytes: 100 + 100 * k as u64,
///     })
/// })?;
/// assert_eq!(recommendation.saturation_k, Some(1));
/// assert_eq!(recommendation.memory_limited_k, 9);
/// assert_eq!(recommendation.recommended, 1);
/// # Ok::<(), saturate_profile::ProfileError>(())
/// ```
pub fn recommend_group_size<F, E>(
    memory_budget_bytes: u64,
    max_group_size: usize,
    measure: F,
) -> Result<Recommendation, ProfileError>
where
    F: FnMut(usize) -> Result<StepMeasurement, E>,
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    GroupSizeSearch::new(memory_budget_bytes)
        .max_group_size(max_group_size)
        .run(measure)
}
