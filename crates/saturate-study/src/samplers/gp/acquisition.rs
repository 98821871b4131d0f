//! Acquisition functions on a fitted GP, with their gradients (Optuna's `_gp/acqf.py`):
//! log expected improvement, and its q-batch Monte Carlo form when trials are RUNNING.
//!
//! Values are maximised. With constraints (Optuna's `LogCEI`), each constraint's GP adds
//! the log probability that the constraint holds at the point to the value and its gradient;
//! the objective's term is dropped (0) while no trial is feasible.

use std::f64::consts::PI;

use crate::samplers::gp::linalg::Cholesky;
use crate::samplers::gp::regressor::GpRegressor;

/// Added to the posterior variance so that its square root stays differentiable.
pub(crate) const STABILIZING_NOISE: f64 = 1e-12;
/// Improvements are clamped at this before their log.
const IMPROVEMENT_FLOOR: f64 = 1e-12;

/// `log E[max(0, Z + z)]` for standard normal Z, and its derivative in `z`
/// (Ament et al., "Unexpected Improvements to Expected Improvement for Bayesian
/// Optimization", NeurIPS 2023, eq. 9). Below z = -25 the closed form underflows; there
/// `EI(z) = φ(z) (1 + √(π/2) z erfcx(-z/√2))`, and the bracket is evaluated by its
/// asymptotic series `u - 3u² + 15u³ - …` with `u = 1/z²`, which has no cancellation.
pub(crate) fn standard_logei(z: f64) -> (f64, f64) {
    if z >= -25.0 {
        let cdf = 0.5 * libm::erfc(-z / std::f64::consts::SQRT_2);
        let pdf = (-0.5 * z * z).exp() / (2.0 * PI).sqrt();
        let ei = z * cdf + pdf;
        (ei.ln(), cdf / ei)
    } else {
        let u = 1.0 / (z * z);
        // bracket = Σ_{k≥1} (-1)^{k+1} (2k-1)!! u^k; tail = Σ_{k≥0} (-1)^k (2k-1)!! u^k.
        let (mut bracket, mut tail) = (0.0, 1.0);
        let mut term = 1.0;
        for k in 1..16 {
            term *= -((2 * k - 1) as f64) * u;
            bracket -= term;
            tail += term;
        }
        let value = -0.5 * z * z - 0.5 * (2.0 * PI).ln() + bracket.ln();
        (value, -tail / (z * bracket))
    }
}

/// `log E[max(0, y - f0)]` for `y ~ N(mean, var)`, and its derivatives in `mean` and `var`.
pub(crate) fn logei(mean: f64, var: f64, f0: f64) -> (f64, f64, f64) {
    let sigma = (var + STABILIZING_NOISE).sqrt();
    let z = (mean - f0) / sigma;
    let (h, dh) = standard_logei(z);
    let dmean = dh / sigma;
    let dsigma = (1.0 - dh * z) / sigma;
    (h + sigma.ln(), dmean, dsigma / (2.0 * sigma))
}

/// `log Φ(z)` for the standard normal CDF Φ, and its derivative `φ(z) / Φ(z)`, accurate in
/// the lower tail (an asymptotic series below z = -20, where `erfc` underflows).
pub(crate) fn log_ndtr(z: f64) -> (f64, f64) {
    if z >= -20.0 {
        let cdf = 0.5 * libm::erfc(-z / std::f64::consts::SQRT_2);
        let pdf = (-0.5 * z * z).exp() / (2.0 * PI).sqrt();
        (cdf.ln(), pdf / cdf)
    } else {
        // Φ(z) = φ(z)/(-z) · (1 - 1/z² + 3/z⁴ - 15/z⁶ + …)
        let u = 1.0 / (z * z);
        let series = 1.0 - u + 3.0 * u * u - 15.0 * u * u * u + 105.0 * u * u * u * u;
        let log_pdf = -0.5 * z * z - 0.5 * (2.0 * PI).ln();
        (log_pdf - (-z).ln() + series.ln(), -z / series)
    }
}

/// `log P(y > t)` for `y ~ N(mean, var)` (a constraint GP's probability of feasibility at
/// its standardised threshold `t`), and its derivatives in `mean` and `var` (Optuna's
/// `LogPI`).
pub(crate) fn log_pi(mean: f64, var: f64, t: f64) -> (f64, f64, f64) {
    let var = var + STABILIZING_NOISE;
    let sigma = var.sqrt();
    let z = (mean - t) / sigma;
    let (value, ratio) = log_ndtr(z);
    (value, ratio / sigma, -ratio * z / (2.0 * var))
}

