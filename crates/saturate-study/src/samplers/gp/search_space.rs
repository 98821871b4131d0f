//! The GP's view of a search space: every parameter mapped to one coordinate, numerical
//! ones normalised to [0, 1] (in log space for log distributions, the range widened by half
//! a step on each side for stepped ones), categorical ones kept as the choice index, as in
//! Optuna's `_gp/search_space.py`.

use crate::distributions::Distribution;
use crate::samplers::SearchSpace;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Scale {
    Linear,
    Log,
    Categorical,
}

/// One coordinate of the normalised space.
#[derive(Debug, Clone)]
struct Coordinate {
    scale: Scale,
    low: f64,
    high: f64,
    /// 0 for continuous parameters; 1 for categorical ones.
    step: f64,
}

/// The normalised search space.
#[derive(Debug, Clone)]
pub(crate) struct GpSearchSpace {
    coordinates: Vec<Coordinate>,
}

impl GpSearchSpace {
    pub(crate) fn new(space: &SearchSpace) -> Self {
        let coordinates = space
            .values()
            .map(|d| match d {
                Distribution::Categorical(c) => Coordinate {
                    scale: Scale::Categorical,
                    low: 0.0,
                    high: c.choices.len() as f64,
                    step: 1.0,
                },
                Distribution::Float(f) => Coordinate {
                    scale: if f.log { Scale::Log } else { Scale::Linear },
                    low: f.low,
                    high: f.high,
                    step: f.step.unwrap_or(0.0),
                },
                Distribution::Int(i) => Coordinate {
                    scale: if i.log { Scale::Log } else { Scale::Linear },
                    low: i.low as f64,
                    high: i.high as f64,
                    step: i.step as f64,
                },
            })
            .collect();
        Self { coordinates }
    }

    pub(crate) fn dim(&self) -> usize {
        self.coordinates.len()
    }

    pub(crate) fn is_categorical(&self) -> Vec<bool> {
        self.coordinates
            .iter()
            .map(|c| c.scale == Scale::Categorical)
            .collect()
    }

    /// Coordinates optimised by gradient (no step).
    pub(crate) fn continuous_indices(&self) -> Vec<usize> {
        (0..self.dim())
            .filter(|i| self.coordinates[*i].step == 0.0)
            .collect()
    }

    /// Coordinates searched on their grid (stepped, integer and categorical), with the
    /// normalised grid of each.
    pub(crate) fn discrete_choices(&self) -> Vec<(usize, Vec<f64>)> {
        (0..self.dim())
            .filter(|i| self.coordinates[*i].step > 0.0)
            .map(|i| {
                let c = &self.coordinates[i];
                let choices = if c.scale == Scale::Categorical {
                    (0..c.high as usize).map(|k| k as f64).collect()
                } else {
                    let n = ((c.high - c.low) / c.step + 1e-9).floor() as usize + 1;
                    (0..n)
                        .map(|k| c.normalize(c.low + k as f64 * c.step))
                        .collect()
                };
                (i, choices)
            })
            .collect()
    }

    /// The normalised point of internal values, in the space's parameter order.
    pub(crate) fn normalize(&self, internal: &[f64]) -> Vec<f64> {
        self.coordinates
            .iter()
            .zip(internal)
            .map(|(c, v)| c.normalize(*v))
            .collect()
    }

    /// Internal values of a normalised point: clipped to the bounds, on the grid of
    /// stepped parameters.
    pub(crate) fn unnormalize(&self, x: &[f64]) -> Vec<f64> {
        self.coordinates
            .iter()
            .zip(x)
            .map(|(c, u)| {
                if c.scale == Scale::Categorical {
                    return u.round().clamp(0.0, c.high - 1.0);
                }
                let v = c.unnormalize(*u).clamp(c.low, c.high);
                if c.step > 0.0 {
                    (c.low + ((v - c.low) / c.step).round() * c.step).clamp(c.low, c.high)
                } else {
                    v
                }
            })
            .collect()
    }

    /// Maps a point of the unit cube onto the space: categorical coordinates to an index,
    /// stepped ones onto their grid (Optuna's `sample_normalized_params` after Sobol).
    pub(crate) fn snap_unit_point(&self, x: &mut [f64]) {
        for (c, u) in self.coordinates.iter().zip(x.iter_mut()) {
            if c.scale == Scale::Categorical {
                *u = (*u * c.high).floor().min(c.high - 1.0);
            } else if c.step > 0.0 {
                let v = c.unnormalize(*u);
                let v = ((v - c.low + 0.5 * c.step) / c.step).floor() * c.step + c.low;
                *u = c.normalize(v.clamp(c.low, c.high));
            }
        }
    }
}

impl Coordinate {
    fn widened(&self) -> (f64, f64) {
        let (low, high) = (self.low - 0.5 * self.step, self.high + 0.5 * self.step);
        match self.scale {
            Scale::Log => (low.ln(), high.ln()),
            _ => (low, high),
        }
    }

    fn normalize(&self, v: f64) -> f64 {
        if self.scale == Scale::Categorical {
            return v;
        }
        let (low, high) = self.widened();
        let v = if self.scale == Scale::Log { v.ln() } else { v };
        if high == low {
            0.5
        } else {
            (v - low) / (high - low)
        }
    }

    fn unnormalize(&self, u: f64) -> f64 {
        let (low, high) = self.widened();
        let v = u * (high - low) + low;
        if self.scale == Scale::Log {
            v.exp()
        } else {
            v
        }
    }
}
