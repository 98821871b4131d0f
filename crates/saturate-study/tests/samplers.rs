//! The public sampler conformance suite run on every sampler, and sampler-specific
//! behaviour.

use std::collections::BTreeMap;

use saturate_study::prelude::*;

/// One test per (sampler, property) of the public conformance suite.
macro_rules! conformance {
    ($($sampler:ident => $make:expr;)*) => {$(
        mod $sampler {
            use super::*;
            use saturate_study::testing::samplers;

            fn make(seed: u64) -> Box<dyn Sampler> {
                $make(seed)
            }

            #[test]
            fn values_stay_inside_their_distributions() {
                samplers::values_stay_inside_their_distributions(&make);
            }
            #[test]
            fn single_value_distributions_return_their_value() {
                samplers::single_value_distributions_return_their_value(&make);
            }
            #[test]
            fn same_seed_gives_the_same_sequence() {
                samplers::same_seed_gives_the_same_sequence(&make);
            }
            #[test]
            fn different_seeds_give_different_sequences() {
                samplers::different_seeds_give_different_sequences(&make);
            }
            #[test]
            fn nan_objective_values_are_survived() {
                samplers::nan_objective_values_are_survived(&make);
            }
            #[test]
            fn conditional_parameters_are_sampled() {
                samplers::conditional_parameters_are_sampled(&make);
            }
            #[test]
            fn two_objective_studies_are_sampled() {
                samplers::two_objective_studies_are_sampled(&make);
            }
        }
    )*};
}

conformance! {
    random => |s| Box::new(RandomSamplerConfig::new().with_seed(s).init());
    tpe => |s| Box::new(TpeSamplerConfig::new().with_seed(s).with_n_startup_trials(5).init().unwrap());
    tpe_multivariate => |s| Box::new(
        TpeSamplerConfig::new()
            .with_seed(s)
            .with_n_startup_trials(5)
            .with_multivariate(true)
            .with_group(true)
            .with_constant_liar(true)
            .init().unwrap(),
    );
    qmc_sobol => |s| Box::new(
        QmcSamplerConfig::new().with_kind(QmcKind::Sobol).with_seed(s).init().unwrap(),
    );
    qmc_halton => |s| Box::new(
        QmcSamplerConfig::new().with_kind(QmcKind::Halton).with_seed(s).init().unwrap(),
    );
    cmaes => |s| Box::new(CmaEsSamplerConfig::new().with_seed(s).init().unwrap());
    grid => |s| Box::new(
        GridSamplerConfig::new(saturate_study::testing::samplers::suite_grid())
            .with_seed(s)
            .init()
            .unwrap(),
    );
}

#[test]
fn the_whole_suite_runs_on_the_random_sampler() {
    saturate_study::testing::run_sampler_suite(|seed| {
        Box::new(RandomSamplerConfig::new().with_seed(seed).init())
    });
}

#[test]
fn grid_sampler_visits_every_point_once() {
    let space: BTreeMap<String, Vec<ParamValue>> = [
        (
            "a".to_string(),
            vec![ParamValue::Int(1), ParamValue::Int(2), ParamValue::Int(3)],
        ),
        (
            "b".to_string(),
            vec![ParamValue::from("x"), ParamValue::from("y")],
        ),
    ]
    .into();
    let sampler = GridSamplerConfig::new(space).with_seed(0).init().unwrap();
    assert_eq!(sampler.len(), 6);
    let study = StudyConfig::new().with_sampler(sampler).init().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..6 {
        let mut t = study.ask().unwrap();
        let a = t.suggest_int("a", 1, 3).unwrap();
        let b = t.suggest_categorical("b", ["x", "y"]).unwrap();
        seen.insert(format!("{a}{b}"));
        study.tell(&t, &[0.0]).unwrap();
    }
    assert_eq!(seen.len(), 6);
    let mut t = study.ask().unwrap();
    assert!(matches!(
        t.suggest_float("zz", 0.0, 1.0),
        Err(StudyError::Sampler { .. })
    ));
}

fn sphere(trial: &mut Trial) -> Result<f64, saturate_study::study::ObjectiveError> {
    let mut sum = 0.0;
    for d in 0..3 {
        let x = trial.suggest_float(&format!("x{d}"), -5.0, 5.0)?;
        sum += x * x;
    }
    Ok(sum)
}

