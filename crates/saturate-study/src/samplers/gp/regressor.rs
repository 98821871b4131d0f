//! The Gaussian process: a Matérn 5/2 kernel with automatic relevance determination, its
//! marginal likelihood and analytic gradient, the maximum a posteriori fit of the kernel
//! parameters, and the posterior (Optuna's `_gp/gp.py` and `_gp/prior.py`).

use crate::samplers::gp::lbfgs::{minimize, LbfgsSettings};
use crate::samplers::gp::linalg::{dot, dot_lanes, squared_norm_lanes, vectorized, Cholesky};

/// The noise variance never goes below this (Optuna's `DEFAULT_MINIMUM_NOISE_VAR`).
pub(crate) const MINIMUM_NOISE_VAR: f64 = 1e-6;
/// scipy's `gtol` in Optuna's kernel fit: a smaller one makes the fit unstable.
pub(crate) const FIT_GTOL: f64 = 1e-2;

/// `eˣ` for `x ≤ 0` (NaN stays NaN; below −708, where the result would be subnormal, 0),
/// within 1.15 ulp of the exact value (the worst of 10⁵ points checked against 40-digit
/// arithmetic; one degree lower and it is 2.3), in plain arithmetic: no library call and
/// no branch, so a loop of them is compiled into vector instructions, and the result is the
/// same bit for bit on every CPU, instruction set and operating system (`f64::exp` calls
/// the platform's C library, whose results differ in the last bit between libraries).
/// `x = k ln 2 + r` with `|r| ≤ ln 2 / 2`; `eʳ` by its Taylor polynomial of degree 13,
/// whose truncation error is below 2⁻⁵⁷ relative; `2ᵏ` built from its exponent bits.
#[inline(always)]
pub(crate) fn exp_nonpositive(x: f64) -> f64 {
    // Adding 1.5 · 2⁵² rounds to an integer (to nearest) and leaves it in the low bits.
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    // ln 2 in two parts (fdlibm's): LN2_HI has 21 trailing zero bits, so `k · LN2_HI` is
    // exact for |k| < 2¹¹, and LN2_LO = ln 2 − LN2_HI to double precision.
    const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
    let shifted = x * std::f64::consts::LOG2_E + SHIFT;
    let k = shifted - SHIFT;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    // 1/13!, 1/12!, …, 1/1!, 1/0!: evaluated when compiling, not a division per term.
    const COEFFICIENTS: [f64; 14] = [
        1.0 / 6_227_020_800.0,
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5_040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        1.0 / 2.0,
        1.0,
        1.0,
    ];
    let mut p = COEFFICIENTS[0];
    for c in &COEFFICIENTS[1..] {
        p = p * r + c;
    }
    // The low bits of `shifted` hold k (two's complement); k + 1023 in the exponent field.
    let scale = f64::from_bits(shifted.to_bits().wrapping_add(1023) << 52);
    if x < -708.0 {
        0.0
    } else {
        p * scale
    }
}

/// Matérn 5/2 as a function of the squared scaled distance `d2`:
/// `exp(-√(5 d2)) (5/3 d2 + √(5 d2) + 1)`.
#[inline]
pub(crate) fn matern52(d2: f64) -> f64 {
    let s = (5.0 * d2).sqrt();
    exp_nonpositive(-s) * ((5.0 / 3.0) * d2 + s + 1.0)
}

/// [`matern52`] and its derivative with one exponential.
#[inline(always)]
pub(crate) fn matern52_with_derivative(d2: f64) -> (f64, f64) {
    let s = (5.0 * d2).sqrt();
    let e = exp_nonpositive(-s);
    (
        e * ((5.0 / 3.0) * d2 + s + 1.0),
        (-5.0 / 6.0) * (s + 1.0) * e,
    )
}

/// The derivative of [`matern52`] with respect to `d2` (finite at 0, unlike the chain
/// rule through the square root).
#[inline]
pub(crate) fn matern52_derivative(d2: f64) -> f64 {
    let s = (5.0 * d2).sqrt();
    (-5.0 / 6.0) * (s + 1.0) * exp_nonpositive(-s)
}

