//! The GP's numbers against Optuna 5.0's own functions.
//!
//! The golden values come from this script, run with optuna 5.0.0 and torch 2.15 (the
//! venv of `scripts/bench-gp.sh`):
//!
//! ```python
//! import numpy as np, torch
//! from optuna._gp import gp as gpm, prior, acqf
//! X = np.array([[0.1, 0.0], [0.4, 1.0], [0.8, 2.0], [0.55, 1.0], [0.9, 0.0]])
//! Y = np.array([-0.5, 1.2, 0.3, 0.9, -1.1])
//! is_cat = np.array([False, True])
//! g = gpm.GPRegressor(torch.from_numpy(is_cat), torch.from_numpy(X), torch.from_numpy(Y),
//!     torch.tensor([2.0, 0.5], dtype=torch.float64), torch.tensor(1.3, dtype=torch.float64),
//!     torch.tensor(0.01, dtype=torch.float64))
//! print("K", g.kernel().numpy().ravel().tolist())
//! raw = torch.tensor(np.log([2.0, 0.5, 1.3, 0.01 - 0.99e-6]), requires_grad=True)
//! g.inverse_squared_lengthscales = torch.exp(raw[:2]); g.kernel_scale = torch.exp(raw[2])
//! g.noise_var = torch.exp(raw[3]) + 1e-6
//! mll = g.marginal_log_likelihood()
//! loss = -mll - prior.default_log_prior(g)
//! loss.backward()
//! print("mll", mll.item(), "loss", loss.item(), "grad", raw.grad.numpy().tolist())
//! for m, v, f0 in [(0.3, 0.2, 0.1), (-1.0, 0.01, 0.5), (-3.0, 0.01, 0.5), (0.0, 1e-4, 2.0)]:
//!     mt = torch.tensor(m, dtype=torch.float64, requires_grad=True)
//!     vt = torch.tensor(v, dtype=torch.float64, requires_grad=True)
//!     out = acqf.logei(mt, vt + 1e-12, f0); out.backward()
//!     print("logei", m, v, f0, out.item(), mt.grad.item(), vt.grad.item())
//! for fit_gtol in [1e-2, 1e-8]:
//!     r = gpm.fit_kernel_params(X, Y, is_cat, prior.default_log_prior, 1e-6, False, None,
//!                               gtol=fit_gtol)
//!     print("fit", fit_gtol, r.inverse_squared_lengthscales.numpy().tolist(),
//!           r.kernel_scale.item(), r.noise_var.item())
//!     x = torch.tensor([0.3, 2.0], dtype=torch.float64, requires_grad=True)
//!     mean, var = r.posterior(x)
//!     print("posterior", mean.item(), var.item())
//!     a = acqf.LogEI(r, None, threshold=float(Y.max()))
//!     val = a.eval_acqf(x); val.backward()
//!     print("acq", val.item(), x.grad.numpy().tolist())
//! ```

use super::acquisition::{logei, normal_quantile, standard_logei, Acquisition};
use super::optimize::AcquisitionFn;
use super::regressor::{
    exp_nonpositive, fit_from, fit_loss, GpRegressor, KernelParams, TrainingData, FIT_GTOL,
    MINIMUM_NOISE_VAR,
};

fn data() -> TrainingData {
    TrainingData::new(
        vec![
            vec![0.1, 0.0],
            vec![0.4, 1.0],
            vec![0.8, 2.0],
            vec![0.55, 1.0],
            vec![0.9, 0.0],
        ],
        vec![-0.5, 1.2, 0.3, 0.9, -1.1],
        vec![false, true],
    )
}

fn params() -> KernelParams {
    KernelParams {
        inverse_squared_lengthscales: vec![2.0, 0.5],
        kernel_scale: 1.3,
        noise_var: 0.01,
    }
}

/// Optuna's fit with its default gtol (1e-2) on [`data`].
fn optuna_fit() -> KernelParams {
    KernelParams {
        inverse_squared_lengthscales: vec![1.2098454602784192, 2.632995665940916],
        kernel_scale: 0.9115821835147363,
        noise_var: 0.005588759417938946,
    }
}

fn assert_close(what: &str, got: f64, want: f64, tolerance: f64) {
    let scale = want.abs().max(1.0);
    assert!(
        (got - want).abs() <= tolerance * scale,
        "{what}: got {got}, want {want} (tolerance {tolerance} relative)"
    );
}

#[test]
fn kernel_matrix_matches_optuna() {
    let want = [
        1.3,
        0.8179484563102183,
        0.5296780754874434,
        0.7181418311706455,
        0.5865621641513152,
        0.8179484563102183,
        1.3,
        0.7536646702116513,
        1.2533910442031297,
        0.6811923414813664,
        0.5296780754874434,
        0.7536646702116513,
        1.3,
        0.8454196339450675,
        0.9018487917376201,
        0.7181418311706455,
        1.2533910442031297,
        0.8454196339450675,
        1.3,
        0.7871473675749919,
        0.5865621641513152,
        0.6811923414813664,
        0.9018487917376201,
        0.7871473675749919,
        1.3,
    ];
    let got = data().kernel_matrix(&params());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_close(&format!("K[{i}]"), *g, w, 1e-14);
    }
}

