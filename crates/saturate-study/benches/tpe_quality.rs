//! TPE quality on standard test functions: median best value over seeds, saturate's TPE
//! next to random search and (when a venv from `scripts/setup-python.sh` exists) Optuna's
//! TPE run by `scripts/python/bench_tpe.py`.
//!
//! `cargo bench -p saturate-study --bench tpe_quality [-- n_seeds n_trials first_seed]`
//! (10 × 200 from seed 0).
//! Set `SATURATE_OPTUNA_TPE_JSON` to a file with the script's output to reuse a run.

use std::f64::consts::PI;
use std::process::Command;

use saturate_study::prelude::*;
use saturate_study::study::ObjectiveError;

type Objective = fn(&mut Trial) -> Result<f64, ObjectiveError>;

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

fn sphere(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let mut s = 0.0;
    for i in 0..5 {
        s += t.suggest_float(&format!("x{i}"), -5.0, 5.0)?.powi(2);
    }
    Ok(s)
}

fn rosenbrock(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let x: Vec<f64> = (0..5)
        .map(|i| t.suggest_float(&format!("x{i}"), -5.0, 10.0))
        .collect::<Result<_, _>>()?;
    Ok((0..4)
        .map(|i| 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2))
        .sum())
}

fn branin(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let x1 = t.suggest_float("x1", -5.0, 10.0)?;
    let x2 = t.suggest_float("x2", 0.0, 15.0)?;
    let (b, c, r, s, tt) = (5.1 / (4.0 * PI * PI), 5.0 / PI, 6.0, 10.0, 1.0 / (8.0 * PI));
    Ok((x2 - b * x1 * x1 + c * x1 - r).powi(2) + s * (1.0 - tt) * x1.cos() + s)
}

fn hartmann6(t: &mut Trial) -> Result<f64, ObjectiveError> {
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

fn mixed(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let x = t.suggest_int("x", -10, 10)?;
    let y = t.suggest_float("y", -5.0, 5.0)?;
    let c = t.suggest_categorical("c", ["a", "b", "c"])?;
    let offset = match c {
        Choice::Str(s) if s == "a" => 0.0,
        Choice::Str(s) if s == "b" => 1.0,
        _ => 2.0,
    };
    Ok(((x - 3) * (x - 3)) as f64 + (y + 1.0).powi(2) + offset)
}

const FUNCTIONS: [(&str, Objective); 5] = [
    ("sphere-5d", sphere),
    ("rosenbrock-5d", rosenbrock),
    ("branin", branin),
    ("hartmann-6", hartmann6),
    ("mixed", mixed),
];

fn best(sampler: impl Sampler + 'static, f: Objective, n_trials: usize) -> f64 {
    let study = DefaultStudy::builder()
        .sampler(sampler)
        .pruner(NopPruner)
        .build()
        .unwrap();
    study.optimize(Some(n_trials), None, f).unwrap();
    study.best_value().unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn optuna_results(n_seeds: usize, n_trials: usize, first_seed: u64) -> Option<serde_json::Value> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = match std::env::var("SATURATE_OPTUNA_TPE_JSON") {
        // Relative to the workspace root.
        Ok(path) => std::fs::read_to_string(root.join(path)).ok()?,
        Err(_) => {
            let python = root.join("target/venv/optuna-4.9.0/bin/python");
            if !python.exists() {
                return None;
            }
            let out = Command::new(python)
                .arg(root.join("scripts/python/bench_tpe.py"))
                .args([
                    n_seeds.to_string(),
                    n_trials.to_string(),
                    first_seed.to_string(),
                ])
                .output()
                .ok()?;
            String::from_utf8(out.stdout).ok()?
        }
    };
    serde_json::from_str(&text).ok()
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n_seeds = args.first().copied().unwrap_or(10);
    let n_trials = args.get(1).copied().unwrap_or(200);
    let first_seed = args.get(2).copied().unwrap_or(0) as u64;
    let seeds = first_seed..first_seed + n_seeds as u64;
    let optuna = optuna_results(n_seeds, n_trials, first_seed);
    println!(
        "median best over {n_seeds} seeds from {first_seed} x {n_trials} trials (lower is better)\n"
    );
    println!(
        "| function | saturate TPE | Optuna 4.9 TPE | random search | saturate TPE ms/trial |"
    );
    println!("|---|---|---|---|---|");
    for (name, f) in FUNCTIONS {
        let started = std::time::Instant::now();
        let tpe: Vec<f64> = seeds
            .clone()
            .map(|seed| best(TpeSampler::builder().seed(seed).build(), f, n_trials))
            .collect();
        let ms = started.elapsed().as_secs_f64() * 1e3 / (n_seeds * n_trials) as f64;
        let random: Vec<f64> = seeds
            .clone()
            .map(|seed| best(RandomSampler::new(Some(seed)), f, n_trials))
            .collect();
        let theirs = optuna
            .as_ref()
            .and_then(|o| o.get(name))
            .and_then(|v| v.as_array())
            .map(|v| {
                v.iter()
                    .filter_map(|x| x.as_f64())
                    .take(n_seeds)
                    .collect::<Vec<_>>()
            })
            .map_or("n/a".to_string(), |v| format!("{:.4}", median(v)));
        println!(
            "| {name} | {:.4} | {theirs} | {:.4} | {ms:.3} |",
            median(tpe),
            median(random)
        );
    }
}
