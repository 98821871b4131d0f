//! The storage conformance suite (after Optuna's `optuna/testing/pytest_storages.py`).
//!
//! Every property takes a fresh, empty storage and panics, naming the property and what
//! went wrong, when the storage breaks the [`Storage`] contract.

use std::collections::BTreeMap;

use serde_json::json;

use crate::distributions::{
    CategoricalDistribution, Distribution, FloatDistribution, IntDistribution, ParamValue,
};
use crate::error::StudyError;
use crate::storage::Storage;
use crate::trial::{FrozenTrial, StudyDirection, TrialState};

/// A property of the suite: its name (the function's) and the function.
pub type StorageProperty = (&'static str, fn(&dyn Storage));

/// Every property of the suite, by name, in the order [`run_storage_suite`] runs them: for
/// suites that do more per property (reopen the storage and compare what a second
/// connection reads, time each property, report which one failed).
pub const STORAGE_PROPERTIES: [StorageProperty; 11] = [
    (
        "studies_have_ids_names_and_directions",
        studies_have_ids_names_and_directions,
    ),
    ("study_attributes_round_trip", study_attributes_round_trip),
    (
        "trial_ids_are_global_and_numbers_per_study",
        trial_ids_are_global_and_numbers_per_study,
    ),
    ("trial_fields_round_trip", trial_fields_round_trip),
    (
        "finished_trials_are_immutable",
        finished_trials_are_immutable,
    ),
    (
        "waiting_trials_are_claimed_once",
        waiting_trials_are_claimed_once,
    ),
    (
        "trials_are_listed_in_number_order_and_filtered",
        trials_are_listed_in_number_order_and_filtered,
    ),
    ("unknown_ids_are_typed_errors", unknown_ids_are_typed_errors),
    (
        "deleted_studies_are_gone_with_their_trials",
        deleted_studies_are_gone_with_their_trials,
    ),
    (
        "trial_ids_keep_counting_across_studies",
        trial_ids_keep_counting_across_studies,
    ),
    (
        "a_parameter_keeps_its_distribution_kind_in_a_study",
        a_parameter_keeps_its_distribution_kind_in_a_study,
    ),
];

/// Runs every property of the suite, each on a fresh storage from `make`.
pub fn run_storage_suite(make: impl Fn() -> Box<dyn Storage>) {
    for (_, property) in STORAGE_PROPERTIES {
        property(make().as_ref());
    }
}

fn minimize() -> [StudyDirection; 1] {
    [StudyDirection::Minimize]
}

fn finished(state: TrialState, value: Option<f64>, intermediate: &[(i64, f64)]) -> FrozenTrial {
    let mut t = FrozenTrial::new(0, 0, state);
    t.values = value.map(|v| vec![v]);
    t.intermediate_values = intermediate.iter().copied().collect();
    t
}

/// Study ids count from 0; names are unique ([`StudyError::DuplicateStudy`]) and map to
/// ids both ways; directions come back as created (Optuna's `test_create_new_study*`,
/// `test_get_study_id_from_name_and_get_study_name_from_id`).
pub fn studies_have_ids_names_and_directions(storage: &dyn Storage) {
    let a = storage
        .create_new_study(&minimize(), "a")
        .expect("create a");
    let both = [StudyDirection::Maximize, StudyDirection::Minimize];
    let b = storage.create_new_study(&both, "b").expect("create b");
    assert_eq!((a, b), (0, 1), "studies_have_ids_names_and_directions: ids");
    assert!(
        matches!(
            storage.create_new_study(&minimize(), "a"),
            Err(StudyError::DuplicateStudy { .. })
        ),
        "studies_have_ids_names_and_directions: a second study named `a`"
    );
    assert_eq!(storage.get_study_id_from_name("b").expect("id of b"), 1);
    assert_eq!(storage.get_study_name_from_id(0).expect("name of 0"), "a");
    assert_eq!(storage.get_study_directions(b).expect("directions"), both);
    let studies = storage.get_all_studies().expect("all studies");
    assert_eq!(studies, vec![(0, "a".to_string()), (1, "b".to_string())]);
}

/// Study user and system attributes round-trip JSON values and stay apart (Optuna's
/// `test_set_and_get_study_*_attrs`, `test_study_user_and_system_attrs_confusion`).
pub fn study_attributes_round_trip(storage: &dyn Storage) {
    let a = storage.create_new_study(&minimize(), "a").expect("create");
    let value = json!({"x": [1, 2.5, null], "big": u64::MAX, "s": "é"});
    storage
        .set_study_user_attr(a, "u", value.clone())
        .expect("user attr");
    storage
        .set_study_system_attr(a, "s", json!("v"))
        .expect("system attr");
    let user = storage.get_study_user_attrs(a).expect("user attrs");
    let system = storage.get_study_system_attrs(a).expect("system attrs");
    assert_eq!(user["u"], value, "study_attributes_round_trip: user");
    assert_eq!(system["s"], "v", "study_attributes_round_trip: system");
    assert!(!user.contains_key("s") && !system.contains_key("u"));
}

/// Trial ids are global, numbers count per study from 0, a new trial is RUNNING, and a
/// batch gets consecutive ids (Optuna's `test_create_new_trial`).
pub fn trial_ids_are_global_and_numbers_per_study(storage: &dyn Storage) {
    let a = storage
        .create_new_study(&minimize(), "a")
        .expect("create a");
    let b = storage
        .create_new_study(&minimize(), "b")
        .expect("create b");
    let t0 = storage.create_new_trial(a, None).expect("trial");
    let t1 = storage.create_new_trial(b, None).expect("trial");
    let t2 = storage.create_new_trial(a, None).expect("trial");
    assert_eq!((t0, t1, t2), (0, 1, 2), "trial ids");
    assert_eq!(storage.get_trial(t2).expect("t2").number, 1);
    assert_eq!(storage.get_trial(t1).expect("t1").number, 0);
    assert_eq!(
        storage.get_trial(t0).expect("t0").state,
        TrialState::Running
    );
    let batch = storage
        .create_new_trials(a, &[None, None, None])
        .expect("batch");
    assert_eq!(batch, vec![3, 4, 5], "a batch's ids");
    let numbers: Vec<u64> = batch
        .iter()
        .map(|id| storage.get_trial(*id).expect("trial").number)
        .collect();
    assert_eq!(numbers, vec![2, 3, 4], "a batch's numbers");
}

/// Parameters, intermediate values (NaN included), attributes and values of a trial
/// come back as written, with a completion time once finished (Optuna's
/// `test_set_trial_param`, `test_set_trial_intermediate_value`, ...).
pub fn trial_fields_round_trip(storage: &dyn Storage) {
    let a = storage.create_new_study(&minimize(), "a").expect("create");
    let t0 = storage.create_new_trial(a, None).expect("trial");
    let float = Distribution::Float(FloatDistribution::new(0.0, 1.0, false, None).expect("valid"));
    let int = Distribution::Int(IntDistribution::new(1, 9, false, 2).expect("valid"));
    storage
        .set_trial_param(t0, "x", 0.5, &float)
        .expect("param x");
    storage
        .set_trial_param(t0, "n", 5.0, &int)
        .expect("param n");
    storage
        .set_trial_intermediate_value(t0, 0, f64::NAN)
        .expect("intermediate NaN");
    storage
        .set_trial_intermediate_value(t0, 1, 0.25)
        .expect("intermediate");
    storage
        .set_trial_user_attr(t0, "note", json!("hi"))
        .expect("user attr");
    storage
        .set_trial_system_attr(t0, "sys", json!(3))
        .expect("system attr");
    assert!(storage
        .set_trial_state_values(t0, TrialState::Complete, Some(&[0.1]))
        .expect("complete"));
    let t = storage.get_trial(t0).expect("trial");
    assert_eq!(t.params["x"].internal, 0.5);
    assert_eq!(t.params["x"].distribution, float);
    assert_eq!(t.param("n"), Some(ParamValue::Int(5)));
    assert!(t.intermediate_values[&0].is_nan(), "NaN intermediate value");
    assert_eq!(t.intermediate_values[&1], 0.25);
    assert_eq!(t.user_attrs["note"], "hi");
    assert_eq!(t.system_attrs["sys"], 3);
    assert_eq!(t.values, Some(vec![0.1]));
    assert!(
        t.datetime_complete.is_some(),
        "datetime_complete of a finished trial"
    );
}

/// A finished trial refuses every write with [`StudyError::TrialFinished`] (Optuna's
/// `test_check_trial_is_updatable`).
pub fn finished_trials_are_immutable(storage: &dyn Storage) {
    let a = storage.create_new_study(&minimize(), "a").expect("create");
    let t0 = storage.create_new_trial(a, None).expect("trial");
    let float = Distribution::Float(FloatDistribution::new(0.0, 1.0, false, None).expect("valid"));
    storage
        .set_trial_state_values(t0, TrialState::Complete, Some(&[0.1]))
        .expect("complete");
    for (what, result) in [
        ("param", storage.set_trial_param(t0, "y", 0.1, &float)),
        (
            "intermediate value",
            storage.set_trial_intermediate_value(t0, 2, 1.0),
        ),
        ("user attr", storage.set_trial_user_attr(t0, "k", json!(1))),
        (
            "system attr",
            storage.set_trial_system_attr(t0, "k", json!(1)),
        ),
        (
            "state",
            storage
                .set_trial_state_values(t0, TrialState::Fail, None)
                .map(drop),
        ),
    ] {
        assert!(
            matches!(result, Err(StudyError::TrialFinished { trial_id: 0, .. })),
            "finished_trials_are_immutable: {what}: {result:?}"
        );
    }
}

/// Templates keep their state, values and attributes; a WAITING trial is claimed
/// (set RUNNING) once, and the claim sets its start time (Optuna's
/// `test_create_new_trial_with_template_trial`, `test_set_trial_state_values_for_state`).
pub fn waiting_trials_are_claimed_once(storage: &dyn Storage) {
    let a = storage.create_new_study(&minimize(), "a").expect("create");
    let mut template = finished(TrialState::Waiting, None, &[]);
    template
        .system_attrs
        .insert("fixed_params".into(), json!({"x": 0.5}));
    let waiting = storage
        .create_new_trial(a, Some(template))
        .expect("waiting");
    let w = storage.get_trial(waiting).expect("trial");
    assert_eq!((w.state, w.datetime_start), (TrialState::Waiting, None));
    assert_eq!(w.system_attrs["fixed_params"], json!({"x": 0.5}));
    assert!(
        storage
            .set_trial_state_values(waiting, TrialState::Running, None)
            .expect("claim"),
        "waiting_trials_are_claimed_once: the first claim wins"
    );
    assert!(
        !storage
            .set_trial_state_values(waiting, TrialState::Running, None)
            .expect("second claim"),
        "waiting_trials_are_claimed_once: the second claim loses"
    );
    assert!(storage
        .get_trial(waiting)
        .expect("trial")
        .datetime_start
        .is_some());
    let complete = storage
        .create_new_trial(
            a,
            Some(finished(TrialState::Complete, Some(2.0), &[(3, 1.0)])),
        )
        .expect("complete template");
    let c = storage.get_trial(complete).expect("trial");
    assert_eq!(
        (c.state, c.values.clone()),
        (TrialState::Complete, Some(vec![2.0]))
    );
    assert_eq!(c.intermediate_values[&3], 1.0);
}

/// `get_all_trials` lists a study's trials in number order and filters by state
/// (Optuna's `test_get_all_trials`, `test_get_all_trials_state_option`).
pub fn trials_are_listed_in_number_order_and_filtered(storage: &dyn Storage) {
    let a = storage
        .create_new_study(&minimize(), "a")
        .expect("create a");
    let b = storage
        .create_new_study(&minimize(), "b")
        .expect("create b");
    let mut states = BTreeMap::new();
    for (i, state) in [
        TrialState::Complete,
        TrialState::Running,
        TrialState::Pruned,
        TrialState::Complete,
        TrialState::Fail,
    ]
    .into_iter()
    .enumerate()
    {
        let value = (state == TrialState::Complete).then_some(i as f64);
        let id = storage
            .create_new_trial(a, Some(finished(state, value, &[])))
            .expect("trial");
        storage
            .create_new_trial(b, None)
            .expect("other study's trial");
        states.insert(id, state);
    }
    let all = storage.get_all_trials(a, None).expect("all trials");
    let numbers: Vec<u64> = all.iter().map(|t| t.number).collect();
    assert_eq!(
        numbers,
        vec![0, 1, 2, 3, 4],
        "trials_are_listed_in_number_order_and_filtered"
    );
    for t in &all {
        assert_eq!(t.state, states[&t.trial_id]);
    }
    let done = storage
        .get_all_trials(a, Some(&[TrialState::Complete, TrialState::Pruned]))
        .expect("filtered");
    let numbers: Vec<u64> = done.iter().map(|t| t.number).collect();
    assert_eq!(numbers, vec![0, 2, 3], "filtered by state");
}

/// Unknown trial ids, study names and study ids are the typed errors
/// [`StudyError::UnknownTrial`], [`StudyError::UnknownStudy`] and
/// [`StudyError::UnknownStudyId`].
pub fn unknown_ids_are_typed_errors(storage: &dyn Storage) {
    storage.create_new_study(&minimize(), "a").expect("create");
    assert!(matches!(
        storage.get_trial(999),
        Err(StudyError::UnknownTrial { trial_id: 999 })
    ));
    assert!(matches!(
        storage.get_study_id_from_name("zz"),
        Err(StudyError::UnknownStudy { .. })
    ));
    assert!(matches!(
        storage.create_new_trial(9, None),
        Err(StudyError::UnknownStudyId { study_id: 9 })
    ));
    assert!(matches!(
        storage.get_study_directions(9),
        Err(StudyError::UnknownStudyId { study_id: 9 })
    ));
}

/// A deleted study, its name and its trials are gone; deleting it again is
/// [`StudyError::UnknownStudyId`]; its name can be used again (Optuna's
/// `test_delete_study`). Whether the id comes back is the storage's choice (Optuna's
/// SQLite tables hand out the newest id again).
pub fn deleted_studies_are_gone_with_their_trials(storage: &dyn Storage) {
    let a = storage
        .create_new_study(&minimize(), "a")
        .expect("create a");
    let b = storage
        .create_new_study(&minimize(), "b")
        .expect("create b");
    let t = storage.create_new_trial(b, None).expect("trial");
    storage.delete_study(b).expect("delete");
    assert!(matches!(
        storage.get_study_directions(b),
        Err(StudyError::UnknownStudyId { .. })
    ));
    assert!(matches!(
        storage.get_trial(t),
        Err(StudyError::UnknownTrial { .. })
    ));
    assert!(matches!(
        storage.delete_study(b),
        Err(StudyError::UnknownStudyId { .. })
    ));
    assert!(matches!(
        storage.get_study_id_from_name("b"),
        Err(StudyError::UnknownStudy { .. })
    ));
    let again = storage
        .create_new_study(&minimize(), "b")
        .expect("name b again");
    assert_ne!(
        again, a,
        "deleted_studies_are_gone_with_their_trials: a live id reused"
    );
    let names: Vec<String> = storage
        .get_all_studies()
        .expect("all studies")
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(names, vec!["a", "b"]);
    assert!(storage
        .get_all_trials(again, None)
        .expect("trials")
        .is_empty());
}

/// Trial ids are never reused: after trials in two studies and a deletion, the next
/// trial's id is one more than the largest given so far.
pub fn trial_ids_keep_counting_across_studies(storage: &dyn Storage) {
    let a = storage
        .create_new_study(&minimize(), "a")
        .expect("create a");
    let b = storage
        .create_new_study(&minimize(), "b")
        .expect("create b");
    storage.create_new_trial(a, None).expect("trial");
    let last = storage.create_new_trial(b, None).expect("trial");
    let c = storage
        .create_new_study(&minimize(), "c")
        .expect("create c");
    assert_eq!(
        storage.create_new_trial(c, None).expect("trial"),
        last + 1,
        "trial_ids_keep_counting_across_studies"
    );
}

/// As Optuna (`check_distribution_compatibility`): once a trial of a study has set parameter
/// `x` as a float, another trial of that study cannot set it as a categorical or an int, nor
/// as a log float; new bounds are fine, and another study is free to use `x` differently.
pub fn a_parameter_keeps_its_distribution_kind_in_a_study(storage: &dyn Storage) {
    let p = "a_parameter_keeps_its_distribution_kind_in_a_study";
    let study = storage.create_new_study(&minimize(), "s").expect("create");
    let float = |low, high, log| {
        Distribution::Float(FloatDistribution::new(low, high, log, None).expect("valid"))
    };
    let first = storage.create_new_trial(study, None).expect("trial");
    storage
        .set_trial_param(first, "x", 0.5, &float(0.0, 1.0, false))
        .expect("the first float");
    let second = storage.create_new_trial(study, None).expect("trial");
    let categorical = Distribution::Categorical(
        CategoricalDistribution::new(vec!["a".into(), "b".into()]).expect("valid"),
    );
    let int = Distribution::Int(IntDistribution::new(0, 3, false, 1).expect("valid"));
    for refused in [categorical.clone(), int, float(0.1, 1.0, true)] {
        match storage.set_trial_param(second, "x", 0.0, &refused) {
            Err(StudyError::DistributionConflict { name, .. }) => assert_eq!(name, "x", "{p}"),
            other => panic!("{p}: {refused:?} after a float: {other:?}"),
        }
    }
    assert!(
        storage.get_trial(second).expect("trial").params.is_empty(),
        "{p}: a refused parameter was stored"
    );
    storage
        .set_trial_param(second, "x", 2.0, &float(0.0, 4.0, false))
        .expect("other bounds are compatible");
    // Categorical choices are part of the kind.
    storage
        .set_trial_param(second, "c", 0.0, &categorical)
        .expect("a new name");
    let third = storage.create_new_trial(study, None).expect("trial");
    let other_choices = Distribution::Categorical(
        CategoricalDistribution::new(vec!["a".into(), "z".into()]).expect("valid"),
    );
    assert!(
        matches!(
            storage.set_trial_param(third, "c", 0.0, &other_choices),
            Err(StudyError::DistributionConflict { .. })
        ),
        "{p}: other categorical choices"
    );
    let elsewhere = storage.create_new_study(&minimize(), "t").expect("create");
    let trial = storage.create_new_trial(elsewhere, None).expect("trial");
    storage
        .set_trial_param(trial, "x", 0.0, &categorical)
        .expect("another study's `x` is its own");
}