#[test]
fn marginal_likelihood_loss_and_gradient_match_optuna() {
    let data = data();
    // The script's noise is exp(log(0.01 - 0.99e-6)) + 1e-6.
    let at = KernelParams {
        noise_var: 0.01 + 0.01 * MINIMUM_NOISE_VAR,
        ..params()
    };
    let (mll, _) = data
        .marginal_log_likelihood(&at, MINIMUM_NOISE_VAR, false)
        .unwrap();
    assert_close("mll", mll, -1.5062764251604688, 1e-12);
    let raw = [
        2.0f64.ln(),
        0.5f64.ln(),
        1.3f64.ln(),
        (0.01 - 0.99e-6f64).ln(),
    ];
    let (loss, grad) = fit_loss(&data, &raw, MINIMUM_NOISE_VAR, false).unwrap();
    assert_close("loss", loss, 3.8044293792918373, 1e-12);
    let want = [
        0.4223385889882482,
        -1.1561413741581261,
        -0.27100143696437995,
        0.21795719326621302,
    ];
    for (i, (g, w)) in grad.iter().zip(want).enumerate() {
        assert_close(&format!("grad[{i}]"), *g, w, 1e-10);
    }
    // The noise is fixed for a deterministic objective: no gradient along it.
    let (_, grad) = fit_loss(&data, &raw, MINIMUM_NOISE_VAR, true).unwrap();
    assert_eq!(grad[3], 0.0);
}

#[test]
fn log_expected_improvement_matches_optuna() {
    // (mean, var, f0) -> (logEI, d/dmean, d/dvar)
    let cases = [
        (
            (0.3, 0.2, 0.1),
            (-1.2175237339527092, 2.272721686982547, 1.3636391565019086),
        ),
        (
            (-1.0, 0.01, 0.5),
            (-121.15075576570244, 151.31608563403125, 11398.70642141247),
        ),
        (
            (-3.0, 0.01, 0.5),
            (-622.8346617075418, 350.57003705247035, 61399.75647804233),
        ),
    ];
    for ((m, v, f0), (value, dmean, dvar)) in cases {
        let (got, gm, gv) = logei(m, v, f0);
        assert_close(&format!("logei({m}, {v}, {f0})"), got, value, 1e-12);
        assert_close(&format!("dmean({m}, {v}, {f0})"), gm, dmean, 1e-9);
        assert_close(&format!("dvar({m}, {v}, {f0})"), gv, dvar, 1e-9);
    }
    // z = -200: Optuna's value (its gradient is NaN there; ours is checked below).
    assert_close(
        "logei(z=-200)",
        logei(0.0, 1e-4, 2.0).0,
        -20016.12061843072,
        1e-12,
    );
}

#[test]
fn standard_logei_is_smooth_across_the_branch_and_its_derivative_is_right() {
    for z in [-40.0f64, -25.5, -25.0, -24.9, -3.0, 0.0, 2.0] {
        let h = 1e-6 * (1.0f64).max(z.abs());
        let numeric = (standard_logei(z + h).0 - standard_logei(z - h).0) / (2.0 * h);
        assert_close(&format!("d logei({z})"), standard_logei(z).1, numeric, 1e-6);
    }
    let (below, above) = (standard_logei(-25.0 - 1e-9).0, standard_logei(-25.0).0);
    assert_close("branch", below, above, 1e-9);
}

#[test]
fn fit_from_the_defaults_reaches_optunas_optimum() {
    let data = data();
    let start = KernelParams::default_for(2);
    // With a tight tolerance both land on the optimum.
    let tight = fit_from(&data, &start, MINIMUM_NOISE_VAR, false, 1e-8).unwrap();
    let want = KernelParams {
        inverse_squared_lengthscales: vec![1.2092094593115148, 2.649065449818855],
        kernel_scale: 0.9165970448536718,
        noise_var: 0.005267660915465186,
    };
    for d in 0..2 {
        assert_close(
            "lengthscale",
            tight.inverse_squared_lengthscales[d],
            want.inverse_squared_lengthscales[d],
            2e-3,
        );
    }
    assert_close("scale", tight.kernel_scale, want.kernel_scale, 2e-3);
    assert_close("noise", tight.noise_var.ln(), want.noise_var.ln(), 2e-3);
    // With Optuna's tolerance the paths differ, the objective hardly does.
    let loose = fit_from(&data, &start, MINIMUM_NOISE_VAR, false, FIT_GTOL).unwrap();
    let raw = |p: &KernelParams| {
        let mut raw: Vec<f64> = p
            .inverse_squared_lengthscales
            .iter()
            .map(|w| w.ln())
            .collect();
        raw.push(p.kernel_scale.ln());
        raw.push((p.noise_var - MINIMUM_NOISE_VAR).ln());
        raw
    };
    let loss = |p: &KernelParams| {
        fit_loss(&data, &raw(p), MINIMUM_NOISE_VAR, false)
            .unwrap()
            .0
    };
    assert_close(
        "loss at the loose fit",
        loss(&loose),
        loss(&optuna_fit()),
        1e-3,
    );
    assert!(loss(&tight) <= loss(&optuna_fit()) + 1e-9);
}

