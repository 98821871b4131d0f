//! CMA-ES for the numerical parameters.

// Small dense linear algebra reads best with explicit indices.
#![allow(clippy::needless_range_loop)]

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand_distr::{Distribution as _, StandardNormal};
use serde_json::Value;

use crate::distributions::Distribution;
use crate::error::{invalid_argument, Result};
use crate::samplers::base::{intersection_search_space, sample_uniform, seeded_rng, Sampler};
use crate::samplers::SearchSpace;
use crate::study::StudyView;
use crate::trial::{FrozenTrial, TrialState};

const GENERATION_KEY: &str = "cma:generation";

/// CMA-ES (Hansen, "The CMA Evolution Strategy: A Tutorial", arXiv 1604.00772) over the
/// intersection search space of the numerical parameters, normalised to [0, 1] (log
/// space for log distributions; integers and steps are rounded after sampling).
/// Categorical parameters, parameters outside that space, the first trial and
/// multi-objective studies fall back to random sampling, as in Optuna's `CmaEsSampler`.
///
/// Each trial is tagged with its generation (system attribute `cma:generation`); once
/// `popsize` trials of the current generation are COMPLETE, the distribution is updated.
///
/// # NaN
///
/// The generation's update orders losses with `f64::total_cmp`: a NaN loss with the sign
/// bit clear (what arithmetic produces) ranks last.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// let sampler = CmaEsSamplerConfig::new().with_seed(0).with_popsize(Some(8)).init()?;
/// let study = StudyConfig::new().with_sampler(sampler).init()?;
/// study.optimize(Some(20), None, |t| {
///     let x = t.suggest_float("x", -5.0, 5.0)?;
///     let y = t.suggest_float("y", -5.0, 5.0)?;
///     Ok(x * x + y * y)
/// })?;
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug)]
pub struct CmaEsSampler {
    rng: StdRng,
    sigma0: f64,
    popsize: Option<usize>,
    n_startup_trials: usize,
    state: Option<CmaState>,
}

#[derive(Debug, Clone)]
struct CmaState {
    space: SearchSpace,
    generation: u64,
    mean: Vec<f64>,
    sigma: f64,
    cov: Vec<Vec<f64>>,
    p_sigma: Vec<f64>,
    p_c: Vec<f64>,
    /// Eigenvectors (columns) and square roots of eigenvalues of `cov`.
    basis: Vec<Vec<f64>>,
    scales: Vec<f64>,
    lambda: usize,
}

/// Configures a [`CmaEsSampler`]; the defaults are Optuna's.
#[derive(Debug, Clone, PartialEq)]
pub struct CmaEsSamplerConfig {
    /// Seed of the sampler's generator; `None`: from the operating system (default).
    pub seed: Option<u64>,
    /// Initial step size in the normalised [0, 1] space (default 1/6 of the range, as
    /// Optuna's `sigma0 = min_range / 6`; finite and positive).
    pub sigma0: f64,
    /// λ, trials per generation; `None`: 4 + ⌊3 ln n⌋ for n parameters (default; at
    /// least 2 when given).
    pub popsize: Option<usize>,
    /// Trials sampled at random before CMA-ES starts (default 1: the first trial defines
    /// the search space).
    pub n_startup_trials: usize,
}

