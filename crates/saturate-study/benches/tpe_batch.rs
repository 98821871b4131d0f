//! TPE asked K trials at a time (a group of K), as the group runner asks: K trials are asked,
//! then all K are told. Median best value over seeds, for K in {1, 4, 8, 16}, on the test
//! functions of `common/functions.rs`. Arms: saturate's TPE with the constant liar (the group
//! default) and without it. Optuna's TPE asked the same way is the anchor:
//! `scripts/bench-tpe-batch.sh` runs both and writes one table.
//!
//! `cargo bench -p saturate-study --bench tpe_batch -- [n_seeds] [n_trials] [first_seed]`
//! (40 × 100 from seed 0). Prints CSV rows `arm,function,k,seed,best`.

use saturate_study::prelude::*;

mod common;
use common::functions::{Objective, FUNCTIONS};

/// The group sizes.
const KS: [usize; 4] = [1, 4, 8, 16];

/// The best value after `n_trials` trials asked `k` at a time.
fn best(sampler: TpeSampler, f: Objective, n_trials: usize, k: usize) -> f64 {
    let study = StudyConfig::new()
        .with_sampler(sampler)
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    let mut asked = 0;
    while asked < n_trials {
        let batch = k.min(n_trials - asked);
        let mut trials = study.ask_many(batch).unwrap();
        // Every member suggests (and is evaluated) before any is told, as in a group: the
        // sampler sees the others only as RUNNING trials.
        let values: Vec<f64> = trials.iter_mut().map(|t| f(t).unwrap()).collect();
        for (trial, value) in trials.iter().zip(values) {
            study.tell(trial, &[value]).unwrap();
        }
        asked += batch;
    }
    study.best_value().unwrap()
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n_seeds = args.first().copied().unwrap_or(40);
    let n_trials = args.get(1).copied().unwrap_or(100);
    let first_seed = args.get(2).copied().unwrap_or(0) as u64;
    println!("arm,function,k,seed,best");
    for (name, f) in FUNCTIONS {
        for k in KS {
            for seed in first_seed..first_seed + n_seeds as u64 {
                for (arm, liar) in [("saturate-liar", true), ("saturate-no-liar", false)] {
                    let sampler = TpeSamplerConfig::new()
                        .with_seed(seed)
                        .with_constant_liar(liar)
                        .init()
                        .unwrap();
                    println!("{arm},{name},{k},{seed},{}", best(sampler, f, n_trials, k));
                }
            }
        }
    }
}