/// Standard normal quantile (Acklam's rational approximation refined by one Halley step).
pub(crate) fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let x = if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    let e = 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2) - p;
    let u = e * (2.0 * PI).sqrt() * (0.5 * x * x).exp();
    x - u / (1.0 + 0.5 * x * u)
}

/// Scrambled Sobol points of dimension `dim` mapped to standard normals (BoTorch's and
/// Optuna's `sample_from_normal_sobol`), `n × dim` row-major.
pub(crate) fn normal_sobol(dim: usize, n: usize, seed: u32) -> Vec<f64> {
    let mut out = Vec::with_capacity(n * dim);
    for i in 0..n {
        for d in 0..dim {
            let u = if dim <= 256 {
                f64::from(sobol_burley::sample(i as u32, d as u32, seed))
            } else {
                // Beyond the crate's 256 dimensions: a hashed uniform.
                let h = (i as u64 ^ ((d as u64) << 32) ^ u64::from(seed))
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15);
                (h >> 11) as f64 / (1u64 << 53) as f64
            };
            // Half an f32 ulp keeps the quantile finite at u = 0.
            let u = (u + 0.5 / f64::from(1u32 << 24)).min(1.0 - 1e-9);
            out.push(normal_quantile(u));
        }
    }
    out
}

/// The conditional model of qLogEI and qLogCEI: fantasies at the RUNNING points drawn once
/// from a GP's joint posterior with fixed quasi-random normals, and the posterior of a
/// candidate given them (Optuna's `ConditionalGPRegressor`).
#[derive(Debug, Clone)]
pub(crate) struct Fantasies {
    running: Vec<Vec<f64>>,
    n_samples: usize,
    /// The candidate's fixed normal per sample.
    candidate_normals: Vec<f64>,
    /// `r × n_samples`: the fantasy values at the running points.
    values: Vec<f64>,
    /// Cholesky factor of the running points' posterior covariance.
    running_chol: Cholesky,
    /// `r × n_samples`: that covariance's inverse applied to (fantasy − mean).
    inv_delta: Vec<f64>,
    /// `n × r`: `C⁻¹ K(X, X_running)`.
    v_r: Vec<f64>,
}

/// A candidate's conditional value per sample under [`Fantasies`], with what its gradient
/// needs: `y_s = mean + Σ_a c_a inv_delta[a][s] + sd · normal_s`, where `c` is the
/// posterior covariance of the candidate with the running points.
pub(crate) struct CandidateSamples {
    pub(crate) y: Vec<f64>,
    dmean: Vec<f64>,
    /// `r × dim`: the gradient of `c`.
    dc: Vec<f64>,
    /// The gradient of `sd`.
    dsd: Vec<f64>,
}

impl Fantasies {
    pub(crate) fn new(
        gp: &GpRegressor,
        running: Vec<Vec<f64>>,
        n_samples: usize,
        seed: u32,
    ) -> Self {
        let r = running.len();
        let n = gp.data.n;
        let normals = normal_sobol(r + 1, n_samples, seed);
        let (mean_r, mut cov) = gp.joint_posterior(&running);
        for a in 0..r {
            cov[a * r + a] += STABILIZING_NOISE;
        }
        // Duplicated RUNNING points make the covariance singular; more jitter then.
        let mut jitter = 1e-10;
        let running_chol = loop {
            if let Some(l) = Cholesky::new(&cov, r) {
                break l;
            }
            for a in 0..r {
                cov[a * r + a] += jitter;
            }
            jitter *= 10.0;
        };
        let mut inv_delta = vec![0.0; r * n_samples];
        let mut values = vec![0.0; r * n_samples];
        for s in 0..n_samples {
            let z = &normals[s * (r + 1)..s * (r + 1) + r];
            let delta: Vec<f64> = (0..r)
                .map(|a| (0..=a).map(|b| running_chol.lower[a * r + b] * z[b]).sum())
                .collect();
            for a in 0..r {
                values[a * n_samples + s] = mean_r[a] + delta[a];
            }
            let solved = running_chol.solve(&delta);
            for a in 0..r {
                inv_delta[a * n_samples + s] = solved[a];
            }
        }
        let mut v_r = vec![0.0; n * r];
        for (a, point) in running.iter().enumerate() {
            let solved = gp.chol.solve(&gp.kernel_row(point));
            for i in 0..n {
                v_r[i * r + a] = solved[i];
            }
        }
        Self {
            candidate_normals: (0..n_samples).map(|s| normals[s * (r + 1) + r]).collect(),
            running,
            n_samples,
            values,
            running_chol,
            inv_delta,
            v_r,
        }
    }

