//! The acquisition of multi-objective studies: log expected hypervolume improvement
//! (Optuna 5.0's `LogEHVI`, `qLogEHVI`, `LogCEHVI` and `qLogCEHVI`), with its gradient.
//!
//! Each objective has a GP of its own. The improvement of a point is the volume of the boxes
//! of the not yet dominated region ([`Boxes`]) that the point dominates; its expectation is
//! estimated over fixed quasi-random normal samples of the objectives' posteriors, so the
//! acquisition is a deterministic, differentiable function of the point.
//!
//! - Without RUNNING trials (`LogEHVI`): one box decomposition of the completed values.
//! - With RUNNING trials (`qLogEHVI`): the objectives' GPs draw fantasies at the RUNNING
//!   points ([`Fantasies`]); each sample has the box decomposition of the completed values
//!   together with that sample's fantasies, and the candidate's value in the sample is
//!   conditioned on them. A candidate near a RUNNING point improves little on it.
//! - With constraints (`LogCEHVI`): only feasible trials make the decomposition, and each
//!   constraint's log probability of feasibility is added (while no trial is feasible, only
//!   those). With RUNNING trials as well (`qLogCEHVI`), each constraint's GP draws fantasies
//!   too, only fantasies feasible for every constraint join a sample's decomposition, and a
//!   sample's utility adds each constraint's smoothed log feasibility `log σ((y − t) / τ)` of
//!   the candidate.

use crate::samplers::gp::acquisition::{
    log_pi, log_sigmoid, normal_sobol, Fantasies, FEASIBILITY_TEMPERATURE, STABILIZING_NOISE,
};
use crate::samplers::gp::boxes::{non_dominated_boxes, reference_point, Boxes};
use crate::samplers::gp::linalg::vectorized;
use crate::samplers::gp::optimize::AcquisitionFn;
use crate::samplers::gp::regressor::GpRegressor;

/// A box side shorter than this counts as this (Optuna's `_EPS`): the log stays finite and
/// the gradient defined where a sample improves nothing.
const EPS: f64 = 1e-12;

#[derive(Debug, Clone)]
enum Hvi {
    /// `LogEHVI`: one decomposition, `n_samples × m` fixed standard normals.
    Plain {
        boxes: PackedBoxes,
        normals: Vec<f64>,
    },
    /// `qLogEHVI`: per objective, fantasies at the RUNNING points; per sample, its
    /// decomposition.
    Batch {
        fantasies: Vec<Fantasies>,
        boxes: Vec<PackedBoxes>,
    },
}

/// Log expected hypervolume improvement (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct LogEhvi {
    gps: Vec<GpRegressor>,
    n_samples: usize,
    /// `None` while no trial is feasible: only the constraints count.
    hvi: Option<Hvi>,
    /// One GP per constraint with its standardised threshold (feasible above it).
    constraints: Vec<(GpRegressor, f64)>,
    /// With RUNNING trials and an improvement term: each constraint's fantasies.
    constraint_fantasies: Vec<Fantasies>,
    /// The mean over objectives of each parameter's lengthscale (as Optuna).
    lengthscales: Vec<f64>,
}

/// Boxes laid out for [`box_sum`]: per objective, the boxes' lower bounds and their widths
/// floored at `EPS` (Optuna's `clamp_min_(_EPS)` of the intervals).
#[derive(Debug, Clone)]
pub(crate) struct PackedBoxes {
    lower: Vec<Vec<f64>>,
    width: Vec<Vec<f64>>,
}

impl PackedBoxes {
    pub(crate) fn new(boxes: &Boxes) -> Self {
        let (m, n) = (boxes.m, boxes.count());
        let column = |v: &[f64], j: usize, floor: bool| -> Vec<f64> {
            (0..n)
                .map(|b| {
                    let x = v[b * m + j];
                    if floor {
                        x.max(EPS)
                    } else {
                        x
                    }
                })
                .collect()
        };
        Self {
            lower: (0..m).map(|j| column(&boxes.lower, j, false)).collect(),
            width: (0..m).map(|j| column(&boxes.width, j, true)).collect(),
        }
    }

    fn count(&self) -> usize {
        self.lower[0].len()
    }
}

/// `clamp(d, EPS, width)` for `width >= EPS`.
#[inline(always)]
fn side(d: f64, width: f64) -> f64 {
    let low = if d < EPS { EPS } else { d };
    if low > width {
        width
    } else {
        low
    }
}

