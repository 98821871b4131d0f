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
        let estimator = Self { weights, dims };
        if space.len() == 1 {
            estimator.merge_identical_kernels()
        } else {
            estimator
        }
    }

    /// With one parameter, kernels with identical parameters (repeated observations of a
    /// discrete or categorical value) are one kernel with their summed weight: the same
    /// mixture, evaluated once.
    fn merge_identical_kernels(self) -> Self {
        let dim = &self.dims[0];
        // Categorical rows differ only in where their largest probability is (the
        // observed choice; the uniform prior row has a smaller maximum).
        let key = |k: usize| -> (u64, u64) {
            match dim {
                Kernels::Categorical { probabilities } => {
                    let row = &probabilities[k];
                    let (arg, max) =
                        row.iter()
                            .enumerate()
                            .fold((0, f64::NEG_INFINITY), |best, (i, p)| {
                                if *p > best.1 {
                                    (i, *p)
                                } else {
                                    best
                                }
                            });
                    (arg as u64, max.to_bits())
                }
                Kernels::Numerical { mus, sigmas, .. } => (mus[k].to_bits(), sigmas[k].to_bits()),
            }
        };
        let mut index = std::collections::HashMap::with_capacity(self.weights.len());
        let mut kept = Vec::new();
        let mut weights: Vec<f64> = Vec::new();
        for (k, w) in self.weights.iter().enumerate() {
            match index.entry(key(k)) {
                std::collections::hash_map::Entry::Occupied(e) => weights[*e.get()] += w,
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(kept.len());
                    kept.push(k);
                    weights.push(*w);
                }
            }
        }
        if kept.len() == self.weights.len() {
            return self;
        }
        let dim = match &self.dims[0] {
            Kernels::Categorical { probabilities } => Kernels::Categorical {
                probabilities: kept.iter().map(|k| probabilities[*k].clone()).collect(),
            },
            Kernels::Numerical {
                mus,
                sigmas,
                low,
                high,
                log,
                grid,
            } => Kernels::Numerical {
                mus: kept.iter().map(|k| mus[*k]).collect(),
                sigmas: kept.iter().map(|k| sigmas[*k]).collect(),
                low: *low,
                high: *high,
                log: *log,
                grid: *grid,
            },
        };
        Self {
            weights,
            dims: vec![dim],
        }
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
        let mut exact = Vec::new();
        let mut caches: Vec<Vec<f64>> = vec![Vec::new(); prepared.len()];
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
                        let mut ids = std::collections::HashMap::new();
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
    fn merging_identical_kernels_keeps_the_mixture() {
        use crate::distributions::*;
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let settings = ParzenSettings {
            prior_weight: 1.0,
            consider_magic_clip: true,
            consider_endpoints: false,
            multivariate: false,
        };
        for distribution in [
            Distribution::Int(IntDistribution::new(1, 8, false, 1).unwrap()),
            Distribution::Categorical(
                CategoricalDistribution::new(vec!["x".into(), "y".into(), "z".into()]).unwrap(),
            ),
        ] {
            let space: SearchSpace = [("p".to_string(), distribution.clone())].into();
            let obs = vec![(0..100)
                .map(|_| crate::samplers::base::sample_uniform(&mut rng, &distribution))
                .collect::<Vec<f64>>()];
            let merged = ParzenEstimator::new(&obs, &space, settings, None);
            let weights = {
                let mut w = default_weights(100);
                w.push(1.0);
                let total: f64 = w.iter().sum();
                w.iter().map(|x| x / total).collect()
            };
            let full = ParzenEstimator {
                weights,
                dims: vec![kernels(&obs[0], &distribution, 1, settings)],
            };
            assert!(merged.weights.len() < 20 && full.weights.len() == 101);
            let samples = full.sample(&mut rng, 30);
            for ((a, b), x) in merged
                .log_pdf(&samples)
                .iter()
                .zip(full.log_pdf(&samples))
                .zip(&samples)
            {
                assert!((a - b).abs() < 1e-12, "{x:?}: {a} vs {b}");
                assert!((naive_log_pdf(&full, x) - b).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn log_density_matches_optuna() {
        // Optuna 4.9: _ParzenEstimator({"x": obs}, {"x": d}, _ParzenEstimatorParameters(
        //     1.0, True, False, default_weights, False, {})).log_pdf({"x": xs})
        // with obs = [0.1, 0.15, 0.5, 0.52, 0.9, 0.3, 0.31, 0.05] (× 10, rounded, for ints).
        use crate::distributions::*;
        let obs = [0.1, 0.15, 0.5, 0.52, 0.9, 0.3, 0.31, 0.05];
        let settings = ParzenSettings {
            prior_weight: 1.0,
            consider_magic_clip: true,
            consider_endpoints: false,
            multivariate: false,
        };
        type Case = (Distribution, Vec<f64>, [f64; 5], [f64; 5]);
        let cases: [Case; 3] = [
            (
                Distribution::Float(FloatDistribution::new(0.0, 1.0, false, None).unwrap()),
                obs.to_vec(),
                [0.02, 0.2, 0.5, 0.77, 0.99],
                [
                    0.44029910945599704,
                    0.4856473683225695,
                    -0.1007598874584894,
                    -0.6664208403113618,
                    -0.9965794073925065,
                ],
            ),
            (
                Distribution::Float(FloatDistribution::new(0.01, 1.0, true, None).unwrap()),
                obs.to_vec(),
                [0.02, 0.2, 0.5, 0.77, 0.99],
                [
                    -2.884131636057447,
                    -1.244396714206928,
                    -0.8669716345570224,
                    -1.0747148880461945,
                    -1.330986808344175,
                ],
            ),
            (
                Distribution::Int(IntDistribution::new(0, 10, false, 1).unwrap()),
                vec![1.0, 2.0, 5.0, 5.0, 9.0, 3.0, 3.0, 0.0], // numpy.round: 0.5 -> 0
                [0.0, 2.0, 5.0, 8.0, 10.0],
                [
                    -2.1044862149739623,
                    -1.8405219013135363,
                    -2.524974572453191,
                    -3.0921018732904644,
                    -3.3961133901568323,
                ],
            ),
        ];
        for (distribution, obs, xs, expected) in cases {
            let space: SearchSpace = [("x".to_string(), distribution)].into();
            let estimator = ParzenEstimator::new(&[obs], &space, settings, None);
            let samples: Vec<Vec<f64>> = xs.iter().map(|x| vec![*x]).collect();
            for (got, want) in estimator.log_pdf(&samples).iter().zip(expected) {
                assert!((got - want).abs() < 1e-12, "{got} vs {want}");
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