impl Default for CmaEsSamplerConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl CmaEsSamplerConfig {
    /// Optuna's defaults.
    pub fn new() -> Self {
        Self {
            seed: None,
            sigma0: 1.0 / 6.0,
            popsize: None,
            n_startup_trials: 1,
        }
    }
    /// Sets [`Self::seed`].
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
    /// Sets [`Self::sigma0`].
    pub fn with_sigma0(mut self, sigma0: f64) -> Self {
        self.sigma0 = sigma0;
        self
    }
    /// Sets [`Self::popsize`].
    pub fn with_popsize(mut self, popsize: Option<usize>) -> Self {
        self.popsize = popsize;
        self
    }
    /// Sets [`Self::n_startup_trials`].
    pub fn with_n_startup_trials(mut self, n_startup_trials: usize) -> Self {
        self.n_startup_trials = n_startup_trials;
        self
    }
    /// The sampler; [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument)
    /// names the first argument out of its range.
    pub fn init(&self) -> Result<CmaEsSampler> {
        if !(self.sigma0.is_finite() && self.sigma0 > 0.0) {
            return Err(invalid_argument(
                "sigma0",
                format!("must be finite and positive, got {}", self.sigma0),
            ));
        }
        if let Some(popsize) = self.popsize.filter(|p| *p < 2) {
            return Err(invalid_argument(
                "popsize",
                format!("must be at least 2, got {popsize}"),
            ));
        }
        Ok(CmaEsSampler {
            rng: seeded_rng(self.seed),
            sigma0: self.sigma0,
            popsize: self.popsize,
            n_startup_trials: self.n_startup_trials,
            state: None,
        })
    }
}

impl CmaEsSampler {
    fn init_state(&self, space: SearchSpace) -> CmaState {
        let n = space.len();
        let lambda = self
            .popsize
            .unwrap_or(4 + (3.0 * (n as f64).ln()).floor() as usize)
            .max(2);
        CmaState {
            space,
            generation: 0,
            mean: vec![0.5; n],
            sigma: self.sigma0,
            cov: identity(n),
            p_sigma: vec![0.0; n],
            p_c: vec![0.0; n],
            basis: identity(n),
            scales: vec![1.0; n],
            lambda,
        }
    }
}

fn identity(n: usize) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| (0..n).map(|j| f64::from(u8::from(i == j))).collect())
        .collect()
}

/// Eigen-decomposition of a symmetric matrix by cyclic Jacobi rotations.
fn symmetric_eigen(a: &[Vec<f64>]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = a.len();
    let mut a = a.to_vec();
    let mut v = identity(n);
    for _ in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |j| *j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        if off < 1e-22 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                if a[p][q].abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k][p], a[k][q]);
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p][k], a[q][k]);
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
                for row in v.iter_mut() {
                    let (vkp, vkq) = (row[p], row[q]);
                    row[p] = c * vkp - s * vkq;
                    row[q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..n).map(|i| a[i][i]).collect(), v)
}

/// Normalised [0, 1] coordinate of an internal value, and back.
fn to_unit(distribution: &Distribution, x: f64) -> f64 {
    let (low, high, log) = bounds(distribution);
    let x = if log { x.ln() } else { x };
    ((x - low) / (high - low)).clamp(0.0, 1.0)
}

fn bounds(distribution: &Distribution) -> (f64, f64, bool) {
    match distribution {
        Distribution::Float(d) if d.log => (d.low.ln(), d.high.ln(), true),
        Distribution::Float(d) => (d.low, d.high, false),
        Distribution::Int(d) if d.log => {
            ((d.low as f64 - 0.5).ln(), (d.high as f64 + 0.5).ln(), true)
        }
        Distribution::Int(d) => (
            d.low as f64 - 0.5 * d.step as f64,
            d.high as f64 + 0.5 * d.step as f64,
            false,
        ),
        Distribution::Categorical(_) => (0.0, 1.0, false),
    }
}

fn from_unit(distribution: &Distribution, u: f64) -> f64 {
    let (low, high, log) = bounds(distribution);
    let mut x = low + u.clamp(0.0, 1.0) * (high - low);
    if log {
        x = x.exp();
    }
    match distribution {
        Distribution::Float(d) => match d.step {
            Some(step) => (d.low + ((x - d.low) / step).round() * step).clamp(d.low, d.high),
            None => x.clamp(d.low, d.high),
        },
        Distribution::Int(d) => {
            let step = d.step as f64;
            (d.low as f64 + ((x - d.low as f64) / step).round() * step)
                .clamp(d.low as f64, d.high as f64)
        }
        Distribution::Categorical(_) => unreachable!("categorical parameters are not in the space"),
    }
}