/// `Σ_b Π_j clamp(y_j − lower_bj, EPS, width_bj)`: the improvement of `y` over the boxes,
/// each side floored at `EPS`.
#[inline(always)]
fn box_sum(boxes: &PackedBoxes, y: &[f64]) -> f64 {
    let n = boxes.count();
    let mut total = 0.0;
    if let ([l0, l1], [w0, w1], [y0, y1]) = (&boxes.lower[..], &boxes.width[..], y) {
        // Four running sums, which the compiler turns into vector instructions.
        let (l0, l1, w0, w1) = (&l0[..n], &l1[..n], &w0[..n], &w1[..n]);
        let mut acc = [0.0; 4];
        let full = n - n % 4;
        for b in (0..full).step_by(4) {
            for k in 0..4 {
                acc[k] += side(y0 - l0[b + k], w0[b + k]) * side(y1 - l1[b + k], w1[b + k]);
            }
        }
        for b in full..n {
            total += side(y0 - l0[b], w0[b]) * side(y1 - l1[b], w1[b]);
        }
        return (acc[0] + acc[1]) + (acc[2] + acc[3]) + total;
    }
    for b in 0..n {
        let mut product = 1.0;
        for (j, yj) in y.iter().enumerate() {
            product *= side(yj - boxes.lower[j][b], boxes.width[j][b]);
        }
        total += product;
    }
    total
}

/// [`box_sum`] of each sample (`m` values each, in a row of `samples`) over its boxes, with
/// the widest vector instructions the CPU has.
fn box_sums<'a>(
    boxes: impl Iterator<Item = &'a PackedBoxes>,
    samples: &[f64],
    m: usize,
) -> Vec<f64> {
    let boxes: Vec<&PackedBoxes> = boxes.collect();
    vectorized(
        #[inline(always)]
        || {
            let mut sums = vec![0.0; boxes.len()];
            for (s, sum) in sums.iter_mut().enumerate() {
                *sum = box_sum(boxes[s], &samples[s * m..(s + 1) * m]);
            }
            sums
        },
    )
}

/// The derivative of `ln box_sum(boxes, y)` in `y`, times `weight`, added to `out` (0 along
/// a side that is clamped).
fn add_log_box_sum_gradient(
    boxes: &PackedBoxes,
    y: &[f64],
    sum: f64,
    weight: f64,
    out: &mut [f64],
) {
    if weight == 0.0 || sum <= 0.0 || !sum.is_finite() {
        return;
    }
    let scale = weight / sum;
    for b in 0..boxes.count() {
        let mut product = 1.0;
        for (j, yj) in y.iter().enumerate() {
            product *= side(yj - boxes.lower[j][b], boxes.width[j][b]);
        }
        if product == 0.0 {
            continue;
        }
        for (j, yj) in y.iter().enumerate() {
            let raw = yj - boxes.lower[j][b];
            let width = boxes.width[j][b];
            if raw > EPS && raw < width {
                out[j] += scale * product / raw;
            }
        }
    }
}

/// `ln mean_s exp(u_s)` and the softmax weights `∂/∂u_s`.
fn log_mean_exp(u: &[f64]) -> (f64, Vec<f64>) {
    let top = u.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if top == f64::NEG_INFINITY {
        return (f64::NEG_INFINITY, vec![0.0; u.len()]);
    }
    let exps: Vec<f64> = u.iter().map(|v| (v - top).exp()).collect();
    let sum: f64 = exps.iter().sum();
    let value = top + sum.ln() - (u.len() as f64).ln();
    (value, exps.into_iter().map(|e| e / sum).collect())
}

/// [`box_sum`], for the tests.
#[cfg(test)]
pub(crate) fn box_sum_for_tests(boxes: &Boxes, y: &[f64]) -> f64 {
    box_sum(&PackedBoxes::new(boxes), y)
}

/// [`log_mean_exp`], for the tests.
#[cfg(test)]
pub(crate) fn log_mean_exp_for_tests(u: &[f64]) -> (f64, Vec<f64>) {
    log_mean_exp(u)
}