    /// The fantasy value of running point `a` in sample `s`.
    pub(crate) fn value(&self, a: usize, s: usize) -> f64 {
        self.values[a * self.n_samples + s]
    }

    /// The candidate `x`'s conditional value per sample, of `gp` (the GP the fantasies were
    /// drawn from).
    pub(crate) fn candidate(&self, gp: &GpRegressor, x: &[f64]) -> CandidateSamples {
        let p = gp.posterior_with_gradient(x);
        let (dim, n, r) = (x.len(), gp.data.n, self.running.len());
        // Posterior cross-covariance with the running points and its gradient.
        let k_x = gp.kernel_row(x);
        let mut dk_x = vec![0.0; n * dim];
        for i in 0..n {
            let row = &gp.data.x[i * dim..(i + 1) * dim];
            gp.kernel_gradient(x, row, &mut dk_x[i * dim..(i + 1) * dim]);
        }
        let mut c = vec![0.0; r];
        let mut dc = vec![0.0; r * dim];
        let mut buffer = vec![0.0; dim];
        for (a, point) in self.running.iter().enumerate() {
            c[a] = gp.kernel(x, point) - (0..n).map(|i| k_x[i] * self.v_r[i * r + a]).sum::<f64>();
            gp.kernel_gradient(x, point, &mut buffer);
            for d in 0..dim {
                dc[a * dim + d] = buffer[d]
                    - (0..n)
                        .map(|i| dk_x[i * dim + d] * self.v_r[i * r + a])
                        .sum::<f64>();
            }
        }
        let inv_c = self.running_chol.solve(&c);
        let raw_var =
            p.var + STABILIZING_NOISE - c.iter().zip(&inv_c).map(|(a, b)| a * b).sum::<f64>();
        let sd = raw_var.max(0.0).sqrt();
        let dsd: Vec<f64> = (0..dim)
            .map(|d| {
                if raw_var <= 0.0 {
                    return 0.0;
                }
                let dvar =
                    p.dvar[d] - 2.0 * (0..r).map(|a| inv_c[a] * dc[a * dim + d]).sum::<f64>();
                dvar / (2.0 * sd)
            })
            .collect();
        let s_count = self.n_samples;
        let y = (0..s_count)
            .map(|s| {
                let shift: f64 = (0..r).map(|a| c[a] * self.inv_delta[a * s_count + s]).sum();
                p.mean + shift + sd * self.candidate_normals[s]
            })
            .collect();
        CandidateSamples {
            y,
            dmean: p.dmean,
            dc,
            dsd,
        }
    }
}

impl Fantasies {
    /// The `y` of [`Self::candidate`] alone (the same operations, so the same values bit for
    /// bit), without the gradients: what screening and line searches need.
    pub(crate) fn candidate_values(&self, gp: &GpRegressor, x: &[f64]) -> Vec<f64> {
        let (mean, var) = gp.posterior_like_gradient(x);
        let (n, r) = (gp.data.n, self.running.len());
        let k_x = gp.kernel_row(x);
        let c: Vec<f64> = self
            .running
            .iter()
            .enumerate()
            .map(|(a, point)| {
                gp.kernel(x, point) - (0..n).map(|i| k_x[i] * self.v_r[i * r + a]).sum::<f64>()
            })
            .collect();
        let inv_c = self.running_chol.solve(&c);
        let raw_var =
            var + STABILIZING_NOISE - c.iter().zip(&inv_c).map(|(a, b)| a * b).sum::<f64>();
        let sd = raw_var.max(0.0).sqrt();
        let s_count = self.n_samples;
        (0..s_count)
            .map(|s| {
                let shift: f64 = (0..r).map(|a| c[a] * self.inv_delta[a * s_count + s]).sum();
                mean + shift + sd * self.candidate_normals[s]
            })
            .collect()
    }
}