/// The kernel's parameters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KernelParams {
    /// `1 / ℓ_d²`, one per coordinate.
    pub inverse_squared_lengthscales: Vec<f64>,
    pub kernel_scale: f64,
    pub noise_var: f64,
}

impl KernelParams {
    /// Optuna's starting point and fallback: everything 1.
    pub(crate) fn default_for(dim: usize) -> Self {
        Self {
            inverse_squared_lengthscales: vec![1.0; dim],
            kernel_scale: 1.0,
            noise_var: 1.0,
        }
    }

    pub(crate) fn lengthscales(&self) -> Vec<f64> {
        self.inverse_squared_lengthscales
            .iter()
            .map(|w| 1.0 / w.sqrt())
            .collect()
    }
}

/// Per-coordinate squared difference: squared for numerical coordinates, 0 or 1 (Hamming)
/// for categorical ones.
#[inline]
pub(crate) fn coordinate_sqd(a: f64, b: f64, categorical: bool) -> f64 {
    if categorical {
        f64::from(u8::from(a != b))
    } else {
        (a - b) * (a - b)
    }
}

/// The log prior of the kernel parameters (Optuna's `default_log_prior`, constants
/// dropped): `-Σ (0.1/w + 0.1 w)` on the inverse squared lengthscales, Gamma(2, 1) on
/// the kernel scale and Gamma(1.1, 30) on the noise variance.
pub(crate) fn log_prior(params: &KernelParams) -> f64 {
    let lengthscales: f64 = params
        .inverse_squared_lengthscales
        .iter()
        .map(|w| 0.1 / w + 0.1 * w)
        .sum();
    let gamma = |x: f64, concentration: f64, rate: f64| (concentration - 1.0) * x.ln() - rate * x;
    -lengthscales + gamma(params.kernel_scale, 2.0, 1.0) + gamma(params.noise_var, 1.1, 30.0)
}

/// Why a kernel fit failed (Optuna then retries from the default parameters).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FitError {
    /// The covariance matrix was not numerically positive definite.
    NotPositiveDefinite,
    /// The optimiser stopped without converging.
    NotConverged,
}

/// Training data with the per-pair squared differences precomputed.
#[derive(Debug, Clone)]
pub(crate) struct TrainingData {
    pub is_categorical: Vec<bool>,
    /// `n × dim`, row-major.
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub n: usize,
    pub dim: usize,
    /// `n × n × dim` per-coordinate squared differences.
    sqd: Vec<f64>,
}

impl TrainingData {
    pub(crate) fn new(x: Vec<Vec<f64>>, y: Vec<f64>, is_categorical: Vec<bool>) -> Self {
        let n = x.len();
        let dim = is_categorical.len();
        let mut sqd = vec![0.0; n * n * dim];
        for i in 0..n {
            for j in 0..n {
                for d in 0..dim {
                    sqd[(i * n + j) * dim + d] =
                        coordinate_sqd(x[i][d], x[j][d], is_categorical[d]);
                }
            }
        }
        Self {
            is_categorical,
            x: x.concat(),
            y,
            n,
            dim,
            sqd,
        }
    }

    fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.dim..(i + 1) * self.dim]
    }

    /// The noise-free kernel matrix `K(X, X)`.
    pub(crate) fn kernel_matrix(&self, params: &KernelParams) -> Vec<f64> {
        let (n, dim) = (self.n, self.dim);
        let w = &params.inverse_squared_lengthscales;
        let mut k = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let sqd = &self.sqd[(i * n + j) * dim..(i * n + j + 1) * dim];
                let d2: f64 = sqd.iter().zip(w).map(|(a, b)| a * b).sum();
                let v = params.kernel_scale * matern52(d2);
                k[i * n + j] = v;
                k[j * n + i] = v;
            }
        }
        k
    }

    /// The log marginal likelihood without its constant,
    /// `-½ log det C - ½ yᵀ C⁻¹ y` with `C = K + σ² I`, and its gradient with respect to
    /// `(log w_1..log w_dim, log s, log(σ² - minimum))`; `None` when `C` is not positive
    /// definite. `noise_free` leaves the noise out of the gradient (it is fixed).
    #[cfg(test)]
    pub(crate) fn marginal_log_likelihood(
        &self,
        params: &KernelParams,
        minimum_noise: f64,
        noise_free: bool,
    ) -> Option<(f64, Vec<f64>)> {
        self.marginal_log_likelihood_with(
            params,
            minimum_noise,
            noise_free,
            &mut Workspace::default(),
        )
    }

    /// [`Self::marginal_log_likelihood`] with the buffers of `ws` (a fit evaluates it
    /// many times on matrices of the same size).
    pub(crate) fn marginal_log_likelihood_with(
        &self,
        params: &KernelParams,
        minimum_noise: f64,
        noise_free: bool,
        ws: &mut Workspace,
    ) -> Option<(f64, Vec<f64>)> {
        vectorized(
            #[inline(always)]
            || self.marginal_log_likelihood_inlined(params, minimum_noise, noise_free, ws),
        )
    }

    /// The body of [`Self::marginal_log_likelihood_with`], inlined into its vectorised
    /// caller.
    #[inline(always)]
    fn marginal_log_likelihood_inlined(
        &self,
        params: &KernelParams,
        minimum_noise: f64,
        noise_free: bool,
        ws: &mut Workspace,
    ) -> Option<(f64, Vec<f64>)> {
        let (n, dim) = (self.n, self.dim);
        let w = &params.inverse_squared_lengthscales;
        // K and ∂K/∂d2 in one pass over the lower triangle (one exp per pair).
        let Workspace {
            c,
            dk,
            inverse,
            chol,
        } = ws;
        // Every element of c, and of dk the lower triangle that is read, is written below.
        c.resize(n * n, 0.0);
        dk.resize(n * n, 0.0);
        let scale = params.kernel_scale;
        for i in 0..n {
            let pairs = self.sqd[i * n * dim..(i * n + i + 1) * dim].chunks_exact(dim);
            let c_row = &mut c[i * n..i * n + i + 1];
            let dk_row = &mut dk[i * n..i * n + i + 1];
            // The distances first, then the kernel over the row: a loop without calls,
            // which runs in vector registers.
            for (sqd, c) in pairs.zip(c_row.iter_mut()) {
                *c = dot(sqd, w);
            }
            for (c, dk) in c_row.iter_mut().zip(dk_row) {
                let (k, dk_dd2) = matern52_with_derivative(*c);
                *c = scale * k;
                *dk = scale * dk_dd2;
            }
        }
        for i in 0..n {
            for j in 0..i {
                c[j * n + i] = c[i * n + j];
            }
        }
        let mut prior_k = vec![0.0; n];
        for i in 0..n {
            prior_k[i] = c[i * n + i];
            c[i * n + i] += params.noise_var;
        }
        if !chol.factor(c, n) {
            return None;
        }
        let logdet: f64 = (0..n).map(|i| chol.lower[i * n + i].ln()).sum();
        let u = chol.solve_lower(&self.y);
        let value = -logdet - 0.5 * dot(&u, &u);
        // dMLL/dC = ½ (α αᵀ - C⁻¹), α = C⁻¹ y; C is symmetric, so each off-diagonal pair
        // counts twice.
        let alpha = chol.solve_upper(&u);
        chol.inverse_lower_into(inverse);
        let mut grad = vec![0.0; dim + 2];
        let pass = GradientPass {
            sqd: &self.sqd,
            n,
            alpha: &alpha,
            inverse,
            dk,
            c,
            prior_k: &prior_k,
        };
        let grad_w = &mut grad[..dim];
        let (trace_k, trace_noise) = match dim {
            1 => pass.run_fixed::<1>(grad_w),
            2 => pass.run_fixed::<2>(grad_w),
            3 => pass.run_fixed::<3>(grad_w),
            4 => pass.run_fixed::<4>(grad_w),
            5 => pass.run_fixed::<5>(grad_w),
            6 => pass.run_fixed::<6>(grad_w),
            7 => pass.run_fixed::<7>(grad_w),
            8 => pass.run_fixed::<8>(grad_w),
            _ => pass.run(grad_w),
        };
        for d in 0..dim {
            grad[d] *= w[d];
        }
        grad[dim] = trace_k;
        grad[dim + 1] = if noise_free {
            0.0
        } else {
            trace_noise * (params.noise_var - minimum_noise)
        };
        Some((value, grad))
    }
}

