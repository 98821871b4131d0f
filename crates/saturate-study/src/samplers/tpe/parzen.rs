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
    ///
    /// Kernels whose contribution is provably below `e^-40` of the largest one are
    /// skipped: each kernel first gets an upper bound (exact for continuous and
    /// categorical parameters, a bound on the Gaussian mass for stepped ones), and only
    /// kernels whose bound is within 40 nats of the best exact value are evaluated.
    pub(crate) fn log_pdf(&self, samples: &[Vec<f64>]) -> Vec<f64> {
        const NEGLIGIBLE: f64 = 40.0;
        let n_kernels = self.weights.len();
        let prepared: Vec<Prepared> = self.dims.iter().map(Prepared::new).collect();
        let log_weights: Vec<f64> = self.weights.iter().map(|w| w.ln()).collect();
        let mut bound = vec![0.0; n_kernels];
        let mut order: Vec<usize> = (0..n_kernels).collect();
        samples
            .iter()
            .map(|x| {
                bound.copy_from_slice(&log_weights);
                let mut any_discrete = false;
                for (dim, x) in prepared.iter().zip(x) {
                    any_discrete |= dim.add_bound(*x, &mut bound);
                }
                if !any_discrete {
                    return log_sum_exp(&bound, NEGLIGIBLE);
                }
                // Exact values, best bounds first; stop once the bounds are negligible.
                order.sort_unstable_by(|a, b| bound[*b].total_cmp(&bound[*a]));
                let mut exact = Vec::new();
                let mut best = f64::NEG_INFINITY;
                for &k in &order {
                    if bound[k] < best - NEGLIGIBLE {
                        break;
                    }
                    let mut value = bound[k];
                    for (dim, x) in prepared.iter().zip(x) {
                        value += dim.discrete_correction(*x, k);
                    }
                    best = best.max(value);
                    exact.push(value);
                }
                log_sum_exp(&exact, NEGLIGIBLE)
            })
            .collect()
    }
}

/// log Σ exp(v), ignoring terms more than `negligible` below the largest.
fn log_sum_exp(values: &[f64], negligible: f64) -> f64 {
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return max;
    }
    let sum: f64 = values
        .iter()
        .filter(|v| **v >= max - negligible)
        .map(|v| (v - max).exp())
        .sum();
    sum.ln() + max
}

const LOG_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Per-kernel constants of one dimension, computed once per `log_pdf` call.
enum Prepared<'a> {
    Categorical(Vec<Vec<f64>>),
    Continuous {
        mus: &'a [f64],
        inv_sigmas: Vec<f64>,
        /// −log(√(2π)·σ) − log(mass of the truncation range).
        offsets: Vec<f64>,
        log: bool,
    },
    Discrete {
        mus: &'a [f64],
        sigmas: &'a [f64],
        /// log(mass of the widened range) per kernel.
        log_masses: Vec<f64>,
        step: f64,
        log: bool,
    },
}

impl<'a> Prepared<'a> {
    fn new(dim: &'a Kernels) -> Self {
        match dim {
            Kernels::Categorical { probabilities } => Prepared::Categorical(
                probabilities
                    .iter()
                    .map(|row| row.iter().map(|p| p.ln()).collect())
                    .collect(),
            ),
            Kernels::Numerical {
                mus,
                sigmas,
                low,
                high,
                log,
                grid,
            } => {
                let log_masses: Vec<f64> = mus
                    .iter()
                    .zip(sigmas)
                    .map(|(mu, sigma)| {
                        truncnorm::log_gauss_mass((low - mu) / sigma, (high - mu) / sigma)
                    })
                    .collect();
                match grid {
                    None => Prepared::Continuous {
                        mus,
                        inv_sigmas: sigmas.iter().map(|s| 1.0 / s).collect(),
                        offsets: sigmas
                            .iter()
                            .zip(&log_masses)
                            .map(|(s, m)| -LOG_SQRT_2PI - s.ln() - m)
                            .collect(),
                        log: *log,
                    },
                    Some((_, _, step)) => Prepared::Discrete {
                        mus,
                        sigmas,
                        log_masses,
                        step: *step,
                        log: *log,
                    },
                }
            }
        }
    }

    fn interval(step: f64, log: bool, x: f64) -> (f64, f64) {
        let (a, b) = (x - step / 2.0, x + step / 2.0);
        if log {
            (a.ln(), b.ln())
        } else {
            (a, b)
        }
    }

    /// Adds each kernel's log-density (an upper bound for discrete dimensions); returns
    /// whether it added bounds that [`Prepared::discrete_correction`] must tighten.
    fn add_bound(&self, x: f64, out: &mut [f64]) -> bool {
        match self {
            Prepared::Categorical(log_p) => {
                for (o, row) in out.iter_mut().zip(log_p) {
                    *o += row[x as usize];
                }
                false
            }
            Prepared::Continuous {
                mus,
                inv_sigmas,
                offsets,
                log,
            } => {
                let x = if *log { x.ln() } else { x };
                for (((o, mu), inv), offset) in
                    out.iter_mut().zip(*mus).zip(inv_sigmas).zip(offsets)
                {
                    let z = (x - mu) * inv;
                    *o += offset - 0.5 * z * z;
                }
                false
            }
            Prepared::Discrete {
                mus,
                sigmas,
                log_masses,
                step,
                log,
            } => {
                let (a, b) = Self::interval(*step, *log, x);
                for (((o, mu), sigma), mass) in
                    out.iter_mut().zip(*mus).zip(*sigmas).zip(log_masses)
                {
                    // mass over [a, b] <= min(1, (b − a)/σ · φ(nearest z)).
                    let (za, zb) = ((a - mu) / sigma, (b - mu) / sigma);
                    let nearest = if za <= 0.0 && zb >= 0.0 {
                        0.0
                    } else {
                        za.abs().min(zb.abs())
                    };
                    let bound = ((zb - za).ln() - LOG_SQRT_2PI - 0.5 * nearest * nearest).min(0.0);
                    *o += bound - mass;
                }
                true
            }
        }
    }

