//! The Parzen estimator of TPE: a mixture of products of per-parameter kernels
//! (Optuna's `_ParzenEstimator` and `_MixtureOfProductDistribution`).

use rand::Rng;

use crate::distributions::Distribution;
use crate::samplers::tpe::truncnorm;
use crate::samplers::SearchSpace;

/// Settings shared by the estimators of one sampler.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParzenSettings {
    pub(crate) prior_weight: f64,
    pub(crate) consider_magic_clip: bool,
    pub(crate) consider_endpoints: bool,
    pub(crate) multivariate: bool,
}

#[derive(Debug, Clone)]
enum Kernels {
    /// `probabilities[k][c]`: probability of choice `c` under kernel `k`.
    Categorical { probabilities: Vec<Vec<f64>> },
    /// Truncated normals over `[low, high]` (log space for log distributions, widened by
    /// half a step for stepped ones); `grid` = `(low, high, step)` in the original space.
    Numerical {
        mus: Vec<f64>,
        sigmas: Vec<f64>,
        low: f64,
        high: f64,
        log: bool,
        grid: Option<(f64, f64, f64)>,
    },
}

/// A mixture over kernels `0..n` (one per observation, then the prior).
#[derive(Debug, Clone)]
pub(crate) struct ParzenEstimator {
    weights: Vec<f64>,
    dims: Vec<Kernels>,
}

/// Optuna's `default_weights`: ones, with a linear ramp from 1/n to 1 on the oldest n−25.
pub(crate) fn default_weights(n: usize) -> Vec<f64> {
    if n < 25 {
        return vec![1.0; n];
    }
    let ramp = n - 25;
    let mut weights: Vec<f64> = (0..ramp)
        .map(|i| {
            if ramp == 1 {
                1.0 / n as f64
            } else {
                1.0 / n as f64 + (1.0 - 1.0 / n as f64) * i as f64 / (ramp - 1) as f64
            }
        })
        .collect();
    weights.extend(std::iter::repeat_n(1.0, 25));
    weights
}

impl ParzenEstimator {
    /// `observations[d][i]`: internal value of parameter `d` (search-space order) in
    /// observation `i`. `weights`: one per observation (default: [`default_weights`]).
    pub(crate) fn new(
        observations: &[Vec<f64>],
        space: &SearchSpace,
        settings: ParzenSettings,
        weights: Option<Vec<f64>>,
    ) -> Self {
        let n = observations.first().map_or(0, Vec::len);
        let mut weights = if n == 0 {
            vec![1.0]
        } else {
            let mut w = weights.unwrap_or_else(|| default_weights(n));
            w.push(settings.prior_weight);
            w
        };
        let total: f64 = weights.iter().sum();
        weights.iter_mut().for_each(|w| *w /= total);
        let dims = space
            .values()
            .zip(observations)
            .map(|(distribution, obs)| kernels(obs, distribution, space.len(), settings))
            .collect();
        Self { weights, dims }
    }

    /// `n` samples, `samples[i][d]` in the internal representation.
    pub(crate) fn sample(&self, rng: &mut impl Rng, n: usize) -> Vec<Vec<f64>> {
        let cumulative: Vec<f64> = self
            .weights
            .iter()
            .scan(0.0, |acc, w| {
                *acc += w;
                Some(*acc)
            })
            .collect();
        let last = cumulative.len() - 1;
        (0..n)
            .map(|_| {
                let u: f64 = rng.random();
                let k = cumulative.partition_point(|c| *c <= u).min(last);
                self.dims.iter().map(|d| sample_kernel(d, k, rng)).collect()
            })
            .collect()
    }