/// The pass over the pairs of training points that accumulates the gradient of the
/// marginal log likelihood: `a_ij = w (α_i α_j − C⁻¹_ij)` (w = ½ on the diagonal) times
/// `∂K_ij/∂d2 · sqd_ij` into the lengthscales' gradient, and the traces of the kernel
/// scale and the noise, pair by pair in order (j = 0..=i within row i).
struct GradientPass<'a> {
    sqd: &'a [f64],
    n: usize,
    alpha: &'a [f64],
    inverse: &'a [f64],
    dk: &'a [f64],
    c: &'a [f64],
    prior_k: &'a [f64],
}

impl GradientPass<'_> {
    /// Any number of coordinates (the gradient in memory).
    #[inline(always)]
    fn run(&self, grad_w: &mut [f64]) -> (f64, f64) {
        let (n, dim) = (self.n, grad_w.len());
        let (alpha, inverse, dk, c) = (self.alpha, self.inverse, self.dk, self.c);
        let (mut trace_k, mut trace_noise) = (0.0, 0.0);
        for i in 0..n {
            let alpha_i = alpha[i];
            let mut pairs = self.sqd[i * n * dim..(i * n + i + 1) * dim].chunks_exact(dim);
            let off_diagonal = alpha[..i]
                .iter()
                .zip(&inverse[i * n..i * n + i])
                .zip(&dk[i * n..i * n + i])
                .zip(&c[i * n..i * n + i]);
            for (((alpha_j, inverse), dk), c) in off_diagonal {
                let a = alpha_i * alpha_j - inverse;
                let sqd = pairs.next().expect("a pair per j");
                let scaled = a * dk;
                for (g, s) in grad_w.iter_mut().zip(sqd) {
                    *g += scaled * s;
                }
                trace_k += a * c;
            }
            let a = 0.5 * (alpha_i * alpha_i - inverse[i * n + i]);
            let sqd = pairs.next().expect("the diagonal pair");
            let scaled = a * dk[i * n + i];
            for (g, s) in grad_w.iter_mut().zip(sqd) {
                *g += scaled * s;
            }
            trace_k += a * self.prior_k[i];
            trace_noise += a;
        }
        (trace_k, trace_noise)
    }

    /// `D` coordinates: the same operations with the gradient in registers.
    #[inline(always)]
    fn run_fixed<const D: usize>(&self, grad_w: &mut [f64]) -> (f64, f64) {
        let n = self.n;
        let (alpha, inverse, dk, c) = (self.alpha, self.inverse, self.dk, self.c);
        let mut grad = [0.0f64; D];
        grad.copy_from_slice(grad_w);
        let (mut trace_k, mut trace_noise) = (0.0, 0.0);
        for i in 0..n {
            let alpha_i = alpha[i];
            let (pairs, _) = self.sqd[i * n * D..(i * n + i + 1) * D].as_chunks::<D>();
            let off_diagonal = alpha[..i]
                .iter()
                .zip(&inverse[i * n..i * n + i])
                .zip(&dk[i * n..i * n + i])
                .zip(&c[i * n..i * n + i])
                .zip(pairs);
            for ((((alpha_j, inverse), dk), c), sqd) in off_diagonal {
                let a = alpha_i * alpha_j - inverse;
                let scaled = a * dk;
                for d in 0..D {
                    grad[d] += scaled * sqd[d];
                }
                trace_k += a * c;
            }
            let a = 0.5 * (alpha_i * alpha_i - inverse[i * n + i]);
            let sqd = &pairs[i];
            let scaled = a * dk[i * n + i];
            for d in 0..D {
                grad[d] += scaled * sqd[d];
            }
            trace_k += a * self.prior_k[i];
            trace_noise += a;
        }
        grad_w.copy_from_slice(&grad);
        (trace_k, trace_noise)
    }
}

