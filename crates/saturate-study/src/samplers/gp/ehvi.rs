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
    log_pi, log_sigmoid, normal_sobol, sigmoid, Fantasies, FEASIBILITY_TEMPERATURE,
    STABILIZING_NOISE,
};
use crate::samplers::gp::boxes::{non_dominated_boxes, reference_point, Boxes};
use crate::samplers::gp::optimize::AcquisitionFn;
use crate::samplers::gp::regressor::GpRegressor;

/// A box side shorter than this counts as this (Optuna's `_EPS`): the log stays finite and
/// the gradient defined where a sample improves nothing.
const EPS: f64 = 1e-12;

#[derive(Debug, Clone)]
enum Hvi {
    /// `LogEHVI`: one decomposition, `n_samples × m` fixed standard normals.
    Plain { boxes: Boxes, normals: Vec<f64> },
    /// `qLogEHVI`: per objective, fantasies at the RUNNING points; per sample, its
    /// decomposition.
    Batch {
        fantasies: Vec<Fantasies>,
        boxes: Vec<Boxes>,
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

/// `Σ_b Π_j clamp(y_j − lower_bj, EPS, width_bj)`, and, when `grad` is given, its
/// derivative in each `y_j` added to `grad[j]` times `weight / sum` (the derivative of
/// `weight · ln sum`).
fn box_sum(boxes: &Boxes, y: &[f64]) -> f64 {
    let m = boxes.m;
    let mut total = 0.0;
    for b in 0..boxes.count() {
        let mut product = 1.0;
        for j in 0..m {
            let k = b * m + j;
            product *= (y[j] - boxes.lower[k]).clamp(EPS, boxes.width[k].max(EPS));
        }
        total += product;
    }
    total
}

/// The derivative of `ln box_sum(boxes, y)` in `y`, times `weight`, added to `out`.
fn add_log_box_sum_gradient(boxes: &Boxes, y: &[f64], sum: f64, weight: f64, out: &mut [f64]) {
    if weight == 0.0 || sum <= 0.0 || !sum.is_finite() {
        return;
    }
    let m = boxes.m;
    for b in 0..boxes.count() {
        let mut product = 1.0;
        let mut clamped = vec![false; m];
        let mut sides = vec![0.0; m];
        for j in 0..m {
            let k = b * m + j;
            let raw = y[j] - boxes.lower[k];
            let width = boxes.width[k].max(EPS);
            sides[j] = raw.clamp(EPS, width);
            clamped[j] = raw <= EPS || raw >= width;
            product *= sides[j];
        }
        if product == 0.0 {
            continue;
        }
        for j in 0..m {
            if !clamped[j] {
                out[j] += weight * product / sum / sides[j];
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
    box_sum(boxes, y)
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
                    boxes: non_dominated_boxes(&y, &reference),
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
                    non_dominated_boxes(&points, &reference)
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
                let samples: Vec<Vec<f64>> = (0..s_count)
                    .map(|s| {
                        (0..m)
                            .map(|i| means[i] + sds[i] * normals[s * m + i])
                            .collect()
                    })
                    .collect();
                let sums: Vec<f64> = samples.iter().map(|y| box_sum(boxes, y)).collect();
                let u: Vec<f64> = sums.iter().map(|v| v.ln()).collect();
                let (mut value, weights) = log_mean_exp(&u);
                if want_gradient {
                    for s in 0..s_count {
                        let mut dy = vec![0.0; m];
                        add_log_box_sum_gradient(boxes, &samples[s], sums[s], weights[s], &mut dy);
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
                let samples: Vec<Vec<f64>> = (0..s_count)
                    .map(|s| (0..m).map(|i| objective_y[i][s]).collect())
                    .collect();
                let sums: Vec<f64> = (0..s_count)
                    .map(|s| box_sum(&boxes[s], &samples[s]))
                    .collect();
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
                            &samples[s],
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
                        let w: Vec<f64> = (0..s_count)
                            .map(|s| {
                                let z = (c.y[s] - t) / FEASIBILITY_TEMPERATURE;
                                softmax[s] * sigmoid(-z) / FEASIBILITY_TEMPERATURE
                            })
                            .collect();
                        c.add_gradient(cf, &w, &mut grad);
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