#[test]
fn posterior_and_acquisition_gradient_match_optuna() {
    let gp = GpRegressor::new(data(), optuna_fit()).unwrap();
    let (mean, var) = gp.posterior(&[0.3, 2.0]);
    assert_close("mean", mean, 0.36155429063142797, 1e-12);
    assert_close("var", var, 0.3192204611719486, 1e-12);
    let acquisition = Acquisition::log_ei(gp, 1.2);
    let (value, grad) = acquisition.value_and_gradient(&[0.3, 2.0]);
    assert_close("acquisition", value, -4.0644652656058655, 1e-12);
    assert_close("d/dx0", grad[0], -6.1901778895299735, 1e-9);
    assert_eq!(grad[1], 0.0, "no gradient along a categorical coordinate");
}

fn numeric_gradient(acquisition: &dyn AcquisitionFn, x: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|d| {
            let h = 1e-6;
            let (mut up, mut down) = (x.to_vec(), x.to_vec());
            up[d] += h;
            down[d] -= h;
            (acquisition.value(&up) - acquisition.value(&down)) / (2.0 * h)
        })
        .collect()
}

#[test]
fn q_log_ei_gradient_matches_finite_differences() {
    let data = TrainingData::new(
        vec![
            vec![0.1, 0.2],
            vec![0.5, 0.9],
            vec![0.8, 0.4],
            vec![0.3, 0.6],
        ],
        vec![0.2, -1.0, 1.1, 0.4],
        vec![false, false],
    );
    let gp = GpRegressor::new(data, optuna_fit()).unwrap();
    let running = vec![vec![0.7, 0.5], vec![0.2, 0.3]];
    let acquisition = Acquisition::q_log_ei(gp, 1.1, running, 128, 7);
    for x in [[0.6, 0.45], [0.35, 0.8], [0.9, 0.1]] {
        let (value, grad) = acquisition.value_and_gradient(&x);
        assert_close("value", value, acquisition.value(&x), 1e-14);
        for (d, (g, n)) in grad
            .iter()
            .zip(numeric_gradient(&acquisition, &x))
            .enumerate()
        {
            assert_close(&format!("d/dx{d} at {x:?}"), *g, n, 1e-5);
        }
    }
}

#[test]
fn q_log_ei_is_low_at_a_running_point() {
    // A candidate on top of a RUNNING trial adds nothing that trial does not already.
    let data = TrainingData::new(
        vec![vec![0.1], vec![0.5], vec![0.9]],
        vec![0.0, 1.0, -1.0],
        vec![false],
    );
    let gp = GpRegressor::new(data.clone(), optuna_fit_1d()).unwrap();
    let plain = Acquisition::log_ei(gp.clone(), 1.0);
    let x = [0.45];
    let q = Acquisition::q_log_ei(gp, 1.0, vec![x.to_vec()], 128, 3);
    let other = [0.2];
    let on_top = q.value(&x) - plain.value(&x);
    let away = q.value(&other) - plain.value(&other);
    assert!(
        on_top < away - 0.5,
        "qLogEI − LogEI on the running point {on_top}, away {away}"
    );
}

fn optuna_fit_1d() -> KernelParams {
    KernelParams {
        inverse_squared_lengthscales: vec![10.0],
        kernel_scale: 1.0,
        noise_var: 1e-4,
    }
}

#[test]
fn normal_quantile_inverts_the_cdf() {
    for p in [1e-9, 1e-4, 0.02, 0.3, 0.5, 0.9, 0.999] {
        let x = normal_quantile(p);
        let back = 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2);
        assert_close(&format!("Φ(Φ⁻¹({p}))"), back / p, 1.0, 1e-12);
    }
}

#[test]
fn log_ndtr_matches_scipy_in_both_branches() {
    // scipy.special.log_ndtr (scipy 1.16, the venv of scripts/bench-gp.sh) at these points.
    let expected = [
        (0.0, -std::f64::consts::LN_2),
        (-1.0, -1.8410216450092634),
        (-5.0, -15.064998393988727),
        (-19.9, -201.91716770733265),
        (-20.1, -205.92711840194826),
        (-30.0, -454.32124395634327),
        (-100.0, -5005.524208694205),
        (3.0, -0.0013508099647481925),
    ];
    for (z, want) in expected {
        let (got, _) = super::acquisition::log_ndtr(z);
        assert!(
            ((got - want) / want).abs() < 1e-12,
            "log_ndtr({z}) = {got}, scipy {want}"
        );
    }
}

