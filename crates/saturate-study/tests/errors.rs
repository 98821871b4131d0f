//! Every `StudyError` variant, produced the way a user meets it.

use std::sync::Arc;
use std::time::Duration;

use saturate_study::distributions::{CategoricalDistribution, FloatDistribution, IntDistribution};
use saturate_study::prelude::*;
use saturate_study::storage::JournalFileBackend;

use crate::common::tempdir;

fn study() -> DefaultStudy {
    crate::common::study_on(Arc::new(InMemoryStorage::new()), "e")
}

#[test]
fn invalid_distribution() {
    let cases = [
        FloatDistribution::new(2.0, 1.0, false, None).map(drop),
        FloatDistribution::new(0.0, 1.0, true, None).map(drop),
        FloatDistribution::new(0.0, 1.0, false, Some(0.0)).map(drop),
        FloatDistribution::new(1.0, 2.0, true, Some(0.5)).map(drop),
        IntDistribution::new(0, 10, true, 1).map(drop),
        IntDistribution::new(1, 10, false, -1).map(drop),
        IntDistribution::new(1, 10, true, 2).map(drop),
        IntDistribution::new(5, 1, false, 1).map(drop),
        CategoricalDistribution::new(vec![]).map(drop),
        Distribution::from_json_str("{\"name\": \"X\"}").map(drop),
    ];
    for case in cases {
        assert!(
            matches!(case, Err(StudyError::InvalidDistribution { .. })),
            "{case:?}"
        );
    }
    let mut t = study().ask().unwrap();
    let err = t.suggest_float("x", 1.0, 0.0).unwrap_err();
    assert_eq!(err.to_string(), "invalid distribution: low 1 > high 0");
}

#[test]
fn incompatible_distribution() {
    let mut t = study().ask().unwrap();
    t.suggest_int("n", 0, 3).unwrap();
    let err = t.suggest_categorical("n", ["a"]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("parameter `n` was suggested as {\"name\": \"IntDistribution\""),
        "{err}"
    );
}

/// Through the study, as a user meets it: another trial turns `n` into a categorical.
#[test]
fn distribution_conflict() {
    let study = study();
    let mut first = study.ask().unwrap();
    first.suggest_int("n", 0, 3).unwrap();
    let mut second = study.ask().unwrap();
    let err = second.suggest_categorical("n", ["a"]).unwrap_err();
    assert!(
        matches!(&err, StudyError::DistributionConflict { name, .. } if name == "n"),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("a different distribution kind") && text.contains("another name"),
        "{text}"
    );
}

#[test]
fn param_out_of_distribution() {
    let study = study();
    let mut t = study
        .ask_with([("n".to_string(), ParamValue::from("text"))].into())
        .unwrap();
    assert!(matches!(
        t.suggest_int("n", 0, 3),
        Err(StudyError::ParamOutOfDistribution { .. })
    ));
}

#[test]
fn unknown_study_id_duplicate_trial() {
    let storage = InMemoryStorage::new();
    assert!(matches!(
        storage.get_study_id_from_name("x"),
        Err(StudyError::UnknownStudy { .. })
    ));
    assert!(matches!(
        storage.get_study_directions(4),
        Err(StudyError::UnknownStudyId { study_id: 4 })
    ));
    storage
        .create_new_study(&[StudyDirection::Minimize], "x")
        .unwrap();
    let err = storage
        .create_new_study(&[StudyDirection::Minimize], "x")
        .unwrap_err();
    assert_eq!(err.to_string(), "a study named `x` already exists");
    assert!(matches!(
        storage.get_trial(0),
        Err(StudyError::UnknownTrial { trial_id: 0 })
    ));
}

#[test]
fn trial_finished_and_invalid_tell_state() {
    let study = study();
    let t = study.ask().unwrap();
    study.tell_fail(&t, "x").unwrap();
    assert!(matches!(
        study.tell(&t, &[1.0]),
        Err(StudyError::TrialFinished {
            state: TrialState::Fail,
            ..
        })
    ));
    let t = study.ask().unwrap();
    assert!(matches!(
        study.tell_state(&t, TrialState::Waiting, None, None),
        Err(StudyError::InvalidTellState {
            state: TrialState::Waiting
        })
    ));
}

