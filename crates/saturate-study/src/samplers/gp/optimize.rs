//! Maximising the acquisition function over the mixed space (Optuna's
//! `_gp/optim_mixed.py`): quasi-random candidates, the best one and a roulette selection
//! of others (plus the best trial so far) as starting points, then a local search that
//! alternates L-BFGS-B on the continuous coordinates with a search over each discrete
//! coordinate's grid until nothing changes.

use std::convert::Infallible;

use rand::rngs::StdRng;
use rand::Rng;

use crate::samplers::gp::acquisition::Acquisition;
use crate::samplers::gp::lbfgs::{minimize, LbfgsSettings};
use crate::samplers::gp::search_space::GpSearchSpace;

/// Grids up to this size are searched exhaustively, larger ones by a line search.
const MAX_EXHAUSTIVE_CHOICES: usize = 16;
/// Rounds of continuous + discrete search per start at most.
const MAX_LOCAL_SEARCH_ROUNDS: usize = 100;

/// How the acquisition function is maximised.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OptimizeSettings {
    pub n_preliminary_samples: usize,
    pub n_local_search: usize,
    pub tol: f64,
}

/// Quasi-random points of the space (scrambled Sobol, snapped to grids and indices).
pub(crate) fn sample_normalized(
    space: &GpSearchSpace,
    n: usize,
    rng: &mut StdRng,
) -> Vec<Vec<f64>> {
    let dim = space.dim();
    let seed: u32 = rng.random();
    (0..n)
        .map(|i| {
            let mut x: Vec<f64> = if dim <= 256 {
                // Four dimensions at a time: the same values as `sobol_burley::sample`.
                (0..dim.div_ceil(4))
                    .flat_map(|set| sobol_burley::sample_4d(i as u32, set as u32, seed))
                    .take(dim)
                    .map(f64::from)
                    .collect()
            } else {
                (0..dim).map(|_| rng.random()).collect()
            };
            space.snap_unit_point(&mut x);
            x
        })
        .collect()
}

/// What the optimiser needs of an acquisition function (maximised).
pub(crate) trait AcquisitionFn {
    /// The value at `x` (the same as [`Self::value_and_gradient`]'s).
    fn value(&self, x: &[f64]) -> f64;
    /// The value at each of `points`.
    fn values(&self, points: &[Vec<f64>]) -> Vec<f64> {
        points.iter().map(|x| self.value(x)).collect()
    }
    /// The value and its gradient in `x` (0 along categorical coordinates).
    fn value_and_gradient(&self, x: &[f64]) -> (f64, Vec<f64>);
    /// One lengthscale per coordinate: the local search's scale.
    fn lengthscales(&self) -> Vec<f64>;
}

impl AcquisitionFn for Acquisition {
    fn value(&self, x: &[f64]) -> f64 {
        Acquisition::value(self, x)
    }
    fn values(&self, points: &[Vec<f64>]) -> Vec<f64> {
        Acquisition::values(self, points)
    }
    fn value_and_gradient(&self, x: &[f64]) -> (f64, Vec<f64>) {
        Acquisition::value_and_gradient(self, x)
    }
    fn lengthscales(&self) -> Vec<f64> {
        Acquisition::lengthscales(self)
    }
}