#[test]
fn log_pi_gradients_match_finite_differences() {
    for (mean, var, t) in [(0.3, 0.5, 0.1), (-2.0, 0.04, 1.5), (-30.0, 0.2, 0.0)] {
        let (_, dmean, dvar) = super::acquisition::log_pi(mean, var, t);
        let h = 1e-6;
        let f = |m: f64, v: f64| super::acquisition::log_pi(m, v, t).0;
        let fd_mean = (f(mean + h, var) - f(mean - h, var)) / (2.0 * h);
        let fd_var = (f(mean, var + h) - f(mean, var - h)) / (2.0 * h);
        assert!(
            (dmean - fd_mean).abs() < 1e-5 * (1.0 + fd_mean.abs()),
            "{dmean} vs {fd_mean}"
        );
        assert!(
            (dvar - fd_var).abs() < 1e-5 * (1.0 + fd_var.abs()),
            "{dvar} vs {fd_var}"
        );
    }
}

/// The candidate sweep scores several points at a time (`posteriors`, `values`); each point's
/// result must be exactly the one-point path's, for a count that is not a multiple of the
/// batch width, with a categorical coordinate.
#[test]
fn batched_posteriors_and_acquisition_values_equal_the_one_point_path_bit_for_bit() {
    let gp = GpRegressor::new(data(), optuna_fit()).unwrap();
    let points: Vec<Vec<f64>> = (0..11)
        .map(|i| vec![(i as f64 * 0.37).fract(), f64::from(i % 3)])
        .collect();
    let batched = gp.posteriors(&points);
    assert_eq!(batched.len(), points.len());
    for (x, (mean, var)) in points.iter().zip(&batched) {
        let (m, v) = gp.posterior(x);
        assert_eq!(
            (mean.to_bits(), var.to_bits()),
            (m.to_bits(), v.to_bits()),
            "posterior at {x:?}"
        );
    }
    let acquisition = Acquisition::log_ei(gp, 1.2);
    for (x, value) in points.iter().zip(acquisition.values(&points)) {
        assert_eq!(
            value.to_bits(),
            acquisition.value(x).to_bits(),
            "acquisition at {x:?}"
        );
    }
}

/// The kernel's own `exp` against the C library's, in units in the last place of the
/// exact value: within 1 ulp over the range where the result is a normal number (with the
/// C library's own error of up to half an ulp, at most 1.5 between the two), exactly 1 at
/// 0, 0 below −708 and at −∞, NaN for NaN.
#[test]
fn exp_nonpositive_is_within_an_ulp_of_libm() {
    let mut worst: f64 = 0.0;
    let steps = 200_000;
    for i in 0..=steps {
        // Dense near 0 (where the kernel lives), then out to −708.
        let t = f64::from(i) / f64::from(steps);
        for x in [-t * t * 708.0, -t * 0.7, -t * 1e-6] {
            let want = x.exp();
            let ulp = f64::from_bits(want.to_bits() + 1) - want;
            worst = worst.max((exp_nonpositive(x) - want).abs() / ulp);
        }
    }
    assert!(worst <= 1.5, "worst error {worst} ulp");
    assert_eq!(exp_nonpositive(0.0), 1.0);
    assert_eq!(exp_nonpositive(-0.0), 1.0);
    assert_eq!(exp_nonpositive(-708.5), 0.0);
    assert_eq!(exp_nonpositive(f64::NEG_INFINITY), 0.0);
    assert!(exp_nonpositive(f64::NAN).is_nan());
}

/// qLogCEI: two RUNNING points, one constraint GP; with a feasible best (the objective's
/// improvement counts) and without one (only the constraint's smoothed feasibility counts).
#[test]
fn q_log_cei_gradient_matches_finite_differences() {
    let x = vec![
        vec![0.1, 0.2],
        vec![0.5, 0.9],
        vec![0.8, 0.4],
        vec![0.3, 0.6],
    ];
    let objective = TrainingData::new(x.clone(), vec![0.2, -1.0, 1.1, 0.4], vec![false, false]);
    let constraint = TrainingData::new(x, vec![-0.8, 0.3, 1.2, -0.1], vec![false, false]);
    let gp = GpRegressor::new(objective, optuna_fit()).unwrap();
    let constraint_gp = GpRegressor::new(constraint, optuna_fit()).unwrap();
    let running = vec![vec![0.7, 0.5], vec![0.2, 0.3]];
    for threshold in [1.1, f64::NEG_INFINITY] {
        let acquisition = Acquisition::q_log_ei(gp.clone(), threshold, running.clone(), 128, 7)
            .with_constraints(vec![(constraint_gp.clone(), 0.1)]);
        for x in [[0.6, 0.45], [0.35, 0.8], [0.9, 0.1]] {
            let (value, grad) = acquisition.value_and_gradient(&x);
            assert!(value.is_finite(), "value {value} at {x:?}");
            for (d, (g, n)) in grad
                .iter()
                .zip(numeric_gradient(&acquisition, &x))
                .enumerate()
            {
                assert_close(
                    &format!("threshold {threshold}: d/dx{d} at {x:?}"),
                    *g,
                    n,
                    1e-5,
                );
            }
        }
    }
}

