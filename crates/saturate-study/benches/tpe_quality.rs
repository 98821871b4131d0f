//! TPE quality on standard test functions: median best value over seeds, saturate's TPE
//! next to random search and (when a venv from `scripts/setup-python.sh` exists) Optuna's
//! TPE run by `scripts/python/bench_tpe.py`.
//!
//! `cargo bench -p saturate-study --bench tpe_quality [-- n_seeds n_trials first_seed]`
//! (10 × 200 from seed 0).
//! Set `SATURATE_OPTUNA_TPE_JSON` to a file with the script's output to reuse a run.

use std::process::Command;

use saturate_study::prelude::*;

mod common;
use common::functions::{Objective, FUNCTIONS};

fn best(sampler: impl Sampler + 'static, f: Objective, n_trials: usize) -> f64 {
    let study = StudyConfig::new()
        .with_sampler(sampler)
        .with_pruner(NopPruner)
        .init()
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
            .map(|seed| {
                best(
                    TpeSamplerConfig::new().with_seed(seed).init().unwrap(),
                    f,
                    n_trials,
                )
            })
            .collect();
        let ms = started.elapsed().as_secs_f64() * 1e3 / (n_seeds * n_trials) as f64;
        let random: Vec<f64> = seeds
            .clone()
            .map(|seed| {
                best(
                    RandomSamplerConfig::new().with_seed(seed).init(),
                    f,
                    n_trials,
                )
            })
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