    /// Exact minus bound for kernel `k` (0 for non-discrete dimensions).
    fn discrete_correction(&self, x: f64, k: usize) -> f64 {
        match self {
            Prepared::Discrete {
                mus,
                sigmas,
                step,
                log,
                ..
            } => {
                let (a, b) = Self::interval(*step, *log, x);
                let (mu, sigma) = (mus[k], sigmas[k]);
                let (za, zb) = ((a - mu) / sigma, (b - mu) / sigma);
                let nearest = if za <= 0.0 && zb >= 0.0 {
                    0.0
                } else {
                    za.abs().min(zb.abs())
                };
                let bound = ((zb - za).ln() - LOG_SQRT_2PI - 0.5 * nearest * nearest).min(0.0);
                truncnorm::log_gauss_mass(za, zb) - bound
            }
            _ => 0.0,
        }
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

    /// The density without any skipping, straight from the definition.
    fn naive_log_pdf(estimator: &ParzenEstimator, x: &[f64]) -> f64 {
        let mut total = 0.0;
        for (k, w) in estimator.weights.iter().enumerate() {
            let mut log_p = w.ln();
            for (dim, x) in estimator.dims.iter().zip(x) {
                log_p += match dim {
                    Kernels::Categorical { probabilities } => probabilities[k][*x as usize].ln(),
                    Kernels::Numerical {
                        mus,
                        sigmas,
                        low,
                        high,
                        log,
                        grid,
                    } => {
                        let (mu, sigma) = (mus[k], sigmas[k]);
                        let mass =
                            truncnorm::log_gauss_mass((low - mu) / sigma, (high - mu) / sigma);
                        match grid {
                            None => {
                                let x = if *log { x.ln() } else { *x };
                                let z = (x - mu) / sigma;
                                -0.5 * z * z - LOG_SQRT_2PI - sigma.ln() - mass
                            }
                            Some((_, _, step)) => {
                                let (a, b) = Prepared::interval(*step, *log, *x);
                                truncnorm::log_gauss_mass((a - mu) / sigma, (b - mu) / sigma) - mass
                            }
                        }
                    }
                };
            }
            total += log_p.exp();
        }
        total.ln()
    }

    #[test]
    fn skipping_negligible_kernels_keeps_the_density() {
        use crate::distributions::*;
        use rand::SeedableRng;
        let space: SearchSpace = [
            (
                "a".to_string(),
                Distribution::Float(FloatDistribution::new(-5.0, 5.0, false, None).unwrap()),
            ),
            (
                "b".to_string(),
                Distribution::Float(FloatDistribution::new(1e-4, 1.0, true, None).unwrap()),
            ),
            (
                "c".to_string(),
                Distribution::Int(IntDistribution::new(1, 64, false, 1).unwrap()),
            ),
            (
                "d".to_string(),
                Distribution::Int(IntDistribution::new(1, 1000, true, 1).unwrap()),
            ),
            (
                "e".to_string(),
                Distribution::Categorical(
                    CategoricalDistribution::new(vec!["x".into(), "y".into(), "z".into()]).unwrap(),
                ),
            ),
        ]
        .into();
        let mut rng = rand::rngs::StdRng::seed_from_u64(0);
        let n = 300;
        let observations: Vec<Vec<f64>> = space
            .values()
            .map(|d| {
                (0..n)
                    .map(|_| crate::samplers::base::sample_uniform(&mut rng, d))
                    .collect()
            })
            .collect();
        for multivariate in [false, true] {
            let settings = ParzenSettings {
                prior_weight: 1.0,
                consider_magic_clip: true,
                consider_endpoints: false,
                multivariate,
            };
            // One dimension at a time (univariate TPE) and all together (multivariate).
            let spaces: Vec<SearchSpace> = if multivariate {
                vec![space.clone()]
            } else {
                space
                    .iter()
                    .map(|(k, d)| [(k.clone(), d.clone())].into())
                    .collect()
            };
            for (i, sub) in spaces.iter().enumerate() {
                let obs: Vec<Vec<f64>> = if multivariate {
                    observations.clone()
                } else {
                    vec![observations[i].clone()]
                };
                let estimator = ParzenEstimator::new(&obs, sub, settings, None);
                let samples = estimator.sample(&mut rng, 50);
                for (fast, x) in estimator.log_pdf(&samples).iter().zip(&samples) {
                    let slow = naive_log_pdf(&estimator, x);
                    assert!(
                        (fast - slow).abs() < 1e-9 * slow.abs().max(1.0),
                        "{fast} vs {slow}"
                    );
                }
            }
        }
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