impl LogEhvi {
    /// The acquisition of objectives `gps` (values standardised, maximised).
    ///
    /// `feasible_y`: the completed (feasible) trials' values, one row per trial; `None` when
    /// no trial is feasible. `running`: the RUNNING trials' normalised points.
    /// `constraints`: each constraint's GP and threshold. `seed`: the quasi-random seed
    /// (objective i's fantasies use `seed + i`, constraint c's `seed + m + c`, as Optuna).
    pub(crate) fn new(
        gps: Vec<GpRegressor>,
        feasible_y: Option<Vec<Vec<f64>>>,
        running: Vec<Vec<f64>>,
        constraints: Vec<(GpRegressor, f64)>,
        n_samples: usize,
        seed: u32,
    ) -> Self {
        let m = gps.len();
        let dim = gps[0].data.dim;
        let mut lengthscales = vec![0.0; dim];
        for gp in &gps {
            for (acc, l) in lengthscales.iter_mut().zip(gp.params.lengthscales()) {
                *acc += l / m as f64;
            }
        }
        let mut constraint_fantasies = Vec::new();
        let hvi = feasible_y.filter(|y| !y.is_empty()).map(|y| {
            let reference = reference_point(&y);
            if running.is_empty() {
                return Hvi::Plain {
                    boxes: PackedBoxes::new(&non_dominated_boxes(&y, &reference)),
                    normals: normal_sobol(m, n_samples, seed),
                };
            }
            let fantasies: Vec<Fantasies> = gps
                .iter()
                .enumerate()
                .map(|(i, gp)| {
                    Fantasies::new(gp, running.clone(), n_samples, seed.wrapping_add(i as u32))
                })
                .collect();
            constraint_fantasies = constraints
                .iter()
                .enumerate()
                .map(|(c, (gp, _))| {
                    let seed = seed.wrapping_add((m + c) as u32);
                    Fantasies::new(gp, running.clone(), n_samples, seed)
                })
                .collect();
            let boxes = (0..n_samples)
                .map(|s| {
                    let mut points = y.clone();
                    for a in 0..running.len() {
                        let feasible = constraint_fantasies
                            .iter()
                            .zip(&constraints)
                            .all(|(cf, (_, t))| cf.value(a, s) >= *t);
                        if feasible {
                            points.push(fantasies.iter().map(|f| f.value(a, s)).collect());
                        }
                    }
                    PackedBoxes::new(&non_dominated_boxes(&points, &reference))
                })
                .collect();
            Hvi::Batch { fantasies, boxes }
        });
        Self {
            gps,
            n_samples,
            hvi,
            constraints,
            constraint_fantasies,
            lengthscales,
        }
    }

    /// The marginal log probability of feasibility of every constraint at `x` (`LogPI`),
    /// its gradient added to `grad` when given.
    fn marginal_constraints(&self, x: &[f64], grad: Option<&mut [f64]>) -> f64 {
        let mut total = 0.0;
        match grad {
            Some(grad) => {
                for (gp, t) in &self.constraints {
                    let p = gp.posterior_with_gradient(x);
                    let (value, dmean, dvar) = log_pi(p.mean, p.var, *t);
                    total += value;
                    for d in 0..x.len() {
                        grad[d] += dmean * p.dmean[d] + dvar * p.dvar[d];
                    }
                }
            }
            None => {
                for (gp, t) in &self.constraints {
                    let (mean, var) = gp.posterior_like_gradient(x);
                    total += log_pi(mean, var, *t).0;
                }
            }
        }
        total
    }