impl CandidateSamples {
    /// Per sample, `softmax[s]` times the derivative of the smoothed log feasibility
    /// `log σ((y_s − t) / τ)` in `y_s`: `σ(−z) / τ` with `z = (y_s − t) / τ`.
    pub(crate) fn feasibility_weights(&self, t: f64, softmax: &[f64]) -> Vec<f64> {
        self.y
            .iter()
            .zip(softmax)
            .map(|(y, w)| {
                let z = (y - t) / FEASIBILITY_TEMPERATURE;
                w * sigmoid(-z) / FEASIBILITY_TEMPERATURE
            })
            .collect()
    }

    /// `Σ_s weights[s] · ∂y_s/∂x`, added to `grad` (samples of weight 0 skipped).
    pub(crate) fn add_gradient(&self, fantasies: &Fantasies, weights: &[f64], grad: &mut [f64]) {
        let (dim, r, s_count) = (grad.len(), fantasies.running.len(), fantasies.n_samples);
        let (mut w_total, mut w_normal) = (0.0, 0.0);
        let mut w_shift = vec![0.0; r];
        for (s, w) in weights.iter().enumerate() {
            if *w == 0.0 {
                continue;
            }
            w_total += w;
            w_normal += w * fantasies.candidate_normals[s];
            for (a, acc) in w_shift.iter_mut().enumerate() {
                *acc += w * fantasies.inv_delta[a * s_count + s];
            }
        }
        for (d, g) in grad.iter_mut().enumerate() {
            *g += w_total * self.dmean[d]
                + (0..r)
                    .map(|a| w_shift[a] * self.dc[a * dim + d])
                    .sum::<f64>()
                + w_normal * self.dsd[d];
        }
    }
}

/// The temperature of qLogCEI's smoothed feasibility `log σ((y − t) / τ)` (Optuna's
/// `qLogPI` default).
pub(crate) const FEASIBILITY_TEMPERATURE: f64 = 1e-2;

/// `log σ(z)` without overflow: `min(z, 0) − log(1 + e^{−|z|})`.
pub(crate) fn log_sigmoid(z: f64) -> f64 {
    z.min(0.0) - (-z.abs()).exp().ln_1p()
}

/// `σ(z)`, the derivative of [`log_sigmoid`] at `-z`, without overflow.
pub(crate) fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// An acquisition function of a fitted GP (maximised).
#[derive(Debug, Clone)]
pub(crate) struct Acquisition {
    gp: GpRegressor,
    threshold: f64,
    fantasies: Option<Fantasies>,
    /// One GP per constraint with its standardised threshold: the point is feasible for
    /// the constraint where the GP's value is above it.
    constraints: Vec<(GpRegressor, f64)>,
    /// With RUNNING trials (qLogCEI): each constraint's fantasies, in the order of
    /// `constraints`.
    constraint_fantasies: Vec<Fantasies>,
    /// With RUNNING trials: the QMC seed of the objective's fantasies (the constraints'
    /// follow it, as in Optuna).
    seed: u32,
    /// With RUNNING trials: per sample, the best log utility among the running points (they
    /// do not move with the candidate).
    best_running: Vec<f64>,
}

impl Acquisition {
    /// Log expected improvement over `threshold` (the best standardised value).
    pub(crate) fn log_ei(gp: GpRegressor, threshold: f64) -> Self {
        Self {
            gp,
            threshold,
            fantasies: None,
            constraints: Vec::new(),
            constraint_fantasies: Vec::new(),
            seed: 0,
            best_running: Vec::new(),
        }
    }

    /// qLogEI: the expected best improvement of the candidate together with the RUNNING
    /// points, estimated with `n_samples` quasi-random fantasies.
    pub(crate) fn q_log_ei(
        gp: GpRegressor,
        threshold: f64,
        running: Vec<Vec<f64>>,
        n_samples: usize,
        seed: u32,
    ) -> Self {
        let fantasies = Fantasies::new(&gp, running, n_samples, seed);
        let mut acquisition = Self {
            gp,
            threshold,
            fantasies: Some(fantasies),
            constraints: Vec::new(),
            constraint_fantasies: Vec::new(),
            seed,
            best_running: Vec::new(),
        };
        acquisition.best_running = acquisition.best_running_utilities();
        acquisition
    }