#[test]
fn wrong_number_of_values_multi_objective_no_completed_trial() {
    let study = study();
    assert!(matches!(
        study.best_value(),
        Err(StudyError::NoCompletedTrial)
    ));
    let t = study.ask().unwrap();
    let err = study.tell(&t, &[1.0, 2.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the study has 1 objective(s) but 2 value(s) were given"
    );
    let two = StudyConfig::new()
        .with_directions([StudyDirection::Minimize, StudyDirection::Minimize])
        .init()
        .unwrap();
    assert!(matches!(
        two.best_trial(),
        Err(StudyError::MultiObjective { objectives: 2, .. })
    ));
}

#[test]
fn corrupt_journal_lock_timeout_io() {
    let dir = tempdir();
    let path = dir.path().join("bad.log");
    std::fs::write(&path, "garbage\n{}\n").unwrap();
    let err = JournalStorage::open(&path)
        .unwrap()
        .get_all_studies()
        .unwrap_err();
    assert!(
        matches!(err, StudyError::CorruptJournal { line: 1, .. }),
        "{err}"
    );

    let path = dir.path().join("locked.log");
    let backend = JournalFileBackend::new(&path)
        .unwrap()
        .with_lock_timeout(Duration::from_millis(10));
    crate::common::hold_lock(&backend);
    let err = JournalStorage::new(backend)
        .create_new_study(&[StudyDirection::Minimize], "s")
        .unwrap_err();
    assert!(err.to_string().starts_with("timed out after"), "{err}");

    let err = JournalStorage::open(dir.path().join("no/such/dir/j.log")).unwrap_err();
    assert!(matches!(err, StudyError::Io { .. }), "{err}");
}

#[test]
fn objective_failed_and_sampler() {
    let study = study();
    let err = study
        .optimize(Some(1), None, |_| -> Result<f64, _> { Err("nope".into()) })
        .unwrap_err();
    assert_eq!(err.to_string(), "objective failed in trial 0: nope");
    let grid = StudyConfig::new()
        .with_sampler(GridSamplerConfig::new(Default::default()).init().unwrap())
        .init()
        .unwrap();
    let mut t = grid.ask().unwrap();
    assert!(matches!(
        t.suggest_float("x", 0.0, 1.0),
        Err(StudyError::Sampler { .. })
    ));
}

#[test]
fn hand_built_invalid_distributions_are_rejected_by_suggest() {
    let mut t = study().ask().unwrap();
    let empty = Distribution::Categorical(CategoricalDistribution { choices: vec![] });
    assert!(matches!(
        t.suggest("c", empty),
        Err(StudyError::InvalidDistribution { .. })
    ));
    let off_grid = Distribution::Int(IntDistribution {
        low: 0,
        high: 5,
        log: false,
        step: 2,
    });
    assert!(matches!(
        t.suggest("i", off_grid),
        Err(StudyError::InvalidDistribution { .. })
    ));
    let reversed = Distribution::Float(FloatDistribution {
        low: 1.0,
        high: 0.0,
        log: false,
        step: None,
    });
    assert!(matches!(
        t.suggest("f", reversed),
        Err(StudyError::InvalidDistribution { .. })
    ));
}

#[test]
fn invalid_pruner_arguments_name_the_argument() {
    let cases: [(&str, Result<(), StudyError>); 16] = [
        (
            "percentile",
            PercentilePrunerConfig::new(101.0)
                .with_n_startup_trials(0)
                .init()
                .map(drop),
        ),
        (
            "percentile",
            PercentilePrunerConfig::new(f64::NAN)
                .with_n_startup_trials(0)
                .init()
                .map(drop),
        ),
        (
            "n_warmup_steps",
            MedianPrunerConfig::new()
                .with_n_startup_trials(0)
                .with_n_warmup_steps(-1)
                .init()
                .map(drop),
        ),
        (
            "interval_steps",
            MedianPrunerConfig::new()
                .with_n_startup_trials(0)
                .with_interval_steps(0)
                .init()
                .map(drop),
        ),
        (
            "n_min_trials",
            MedianPrunerConfig::new()
                .with_n_startup_trials(0)
                .with_n_min_trials(0)
                .init()
                .map(drop),
        ),
        (
            "min_delta",
            PatientPrunerConfig::new(1)
                .with_min_delta(-1.0)
                .init()
                .map(drop),
        ),
        (
            "lower, upper",
            ThresholdPrunerConfig::new().init().map(drop),
        ),
        (
            "lower, upper",
            ThresholdPrunerConfig::new()
                .with_lower(Some(2.0))
                .with_upper(Some(1.0))
                .init()
                .map(drop),
        ),
        (
            "n_warmup_steps",
            ThresholdPrunerConfig::new()
                .with_lower(Some(0.0))
                .with_n_warmup_steps(-1)
                .init()
                .map(drop),
        ),
        (
            "p_threshold",
            WilcoxonPrunerConfig::new()
                .with_p_threshold(1.5)
                .with_n_startup_steps(0)
                .init()
                .map(drop),
        ),
        (
            "min_resource",
            HyperbandPrunerConfig::new()
                .with_min_resource(0)
                .init()
                .map(drop),
        ),
        (
            "reduction_factor",
            HyperbandPrunerConfig::new()
                .with_reduction_factor(1)
                .init()
                .map(drop),
        ),
        (
            "max_resource",
            HyperbandPrunerConfig::new()
                .with_min_resource(5)
                .with_max_resource(Some(4))
                .init()
                .map(drop),
        ),
        (
            "min_resource",
            SuccessiveHalvingPrunerConfig::new()
                .with_min_resource(Some(0))
                .with_reduction_factor(2)
                .init()
                .map(drop),
        ),
        (
            "reduction_factor",
            SuccessiveHalvingPrunerConfig::new()
                .with_min_resource(Some(1))
                .with_reduction_factor(1)
                .init()
                .map(drop),
        ),
        (
            "bootstrap_count",
            SuccessiveHalvingPrunerConfig::new()
                .with_bootstrap_count(1)
                .init()
                .map(drop),
        ),
    ];
    for (argument, case) in cases {
        match case {
            Err(StudyError::InvalidArgument { what, reason }) => {
                assert_eq!(what, argument, "{reason}");
            }
            other => panic!("{argument}: {other:?}"),
        }
    }
    let err = MedianPrunerConfig::new()
        .with_n_startup_trials(0)
        .with_n_warmup_steps(-3)
        .init()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid n_warmup_steps: must be 0 or more, got -3"
    );
}