/// Buffers of [`TrainingData::marginal_log_likelihood_with`], reused across a fit's
/// evaluations.
#[derive(Debug)]
pub(crate) struct Workspace {
    c: Vec<f64>,
    dk: Vec<f64>,
    inverse: Vec<f64>,
    chol: Cholesky,
}

impl Default for Workspace {
    fn default() -> Self {
        Self {
            c: Vec::new(),
            dk: Vec::new(),
            inverse: Vec::new(),
            chol: Cholesky::empty(),
        }
    }
}

/// The gradient of [`log_prior`] with respect to the same raw parameters as
/// [`TrainingData::marginal_log_likelihood`].
fn log_prior_gradient(params: &KernelParams, minimum_noise: f64, noise_free: bool) -> Vec<f64> {
    let mut grad: Vec<f64> = params
        .inverse_squared_lengthscales
        .iter()
        .map(|w| 0.1 / w - 0.1 * w)
        .collect();
    grad.push(1.0 - params.kernel_scale);
    grad.push(if noise_free {
        0.0
    } else {
        (0.1 / params.noise_var - 30.0) * (params.noise_var - minimum_noise)
    });
    grad
}

fn params_from_raw(raw: &[f64], dim: usize, minimum_noise: f64, noise_free: bool) -> KernelParams {
    KernelParams {
        inverse_squared_lengthscales: raw[..dim].iter().map(|v| v.exp()).collect(),
        kernel_scale: raw[dim].exp(),
        noise_var: if noise_free {
            minimum_noise
        } else {
            raw[dim + 1].exp() + minimum_noise
        },
    }
}

/// The negative log posterior (the fit's loss) and its gradient at raw parameters.
#[cfg(test)]
pub(crate) fn fit_loss(
    data: &TrainingData,
    raw: &[f64],
    minimum_noise: f64,
    noise_free: bool,
) -> Result<(f64, Vec<f64>), FitError> {
    fit_loss_with(
        data,
        raw,
        minimum_noise,
        noise_free,
        &mut Workspace::default(),
    )
}

/// [`fit_loss`] with the buffers of `ws`.
fn fit_loss_with(
    data: &TrainingData,
    raw: &[f64],
    minimum_noise: f64,
    noise_free: bool,
    ws: &mut Workspace,
) -> Result<(f64, Vec<f64>), FitError> {
    let params = params_from_raw(raw, data.dim, minimum_noise, noise_free);
    let (mll, mll_grad) = data
        .marginal_log_likelihood_with(&params, minimum_noise, noise_free, ws)
        .ok_or(FitError::NotPositiveDefinite)?;
    let prior_grad = log_prior_gradient(&params, minimum_noise, noise_free);
    let loss = -mll - log_prior(&params);
    let grad = mll_grad
        .iter()
        .zip(&prior_grad)
        .map(|(a, b)| -a - b)
        .collect();
    Ok((loss, grad))
}

/// Fits the kernel parameters by maximum a posteriori from `start` (Optuna's
/// `_fit_kernel_params`): L-BFGS on the logs of the parameters, the noise above
/// `minimum_noise` (fixed at it with `noise_free`).
pub(crate) fn fit_from(
    data: &TrainingData,
    start: &KernelParams,
    minimum_noise: f64,
    noise_free: bool,
    gtol: f64,
) -> Result<KernelParams, FitError> {
    let mut raw: Vec<f64> = start
        .inverse_squared_lengthscales
        .iter()
        .map(|w| w.ln())
        .collect();
    raw.push(start.kernel_scale.ln());
    // A hundredth of the minimum stays in the raw noise, away from log(0).
    raw.push((start.noise_var - 0.99 * minimum_noise).ln());
    let settings = LbfgsSettings {
        pgtol: gtol,
        ..Default::default()
    };
    let mut ws = Workspace::default();
    let result = minimize(
        |raw| fit_loss_with(data, raw, minimum_noise, noise_free, &mut ws),
        &raw,
        None,
        settings,
    )?;
    if !result.converged {
        return Err(FitError::NotConverged);
    }
    Ok(params_from_raw(
        &result.x,
        data.dim,
        minimum_noise,
        noise_free,
    ))
}

