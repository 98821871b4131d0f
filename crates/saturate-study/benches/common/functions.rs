//! The test functions of the TPE benchmarks (`tpe_quality`, `tpe_batch`), the same as in
//! `scripts/python/bench_tpe.py`: 2 to 10 dimensions, float, log-scale, int, categorical and
//! conditional parameters. Lower is better.

use std::f64::consts::PI;

use saturate_study::prelude::*;
use saturate_study::study::ObjectiveError;

pub type Objective = fn(&mut Trial) -> Result<f64, ObjectiveError>;

const HARTMANN_A: [[f64; 6]; 4] = [
    [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
    [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
    [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
    [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
];
const HARTMANN_P: [[f64; 6]; 4] = [
    [1312.0, 1696.0, 5569.0, 124.0, 8283.0, 5886.0],
    [2329.0, 4135.0, 8307.0, 3736.0, 1004.0, 9991.0],
    [2348.0, 1451.0, 3522.0, 2883.0, 3047.0, 6650.0],
    [4047.0, 8828.0, 8732.0, 5743.0, 1091.0, 381.0],
];
const HARTMANN_ALPHA: [f64; 4] = [1.0, 1.2, 3.0, 3.2];

pub fn sphere(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let mut s = 0.0;
    for i in 0..5 {
        s += t.suggest_float(&format!("x{i}"), -5.0, 5.0)?.powi(2);
    }
    Ok(s)
}

pub fn rosenbrock(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let x: Vec<f64> = (0..5)
        .map(|i| t.suggest_float(&format!("x{i}"), -5.0, 10.0))
        .collect::<Result<_, _>>()?;
    Ok((0..4)
        .map(|i| 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2))
        .sum())
}

pub fn branin(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let x1 = t.suggest_float("x1", -5.0, 10.0)?;
    let x2 = t.suggest_float("x2", 0.0, 15.0)?;
    let (b, c, r, s, tt) = (5.1 / (4.0 * PI * PI), 5.0 / PI, 6.0, 10.0, 1.0 / (8.0 * PI));
    Ok((x2 - b * x1 * x1 + c * x1 - r).powi(2) + s * (1.0 - tt) * x1.cos() + s)
}

pub fn hartmann6(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let x: Vec<f64> = (0..6)
        .map(|i| t.suggest_float(&format!("x{i}"), 0.0, 1.0))
        .collect::<Result<_, _>>()?;
    let mut total = 0.0;
    for i in 0..4 {
        let inner: f64 = (0..6)
            .map(|j| HARTMANN_A[i][j] * (x[j] - HARTMANN_P[i][j] * 1e-4).powi(2))
            .sum();
        total += HARTMANN_ALPHA[i] * (-inner).exp();
    }
    Ok(-total)
}

pub fn mixed(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let x = t.suggest_int("x", -10, 10)?;
    let y = t.suggest_float("y", -5.0, 5.0)?;
    let c = t.suggest_categorical("c", ["a", "b", "c"])?;
    let offset = match c {
        "a" => 0.0,
        "b" => 1.0,
        _ => 2.0,
    };
    Ok(((x - 3) * (x - 3)) as f64 + (y + 1.0).powi(2) + offset)
}

/// Styblinski-Tang in 10 dimensions (minimum about -391.66 at x_i = -2.9035).
pub fn styblinski_tang(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let mut total = 0.0;
    for i in 0..10 {
        let x = t.suggest_float(&format!("x{i}"), -5.0, 5.0)?;
        total += x.powi(4) - 16.0 * x * x + 5.0 * x;
    }
    Ok(total / 2.0)
}

/// A training-like space: a log-scale learning rate, an integer width (log scale), and a
/// categorical optimizer whose second parameter exists only for that choice (minimum 0).
pub fn conditional(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let lr = t.suggest_float_log("lr", 1e-5, 1.0)?;
    let width = t.suggest_int_log("width", 4, 512)?;
    let optimizer = t.suggest_categorical("optimizer", ["sgd", "adam"])?;
    let (best_lr, extra): (f64, f64) = match optimizer {
        "sgd" => {
            let momentum = t.suggest_float("momentum", 0.0, 0.99)?;
            (1e-1, 4.0 * (momentum - 0.9).powi(2) + 0.2)
        }
        _ => {
            let beta = t.suggest_float("beta1", 0.5, 0.999)?;
            (1e-3, 4.0 * (beta - 0.9).powi(2))
        }
    };
    Ok(
        (lr.log10() - best_lr.log10()).powi(2)
            + ((width as f64).log2() - 7.0).powi(2) / 4.0
            + extra,
    )
}

/// Every function, by name.
pub const FUNCTIONS: [(&str, Objective); 7] = [
    ("sphere-5d", sphere),
    ("rosenbrock-5d", rosenbrock),
    ("branin", branin),
    ("hartmann-6", hartmann6),
    ("mixed", mixed),
    ("styblinski-tang-10d", styblinski_tang),
    ("conditional", conditional),
];