/// qLogCEI draws the constraint's fantasies at the RUNNING points: a candidate on top of a
/// RUNNING trial adds nothing that trial does not already (same fantasies), one away from it
/// adds its own chance. With no feasible trial yet (threshold −∞) only the constraint's term
/// counts: at a point as likely feasible as not, the candidate on the running point gains
/// nothing over LogCEI, while a mostly infeasible point gains from the running one's chance.
#[test]
fn q_log_cei_is_low_at_a_running_point() {
    let x_train = vec![vec![0.1], vec![0.5], vec![0.9]];
    let data = TrainingData::new(x_train.clone(), vec![0.0, 1.0, -1.0], vec![false]);
    let constraint = TrainingData::new(x_train, vec![1.0, 0.5, -1.0], vec![false]);
    let gp = GpRegressor::new(data, optuna_fit_1d()).unwrap();
    let constraint_gp = GpRegressor::new(constraint, optuna_fit_1d()).unwrap();
    let x = [0.45];
    // The constraint's threshold at its posterior mean at x: feasible there with chance ½.
    let constraints = vec![(constraint_gp.clone(), constraint_gp.posterior(&x).0)];
    for (threshold, other) in [(1.0, [0.2]), (f64::NEG_INFINITY, [0.8])] {
        let plain =
            Acquisition::log_ei(gp.clone(), threshold).with_constraints(constraints.clone());
        let q = Acquisition::q_log_ei(gp.clone(), threshold, vec![x.to_vec()], 128, 3)
            .with_constraints(constraints.clone());
        let on_top = q.value(&x) - plain.value(&x);
        let away = q.value(&other) - plain.value(&other);
        assert!(
            on_top < away - 0.5,
            "threshold {threshold}: qLogCEI − LogCEI on the running point {on_top}, away {away}"
        );
    }
}

/// `value` (screening, line searches) skips the gradients but must give exactly the value of
/// `value_and_gradient` (the local search's) on every path that has one of its own: qLogEI,
/// qLogCEI and LogCEI, each with a feasible best and with none (threshold −∞), on points with
/// a categorical coordinate.
#[test]
fn acquisition_values_without_gradients_equal_those_with_them_bit_for_bit() {
    let objective = GpRegressor::new(data(), optuna_fit()).unwrap();
    let mut constraint_data = data();
    constraint_data
        .y
        .iter_mut()
        .for_each(|y| *y = (*y * 1.7).sin());
    let constraint = GpRegressor::new(constraint_data, optuna_fit()).unwrap();
    let running = vec![vec![0.7, 1.0], vec![0.2, 0.0], vec![0.45, 2.0]];
    let points: Vec<Vec<f64>> = (0..9)
        .map(|i| vec![(f64::from(i) * 0.37).fract(), f64::from(i % 3)])
        .collect();
    let constraints = vec![(constraint.clone(), 0.1), (constraint, -0.3)];
    for threshold in [1.2, f64::NEG_INFINITY] {
        let q = Acquisition::q_log_ei(objective.clone(), threshold, running.clone(), 128, 5);
        let acquisitions = [
            ("qLogEI", q.clone()),
            ("qLogCEI", q.with_constraints(constraints.clone())),
            (
                "LogCEI",
                Acquisition::log_ei(objective.clone(), threshold)
                    .with_constraints(constraints.clone()),
            ),
        ];
        for (name, acquisition) in &acquisitions {
            let values = acquisition.values(&points);
            for (x, value) in points.iter().zip(values) {
                let (want, _) = acquisition.value_and_gradient(x);
                assert_eq!(
                    value.to_bits(),
                    want.to_bits(),
                    "{name}, threshold {threshold}, at {x:?}: {value} vs {want}"
                );
            }
        }
    }
}

