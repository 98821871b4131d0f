//! Evaluating TPE's Parzen estimator: sampling from and the log-density of a mixture of
//! products of per-parameter kernels (truncated normals, discretised truncated normals,
//! categorical rows), as Optuna's `_tpe/probability_distributions.py`. Choosing the
//! kernels from observations is [`super::parzen_estimator`]'s job.

use rand::Rng;

use crate::samplers::tpe::truncnorm;

#[derive(Debug, Clone)]
/// The kernels of one parameter, one per mixture component.
pub(crate) enum Kernels {
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

/// A mixture over kernels `0..n` (one per observation, then the prior): component `k`
/// is the product over the parameters of their kernel `k` (Optuna's
/// `_MixtureOfProductDistribution`).
#[derive(Debug, Clone)]
pub(crate) struct MixtureOfProducts {
    /// Normalised component weights.
    pub(crate) weights: Vec<f64>,
    /// One entry per parameter, in search-space order.
    pub(crate) dims: Vec<Kernels>,
}

impl MixtureOfProducts {
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
    /// A sample equal to an earlier one (bit for bit) gets that one's value without
    /// evaluation: TPE's candidates of a discrete or categorical parameter repeat often.
    pub(crate) fn log_pdf(&self, samples: &[Vec<f64>]) -> Vec<f64> {
        let mut values: Vec<f64> = Vec::with_capacity(samples.len());
        let mut evaluator = self.evaluator();
        for (i, x) in samples.iter().enumerate() {
            let same = |y: &Vec<f64>| y.iter().zip(x).all(|(a, b)| a.to_bits() == b.to_bits());
            let value = match samples[..i].iter().position(same) {
                Some(j) => values[j],
                None => evaluator(x),
            };
            values.push(value);
        }
        values
    }

    /// The log-density of one sample at a time, sharing the per-kernel constants.
    fn evaluator(&self) -> impl FnMut(&[f64]) -> f64 + '_ {
        const NEGLIGIBLE: f64 = 40.0;
        let n_kernels = self.weights.len();
        let prepared: Vec<Prepared> = self.dims.iter().map(Prepared::new).collect();
        let log_weights: Vec<f64> = self.weights.iter().map(|w| w.ln()).collect();
        let mut bound = vec![0.0; n_kernels];
        let mut exact = Vec::new();
        let mut caches: Vec<Vec<f64>> = vec![Vec::new(); prepared.len()];
        move |x: &[f64]| {
            bound.copy_from_slice(&log_weights);
            let mut any_discrete = false;
            for (dim, x) in prepared.iter().zip(x) {
                any_discrete |= dim.add_bound(*x, &mut bound);
            }
            if !any_discrete {
                return log_sum_exp(&bound, NEGLIGIBLE);
            }
            // Exact values where the bound is within reach of the best exact value so
            // far, starting from the kernel with the best bound. What is skipped stays
            // negligible: the best exact value only grows.
            for (cache, dim) in caches.iter_mut().zip(&prepared) {
                cache.clear();
                cache.resize(dim.n_unique(), f64::NAN);
            }
            let mut exact_of = |k: usize| {
                let mut value = bound[k];
                for ((dim, x), cache) in prepared.iter().zip(x).zip(caches.iter_mut()) {
                    value += dim.discrete_correction(*x, k, cache);
                }
                value
            };
            let first = (0..n_kernels)
                .max_by(|a, b| bound[*a].total_cmp(&bound[*b]))
                .expect("at least the prior kernel");
            let mut best = exact_of(first);
            exact.clear();
            exact.push(best);
            for k in (0..n_kernels).filter(|k| *k != first) {
                if bound[k] >= best - NEGLIGIBLE {
                    let value = exact_of(k);
                    best = best.max(value);
                    exact.push(value);
                }
            }
            log_sum_exp(&exact, NEGLIGIBLE)
        }
    }
}

/// A hasher for keys made of `f64` bit patterns: SipHash, the default, took a tenth of
/// TPE's time over a thousand observations. Not resistant to chosen keys, which is fine
/// for the sampler's own numbers.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct BitsHasher(u64);

impl std::hash::Hasher for BitsHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.write_u64(u64::from(*byte));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// A hash map keyed by bit patterns, with [`BitsHasher`].
pub(crate) type BitsMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<BitsHasher>>;

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

