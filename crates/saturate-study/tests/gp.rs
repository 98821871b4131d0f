//! The GP sampler: the conformance suite, and what it does with the study.

use saturate_study::prelude::*;
use saturate_study::study::ObjectiveError;
use saturate_study::testing::samplers;

fn make(seed: u64) -> Box<dyn Sampler> {
    Box::new(
        GpSamplerConfig::new()
            .with_seed(seed)
            .with_n_startup_trials(5)
            .init()
            .unwrap(),
    )
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

#[test]
fn arguments_out_of_range_are_refused() {
    for (config, what) in [
        (
            GpSamplerConfig::new().with_n_local_search(1),
            "n_local_search",
        ),
        (
            GpSamplerConfig::new().with_n_preliminary_samples(0),
            "n_preliminary_samples",
        ),
    ] {
        match config.init() {
            Err(StudyError::InvalidArgument { what: w, .. }) => assert_eq!(w, what),
            other => panic!("{what}: {other:?}"),
        }
    }
}

fn quadratic(t: &mut Trial) -> Result<f64, ObjectiveError> {
    let x = t.suggest_float("x", -10.0, 10.0)?;
    let y = t.suggest_float("y", -10.0, 10.0)?;
    Ok((x - 3.0).powi(2) + (y + 2.0).powi(2))
}

fn gp_study(seed: u64, direction: StudyDirection) -> DefaultStudy {
    StudyConfig::new()
        .with_direction(direction)
        .with_sampler(GpSamplerConfig::new().with_seed(seed).init().unwrap())
        .init()
        .unwrap()
}

#[test]
fn finds_the_minimum_of_a_quadratic_far_better_than_its_random_start() {
    // 10 random trials, then 10 from the GP: on a smooth bowl the GP's trials land near
    // the minimum (random search in [-10, 10]^2 has median best ~4 after 20 trials).
    for seed in 0..3 {
        let study = gp_study(seed, StudyDirection::Minimize);
        study.optimize(Some(20), None, quadratic).unwrap();
        let best = study.best_value().unwrap();
        assert!(best < 0.5, "seed {seed}: best {best}");
    }
}

#[test]
fn maximises_when_asked_to() {
    let study = gp_study(0, StudyDirection::Maximize);
    study
        .optimize(Some(20), None, |t| Ok(-quadratic(t)?))
        .unwrap();
    let best = study.best_value().unwrap();
    assert!(best > -0.5, "best {best}");
}

#[test]
fn log_int_stepped_and_categorical_parameters_stay_on_their_grids() {
    let study = StudyConfig::new()
        .with_sampler(
            GpSamplerConfig::new()
                .with_seed(1)
                .with_n_startup_trials(4)
                .with_deterministic_objective(true)
                .init()
                .unwrap(),
        )
        .init()
        .unwrap();
    study
        .optimize(Some(16), None, |t| {
            let lr = t.suggest_float_log("lr", 1e-5, 1e-1)?;
            let width = t.suggest_int_step("width", 8, 64, 8)?;
            let depth = t.suggest_int_log("depth", 1, 32)?;
            let p = t.suggest_float_step("p", 0.0, 0.5, 0.1)?;
            let act = t.suggest_categorical("act", ["relu", "gelu", "tanh"])?;
            assert!((1e-5..=1e-1).contains(&lr), "lr {lr}");
            assert!(width % 8 == 0 && (8..=64).contains(&width), "width {width}");
            assert!((1..=32).contains(&depth), "depth {depth}");
            let k = (p / 0.1).round();
            assert!(
                (p - k * 0.1).abs() < 1e-12 && (0.0..=0.5).contains(&p),
                "p {p}"
            );
            let penalty = if act == "gelu" { 0.0 } else { 1.0 };
            Ok((lr.log10() + 3.0).powi(2)
                + ((width - 32) as f64 / 8.0).powi(2)
                + penalty
                + (depth as f64).ln()
                + p)
        })
        .unwrap();
    // The GP's trials (after the 4 random ones) use the right choice most of the time.
    let gelu = study.trials(None).unwrap()[4..]
        .iter()
        .filter(|t| t.param("act") == Some(ParamValue::from("gelu")))
        .count();
    assert!(gelu >= 8, "gelu in {gelu} of 12 GP trials");
}

/// The points of `k` trials asked together after 15 told ones.
fn batch(seed: u64, k: usize) -> Vec<(f64, f64)> {
    let study = gp_study(seed, StudyDirection::Minimize);
    study.optimize(Some(15), None, quadratic).unwrap();
    let mut trials = study.ask_many(k).unwrap();
    trials
        .iter_mut()
        .map(|t| {
            (
                t.suggest_float("x", -10.0, 10.0).unwrap(),
                t.suggest_float("y", -10.0, 10.0).unwrap(),
            )
        })
        .collect()
}

#[test]
fn trials_asked_together_are_distinct_and_spread() {
    // qLogEI counts what the RUNNING trials will likely bring: a candidate next to one of
    // them adds little, so the batch spreads instead of repeating the best point.
    for seed in 0..3 {
        let points = batch(seed, 5);
        let mut closest = f64::INFINITY;
        for (i, a) in points.iter().enumerate() {
            for b in &points[i + 1..] {
                closest = closest.min(((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt());
            }
        }
        // 0.1 is 0.5% of the range. Optuna 5.0's GPSampler on the same setup (seeds 0-2)
        // keeps its closest pair 0.12-0.32 apart, this sampler 0.18-0.22; with the RUNNING
        // trials left out of the acquisition the closest pair is 3e-5 apart.
        assert!(
            closest > 0.1,
            "seed {seed}: closest pair {closest}: {points:?}"
        );
    }
}

#[test]
fn each_trial_publishes_its_relative_parameters() {
    let study = gp_study(0, StudyDirection::Minimize);
    study.optimize(Some(12), None, quadratic).unwrap();
    let batch = study.ask_many(3).unwrap();
    for t in &batch {
        let stored = study.storage().get_trial(t.id()).unwrap();
        assert!(
            stored.system_attrs.contains_key("gp:relative_params:0"),
            "trial {}",
            t.number()
        );
    }
}

/// Minimise x² + y² subject to x + y >= 1 (optimum 0.5 at x = y = 0.5; the unconstrained
/// optimum, 0 at the origin, is infeasible): 8 start-up trials and 16 GP trials, asked
/// `batch` at a time and told together. Asserts that at least a quarter of the GP trials
/// are feasible and that the best feasible value is below 0.51.
fn assert_constrained_search_succeeds(seed: u64, batch: usize) {
    let sampler = GpSamplerConfig::new()
        .with_seed(seed)
        .with_n_startup_trials(8)
        .init()
        .unwrap();
    let study = StudyConfig::new().with_sampler(sampler).init().unwrap();
    for _ in 0..24 / batch {
        let mut asked: Vec<_> = (0..batch).map(|_| study.ask().unwrap()).collect();
        for t in &mut asked {
            let x = t.suggest_float("x", -2.0, 2.0).unwrap();
            let y = t.suggest_float("y", -2.0, 2.0).unwrap();
            t.set_constraint("sum_at_least_1", 1.0 - x - y).unwrap();
            study.tell(t, &[x * x + y * y]).unwrap();
        }
    }
    let trials = study.trials(None).unwrap();
    let gp_trials = &trials[8..];
    let feasible = gp_trials.iter().filter(|t| t.is_feasible()).count();
    assert!(
        feasible * 4 >= gp_trials.len(),
        "seed {seed}, batches of {batch}: {feasible} of {} GP trials feasible",
        gp_trials.len()
    );
    let best = study.best_value().unwrap();
    assert!(
        best < 0.51,
        "seed {seed}, batches of {batch}: best feasible value {best}"
    );
}

#[test]
fn constraints_steer_the_search_to_feasible_points() {
    // Optuna 5.0's GPSampler on the same problem (seeds 0-5, same startup and trial
    // count): 8-16 of the 16 GP trials feasible (the optimum is on the boundary, so the
    // search straddles it) and a best feasible value of 0.5000-0.5002. Ignoring the
    // constraint, the GP heads for the infeasible origin.
    for seed in 0..6 {
        assert_constrained_search_succeeds(seed, 1);
    }
}

#[test]
fn constraints_steer_a_batched_search_to_feasible_points() {
    // Trials asked four at a time (qLogCEI: the constraint's fantasies at the RUNNING
    // trials). Optuna 5.0's GPSampler asked the same way (seeds 0-5, 8 start-up trials,
    // 6 batches of 4): 8-16 of the 16 GP trials feasible and a best feasible value of
    // 0.50001-0.50017.
    for seed in 0..6 {
        assert_constrained_search_succeeds(seed, 4);
    }
}

#[test]
fn trials_with_different_numbers_of_constraints_are_a_sampler_error() {
    let sampler = GpSamplerConfig::new()
        .with_seed(0)
        .with_n_startup_trials(3)
        .init()
        .unwrap();
    let study = StudyConfig::new().with_sampler(sampler).init().unwrap();
    for i in 0..3 {
        let mut t = study.ask().unwrap();
        let x = t.suggest_float("x", 0.0, 1.0).unwrap();
        t.set_constraint("a", x - 0.5).unwrap();
        if i == 1 {
            t.set_constraint("b", 0.0).unwrap();
        }
        study.tell(&t, &[x]).unwrap();
    }
    // The GP's relative sampling runs when the trial is asked.
    let error = study.ask().unwrap_err();
    assert!(
        matches!(&error, StudyError::Sampler { reason } if reason.contains("same constraints")),
        "{error}"
    );
}

// ---- Several objectives: log expected hypervolume improvement. ----

/// Hypervolume of two-objective losses below `reference` (sweep over the first objective).
fn hypervolume_2d(points: &[[f64; 2]], reference: [f64; 2]) -> f64 {
    let mut inside: Vec<[f64; 2]> = points
        .iter()
        .copied()
        .filter(|p| p[0] < reference[0] && p[1] < reference[1])
        .collect();
    inside.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    let mut volume = 0.0;
    let mut ceiling = reference[1];
    for p in inside {
        if p[1] < ceiling {
            volume += (reference[0] - p[0]) * (ceiling - p[1]);
            ceiling = p[1];
        }
    }
    volume
}

#[test]
fn hypervolume_2d_is_right_on_a_hand_example() {
    // (0.5, 0.5) and (0.2, 0.8) below (1, 1): 0.5 · 0.5 + 0.3 · 0.2.
    let v = hypervolume_2d(&[[0.5, 0.5], [0.2, 0.8], [1.5, 0.1]], [1.0, 1.0]);
    assert!((v - 0.31).abs() < 1e-12, "{v}");
}

/// Minimise (x² + y², (x − 2)² + y²) over [−5, 5]², asked `batch` at a time: the
/// hypervolume of all trials' values below (20, 20) (at most 400; the Pareto front is
/// y = 0, 0 ≤ x ≤ 2).
fn two_objective_hypervolume(sampler: Box<dyn Sampler>, trials: usize, batch: usize) -> f64 {
    let study = StudyConfig::new()
        .with_directions([StudyDirection::Minimize, StudyDirection::Minimize])
        .with_sampler(sampler)
        .init()
        .unwrap();
    let mut values = Vec::new();
    for _ in 0..trials / batch {
        let mut asked: Vec<_> = (0..batch).map(|_| study.ask().unwrap()).collect();
        for t in &mut asked {
            let x = t.suggest_float("x", -5.0, 5.0).unwrap();
            let y = t.suggest_float("y", -5.0, 5.0).unwrap();
            let v = [x * x + y * y, (x - 2.0).powi(2) + y * y];
            study.tell(t, &v).unwrap();
            values.push(v);
        }
    }
    hypervolume_2d(&values, [20.0, 20.0])
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn two_objective_search_reaches_more_hypervolume_than_random_search() {
    // Seeds 0-4, 30 trials (10 random start-up trials, then 20 from the GP). Measured:
    // this sampler 396.3-396.7, random search 315-356; Optuna 5.0's GPSampler on the same
    // problem and seeds 396.3-396.5.
    let gp: Vec<f64> = (0..5)
        .map(|seed| two_objective_hypervolume(make_startup(seed, 10), 30, 1))
        .collect();
    let random: Vec<f64> = (0..5)
        .map(|seed| {
            two_objective_hypervolume(
                Box::new(RandomSamplerConfig::new().with_seed(seed).init()),
                30,
                1,
            )
        })
        .collect();
    let (gp_median, random_median) = (median(gp.clone()), median(random.clone()));
    assert!(
        gp_median > random_median + 0.5 * (400.0 - random_median),
        "median hypervolume: GP {gp_median} ({gp:?}), random {random_median} ({random:?})"
    );
}

fn make_startup(seed: u64, startup: usize) -> Box<dyn Sampler> {
    Box::new(
        GpSamplerConfig::new()
            .with_seed(seed)
            .with_n_startup_trials(startup)
            .init()
            .unwrap(),
    )
}

#[test]
fn two_objective_trials_asked_together_are_distinct_and_spread() {
    // qLogEHVI: each trial of a batch counts the fantasies of the ones asked before it.
    for seed in 0..3 {
        let study = StudyConfig::new()
            .with_directions([StudyDirection::Minimize, StudyDirection::Minimize])
            .with_sampler(make_startup(seed, 10))
            .init()
            .unwrap();
        study
            .optimize(Some(15), None, |t| {
                let x = t.suggest_float("x", -5.0, 5.0)?;
                let y = t.suggest_float("y", -5.0, 5.0)?;
                Ok(vec![x * x + y * y, (x - 2.0).powi(2) + y * y])
            })
            .unwrap();
        let mut asked = study.ask_many(5).unwrap();
        let points: Vec<(f64, f64)> = asked
            .iter_mut()
            .map(|t| {
                (
                    t.suggest_float("x", -5.0, 5.0).unwrap(),
                    t.suggest_float("y", -5.0, 5.0).unwrap(),
                )
            })
            .collect();
        let mut closest = f64::INFINITY;
        for (i, a) in points.iter().enumerate() {
            for b in &points[i + 1..] {
                closest = closest.min(((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt());
            }
        }
        assert!(
            closest > 0.05,
            "seed {seed}: closest pair {closest}: {points:?}"
        );
    }
}

#[test]
fn two_objective_search_with_a_constraint_stays_mostly_feasible() {
    // Minimise (x² + y², (x − 1)² + (y − 1)²) subject to x + y ≥ 1.5: the Pareto front is
    // the segment from (0.75, 0.75) to (1, 1). Batches of 1 and 4 (LogCEHVI, qLogCEHVI).
    // Measured, seeds 0-2: 16 of 16 GP trials feasible one at a time, 10-11 of 16 in
    // batches of 4. Optuna 5.0's GPSampler with the four trials of a batch suggested
    // before any is told: 10-12 of 16; both then put several trials of a batch on the same
    // point just inside or outside the boundary x + y = 1.5 (qLogCEHVI's smoothed
    // feasibility counts a barely infeasible fantasy nearly as feasible, while the
    // decomposition leaves it out).
    for batch in [1, 4] {
        for seed in 0..3 {
            let study = StudyConfig::new()
                .with_directions([StudyDirection::Minimize, StudyDirection::Minimize])
                .with_sampler(make_startup(seed, 8))
                .init()
                .unwrap();
            for _ in 0..24 / batch {
                let mut asked: Vec<_> = (0..batch).map(|_| study.ask().unwrap()).collect();
                for t in &mut asked {
                    let x = t.suggest_float("x", -2.0, 2.0).unwrap();
                    let y = t.suggest_float("y", -2.0, 2.0).unwrap();
                    t.set_constraint("sum", 1.5 - x - y).unwrap();
                    let v = [x * x + y * y, (x - 1.0).powi(2) + (y - 1.0).powi(2)];
                    study.tell(t, &v).unwrap();
                }
            }
            let trials = study.trials(None).unwrap();
            let gp_trials = &trials[8..];
            let feasible = gp_trials.iter().filter(|t| t.is_feasible()).count();
            assert!(
                feasible * 2 >= gp_trials.len(),
                "seed {seed}, batches of {batch}: {feasible} of {} GP trials feasible",
                gp_trials.len()
            );
        }
    }
}