    fn evaluate(&self, x: &[f64], want_gradient: bool) -> (f64, Vec<f64>) {
        let dim = x.len();
        let mut grad = vec![0.0; dim];
        let m = self.gps.len();
        let s_count = self.n_samples;
        match &self.hvi {
            None => {
                let g = want_gradient.then_some(grad.as_mut_slice());
                let value = self.marginal_constraints(x, g);
                (value, grad)
            }
            Some(Hvi::Plain { boxes, normals }) => {
                let mut means = vec![0.0; m];
                let mut sds = vec![0.0; m];
                let mut dmeans = Vec::new();
                let mut dsds = Vec::new();
                for (i, gp) in self.gps.iter().enumerate() {
                    if want_gradient {
                        let p = gp.posterior_with_gradient(x);
                        means[i] = p.mean;
                        sds[i] = (p.var + STABILIZING_NOISE).sqrt();
                        dmeans.push(p.dmean);
                        dsds.push(
                            p.dvar
                                .iter()
                                .map(|v| v / (2.0 * sds[i]))
                                .collect::<Vec<_>>(),
                        );
                    } else {
                        let (mean, var) = gp.posterior_like_gradient(x);
                        means[i] = mean;
                        sds[i] = (var + STABILIZING_NOISE).sqrt();
                    }
                }
                let samples: Vec<f64> = (0..s_count * m)
                    .map(|k| means[k % m] + sds[k % m] * normals[k])
                    .collect();
                let sums = box_sums((0..s_count).map(|_| boxes), &samples, m);
                let u: Vec<f64> = sums.iter().map(|v| v.ln()).collect();
                let (mut value, weights) = log_mean_exp(&u);
                if want_gradient {
                    for s in 0..s_count {
                        let mut dy = vec![0.0; m];
                        let y = &samples[s * m..(s + 1) * m];
                        add_log_box_sum_gradient(boxes, y, sums[s], weights[s], &mut dy);
                        for i in 0..m {
                            if dy[i] == 0.0 {
                                continue;
                            }
                            for d in 0..dim {
                                grad[d] += dy[i] * (dmeans[i][d] + normals[s * m + i] * dsds[i][d]);
                            }
                        }
                    }
                }
                let g = want_gradient.then_some(grad.as_mut_slice());
                value += self.marginal_constraints(x, g);
                (value, grad)
            }
            Some(Hvi::Batch { fantasies, boxes }) => {
                let (objective_y, objective_samples) = if want_gradient {
                    let c: Vec<_> = fantasies
                        .iter()
                        .zip(&self.gps)
                        .map(|(f, gp)| f.candidate(gp, x))
                        .collect();
                    (c.iter().map(|c| c.y.clone()).collect::<Vec<_>>(), Some(c))
                } else {
                    let y: Vec<Vec<f64>> = fantasies
                        .iter()
                        .zip(&self.gps)
                        .map(|(f, gp)| f.candidate_values(gp, x))
                        .collect();
                    (y, None)
                };
                let (constraint_y, constraint_samples) = if want_gradient {
                    let c: Vec<_> = self
                        .constraint_fantasies
                        .iter()
                        .zip(&self.constraints)
                        .map(|(f, (gp, _))| f.candidate(gp, x))
                        .collect();
                    (c.iter().map(|c| c.y.clone()).collect::<Vec<_>>(), Some(c))
                } else {
                    let y: Vec<Vec<f64>> = self
                        .constraint_fantasies
                        .iter()
                        .zip(&self.constraints)
                        .map(|(f, (gp, _))| f.candidate_values(gp, x))
                        .collect();
                    (y, None)
                };
                let samples: Vec<f64> = (0..s_count * m)
                    .map(|k| objective_y[k % m][k / m])
                    .collect();
                let sums = box_sums(boxes.iter(), &samples, m);
                let u: Vec<f64> = (0..s_count)
                    .map(|s| {
                        let mut u = sums[s].ln();
                        for (y, (_, t)) in constraint_y.iter().zip(&self.constraints) {
                            u += log_sigmoid((y[s] - t) / FEASIBILITY_TEMPERATURE);
                        }
                        u
                    })
                    .collect();
                let (value, softmax) = log_mean_exp(&u);
                if let (Some(objective), Some(constraint)) = (objective_samples, constraint_samples)
                {
                    let mut weights = vec![vec![0.0; s_count]; m];
                    for s in 0..s_count {
                        let mut dy = vec![0.0; m];
                        add_log_box_sum_gradient(
                            &boxes[s],
                            &samples[s * m..(s + 1) * m],
                            sums[s],
                            softmax[s],
                            &mut dy,
                        );
                        for i in 0..m {
                            weights[i][s] = dy[i];
                        }
                    }
                    for ((o, f), w) in objective.iter().zip(fantasies).zip(&weights) {
                        o.add_gradient(f, w, &mut grad);
                    }
                    for ((c, cf), (_, t)) in constraint
                        .iter()
                        .zip(&self.constraint_fantasies)
                        .zip(&self.constraints)
                    {
                        c.add_gradient(cf, &c.feasibility_weights(*t, &softmax), &mut grad);
                    }
                }
                (value, grad)
            }
        }
    }
}

impl AcquisitionFn for LogEhvi {
    fn value(&self, x: &[f64]) -> f64 {
        self.evaluate(x, false).0
    }

    fn value_and_gradient(&self, x: &[f64]) -> (f64, Vec<f64>) {
        self.evaluate(x, true)
    }

    fn lengthscales(&self) -> Vec<f64> {
        self.lengthscales.clone()
    }
}