fn best_of(sampler: impl Sampler + 'static, n: usize) -> f64 {
    let study = StudyConfig::new()
        .with_sampler(sampler)
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    study.optimize(Some(n), None, sphere).unwrap();
    study.best_value().unwrap()
}

/// Best value of 80 trials on the sphere for seeds 0..8: the sampler's and random
/// search's, seed by seed.
fn against_random(sampler: impl Fn(u64) -> Box<dyn Sampler>) -> Vec<(f64, f64)> {
    (0..8)
        .map(|seed| {
            (
                best_of(sampler(seed), 80),
                best_of(RandomSamplerConfig::new().with_seed(seed).init(), 80),
            )
        })
        .collect()
}

/// Asserts that a sampler beats random search on at least 7 of 8 seeds, and that its best
/// values are below `margin` times random search's (geometric mean over the seeds).
fn assert_beats_random(name: &str, results: &[(f64, f64)], margin: f64) {
    let wins = results
        .iter()
        .filter(|(ours, random)| ours < random)
        .count();
    let log_ratio = results
        .iter()
        .map(|(ours, random)| (ours / random).ln())
        .sum::<f64>()
        / results.len() as f64;
    assert!(
        wins >= 7,
        "{name} beat random search on {wins}/8 seeds: {results:?}"
    );
    assert!(
        log_ratio.exp() < margin,
        "{name}: best values {:.3}x random search's (geometric mean), not < {margin}: {results:?}",
        log_ratio.exp()
    );
}

#[test]
fn tpe_and_cmaes_beat_random_search_on_a_sphere() {
    let tpe =
        against_random(|seed| Box::new(TpeSamplerConfig::new().with_seed(seed).init().unwrap()));
    assert_beats_random("TPE", &tpe, 0.25);
    let multivariate = against_random(|seed| {
        Box::new(
            TpeSamplerConfig::new()
                .with_seed(seed)
                .with_multivariate(true)
                .init()
                .unwrap(),
        )
    });
    assert_beats_random("multivariate TPE", &multivariate, 0.25);
    let cmaes =
        against_random(|seed| Box::new(CmaEsSamplerConfig::new().with_seed(seed).init().unwrap()));
    assert_beats_random("CMA-ES", &cmaes, 0.25);
}

#[test]
fn tpe_multi_objective_finds_a_pareto_front() {
    let study = StudyConfig::new()
        .with_directions([StudyDirection::Minimize, StudyDirection::Minimize])
        .with_sampler(TpeSamplerConfig::new().with_seed(0).init().unwrap())
        .init()
        .unwrap();
    study
        .optimize(Some(40), None, |t| {
            let x = t.suggest_float("x", 0.0, 1.0)?;
            let y = t.suggest_float("y", 0.0, 1.0)?;
            Ok([x, (1.0 - x) + y])
        })
        .unwrap();
    assert!(!study.best_trials().unwrap().is_empty());
}

/// The standard deviation of the `x` of five trials asked together after 20 trials on x².
fn batch_spread(liar: bool, seed: u64) -> f64 {
    let study = StudyConfig::new()
        .with_sampler(
            TpeSamplerConfig::new()
                .with_seed(seed)
                .with_n_startup_trials(10)
                .with_constant_liar(liar)
                .init()
                .unwrap(),
        )
        .init()
        .unwrap();
    study
        .optimize(Some(20), None, |t| {
            let x = t.suggest_float("x", -10.0, 10.0)?;
            Ok(x * x)
        })
        .unwrap();
    let mut trials = study.ask_many(5).unwrap();
    let xs: Vec<f64> = trials
        .iter_mut()
        .map(|t| t.suggest_float("x", -10.0, 10.0).unwrap())
        .collect();
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt()
}

#[test]
fn constant_liar_spreads_trials_asked_together() {
    // With the liar each RUNNING trial counts as a bad one, so the next trial of the batch
    // moves away from it; without it, all five crowd around the best point so far.
    let with: Vec<f64> = (0..8).map(|seed| batch_spread(true, seed)).collect();
    let without: Vec<f64> = (0..8).map(|seed| batch_spread(false, seed)).collect();
    let wider = with.iter().zip(&without).filter(|(w, wo)| w > wo).count();
    let (with_total, without_total): (f64, f64) = (with.iter().sum(), without.iter().sum());
    assert!(
        wider >= 7,
        "wider with the liar on {wider}/8 seeds: {with:?} vs {without:?}"
    );
    assert!(
        with_total > 2.0 * without_total,
        "spread with the liar {with_total:.3}, without {without_total:.3}"
    );
}