/// Optuna's `fit_kernel_params`: from the cached parameters, then from the defaults, then
/// the defaults unfitted.
pub(crate) fn fit_kernel_params(
    data: TrainingData,
    cache: Option<&KernelParams>,
    minimum_noise: f64,
    noise_free: bool,
) -> GpRegressor {
    let default = KernelParams::default_for(data.dim);
    let starts = [cache.unwrap_or(&default), &default];
    for start in starts {
        if let Ok(params) = fit_from(&data, start, minimum_noise, noise_free, FIT_GTOL) {
            if let Some(gp) = GpRegressor::new(data.clone(), params) {
                return gp;
            }
        }
    }
    log::warn!("fitting the GP's kernel parameters failed; using the default parameters");
    match GpRegressor::new(data.clone(), default.clone()) {
        Some(gp) => gp,
        // Unreachable in practice: K + I is positive definite. Keep going with more noise.
        None => GpRegressor::new(
            data,
            KernelParams {
                noise_var: 1e3,
                ..default
            },
        )
        .expect("a diagonally dominant covariance"),
    }
}

/// A fitted GP with its factorised covariance.
#[derive(Debug, Clone)]
pub(crate) struct GpRegressor {
    pub data: TrainingData,
    pub params: KernelParams,
    /// Cholesky factor of `K + σ² I`.
    pub chol: Cholesky,
    /// `(K + σ² I)⁻¹ y`.
    pub alpha: Vec<f64>,
}

/// The posterior at one point and its gradient with respect to the point.
#[derive(Debug, Clone)]
pub(crate) struct PosteriorWithGradient {
    pub mean: f64,
    pub var: f64,
    pub dmean: Vec<f64>,
    pub dvar: Vec<f64>,
}

impl GpRegressor {
    pub(crate) fn new(data: TrainingData, params: KernelParams) -> Option<Self> {
        let n = data.n;
        let mut c = data.kernel_matrix(&params);
        for i in 0..n {
            c[i * n + i] += params.noise_var;
        }
        let chol = Cholesky::new(&c, n)?;
        let alpha = chol.solve(&data.y);
        Some(Self {
            data,
            params,
            chol,
            alpha,
        })
    }

    /// `k(a, b)`.
    pub(crate) fn kernel(&self, a: &[f64], b: &[f64]) -> f64 {
        self.params.kernel_scale * matern52(self.scaled_d2(a, b))
    }

    #[inline]
    fn scaled_d2(&self, a: &[f64], b: &[f64]) -> f64 {
        let w = &self.params.inverse_squared_lengthscales;
        let cat = &self.data.is_categorical;
        a.iter()
            .zip(b)
            .zip(w.iter().zip(cat))
            .map(|((a, b), (w, cat))| w * coordinate_sqd(*a, *b, *cat))
            .sum()
    }

    /// `∂k(x, b)/∂x` on numerical coordinates (0 on categorical ones).
    pub(crate) fn kernel_gradient(&self, x: &[f64], b: &[f64], out: &mut [f64]) {
        let w = &self.params.inverse_squared_lengthscales;
        let cat = &self.data.is_categorical;
        let dk = self.params.kernel_scale * matern52_derivative(self.scaled_d2(x, b));
        for d in 0..x.len() {
            out[d] = if cat[d] {
                0.0
            } else {
                dk * w[d] * 2.0 * (x[d] - b[d])
            };
        }
    }

    /// `k(x, X_train)`.
    pub(crate) fn kernel_row(&self, x: &[f64]) -> Vec<f64> {
        (0..self.data.n)
            .map(|i| self.kernel(x, self.data.row(i)))
            .collect()
    }