    /// log of the mixture density at each sample.
    pub(crate) fn log_pdf(&self, samples: &[Vec<f64>]) -> Vec<f64> {
        let n_kernels = self.weights.len();
        let log_weights: Vec<f64> = self.weights.iter().map(|w| w.ln()).collect();
        // Per-kernel normalisation terms do not depend on the sample: compute them once.
        let log_masses: Vec<Vec<f64>> = self.dims.iter().map(kernel_log_masses).collect();
        let mut per_kernel = vec![0.0; n_kernels];
        samples
            .iter()
            .map(|x| {
                per_kernel.copy_from_slice(&log_weights);
                for ((dim, x), masses) in self.dims.iter().zip(x).zip(&log_masses) {
                    add_log_density(dim, *x, masses, &mut per_kernel);
                }
                let max = per_kernel.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let max = if max == f64::NEG_INFINITY { 0.0 } else { max };
                per_kernel.iter().map(|v| (v - max).exp()).sum::<f64>().ln() + max
            })
            .collect()
    }
}

fn kernels(
    obs: &[f64],
    distribution: &Distribution,
    n_params: usize,
    s: ParzenSettings,
) -> Kernels {
    let (low, high, step, log) = match distribution {
        Distribution::Categorical(c) => {
            let n_choices = c.choices.len();
            if obs.is_empty() {
                return Kernels::Categorical {
                    probabilities: vec![vec![1.0 / n_choices as f64; n_choices]],
                };
            }
            let n_kernels = obs.len() + 1;
            let base = s.prior_weight / n_kernels as f64;
            let mut probabilities = vec![vec![base; n_choices]; n_kernels];
            for (row, x) in probabilities.iter_mut().zip(obs) {
                row[*x as usize] += 1.0;
            }
            for row in &mut probabilities {
                let sum: f64 = row.iter().sum();
                if sum != 0.0 {
                    row.iter_mut().for_each(|p| *p /= sum);
                }
            }
            return Kernels::Categorical { probabilities };
        }
        Distribution::Float(d) => (d.low, d.high, d.step, d.log),
        Distribution::Int(d) => (d.low as f64, d.high as f64, Some(d.step as f64), d.log),
    };
    let (mut lo, mut hi) = match step {
        Some(step) => (low - step / 2.0, high + step / 2.0),
        None => (low, high),
    };
    let mut mus: Vec<f64> = obs.to_vec();
    if log {
        lo = lo.ln();
        hi = hi.ln();
        mus.iter_mut().for_each(|m| *m = m.ln());
    }
    let mut sigmas = if s.multivariate {
        let sigma =
            0.2 * (obs.len().max(1) as f64).powf(-1.0 / (n_params as f64 + 4.0)) * (hi - lo);
        vec![sigma; obs.len()]
    } else {
        univariate_sigmas(&mus, lo, hi, s.consider_endpoints)
    };
    let max_sigma = hi - lo;
    let min_sigma = if s.consider_magic_clip {
        (hi - lo) / (100f64).min(1.0 + (obs.len() + 1) as f64)
    } else {
        1e-12
    };
    sigmas
        .iter_mut()
        .for_each(|sigma| *sigma = sigma.clamp(min_sigma, max_sigma));
    mus.push(0.5 * (lo + hi));
    sigmas.push(hi - lo);
    Kernels::Numerical {
        mus,
        sigmas,
        low: lo,
        high: hi,
        log,
        grid: step.map(|step| (low, high, step)),
    }
}

/// Each kernel's σ: the larger distance to its sorted neighbours among [low, μ…, high].
fn univariate_sigmas(mus: &[f64], low: f64, high: f64, consider_endpoints: bool) -> Vec<f64> {
    let n = mus.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| mus[*a].total_cmp(&mus[*b]));
    let mut points = Vec::with_capacity(n + 2);
    points.push(low);
    points.extend(order.iter().map(|i| mus[*i]));
    points.push(high);
    let mut sorted: Vec<f64> = (1..=n)
        .map(|i| (points[i] - points[i - 1]).max(points[i + 1] - points[i]))
        .collect();
    if !consider_endpoints && points.len() >= 4 {
        sorted[0] = points[2] - points[1];
        sorted[n - 1] = points[n] - points[n - 1];
    }
    let mut sigmas = vec![0.0; n];
    for (rank, i) in order.iter().enumerate() {
        sigmas[*i] = sorted[rank];
    }
    sigmas
}