/// The point maximising `acquisition`, and its value.
pub(crate) fn optimize_acquisition(
    acquisition: &dyn AcquisitionFn,
    space: &GpSearchSpace,
    warm_starts: &[Vec<f64>],
    settings: OptimizeSettings,
    rng: &mut StdRng,
) -> (Vec<f64>, f64) {
    let samples = sample_normalized(space, settings.n_preliminary_samples, rng);
    let values: Vec<f64> = acquisition
        .values(&samples)
        .into_iter()
        .map(|v| if v.is_nan() { f64::NEG_INFINITY } else { v })
        .collect();
    let best = (0..values.len())
        .max_by(|a, b| values[*a].total_cmp(&values[*b]))
        .expect("at least one sample");
    // Roulette over exp(value − best value), without the best point (already chosen).
    let mut weights: Vec<f64> = values.iter().map(|v| (v - values[best]).exp()).collect();
    weights[best] = 0.0;
    weights
        .iter_mut()
        .filter(|w| !w.is_finite())
        .for_each(|w| *w = 0.0);
    let non_zero = weights.iter().filter(|w| **w > 0.0).count();
    let extra = settings
        .n_local_search
        .saturating_sub(warm_starts.len() + 1)
        .min(non_zero);
    let mut starts = vec![samples[best].clone()];
    for _ in 0..extra {
        let total: f64 = weights.iter().sum();
        if total.is_nan() || total <= 0.0 {
            break;
        }
        let mut u = rng.random::<f64>() * total;
        let mut chosen = weights.len() - 1;
        for (i, w) in weights.iter().enumerate() {
            if *w > 0.0 {
                chosen = i;
                if u < *w {
                    break;
                }
                u -= w;
            }
        }
        weights[chosen] = 0.0;
        starts.push(samples[chosen].clone());
    }
    starts.extend(warm_starts.iter().cloned());

    let search = LocalSearch::new(acquisition, space, settings.tol);
    let mut best_point = starts[0].clone();
    let mut best_value = f64::NEG_INFINITY;
    for start in starts {
        let (x, v) = search.run(start);
        if v > best_value || best_value == f64::NEG_INFINITY {
            best_point = x;
            best_value = v;
        }
    }
    (best_point, best_value)
}

struct LocalSearch<'a> {
    acquisition: &'a dyn AcquisitionFn,
    continuous: Vec<usize>,
    /// Lengthscales of the continuous coordinates: the gradient steps run in `x / ℓ`,
    /// which makes the problem about equally curved in every direction.
    lengthscales: Vec<f64>,
    discrete: Vec<(usize, Vec<f64>, bool)>,
    tol: f64,
}

impl<'a> LocalSearch<'a> {
    fn new(acquisition: &'a dyn AcquisitionFn, space: &GpSearchSpace, tol: f64) -> Self {
        let all = acquisition.lengthscales();
        let continuous = space.continuous_indices();
        let categorical = space.is_categorical();
        Self {
            acquisition,
            lengthscales: continuous.iter().map(|i| all[*i]).collect(),
            continuous,
            discrete: space
                .discrete_choices()
                .into_iter()
                .map(|(i, choices)| (i, choices, categorical[i]))
                .collect(),
            tol,
        }
    }

    fn run(&self, mut x: Vec<f64>) -> (Vec<f64>, f64) {
        let mut value = self.acquisition.value(&x);
        // `None`: the continuous coordinates changed last; `Some(i)`: coordinate i did.
        let mut last_changed: Option<usize> = None;
        for _ in 0..MAX_LOCAL_SEARCH_ROUNDS {
            if self.gradient_ascent(&mut x, &mut value) {
                last_changed = None;
            }
            for (i, choices, categorical) in &self.discrete {
                if last_changed == Some(*i) {
                    return (x, value);
                }
                let updated = if *categorical || choices.len() <= MAX_EXHAUSTIVE_CHOICES {
                    self.exhaustive(&mut x, &mut value, *i, choices)
                } else {
                    self.line_search(&mut x, &mut value, *i, choices)
                };
                if updated {
                    last_changed = Some(*i);
                }
            }
            if last_changed.is_none() {
                return (x, value);
            }
        }
        log::warn!("GP acquisition local search did not converge");
        (x, value)
    }