// ---- Multi-objective: box decomposition and log expected hypervolume improvement. ----
//
// Golden values from optuna 5.0.0 (the venv of `scripts/bench-gp.sh`):
//
// ```python
// import torch
// from optuna._gp import acqf
// Y = torch.tensor([[0.5, -1.0], [-0.2, 0.3], [0.1, 0.1], [-1.0, 1.2], [0.9, -1.5],
//                   [-0.5, -0.5]], dtype=torch.float64)
// ref = acqf._get_reference_point(Y)
// lb, ub = acqf._get_non_dominated_box_bounds(Y, ref)
// Ypost = torch.tensor([[[0.6, 0.0], [0.0, 0.5], [-3.0, -3.0]],
//                       [[1.0, 1.0], [0.2, 0.2], [0.05, -0.2]]], dtype=torch.float64)
// print(ref, lb, ub, acqf.logehvi(Ypost, lb, (ub - lb).clamp_min(1e-12)))
// # and the same for the three-objective Y3 and Yp3 below
// ```

use super::boxes::{non_dominated_boxes, reference_point, Boxes};
use super::ehvi::LogEhvi;
use crate::samplers::tpe::multi_objective::hypervolume;

fn y2() -> Vec<Vec<f64>> {
    vec![
        vec![0.5, -1.0],
        vec![-0.2, 0.3],
        vec![0.1, 0.1],
        vec![-1.0, 1.2],
        vec![0.9, -1.5],
        vec![-0.5, -0.5],
    ]
}

fn y3() -> Vec<Vec<f64>> {
    vec![
        vec![0.5, -1.0, 0.2],
        vec![-0.2, 0.3, 0.4],
        vec![0.1, 0.1, -0.3],
        vec![-1.0, 1.2, 0.0],
        vec![0.9, -1.5, 1.0],
        vec![0.0, 0.0, 0.9],
    ]
}

/// The boxes as sorted `(lower, upper)` rows.
fn box_rows(boxes: &Boxes) -> Vec<Vec<f64>> {
    let m = boxes.m;
    let mut rows: Vec<Vec<f64>> = (0..boxes.count())
        .map(|b| {
            let lower = &boxes.lower[b * m..(b + 1) * m];
            let width = &boxes.width[b * m..(b + 1) * m];
            lower
                .iter()
                .copied()
                .chain(lower.iter().zip(width).map(|(l, w)| l + w))
                .collect()
        })
        .collect();
    rows.sort_by(|a, b| {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap()
    });
    rows
}

fn assert_boxes(what: &str, got: &Boxes, lower: &[&[f64]], upper: &[&[f64]]) {
    let want = Boxes {
        m: lower[0].len(),
        lower: lower.iter().flat_map(|r| r.iter().copied()).collect(),
        width: lower
            .iter()
            .zip(upper)
            .flat_map(|(l, u)| l.iter().zip(u.iter()).map(|(a, b)| b - a))
            .collect(),
    };
    assert_eq!(box_rows(got), box_rows(&want), "{what}");
}

const INF: f64 = f64::INFINITY;

#[test]
fn reference_point_and_boxes_match_optuna_for_two_objectives() {
    let y = y2();
    let reference = reference_point(&y);
    assert_eq!(reference, vec![-1.1000000000000003, -1.6500000000000004]);
    let boxes = non_dominated_boxes(&y, &reference);
    assert_boxes(
        "two objectives",
        &boxes,
        &[
            &[-1.1000000000000003, 1.2],
            &[-1.0, 0.3],
            &[-0.2, 0.1],
            &[0.1, -1.0],
            &[0.5, -1.5],
            &[0.9, -1.6500000000000004],
        ],
        &[
            &[INF, INF],
            &[INF, 1.2],
            &[INF, 0.3],
            &[INF, 0.1],
            &[INF, -1.0],
            &[INF, -1.5],
        ],
    );
}

#[test]
fn reference_point_and_boxes_match_optuna_for_three_objectives() {
    let y = y3();
    let reference = reference_point(&y);
    assert_eq!(
        reference,
        vec![
            -1.1000000000000003,
            -1.6500000000000004,
            -0.33000000000000007
        ]
    );
    let boxes = non_dominated_boxes(&y, &reference);
    let r = -0.33000000000000007;
    assert_boxes(
        "three objectives",
        &boxes,
        &[
            &[-1.1000000000000003, -1.6500000000000004, 1.0],
            &[-1.1000000000000003, -1.5, 0.9],
            &[-1.1000000000000003, 0.0, 0.4],
            &[-1.1000000000000003, 0.3, 0.0],
            &[-1.1000000000000003, 1.2, r],
            &[-1.0, 0.3, r],
            &[-0.2, 0.0, 0.0],
            &[-0.2, 0.0, -0.3],
            &[-0.2, 0.1, r],
            &[0.0, -1.5, 0.4],
            &[0.0, -1.5, 0.2],
            &[0.0, -1.0, -0.3],
            &[0.1, -1.0, r],
            &[0.5, -1.5, -0.3],
            &[0.5, -1.5, r],
            &[0.9, -1.6500000000000004, 0.9],
            &[0.9, -1.6500000000000004, 0.2],
            &[0.9, -1.6500000000000004, r],
        ],
        &[
            &[INF, INF, INF],
            &[INF, INF, 1.0],
            &[INF, INF, 0.9],
            &[INF, INF, 0.4],
            &[INF, INF, 0.0],
            &[INF, 1.2, 0.0],
            &[INF, 0.3, 0.4],
            &[INF, 0.3, 0.0],
            &[INF, 0.3, -0.3],
            &[INF, 0.0, 0.9],
            &[INF, 0.0, 0.4],
            &[INF, 0.0, 0.2],
            &[INF, 0.1, -0.3],
            &[INF, -1.0, 0.2],
            &[INF, -1.0, -0.3],
            &[INF, -1.5, 1.0],
            &[INF, -1.5, 0.9],
            &[INF, -1.5, 0.2],
        ],
    );
}