impl CmaState {
    fn update(&mut self, mut population: Vec<(Vec<f64>, f64)>) {
        let n = self.mean.len() as f64;
        let nd = self.mean.len();
        population.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mu = self.lambda / 2;
        let raw: Vec<f64> = (0..mu)
            .map(|i| ((mu as f64 + 0.5).ln() - ((i + 1) as f64).ln()).max(0.0))
            .collect();
        let sum: f64 = raw.iter().sum();
        let weights: Vec<f64> = raw.iter().map(|w| w / sum).collect();
        let mu_eff = 1.0 / weights.iter().map(|w| w * w).sum::<f64>();
        let c_sigma = (mu_eff + 2.0) / (n + mu_eff + 5.0);
        let d_sigma = 1.0 + 2.0 * (((mu_eff - 1.0) / (n + 1.0)).sqrt() - 1.0).max(0.0) + c_sigma;
        let c_c = (4.0 + mu_eff / n) / (n + 4.0 + 2.0 * mu_eff / n);
        let c_1 = 2.0 / ((n + 1.3).powi(2) + mu_eff);
        let c_mu =
            (1.0 - c_1).min(2.0 * (mu_eff - 2.0 + 1.0 / mu_eff) / ((n + 2.0).powi(2) + mu_eff));
        let chi_n = n.sqrt() * (1.0 - 1.0 / (4.0 * n) + 1.0 / (21.0 * n * n));

        let old_mean = self.mean.clone();
        let ys: Vec<Vec<f64>> = population[..mu]
            .iter()
            .map(|(x, _)| (0..nd).map(|k| (x[k] - old_mean[k]) / self.sigma).collect())
            .collect();
        let y_w: Vec<f64> = (0..nd)
            .map(|k| weights.iter().zip(&ys).map(|(w, y)| w * y[k]).sum())
            .collect();
        for k in 0..nd {
            self.mean[k] = old_mean[k] + self.sigma * y_w[k];
        }
        // C^(-1/2) y_w = B D^-1 Bᵀ y_w
        let bt_y: Vec<f64> = (0..nd)
            .map(|j| (0..nd).map(|i| self.basis[i][j] * y_w[i]).sum::<f64>() / self.scales[j])
            .collect();
        let c_inv_sqrt_y: Vec<f64> = (0..nd)
            .map(|i| (0..nd).map(|j| self.basis[i][j] * bt_y[j]).sum())
            .collect();
        let norm_factor = (c_sigma * (2.0 - c_sigma) * mu_eff).sqrt();
        for k in 0..nd {
            self.p_sigma[k] = (1.0 - c_sigma) * self.p_sigma[k] + norm_factor * c_inv_sqrt_y[k];
        }
        let ps_norm = self.p_sigma.iter().map(|x| x * x).sum::<f64>().sqrt();
        let generation = (self.generation + 1) as i32;
        let h_sigma = ps_norm / (1.0 - (1.0 - c_sigma).powi(2 * generation)).sqrt()
            < (1.4 + 2.0 / (n + 1.0)) * chi_n;
        let h = f64::from(u8::from(h_sigma));
        let pc_factor = (c_c * (2.0 - c_c) * mu_eff).sqrt();
        for k in 0..nd {
            self.p_c[k] = (1.0 - c_c) * self.p_c[k] + h * pc_factor * y_w[k];
        }
        for i in 0..nd {
            for j in 0..nd {
                let rank_mu: f64 = weights.iter().zip(&ys).map(|(w, y)| w * y[i] * y[j]).sum();
                self.cov[i][j] = (1.0 - c_1 - c_mu) * self.cov[i][j]
                    + c_1
                        * (self.p_c[i] * self.p_c[j]
                            + (1.0 - h) * c_c * (2.0 - c_c) * self.cov[i][j])
                    + c_mu * rank_mu;
            }
        }
        self.sigma *= ((c_sigma / d_sigma) * (ps_norm / chi_n - 1.0)).exp();
        self.sigma = self.sigma.clamp(1e-12, 1.0);
        let (values, vectors) = symmetric_eigen(&self.cov);
        self.scales = values.iter().map(|v| v.max(1e-20).sqrt()).collect();
        self.basis = vectors;
        self.generation += 1;
    }