fn sample_kernel(dim: &Kernels, k: usize, rng: &mut impl Rng) -> f64 {
    match dim {
        Kernels::Categorical { probabilities } => {
            let u: f64 = rng.random();
            let row = &probabilities[k];
            let mut acc = 0.0;
            for (c, p) in row.iter().enumerate() {
                acc += p;
                if u < acc {
                    return c as f64;
                }
            }
            (row.len() - 1) as f64
        }
        Kernels::Numerical {
            mus,
            sigmas,
            low,
            high,
            log,
            grid,
        } => {
            let (mu, sigma) = (mus[k], sigmas[k]);
            let q: f64 = rng.random();
            let z = truncnorm::ppf(q, (low - mu) / sigma, (high - mu) / sigma);
            let mut x = (z * sigma + mu).clamp(*low, *high);
            if *log {
                x = x.exp();
            }
            match grid {
                Some((glow, ghigh, step)) => {
                    (glow + ((x - glow) / step).round() * step).clamp(*glow, *ghigh)
                }
                None if *log => x,
                None => x,
            }
        }
    }
}

fn kernel_log_masses(dim: &Kernels) -> Vec<f64> {
    match dim {
        Kernels::Categorical { .. } => Vec::new(),
        Kernels::Numerical {
            mus,
            sigmas,
            low,
            high,
            ..
        } => mus
            .iter()
            .zip(sigmas)
            .map(|(mu, sigma)| truncnorm::log_gauss_mass((low - mu) / sigma, (high - mu) / sigma))
            .collect(),
    }
}

fn add_log_density(dim: &Kernels, x: f64, log_masses: &[f64], out: &mut [f64]) {
    const LOG_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
    match dim {
        Kernels::Categorical { probabilities } => {
            for (o, row) in out.iter_mut().zip(probabilities) {
                *o += row[x as usize].ln();
            }
        }
        Kernels::Numerical {
            mus,
            sigmas,
            log,
            grid,
            ..
        } => match grid {
            None => {
                let x = if *log { x.ln() } else { x };
                for (((o, mu), sigma), mass) in out.iter_mut().zip(mus).zip(sigmas).zip(log_masses)
                {
                    let z = (x - mu) / sigma;
                    *o += -0.5 * z * z - LOG_SQRT_2PI - mass - sigma.ln();
                }
            }
            Some((_, _, step)) => {
                let (mut a, mut b) = (x - step / 2.0, x + step / 2.0);
                if *log {
                    a = a.ln();
                    b = b.ln();
                }
                for (((o, mu), sigma), mass) in out.iter_mut().zip(mus).zip(sigmas).zip(log_masses)
                {
                    *o += truncnorm::log_gauss_mass((a - mu) / sigma, (b - mu) / sigma) - mass;
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_match_optuna() {
        assert_eq!(default_weights(3), vec![1.0; 3]);
        let w = default_weights(30);
        // numpy.linspace(1/30, 1, 5) then 25 ones.
        assert!((w[0] - 1.0 / 30.0).abs() < 1e-15);
        assert!((w[2] - (1.0 / 30.0 + (1.0 - 1.0 / 30.0) * 0.5)).abs() < 1e-15);
        assert_eq!(w[4], 1.0);
        assert_eq!(w.len(), 30);
    }

    #[test]
    fn sigmas_use_the_larger_gap() {
        let s = univariate_sigmas(&[0.5, 0.1, 0.2], 0.0, 1.0, true);
        assert_eq!(s, vec![0.5, 0.1, 0.3]);
        // Without endpoints the outer kernels only look inward.
        let s = univariate_sigmas(&[0.5, 0.1, 0.2], 0.0, 1.0, false);
        assert!((s[1] - 0.1).abs() < 1e-12 && (s[0] - 0.3).abs() < 1e-12);
    }
}