    /// Weighs the acquisition by the probability of feasibility of each constraint
    /// (Optuna's `LogCEI`): adds `log P(c_i(x) <= 0)` from each constraint's GP. With a
    /// `threshold` of -∞ (no feasible trial yet) only those terms remain. With RUNNING
    /// trials (Optuna's `qLogCEI`), each constraint's GP draws fantasies at the running
    /// points too (seeds following the objective's), and each sample's utility of a point is
    /// its log improvement plus `log σ((y_i − t_i) / τ)` of each constraint's value there.
    pub(crate) fn with_constraints(mut self, constraints: Vec<(GpRegressor, f64)>) -> Self {
        if let Some(f) = &self.fantasies {
            self.constraint_fantasies = constraints
                .iter()
                .enumerate()
                .map(|(i, (gp, _))| {
                    let seed = self.seed.wrapping_add(i as u32 + 1);
                    Fantasies::new(gp, f.running.clone(), f.n_samples, seed)
                })
                .collect();
        }
        self.constraints = constraints;
        if self.fantasies.is_some() {
            self.best_running = self.best_running_utilities();
        }
        self
    }

    /// Whether the objective's improvement counts (not while no trial is feasible).
    fn has_objective_term(&self) -> bool {
        self.threshold != f64::NEG_INFINITY
    }

    /// Per sample, the best log utility of the running points.
    fn best_running_utilities(&self) -> Vec<f64> {
        let Some(f) = &self.fantasies else {
            return Vec::new();
        };
        (0..f.n_samples)
            .map(|s| {
                let mut best = f64::NEG_INFINITY;
                for a in 0..f.running.len() {
                    let mut utility = 0.0;
                    if self.has_objective_term() {
                        let improvement = (f.value(a, s) - self.threshold).max(IMPROVEMENT_FLOOR);
                        utility += improvement.ln();
                    }
                    for (cf, (_, t)) in self.constraint_fantasies.iter().zip(&self.constraints) {
                        utility += log_sigmoid((cf.value(a, s) - t) / FEASIBILITY_TEMPERATURE);
                    }
                    best = best.max(utility);
                }
                best
            })
            .collect()
    }

    /// The constraints' log probability of feasibility at `x`, added to `grad`.
    fn add_constraints(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let mut total = 0.0;
        for (gp, t) in &self.constraints {
            let p = gp.posterior_with_gradient(x);
            let (value, dmean, dvar) = log_pi(p.mean, p.var, *t);
            total += value;
            for d in 0..x.len() {
                grad[d] += dmean * p.dmean[d] + dvar * p.dvar[d];
            }
        }
        total
    }

    pub(crate) fn lengthscales(&self) -> Vec<f64> {
        self.gp.params.lengthscales()
    }

    /// The value of [`Self::value_and_gradient`] (bit for bit) without its gradient.
    pub(crate) fn value(&self, x: &[f64]) -> f64 {
        match &self.fantasies {
            None if self.constraints.is_empty() => {
                let (mean, var) = self.gp.posterior(x);
                logei(mean, var, self.threshold).0
            }
            Some(f) => self.q_value(f, x),
            None => {
                let mut value = 0.0;
                if self.has_objective_term() {
                    let (mean, var) = self.gp.posterior_like_gradient(x);
                    value = logei(mean, var, self.threshold).0;
                }
                let mut feasibility = 0.0;
                for (gp, t) in &self.constraints {
                    let (mean, var) = gp.posterior_like_gradient(x);
                    feasibility += log_pi(mean, var, *t).0;
                }
                value + feasibility
            }
        }
    }

    /// [`Self::value`] at each of `points`.
    pub(crate) fn values(&self, points: &[Vec<f64>]) -> Vec<f64> {
        match &self.fantasies {
            None if self.constraints.is_empty() => self
                .gp
                .posteriors(points)
                .into_iter()
                .map(|(mean, var)| logei(mean, var, self.threshold).0)
                .collect(),
            _ => points.iter().map(|x| self.value(x)).collect(),
        }
    }

