//! Two-objective test functions of the GP benchmark (`gp`), the same as in
//! `scripts/python/bench_gp.py`: both objectives are minimised, and each function comes with
//! the reference point of its hypervolume, 1.1 times each objective's maximum over the search
//! space so that every point, the extremes of the front included, adds volume.

use saturate_study::prelude::*;

pub type MoObjective = fn(&mut Trial) -> Result<[f64; 2], ObjectiveError>;

#[derive(Clone, Copy)]
pub struct MoFunction {
    pub objective: MoObjective,
    pub reference: [f64; 2],
}

/// ZDT1 (Zitzler, Deb and Thiele 2000) in 5 dimensions: the Pareto front is
/// f2 = 1 - sqrt(f1) at x1..x4 = 0. f1 <= 1 and f2 <= g <= 10.
pub fn zdt1(t: &mut Trial) -> Result<[f64; 2], ObjectiveError> {
    let x: Vec<f64> = (0..5)
        .map(|i| t.suggest_float(&format!("x{i}"), 0.0, 1.0))
        .collect::<Result<_, _>>()?;
    let f1 = x[0];
    let g = 1.0 + 9.0 * x[1..].iter().sum::<f64>() / 4.0;
    Ok([f1, g * (1.0 - (f1 / g).sqrt())])
}

/// Fonseca and Fleming (1995) in 3 dimensions: a concave front between the two optima
/// x_i = ±1/sqrt(3). Both objectives lie in [0, 1).
pub fn fonseca(t: &mut Trial) -> Result<[f64; 2], ObjectiveError> {
    let x: Vec<f64> = (0..3)
        .map(|i| t.suggest_float(&format!("x{i}"), -4.0, 4.0))
        .collect::<Result<_, _>>()?;
    let shift = 1.0 / 3f64.sqrt();
    let f1 = 1.0 - (-x.iter().map(|xi| (xi - shift).powi(2)).sum::<f64>()).exp();
    let f2 = 1.0 - (-x.iter().map(|xi| (xi + shift).powi(2)).sum::<f64>()).exp();
    Ok([f1, f2])
}

/// An int, a float and a categorical, with the two optima at x = 1, n = 0 and x = -1, n = 2
/// (c = "a" for both). f1 is largest at x = -3, n = ±5, c = "c" (16 + 2.5 + 1 = 19.5), f2 at
/// x = 3, n = -5, c = "c" (16 + 4.9 + 1 = 21.9).
pub fn mixed(t: &mut Trial) -> Result<[f64; 2], ObjectiveError> {
    let n = t.suggest_int("n", -5, 5)? as f64;
    let x = t.suggest_float("x", -3.0, 3.0)?;
    let c = t.suggest_categorical("c", ["a", "b", "c"])?;
    let offset = match c {
        "a" => 0.0,
        "b" => 0.5,
        _ => 1.0,
    };
    Ok([
        (x - 1.0).powi(2) + 0.1 * n * n + offset,
        (x + 1.0).powi(2) + 0.1 * (n - 2.0).powi(2) + offset,
    ])
}

/// Every function, by name.
pub const MO_FUNCTIONS: [(&str, MoFunction); 3] = [
    (
        "zdt1-5d",
        MoFunction {
            objective: zdt1,
            reference: [1.1, 11.0],
        },
    ),
    (
        "fonseca-3d",
        MoFunction {
            objective: fonseca,
            reference: [1.1, 1.1],
        },
    ),
    (
        "mixed-mo",
        MoFunction {
            objective: mixed,
            reference: [21.45, 24.09],
        },
    ),
];

/// The area dominated by `points` (both objectives minimised) and bounded by `reference`,
/// exact: sorted by the first objective, each point adds the strip between its second
/// objective and the lowest one before it. Points outside the reference box add nothing.
pub fn hypervolume(points: &[[f64; 2]], reference: [f64; 2]) -> f64 {
    let mut inside: Vec<[f64; 2]> = points
        .iter()
        .copied()
        .filter(|p| p[0] < reference[0] && p[1] < reference[1])
        .collect();
    inside.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    let mut lowest = reference[1];
    let mut volume = 0.0;
    for [f1, f2] in inside {
        if f2 < lowest {
            volume += (reference[0] - f1) * (lowest - f2);
            lowest = f2;
        }
    }
    volume
}