/// An upper bound of log(Φ(zb) − Φ(za)) given log(zb − za): the mass is at most the
/// width times the density at the nearest point, and at most 1.
fn discrete_bound(za: f64, zb: f64, log_width: f64) -> f64 {
    let nearest = if za <= 0.0 && zb >= 0.0 {
        0.0
    } else {
        za.abs().min(zb.abs())
    };
    (log_width - LOG_SQRT_2PI - 0.5 * nearest * nearest).min(0.0)
}

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
        inv_sigmas: Vec<f64>,
        log_sigmas: Vec<f64>,
        /// Kernels with the same (μ, σ) share an index: many observations of a discrete
        /// parameter coincide, and their masses are computed once per sample.
        unique: Vec<usize>,
        n_unique: usize,
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
                let inv_sigmas = sigmas.iter().map(|s| 1.0 / s).collect();
                match grid {
                    None => Prepared::Continuous {
                        mus,
                        inv_sigmas,
                        offsets: sigmas
                            .iter()
                            .zip(&log_masses)
                            .map(|(s, m)| -LOG_SQRT_2PI - s.ln() - m)
                            .collect(),
                        log: *log,
                    },
                    Some((_, _, step)) => {
                        let mut ids = BitsMap::default();
                        let unique: Vec<usize> = mus
                            .iter()
                            .zip(sigmas)
                            .map(|(m, s)| {
                                let next = ids.len();
                                *ids.entry((m.to_bits(), s.to_bits())).or_insert(next)
                            })
                            .collect();
                        Prepared::Discrete {
                            mus,
                            inv_sigmas,
                            unique,
                            n_unique: ids.len(),
                            log_sigmas: sigmas.iter().map(|s| s.ln()).collect(),
                            log_masses,
                            step: *step,
                            log: *log,
                        }
                    }
                }
            }
        }
    }

    /// Number of distinct discrete kernels (0 for other dimensions).
    fn n_unique(&self) -> usize {
        match self {
            Prepared::Discrete { n_unique, .. } => *n_unique,
            _ => 0,
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
                inv_sigmas,
                log_sigmas,
                log_masses,
                step,
                log,
                ..
            } => {
                let (a, b) = Self::interval(*step, *log, x);
                let log_width = (b - a).ln();
                for ((((o, mu), inv), log_sigma), mass) in out
                    .iter_mut()
                    .zip(*mus)
                    .zip(inv_sigmas)
                    .zip(log_sigmas)
                    .zip(log_masses)
                {
                    let (za, zb) = ((a - mu) * inv, (b - mu) * inv);
                    *o += discrete_bound(za, zb, log_width - log_sigma) - mass;
                }
                true
            }
        }
    }

    /// Exact minus bound for kernel `k` (0 for non-discrete dimensions); `cache` holds
    /// the values of this sample by distinct kernel.
    fn discrete_correction(&self, x: f64, k: usize, cache: &mut [f64]) -> f64 {
        match self {
            Prepared::Discrete {
                mus,
                inv_sigmas,
                log_sigmas,
                unique,
                step,
                log,
                ..
            } => {
                let slot = &mut cache[unique[k]];
                if slot.is_nan() {
                    let (a, b) = Self::interval(*step, *log, x);
                    let (za, zb) = ((a - mus[k]) * inv_sigmas[k], (b - mus[k]) * inv_sigmas[k]);
                    *slot = truncnorm::log_gauss_mass(za, zb)
                        - discrete_bound(za, zb, (b - a).ln() - log_sigmas[k]);
                }
                *slot
            }
            _ => 0.0,
        }
    }
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

/// The density without any skipping, straight from the definition (tests compare the fast
/// path with it).
#[cfg(test)]
pub(crate) fn naive_log_pdf(estimator: &MixtureOfProducts, x: &[f64]) -> f64 {
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
                    let mass = truncnorm::log_gauss_mass((low - mu) / sigma, (high - mu) / sigma);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samplers::tpe::parzen_estimator::{build_parzen_estimator, ParzenSettings};
    use crate::samplers::SearchSpace;

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
                let estimator = build_parzen_estimator(&obs, sub, settings, None);
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
}