    /// Posterior mean and variance (clamped at 0) at `x`.
    pub(crate) fn posterior(&self, x: &[f64]) -> (f64, f64) {
        let k = self.kernel_row(x);
        let mean = dot(&k, &self.alpha);
        let v = self.chol.solve_lower(&k);
        let var = self.params.kernel_scale - dot(&v, &v);
        (mean, var.max(0.0))
    }

    /// [`Self::posterior`] at each of `points` (the same operations, several points at a
    /// time so that each row of `L⁻¹` is loaded once for all of them).
    pub(crate) fn posteriors(&self, points: &[Vec<f64>]) -> Vec<(f64, f64)> {
        vectorized(
            #[inline(always)]
            || self.posteriors_inlined(points),
        )
    }

    /// The body of [`Self::posteriors`], inlined into its vectorised caller.
    #[inline(always)]
    fn posteriors_inlined(&self, points: &[Vec<f64>]) -> Vec<(f64, f64)> {
        const R: usize = 8;
        let n = self.data.n;
        let scale = self.params.kernel_scale;
        let mut out = Vec::with_capacity(points.len());
        let mut k = vec![[0.0; R]; n];
        let mut v = Vec::with_capacity(n);
        let dim = self.data.dim;
        let w = &self.params.inverse_squared_lengthscales;
        let cat = &self.data.is_categorical;
        // The candidates side by side: `xt[d][c]` is coordinate d of candidate c.
        let mut xt = vec![[0.0; R]; dim];
        let mut chunks = points.chunks_exact(R);
        for chunk in &mut chunks {
            for (d, xt) in xt.iter_mut().enumerate() {
                for c in 0..R {
                    xt[c] = chunk[c][d];
                }
            }
            for (i, row) in self.data.x.chunks_exact(dim).enumerate() {
                // `scaled_d2` and `matern52` of each candidate, the same operations.
                let mut d2 = [0.0; R];
                for (((xt, b), w), cat) in xt.iter().zip(row).zip(w).zip(cat) {
                    if *cat {
                        for c in 0..R {
                            d2[c] += w * coordinate_sqd(xt[c], *b, true);
                        }
                    } else {
                        for c in 0..R {
                            d2[c] += w * ((xt[c] - b) * (xt[c] - b));
                        }
                    }
                }
                k[i] = d2;
            }
            // The kernel of every distance in one flat loop, which runs in vector registers.
            for d2 in k.as_flattened_mut() {
                let s = (5.0 * *d2).sqrt();
                let e = exp_nonpositive(-s);
                *d2 = scale * (e * ((5.0 / 3.0) * *d2 + s + 1.0));
            }
            let means = dot_lanes(&self.alpha, &k);
            self.chol.solve_lower_lanes(&k, &mut v);
            let reductions = squared_norm_lanes(&v);
            for (mean, reduction) in means.into_iter().zip(reductions) {
                let var = scale - reduction;
                out.push((mean, var.max(0.0)));
            }
        }
        out.extend(chunks.remainder().iter().map(|x| self.posterior(x)));
        out
    }

    /// Posterior mean and variance at `x` with their gradients.
    pub(crate) fn posterior_with_gradient(&self, x: &[f64]) -> PosteriorWithGradient {
        vectorized(
            #[inline(always)]
            || self.posterior_with_gradient_inlined(x),
        )
    }

    /// The body of [`Self::posterior_with_gradient`], inlined into its vectorised caller.
    #[inline(always)]
    fn posterior_with_gradient_inlined(&self, x: &[f64]) -> PosteriorWithGradient {
        let (n, dim) = (self.data.n, self.data.dim);
        let w = &self.params.inverse_squared_lengthscales;
        let cat = &self.data.is_categorical;
        let mut dk_dd2 = vec![0.0; n];
        let (mean, c_inv_k, raw_var) = self.mean_and_variance::<true>(x, &mut dk_dd2);
        let mut dmean = vec![0.0; dim];
        let mut dvar = vec![0.0; dim];
        for i in 0..n {
            let b = self.data.row(i);
            let dk = dk_dd2[i];
            let (a, c) = (self.alpha[i], 2.0 * c_inv_k[i]);
            for d in 0..dim {
                let g = if cat[d] {
                    0.0
                } else {
                    dk * w[d] * 2.0 * (x[d] - b[d])
                };
                dmean[d] += a * g;
                dvar[d] -= c * g;
            }
        }
        if raw_var <= 0.0 {
            dvar.iter_mut().for_each(|v| *v = 0.0);
        }
        PosteriorWithGradient {
            mean,
            var: raw_var.max(0.0),
            dmean,
            dvar,
        }
    }