    /// The value and its gradient in `x` (0 along categorical coordinates).
    pub(crate) fn value_and_gradient(&self, x: &[f64]) -> (f64, Vec<f64>) {
        if let Some(f) = &self.fantasies {
            return self.q_value_and_gradient(f, x);
        }
        let (value, mut grad) = if self.has_objective_term() {
            let p = self.gp.posterior_with_gradient(x);
            let (value, dmean, dvar) = logei(p.mean, p.var, self.threshold);
            let grad = (0..x.len())
                .map(|d| dmean * p.dmean[d] + dvar * p.dvar[d])
                .collect();
            (value, grad)
        } else {
            (0.0, vec![0.0; x.len()])
        };
        if self.constraints.is_empty() {
            return (value, grad);
        }
        let feasibility = self.add_constraints(x, &mut grad);
        (value + feasibility, grad)
    }

    /// The value of [`Self::q_value_and_gradient`] (bit for bit) without its gradient.
    fn q_value(&self, f: &Fantasies, x: &[f64]) -> f64 {
        let s_count = f.n_samples;
        let objective = self
            .has_objective_term()
            .then(|| f.candidate_values(&self.gp, x));
        let constraints: Vec<(Vec<f64>, f64)> = self
            .constraint_fantasies
            .iter()
            .zip(&self.constraints)
            .map(|(cf, (gp, t))| (cf.candidate_values(gp, x), *t))
            .collect();
        let mut maxima = vec![0.0; s_count];
        for (s, maximum) in maxima.iter_mut().enumerate() {
            let mut candidate = 0.0;
            if let Some(y) = &objective {
                let improvement = y[s] - self.threshold;
                candidate += improvement.max(IMPROVEMENT_FLOOR).ln();
            }
            for (y, t) in &constraints {
                candidate += log_sigmoid((y[s] - t) / FEASIBILITY_TEMPERATURE);
            }
            *maximum = candidate.max(self.best_running[s]);
        }
        let top = maxima.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = maxima.iter().map(|m| (m - top).exp()).sum();
        top + sum.ln() - (s_count as f64).ln()
    }

    /// qLogEI / qLogCEI: the log of the mean over samples of the best utility among the
    /// running points and the candidate, and its gradient (through the candidate, in the
    /// samples where it is the best).
    fn q_value_and_gradient(&self, f: &Fantasies, x: &[f64]) -> (f64, Vec<f64>) {
        let s_count = f.n_samples;
        let objective = self.has_objective_term().then(|| f.candidate(&self.gp, x));
        let constraints: Vec<(CandidateSamples, f64)> = self
            .constraint_fantasies
            .iter()
            .zip(&self.constraints)
            .map(|(cf, (gp, t))| (cf.candidate(gp, x), *t))
            .collect();
        let mut maxima = vec![0.0; s_count];
        let mut wins = vec![false; s_count];
        for s in 0..s_count {
            let mut candidate = 0.0;
            if let Some(o) = &objective {
                let improvement = o.y[s] - self.threshold;
                candidate += improvement.max(IMPROVEMENT_FLOOR).ln();
            }
            for (c, t) in &constraints {
                candidate += log_sigmoid((c.y[s] - t) / FEASIBILITY_TEMPERATURE);
            }
            let running = self.best_running[s];
            maxima[s] = candidate.max(running);
            wins[s] = candidate > running;
        }
        let top = maxima.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = maxima.iter().map(|m| (m - top).exp()).sum();
        let value = top + sum.ln() - (s_count as f64).ln();
        // d value / d utility_s is the softmax weight of sample s where the candidate wins.
        let softmax: Vec<f64> = (0..s_count)
            .map(|s| {
                if wins[s] {
                    (maxima[s] - top).exp() / sum
                } else {
                    0.0
                }
            })
            .collect();
        let mut grad = vec![0.0; x.len()];
        if let Some(o) = &objective {
            // d log(improvement) / dy = 1 / improvement, 0 where it is clamped.
            let weights: Vec<f64> = (0..s_count)
                .map(|s| {
                    let improvement = o.y[s] - self.threshold;
                    if softmax[s] != 0.0 && improvement > IMPROVEMENT_FLOOR {
                        softmax[s] * (1.0 / improvement)
                    } else {
                        0.0
                    }
                })
                .collect();
            o.add_gradient(f, &weights, &mut grad);
        }
        for ((c, t), cf) in constraints.iter().zip(&self.constraint_fantasies) {
            c.add_gradient(cf, &c.feasibility_weights(*t, &softmax), &mut grad);
        }
        (value, grad)
    }
}