#[test]
fn multivariate_constant_liar_publishes_relative_params_of_running_trials() {
    let study = StudyConfig::new()
        .with_sampler(
            TpeSamplerConfig::new()
                .with_seed(0)
                .with_n_startup_trials(5)
                .with_multivariate(true)
                .with_constant_liar(true)
                .init()
                .unwrap(),
        )
        .init()
        .unwrap();
    let objective = |t: &mut Trial| -> Result<f64, saturate_study::study::ObjectiveError> {
        let x = t.suggest_float("x", -10.0, 10.0)?;
        let y = t.suggest_float("y", -10.0, 10.0)?;
        Ok(x * x + y * y)
    };
    study.optimize(Some(15), None, objective).unwrap();
    let mut batch = study.ask_many(4).unwrap();
    // Each trial's joint sample was published before the next one was drawn, so the
    // later trials saw the earlier ones as (bad) RUNNING observations.
    for t in &batch {
        let stored = study.storage().get_trial(t.id()).unwrap();
        assert!(
            stored.system_attrs.contains_key("tpe:relative_params:0"),
            "trial {}",
            t.number()
        );
    }
    let points: Vec<(f64, f64)> = batch
        .iter_mut()
        .map(|t| {
            (
                t.suggest_float("x", -10.0, 10.0).unwrap(),
                t.suggest_float("y", -10.0, 10.0).unwrap(),
            )
        })
        .collect();
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn qmc_points_are_stratified() {
    for kind in [QmcKind::Sobol, QmcKind::Halton] {
        let study = StudyConfig::new()
            .with_sampler(
                QmcSamplerConfig::new()
                    .with_kind(kind)
                    .with_seed(7)
                    .init()
                    .unwrap(),
            )
            .init()
            .unwrap();
        study
            .optimize(Some(17), None, |t| Ok(t.suggest_float("x", 0.0, 1.0)?))
            .unwrap();
        // Points 0..16 of both sequences put exactly one point in each sixteenth.
        let mut bins: Vec<usize> = study.trials(None).unwrap()[1..]
            .iter()
            .map(|t| (t.params["x"].internal * 16.0) as usize)
            .collect();
        bins.sort_unstable();
        assert_eq!(bins, (0..16).collect::<Vec<_>>(), "{kind:?}");
    }
}

/// Runs `n` trials of the TPE benchmark's objective (every 5th trial pruned at step 1 when
/// there is one objective), asked `batch` at a time, and returns every internal parameter
/// value in trial order (parameters by name) and the FNV-1a hash of their bits.
fn tpe_trace(sampler: TpeSampler, objectives: usize, batch: usize, n: usize) -> (Vec<f64>, u64) {
    let study = StudyConfig::new()
        .with_directions(vec![StudyDirection::Minimize; objectives])
        .with_sampler(sampler)
        .with_pruner(NopPruner)
        .init()
        .unwrap();
    let mut asked: Vec<Trial> = Vec::new();
    for i in 0..n {
        if asked.is_empty() {
            asked = study.ask_many(batch).unwrap();
        }
        let mut t = asked.remove(0);
        let x = t.suggest_float("x", -5.0, 5.0).unwrap();
        let lr = t.suggest_float_log("lr", 1e-5, 1e-1).unwrap();
        let k = t.suggest_int("n", 1, 64).unwrap();
        let q = t.suggest_float_step("q", 0.0, 1.0, 0.1).unwrap();
        let act = t
            .suggest_categorical("act", ["relu", "gelu", "tanh"])
            .unwrap();
        let penalty = if act == "relu" { 0.0 } else { 0.5 };
        let value = x * x + lr.ln().abs() + k as f64 / 64.0 + q + penalty;
        if objectives == 2 {
            study.tell(&t, &[value, (x - 1.0).abs() + q]).unwrap();
        } else if i % 5 == 4 {
            t.report(1, value).unwrap();
            study
                .tell_state(&t, TrialState::Pruned, None, None)
                .unwrap();
        } else {
            study.tell(&t, &[value]).unwrap();
        }
    }
    let mut values = Vec::new();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for t in study.trials(None).unwrap().iter() {
        for p in t.params.values() {
            values.push(p.internal);
            for byte in p.internal.to_bits().to_le_bytes() {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    (values, hash)
}

/// TPE's suggestions for a fixed seed, pinned: the values below were printed by this
/// trace on the sampler before its speed-up (commit 75d1ff4, where `parzen.rs` was still
/// one file), and a change that only makes TPE faster must reproduce them bit for bit.
/// For each configuration: the last 10 internal values of 12 trials, and the FNV-1a hash
/// of all values of 12 and of 300 trials.
#[test]
fn tpe_suggestions_are_pinned_for_a_fixed_seed() {
    /// Name, sampler, objectives, batch size, last 10 values, hash of 12 and 300 trials.
    type Case = (
        &'static str,
        fn() -> TpeSampler,
        usize,
        usize,
        [f64; 10],
        u64,
        u64,
    );
    let cases: [Case; 5] = [
        (
            "univariate",
            || {
                TpeSamplerConfig::new()
                    .with_seed(0)
                    .with_n_startup_trials(5)
                    .init()
                    .unwrap()
            },
            1,
            1,
            [
                2.0,
                0.0051673253330246785,
                45.0,
                0.6000000000000001,
                4.862628183283217,
                2.0,
                0.06579221831957628,
                26.0,
                0.4,
                -1.8595327931910206,
            ],
            0x6c5653aa03bcfdf0,
            0x39331a76f3d754ee,
        ),
        (
            "multivariate",
            || {
                TpeSamplerConfig::new()
                    .with_seed(0)
                    .with_n_startup_trials(5)
                    .with_multivariate(true)
                    .init()
                    .unwrap()
            },
            1,
            1,
            [
                1.0,
                0.00015333745588533634,
                18.0,
                0.0,
                -4.958214159487972,
                0.0,
                0.010211083091503838,
                7.0,
                0.7000000000000001,
                0.9362410016088958,
            ],
            0x15a6419bf2612a97,
            0x13820f988bba23dd,
        ),
        (
            "multivariate, group, constant liar, batches of 3",
            || {
                TpeSamplerConfig::new()
                    .with_seed(0)
                    .with_n_startup_trials(5)
                    .with_multivariate(true)
                    .with_group(true)
                    .with_constant_liar(true)
                    .init()
                    .unwrap()
            },
            1,
            3,
            [
                0.0,
                0.021582414064301666,
                60.0,
                0.1,
                0.6971951746744487,
                1.0,
                0.0035864076060289686,
                21.0,
                0.2,
                2.2870022127227503,
            ],
            0xf3341fa1a3c75acf,
            0x1e0f9ba3e6a4a3a9,
        ),
        (
            "univariate, constant liar, batches of 3",
            || {
                TpeSamplerConfig::new()
                    .with_seed(0)
                    .with_n_startup_trials(5)
                    .with_constant_liar(true)
                    .init()
                    .unwrap()
            },
            1,
            3,
            [
                2.0,
                0.0051673253330246785,
                45.0,
                0.6000000000000001,
                4.862628183283217,
                2.0,
                0.06579221831957628,
                26.0,
                0.4,
                -1.8595327931910206,
            ],
            0x6c5653aa03bcfdf0,
            0x39331a76f3d754ee,
        ),
        (
            "two objectives",
            || {
                TpeSamplerConfig::new()
                    .with_seed(0)
                    .with_n_startup_trials(5)
                    .init()
                    .unwrap()
            },
            2,
            1,
            [
                2.0,
                0.0051673253330246785,
                22.0,
                1.0,
                1.1356711595661977,
                1.0,
                0.06324676781228714,
                43.0,
                0.7000000000000001,
                0.6637836968609424,
            ],
            0xcbf838acfb7951d8,
            0x8b0cdfd2773d2567,
        ),
    ];
    for (name, make, objectives, batch, last_10, hash_12, hash_300) in cases {
        let (values, hash) = tpe_trace(make(), objectives, batch, 12);
        assert_eq!(&values[values.len() - 10..], &last_10, "{name}");
        assert_eq!(hash, hash_12, "{name}: 12 trials");
        assert_eq!(
            tpe_trace(make(), objectives, batch, 300).1,
            hash_300,
            "{name}: 300 trials"
        );
    }
}

/// `optuna_defaults(V5_0)`: Optuna 5.0's TPE is multivariate with constant liar for one
/// objective (a trial asked after the startup trials publishes its joint sample) and
/// independent for several (nothing to publish); Optuna 4.9's defaults (saturate's) are
/// independent for both. An explicit `multivariate(false)` after the preset wins.
#[test]
fn optuna_5_defaults_are_multivariate_with_constant_liar_for_one_objective() {
    let publishes = |builder: saturate_study::samplers::TpeSamplerConfig, objectives: usize| {
        let study = StudyConfig::new()
            .with_sampler(
                builder
                    .with_seed(3)
                    .with_n_startup_trials(4)
                    .init()
                    .unwrap(),
            )
            .with_directions(vec![StudyDirection::Minimize; objectives])
            .init()
            .unwrap();
        for _ in 0..6 {
            let mut t = study.ask().unwrap();
            let x = t.suggest_float("x", -10.0, 10.0).unwrap();
            let y = t.suggest_float("y", -10.0, 10.0).unwrap();
            study.tell(&t, &vec![x * x + y; objectives]).unwrap();
        }
        let mut t = study.ask().unwrap();
        t.suggest_float("x", -10.0, 10.0).unwrap();
        let stored = study.storage().get_trial(t.id()).unwrap();
        stored.system_attrs.contains_key("tpe:relative_params:0")
    };
    use saturate_study::samplers::OptunaDefaults;
    let v5 = || TpeSamplerConfig::new().with_optuna_defaults(OptunaDefaults::V5_0);
    assert!(publishes(v5(), 1), "Optuna 5.0, one objective");
    assert!(!publishes(v5(), 2), "Optuna 5.0, two objectives");
    assert!(
        !publishes(v5().with_multivariate(false), 1),
        "explicit option wins"
    );
    assert!(
        !publishes(TpeSamplerConfig::new(), 1),
        "Optuna 4.9 (default)"
    );
    assert!(
        !publishes(
            TpeSamplerConfig::new().with_optuna_defaults(OptunaDefaults::V4_9),
            1
        ),
        "Optuna 4.9"
    );
}

/// TPE's opinion on a group's shared values (the trainer's refill while promising): after 30
/// finished trials where width 16 scored best, 12 in between and 8 worst, TPE would still
/// choose 16 and no longer 8 or 12. Before its start-up trials it cannot tell yet (yes); a
/// sampler without the criterion (random) has no opinion.
#[test]
fn tpe_still_chooses_the_shared_value_of_its_best_trials_only() {
    let width: Distribution = IntDistribution::new(8, 16, false, 4).unwrap().into();
    let question = |w: i64| -> BTreeMap<String, (Distribution, ParamValue)> {
        [("width".to_owned(), (width.clone(), ParamValue::Int(w)))].into()
    };
    let tpe = StudyConfig::new()
        .with_direction(StudyDirection::Maximize)
        .with_sampler(TpeSamplerConfig::new().with_seed(3).init().unwrap())
        .init()
        .unwrap();
    let run = |study: &DefaultStudy, n: usize| {
        for i in 0..n {
            let w = [8, 12, 16][i % 3];
            let fixed: FixedParams = [("width".to_owned(), ParamValue::Int(w))].into();
            let mut trial = study.ask_batch(&[fixed]).unwrap().remove(0);
            let got = trial.suggest_int_with("width", 8, 16, false, 4).unwrap();
            assert_eq!(got, w);
            let lr = trial.suggest_float_log("lr", 1e-3, 1.0).unwrap();
            // Width decides the value; the learning rate adds a little noise.
            study.tell(&trial, &[w as f64 / 16.0 + 0.01 * lr]).unwrap();
        }
    };
    run(&tpe, 3);
    for w in [8, 12, 16] {
        assert_eq!(
            tpe.shared_values_promising(&question(w)).unwrap(),
            Some(true)
        );
    }
    run(&tpe, 27);
    let answers: Vec<_> = [8, 12, 16]
        .into_iter()
        .map(|w| tpe.shared_values_promising(&question(w)).unwrap())
        .collect();
    assert_eq!(answers, [Some(false), Some(false), Some(true)]);

    let random = StudyConfig::new()
        .with_sampler(RandomSamplerConfig::new().with_seed(3).init())
        .init()
        .unwrap();
    run(&random, 6);
    assert_eq!(random.shared_values_promising(&question(16)).unwrap(), None);
}