/// A deterministic stream of uniforms in [0, 1) (a 64-bit LCG's top bits).
struct Uniforms(u64);
impl Uniforms {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn boxes_give_the_hypervolume_a_point_adds() {
    // For random fronts of 2 to 4 objectives, the boxes' volume below a point equals the
    // hypervolume of the front with the point minus that without it, computed by the
    // slicing algorithm of the TPE sampler (an independent implementation).
    let mut u = Uniforms(1);
    for case in 0..300 {
        let m = 2 + case % 3;
        let n = 1 + (u.next() * 12.0) as usize;
        // Values on a coarse grid half the time, so that ties and duplicates occur.
        let coarse = case % 2 == 0;
        let draw = |u: &mut Uniforms| {
            let v = u.next() * 4.0 - 2.0;
            if coarse {
                (v * 2.0).round() / 2.0
            } else {
                v
            }
        };
        let y: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..m).map(|_| draw(&mut u)).collect())
            .collect();
        let reference = reference_point(&y);
        let boxes = non_dominated_boxes(&y, &reference);
        let losses = |points: &[Vec<f64>]| -> Vec<Vec<f64>> {
            points
                .iter()
                .map(|p| p.iter().map(|v| -v).collect())
                .collect()
        };
        let reference_loss: Vec<f64> = reference.iter().map(|r| -r).collect();
        let base = hypervolume(&losses(&y), &reference_loss);
        for _ in 0..5 {
            let point: Vec<f64> = (0..m).map(|_| draw(&mut u) * 1.3).collect();
            let mut with = y.clone();
            with.push(point.clone());
            let want = hypervolume(&losses(&with), &reference_loss) - base;
            let got = boxes.improvement(&point);
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                "case {case} (m = {m}, n = {n}): improvement {got}, hypervolume difference \
                 {want}; y = {y:?}, point = {point:?}"
            );
        }
    }
}

/// Optuna's `logehvi(Y_post, lower, intervals)`: the log of the mean over samples of the
/// boxes' clamped volume, from [`LogEhvi`]'s own functions.
fn logehvi(boxes: &Boxes, samples: &[Vec<f64>]) -> f64 {
    let (value, _) = super::ehvi::log_mean_exp_for_tests(
        &samples
            .iter()
            .map(|y| super::ehvi::box_sum_for_tests(boxes, y).ln())
            .collect::<Vec<_>>(),
    );
    value
}

#[test]
fn log_ehvi_of_given_samples_matches_optuna() {
    let y = y2();
    let boxes = non_dominated_boxes(&y, &reference_point(&y));
    let first = [vec![0.6, 0.0], vec![0.0, 0.5], vec![-3.0, -3.0]];
    let second = [vec![1.0, 1.0], vec![0.2, 0.2], vec![0.05, -0.2]];
    assert_close(
        "samples 1",
        logehvi(&boxes, &first),
        -1.3343346221801924,
        1e-12,
    );
    assert_close(
        "samples 2",
        logehvi(&boxes, &second),
        0.014888612496755549,
        1e-12,
    );
    let y = y3();
    let boxes = non_dominated_boxes(&y, &reference_point(&y));
    let third = [
        vec![0.6, 0.5, 0.5],
        vec![0.0, 0.5, -0.1],
        vec![1.0, 1.0, 1.0],
    ];
    assert_close(
        "three objectives",
        logehvi(&boxes, &third),
        0.6571658815047325,
        1e-12,
    );
}

fn two_objective_gps() -> Vec<GpRegressor> {
    let x = vec![
        vec![0.1, 0.2],
        vec![0.5, 0.9],
        vec![0.8, 0.4],
        vec![0.3, 0.6],
        vec![0.6, 0.1],
    ];
    let columns = [
        vec![0.2, -1.0, 1.1, 0.4, -0.3],
        vec![-0.5, 1.3, -0.8, 0.6, 0.1],
    ];
    columns
        .iter()
        .map(|y| {
            GpRegressor::new(
                TrainingData::new(x.clone(), y.clone(), vec![false, false]),
                optuna_fit(),
            )
            .unwrap()
        })
        .collect()
}