    /// The mean and variance of [`Self::posterior_with_gradient`] without the gradients (the
    /// same operations, so the same values bit for bit; [`Self::posterior`] computes the
    /// variance another way).
    pub(crate) fn posterior_like_gradient(&self, x: &[f64]) -> (f64, f64) {
        vectorized(
            #[inline(always)]
            || {
                let (mean, _, raw_var) = self.mean_and_variance::<false>(x, &mut []);
                (mean, raw_var.max(0.0))
            },
        )
    }

    /// The first half of [`Self::posterior_with_gradient`] and
    /// [`Self::posterior_like_gradient`]: k(x, X) with one exponential per training point (the
    /// same values as `kernel`), with `DERIVATIVE` also ∂k/∂d2 into `dk_dd2` (`n` long; the
    /// same values as `kernel_gradient`); then the mean, C⁻¹k and the unclamped variance.
    #[inline(always)]
    fn mean_and_variance<const DERIVATIVE: bool>(
        &self,
        x: &[f64],
        dk_dd2: &mut [f64],
    ) -> (f64, Vec<f64>, f64) {
        let n = self.data.n;
        let scale = self.params.kernel_scale;
        let mut k = Vec::with_capacity(n);
        for i in 0..n {
            k.push(self.scaled_d2(x, self.data.row(i)));
        }
        // The distances first, then the kernel: a loop without calls, in vector registers.
        if DERIVATIVE {
            for (k, dk_dd2) in k.iter_mut().zip(dk_dd2.iter_mut()) {
                let d2 = *k;
                let s = (5.0 * d2).sqrt();
                let e = exp_nonpositive(-s);
                *k = scale * (e * ((5.0 / 3.0) * d2 + s + 1.0));
                *dk_dd2 = scale * ((-5.0 / 6.0) * (s + 1.0) * e);
            }
        } else {
            for k in &mut k {
                let d2 = *k;
                let s = (5.0 * d2).sqrt();
                let e = exp_nonpositive(-s);
                *k = scale * (e * ((5.0 / 3.0) * d2 + s + 1.0));
            }
        }
        let mean = dot(&k, &self.alpha);
        let c_inv_k = self.chol.solve(&k);
        let raw_var =
            self.params.kernel_scale - k.iter().zip(&c_inv_k).map(|(a, b)| a * b).sum::<f64>();
        (mean, c_inv_k, raw_var)
    }

    /// The joint posterior at several points: means and the covariance (diagonal clamped at
    /// 0), row-major.
    pub(crate) fn joint_posterior(&self, points: &[Vec<f64>]) -> (Vec<f64>, Vec<f64>) {
        let r = points.len();
        let rows: Vec<Vec<f64>> = points.iter().map(|p| self.kernel_row(p)).collect();
        let means = rows
            .iter()
            .map(|k| k.iter().zip(&self.alpha).map(|(a, b)| a * b).sum())
            .collect();
        let solved: Vec<Vec<f64>> = rows.iter().map(|k| self.chol.solve_lower(k)).collect();
        let mut cov = vec![0.0; r * r];
        for a in 0..r {
            for b in 0..r {
                let prior = self.kernel(&points[a], &points[b]);
                let reduction: f64 = solved[a].iter().zip(&solved[b]).map(|(x, y)| x * y).sum();
                cov[a * r + b] = prior - reduction;
            }
            cov[a * r + a] = cov[a * r + a].max(0.0);
        }
        (means, cov)
    }
}