    fn sample(&self, rng: &mut StdRng) -> Vec<f64> {
        let nd = self.mean.len();
        for _ in 0..100 {
            let z: Vec<f64> = (0..nd).map(|_| StandardNormal.sample(rng)).collect();
            let x: Vec<f64> = (0..nd)
                .map(|i| {
                    self.mean[i]
                        + self.sigma
                            * (0..nd)
                                .map(|j| self.basis[i][j] * self.scales[j] * z[j])
                                .sum::<f64>()
                })
                .collect();
            if x.iter().all(|v| (0.0..=1.0).contains(v)) {
                return x;
            }
        }
        self.mean.iter().map(|m| m.clamp(0.0, 1.0)).collect()
    }
}

impl Sampler for CmaEsSampler {
    fn infer_relative_search_space(
        &mut self,
        study: &StudyView<'_>,
        _trial: &FrozenTrial,
    ) -> Result<SearchSpace> {
        if study.directions().len() > 1 {
            return Ok(SearchSpace::new());
        }
        let mut space = intersection_search_space(&study.trials(Some(&[TrialState::Complete]))?);
        space.retain(|_, d| !matches!(d, Distribution::Categorical(_)));
        Ok(space)
    }

    fn sample_relative(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        space: &SearchSpace,
    ) -> Result<BTreeMap<String, f64>> {
        if space.is_empty()
            || study.trials(Some(&[TrialState::Complete]))?.len() < self.n_startup_trials
        {
            return Ok(BTreeMap::new());
        }
        if self.state.as_ref().is_none_or(|s| s.space != *space) {
            self.state = Some(self.init_state(space.clone()));
        }
        let direction = study.direction();
        let state = self.state.as_mut().expect("initialised above");
        // Update once a full generation of this search space has completed.
        let generation = state.generation;
        let population: Vec<(Vec<f64>, f64)> = study
            .trials(Some(&[TrialState::Complete]))?
            .iter()
            .filter(|t| {
                t.system_attrs.get(GENERATION_KEY).and_then(Value::as_u64) == Some(generation)
            })
            .filter(|t| space.keys().all(|k| t.params.contains_key(k)))
            .filter_map(|t| {
                let loss = direction.to_loss(t.value()?);
                let x = space
                    .iter()
                    .map(|(k, d)| to_unit(d, t.params[k].internal))
                    .collect();
                Some((x, loss))
            })
            .collect();
        if population.len() >= state.lambda {
            state.update(population);
        }
        let x = state.sample(&mut self.rng);
        study.set_trial_system_attr(
            trial.trial_id,
            GENERATION_KEY,
            Value::from(state.generation),
        )?;
        Ok(space
            .iter()
            .zip(x)
            .map(|((name, d), u)| (name.clone(), from_unit(d, u)))
            .collect())
    }

    fn sample_independent(
        &mut self,
        _study: &StudyView<'_>,
        _trial: &FrozenTrial,
        _name: &str,
        distribution: &Distribution,
    ) -> Result<f64> {
        Ok(sample_uniform(&mut self.rng, distribution))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobi_diagonalises() {
        let a = vec![vec![4.0, 1.0], vec![1.0, 3.0]];
        let (values, vectors) = symmetric_eigen(&a);
        for k in 0..2 {
            let v: Vec<f64> = (0..2).map(|i| vectors[i][k]).collect();
            let av: Vec<f64> = (0..2).map(|i| a[i][0] * v[0] + a[i][1] * v[1]).collect();
            for i in 0..2 {
                assert!((av[i] - values[k] * v[i]).abs() < 1e-10);
            }
        }
    }
}