fn two_objective_values() -> Vec<Vec<f64>> {
    (0..5)
        .map(|i| two_objective_gps().iter().map(|gp| gp.data.y[i]).collect())
        .collect()
}

fn assert_gradient_matches(what: &str, acquisition: &dyn AcquisitionFn) {
    for x in [[0.65, 0.45], [0.35, 0.8], [0.9, 0.1], [0.2, 0.35]] {
        let (value, grad) = acquisition.value_and_gradient(&x);
        assert_close(
            &format!("{what}: value at {x:?}"),
            value,
            acquisition.value(&x),
            1e-13,
        );
        for (d, (g, n)) in grad
            .iter()
            .zip(numeric_gradient(acquisition, &x))
            .enumerate()
        {
            assert_close(&format!("{what}: d/dx{d} at {x:?}"), *g, n, 1e-5);
        }
    }
}

fn constraint_gp() -> (GpRegressor, f64) {
    let x = vec![
        vec![0.1, 0.2],
        vec![0.5, 0.9],
        vec![0.8, 0.4],
        vec![0.3, 0.6],
        vec![0.6, 0.1],
    ];
    let gp = GpRegressor::new(
        TrainingData::new(x, vec![1.0, -0.4, 0.3, -1.2, 0.5], vec![false, false]),
        optuna_fit(),
    )
    .unwrap();
    (gp, -0.2)
}

#[test]
fn log_ehvi_gradients_match_finite_differences() {
    let running = vec![vec![0.7, 0.5], vec![0.2, 0.3]];
    let y = two_objective_values();
    let cases = [
        ("LogEHVI", Some(y.clone()), vec![], vec![]),
        ("qLogEHVI", Some(y.clone()), running.clone(), vec![]),
        (
            "LogCEHVI",
            Some(y[..3].to_vec()),
            vec![],
            vec![constraint_gp()],
        ),
        (
            "qLogCEHVI",
            Some(y[..3].to_vec()),
            running.clone(),
            vec![constraint_gp()],
        ),
        ("no feasible trial", None, running, vec![constraint_gp()]),
    ];
    for (what, feasible, running, constraints) in cases {
        let acquisition = LogEhvi::new(two_objective_gps(), feasible, running, constraints, 128, 5);
        assert_gradient_matches(what, &acquisition);
    }
}

#[test]
fn log_ehvi_is_the_log_of_the_mean_hypervolume_improvement_of_its_samples() {
    // The acquisition against a direct estimate: the same normals turned into samples of
    // the two posteriors, each sample's improvement measured by the TPE sampler's
    // hypervolume (front with the sample minus front without it).
    let gps = two_objective_gps();
    let y = two_objective_values();
    let acquisition = LogEhvi::new(gps.clone(), Some(y.clone()), vec![], vec![], 128, 11);
    let normals = super::acquisition::normal_sobol(2, 128, 11);
    let reference = reference_point(&y);
    let loss = |p: &[f64]| -> Vec<f64> { p.iter().map(|v| -v).collect() };
    let reference_loss = loss(&reference);
    let front: Vec<Vec<f64>> = y.iter().map(|p| loss(p)).collect();
    let base = hypervolume(&front, &reference_loss);
    for x in [[0.65, 0.45], [0.35, 0.8], [0.95, 0.95]] {
        let posterior: Vec<(f64, f64)> = gps.iter().map(|gp| gp.posterior(&x)).collect();
        let mean_improvement: f64 = (0..128)
            .map(|s| {
                let sample: Vec<f64> = (0..2)
                    .map(|i| {
                        let (mean, var) = posterior[i];
                        mean + (var + 1e-12).sqrt() * normals[s * 2 + i]
                    })
                    .collect();
                let mut with = front.clone();
                with.push(loss(&sample));
                hypervolume(&with, &reference_loss) - base
            })
            .sum::<f64>()
            / 128.0;
        let value = acquisition.value(&x);
        // The acquisition floors each box side at 1e-12, so a sample that improves
        // nothing still counts (boxes) × 1e-24: far below the tolerance here.
        assert_close(&format!("at {x:?}"), value.exp(), mean_improvement, 1e-9);
    }
}

#[test]
fn q_log_ehvi_is_low_at_a_running_point() {
    let y = two_objective_values();
    let plain = LogEhvi::new(two_objective_gps(), Some(y.clone()), vec![], vec![], 128, 3);
    let x = [0.65, 0.45];
    let q = LogEhvi::new(
        two_objective_gps(),
        Some(y),
        vec![x.to_vec()],
        vec![],
        128,
        3,
    );
    let other = [0.2, 0.8];
    let on_top = q.value(&x) - plain.value(&x);
    let away = q.value(&other) - plain.value(&other);
    assert!(
        on_top < away - 0.5,
        "qLogEHVI − LogEHVI on the running point {on_top}, away {away}"
    );
}