    fn gradient_ascent(&self, x: &mut Vec<f64>, value: &mut f64) -> bool {
        if self.continuous.is_empty() {
            return false;
        }
        let scaled: Vec<f64> = self
            .continuous
            .iter()
            .zip(&self.lengthscales)
            .map(|(i, l)| x[*i] / l)
            .collect();
        let bounds: Vec<(f64, f64)> = self.lengthscales.iter().map(|l| (0.0, 1.0 / l)).collect();
        let base = x.clone();
        let point = |z: &[f64]| {
            let mut p = base.clone();
            for ((i, l), v) in self.continuous.iter().zip(&self.lengthscales).zip(z) {
                p[*i] = v * l;
            }
            p
        };
        let negative = |z: &[f64]| -> Result<(f64, Vec<f64>), Infallible> {
            let (v, g) = self.acquisition.value_and_gradient(&point(z));
            let g = self
                .continuous
                .iter()
                .zip(&self.lengthscales)
                .map(|(i, l)| -g[*i] * l)
                .collect();
            Ok((-v, g))
        };
        let settings = LbfgsSettings {
            pgtol: self.tol.sqrt(),
            max_iters: 200,
            ..Default::default()
        };
        let result = minimize(negative, &scaled, Some(&bounds), settings)
            .unwrap_or_else(|never| match never {});
        if -result.f > *value && result.iterations > 0 {
            *x = point(&result.x);
            *value = -result.f;
            true
        } else {
            false
        }
    }

    fn exhaustive(&self, x: &mut [f64], value: &mut f64, i: usize, choices: &[f64]) -> bool {
        let current = x[i];
        let mut best: Option<(f64, f64)> = None;
        for c in choices.iter().filter(|c| **c != current) {
            x[i] = *c;
            let v = self.acquisition.value(x);
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((*c, v));
            }
        }
        match best {
            Some((c, v)) if v > *value => {
                x[i] = c;
                *value = v;
                true
            }
            _ => {
                x[i] = current;
                false
            }
        }
    }

    /// Golden-section search on the piecewise-linear interpolation of the acquisition
    /// between grid points (Optuna runs Brent's method on the same function), then the
    /// nearest grid point.
    fn line_search(&self, x: &mut [f64], value: &mut f64, i: usize, grid: &[f64]) -> bool {
        let current = x[i];
        let nearest = |v: f64| -> usize {
            let right = grid.partition_point(|g| *g < v).clamp(1, grid.len() - 1);
            if (v - grid[right - 1]).abs() < (v - grid[right]).abs() {
                right - 1
            } else {
                right
            }
        };
        let current_index = nearest(current);
        let mut cache: Vec<Option<f64>> = vec![None; grid.len()];
        cache[current_index] = Some(*value);
        let mut probe = x.to_vec();
        let mut at = |k: usize| -> f64 {
            if let Some(v) = cache[k] {
                return v;
            }
            probe[i] = grid[k];
            let v = self.acquisition.value(&probe);
            cache[k] = Some(v);
            v
        };
        let mut interpolated = |v: f64| -> f64 {
            let right = grid.partition_point(|g| *g < v).clamp(1, grid.len() - 1);
            let left = right - 1;
            let w = (grid[right] - v) / (grid[right] - grid[left]);
            w * at(left) + (1.0 - w) * at(right)
        };
        let xtol = grid
            .windows(2)
            .map(|w| w[1] - w[0])
            .fold(f64::INFINITY, f64::min)
            / 4.0;
        let ratio = (5f64.sqrt() - 1.0) / 2.0;
        let (mut a, mut b) = (grid[0], grid[grid.len() - 1]);
        let mut c = b - ratio * (b - a);
        let mut d = a + ratio * (b - a);
        let (mut fc, mut fd) = (interpolated(c), interpolated(d));
        while (b - a).abs() > xtol {
            if fc > fd {
                b = d;
                d = c;
                fd = fc;
                c = b - ratio * (b - a);
                fc = interpolated(c);
            } else {
                a = c;
                c = d;
                fc = fd;
                d = a + ratio * (b - a);
                fd = interpolated(d);
            }
        }
        let k = nearest(0.5 * (a + b));
        let v = at(k);
        if k != current_index && v > *value {
            x[i] = grid[k];
            *value = v;
            true
        } else {
            false
        }
    }
}
