//! Building TPE's Parzen estimator from observations: the kernels' centres, widths and
//! weights (Optuna's `_tpe/parzen_estimator.py`). Evaluating the resulting mixture is
//! [`super::mixture`]'s job.

use crate::distributions::Distribution;
use crate::samplers::tpe::mixture::{BitsMap, Kernels, MixtureOfProducts};
use crate::samplers::SearchSpace;

/// Settings shared by the estimators of one sampler.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParzenSettings {
    pub(crate) prior_weight: f64,
    pub(crate) consider_magic_clip: bool,
    pub(crate) consider_endpoints: bool,
    pub(crate) multivariate: bool,
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

/// The Parzen estimator of `observations` (Optuna's `_ParzenEstimator`): one kernel per
/// observation and parameter, plus a prior kernel. `observations[d][i]`: internal value of
/// parameter `d` (search-space order) in observation `i`. `weights`: one per observation
/// (default: [`default_weights`]).
pub(crate) fn build_parzen_estimator(
    observations: &[Vec<f64>],
    space: &SearchSpace,
    settings: ParzenSettings,
    weights: Option<Vec<f64>>,
) -> MixtureOfProducts {
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
    let estimator = MixtureOfProducts { weights, dims };
    if space.len() == 1 {
        merge_identical_kernels(estimator)
    } else {
        estimator
    }
}

/// With one parameter, kernels with identical parameters (repeated observations of a
/// discrete or categorical value) are one kernel with their summed weight: the same
/// mixture, evaluated once.
fn merge_identical_kernels(mixture: MixtureOfProducts) -> MixtureOfProducts {
    let dim = &mixture.dims[0];
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
    let mut index = BitsMap::with_capacity_and_hasher(mixture.weights.len(), Default::default());
    let mut kept = Vec::new();
    let mut weights: Vec<f64> = Vec::new();
    for (k, w) in mixture.weights.iter().enumerate() {
        match index.entry(key(k)) {
            std::collections::hash_map::Entry::Occupied(e) => weights[*e.get()] += w,
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(kept.len());
                kept.push(k);
                weights.push(*w);
            }
        }
    }
    if kept.len() == mixture.weights.len() {
        return mixture;
    }
    let dim = match &mixture.dims[0] {
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
    MixtureOfProducts {
        weights,
        dims: vec![dim],
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
    // Sorted by `f64::total_cmp` through its integer key (computed once per value, not
    // per comparison); ties keep observation order, as a stable sort of indices would.
    let total_order_key = |x: f64| {
        let bits = x.to_bits() as i64;
        bits ^ (((bits >> 63) as u64) >> 1) as i64
    };
    let mut keyed: Vec<(i64, usize)> = mus
        .iter()
        .map(|mu| total_order_key(*mu))
        .zip(0..n)
        .collect();
    keyed.sort_unstable();
    let order: Vec<usize> = keyed.iter().map(|(_, i)| *i).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samplers::tpe::mixture::naive_log_pdf;

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
            let merged = build_parzen_estimator(&obs, &space, settings, None);
            let weights = {
                let mut w = default_weights(100);
                w.push(1.0);
                let total: f64 = w.iter().sum();
                w.iter().map(|x| x / total).collect()
            };
            let full = MixtureOfProducts {
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
            let estimator = build_parzen_estimator(&[obs], &space, settings, None);
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
