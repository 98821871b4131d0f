//! Pruners on hand-built trial histories, both directions.

use std::sync::Arc;

use saturate_study::prelude::*;
use saturate_study::study::StudyView;

use crate::common::finished;

struct History {
    storage: InMemoryStorage,
    directions: Vec<StudyDirection>,
    name: String,
}

impl History {
    fn new(direction: StudyDirection, name: &str) -> Self {
        let storage = InMemoryStorage::new();
        storage.create_new_study(&[direction], name).unwrap();
        Self {
            storage,
            directions: vec![direction],
            name: name.into(),
        }
    }
    fn complete(&self, curve: &[(i64, f64)]) -> u64 {
        let value = curve.last().map(|(_, v)| *v);
        self.storage
            .create_new_trial(0, Some(finished(TrialState::Complete, value, curve)))
            .unwrap()
    }
    fn running(&self, curve: &[(i64, f64)]) -> Arc<FrozenTrial> {
        let id = self.storage.create_new_trial(0, None).unwrap();
        for (s, v) in curve {
            self.storage
                .set_trial_intermediate_value(id, *s, *v)
                .unwrap();
        }
        self.storage.get_trial(id).unwrap()
    }
    fn view(&self) -> StudyView<'_> {
        StudyView::new(&self.storage, 0, &self.name, &self.directions)
    }
    fn prune(&self, pruner: &dyn Pruner, curve: &[(i64, f64)]) -> bool {
        let trial = self.running(curve);
        pruner.prune(&self.view(), &trial).unwrap()
    }
}

#[test]
fn nop_never_prunes() {
    let h = History::new(StudyDirection::Minimize, "s");
    h.complete(&[(0, 0.0)]);
    assert!(!h.prune(&NopPruner, &[(0, 1e9)]));
}

#[test]
fn median_pruner_compares_with_the_median_at_the_step() {
    for direction in [StudyDirection::Minimize, StudyDirection::Maximize] {
        let sign = if direction == StudyDirection::Minimize {
            1.0
        } else {
            -1.0
        };
        let h = History::new(direction, "s");
        let pruner = MedianPrunerConfig::new()
            .with_n_startup_trials(2)
            .init()
            .unwrap();
        h.complete(&[(0, sign * 1.0)]);
        // One complete trial < 2 startup trials: never prune.
        assert!(!h.prune(&pruner, &[(0, sign * 100.0)]));
        h.complete(&[(0, sign * 3.0)]);
        // Median of {1, 3} = 2.
        assert!(h.prune(&pruner, &[(0, sign * 2.5)]), "{direction:?}");
        assert!(!h.prune(&pruner, &[(0, sign * 1.5)]), "{direction:?}");
        // No trial reported at step 5: keep.
        assert!(!h.prune(&pruner, &[(5, sign * 100.0)]));
        // All-NaN intermediate values: prune.
        assert!(h.prune(&pruner, &[(0, f64::NAN)]));
    }
}

#[test]
fn percentile_warmup_and_interval() {
    let h = History::new(StudyDirection::Minimize, "s");
    for v in [1.0, 2.0, 3.0, 4.0] {
        h.complete(&[(0, v), (1, v), (2, v), (3, v), (4, v)]);
    }
    // 25th percentile of {1,2,3,4} = 1.75.
    let pruner = PercentilePrunerConfig::new(25.0)
        .with_n_startup_trials(0)
        .with_n_warmup_steps(2)
        .with_interval_steps(2)
        .init()
        .unwrap();
    assert!(!h.prune(&pruner, &[(1, 10.0)]), "warm-up");
    assert!(h.prune(&pruner, &[(2, 10.0)]));
    assert!(
        !h.prune(&pruner, &[(2, 10.0), (3, 10.0)]),
        "3 is not a pruning step"
    );
    assert!(!h.prune(&pruner, &[(2, 1.5)]));
    assert!(h.prune(&pruner, &[(4, 1.8)]));
    assert!(PercentilePrunerConfig::new(101.0)
        .with_n_startup_trials(0)
        .init()
        .is_err());
}

#[test]
fn threshold_bounds() {
    let h = History::new(StudyDirection::Minimize, "s");
    let pruner = ThresholdPrunerConfig::new()
        .with_lower(Some(0.0))
        .with_upper(Some(1.0))
        .with_n_warmup_steps(1)
        .init()
        .unwrap();
    assert!(!h.prune(&pruner, &[(0, 5.0)]), "warm-up");
    assert!(h.prune(&pruner, &[(1, 5.0)]));
    assert!(h.prune(&pruner, &[(1, -0.5)]));
    assert!(h.prune(&pruner, &[(1, f64::NAN)]));
    assert!(!h.prune(&pruner, &[(1, 0.5)]));
    assert!(ThresholdPrunerConfig::new().init().is_err());
    assert!(ThresholdPrunerConfig::new()
        .with_lower(Some(2.0))
        .with_upper(Some(1.0))
        .init()
        .is_err());
}

#[test]
fn patient_waits_for_a_stall() {
    for direction in [StudyDirection::Minimize, StudyDirection::Maximize] {
        let s = if direction == StudyDirection::Minimize {
            1.0
        } else {
            -1.0
        };
        let h = History::new(direction, "s");
        let pruner = PatientPrunerConfig::new(2).init().unwrap();
        // Improving: keep.
        assert!(!h.prune(
            &pruner,
            &[(0, s * 5.0), (1, s * 4.0), (2, s * 3.0), (3, s * 2.0)]
        ));
        // Best before the window (1) is better than the best in the last 3 steps: stalled.
        assert!(h.prune(
            &pruner,
            &[(0, s * 1.0), (1, s * 4.0), (2, s * 3.0), (3, s * 2.0)]
        ));
        // Too few steps.
        assert!(!h.prune(&pruner, &[(0, s * 1.0), (1, s * 4.0), (2, s * 3.0)]));
        // Wrapped pruner decides once stalled.
        let wrapped = PatientPrunerConfig::new(2)
            .with_wrapped(Some(Box::new(NopPruner)))
            .init()
            .unwrap();
        assert!(!h.prune(
            &wrapped,
            &[(0, s * 1.0), (1, s * 4.0), (2, s * 3.0), (3, s * 2.0)]
        ));
    }
    assert!(PatientPrunerConfig::new(1)
        .with_min_delta(-1.0)
        .init()
        .is_err());
}

#[test]
fn successive_halving_promotes_the_top_fraction() {
    let h = History::new(StudyDirection::Minimize, "s");
    let pruner = SuccessiveHalvingPrunerConfig::new()
        .with_min_resource(Some(1))
        .with_reduction_factor(2)
        .init()
        .unwrap();
    // Rung 0 is reached at step 1; before that: keep.
    assert!(!h.prune(&pruner, &[(0, 9.0)]));
    // First value at rung 0: the best so far, promoted; rung 1 at step 2 not reached.
    let first = h.running(&[(1, 5.0)]);
    assert!(!pruner.prune(&h.view(), &first).unwrap());
    assert_eq!(
        h.storage.get_trial(first.trial_id).unwrap().system_attrs["completed_rung_0"],
        5.0
    );
    // Second value 6 with η = 2: top ⌊2/2⌋ = 1 is {5}: 6 is pruned.
    assert!(h.prune(&pruner, &[(1, 6.0)]));
    // 4 is the best: promoted.
    assert!(!h.prune(&pruner, &[(1, 4.0)]));
    // NaN at a rung: pruned.
    assert!(h.prune(&pruner, &[(1, f64::NAN)]));

    let h = History::new(StudyDirection::Maximize, "m");
    let pruner = SuccessiveHalvingPrunerConfig::new()
        .with_min_resource(Some(1))
        .with_reduction_factor(2)
        .init()
        .unwrap();
    assert!(!h.prune(&pruner, &[(1, 5.0)]));
    assert!(h.prune(&pruner, &[(1, 4.0)]));
    assert!(!h.prune(&pruner, &[(1, 6.0)]));
}

#[test]
fn successive_halving_bootstrap_and_auto_min_resource() {
    let h = History::new(StudyDirection::Minimize, "s");
    let pruner = SuccessiveHalvingPrunerConfig::new()
        .with_min_resource(Some(1))
        .with_reduction_factor(2)
        .with_bootstrap_count(2)
        .init()
        .unwrap();
    // Fewer than bootstrap_count + 1 values at the rung: pruned.
    assert!(h.prune(&pruner, &[(1, 1.0)]));
    assert!(h.prune(&pruner, &[(1, 1.0)]));
    assert!(!h.prune(&pruner, &[(1, 0.5)]));

    let h = History::new(StudyDirection::Minimize, "auto");
    let auto = SuccessiveHalvingPruner::default();
    // No complete trial yet: min_resource unknown, keep.
    assert!(!h.prune(&auto, &[(500, 1.0)]));
    // Last step 499 -> min_resource = 4; rung 0 at step 4.
    h.complete(&(0..500).map(|s| (s, 1.0)).collect::<Vec<_>>());
    assert!(!h.prune(&auto, &[(3, 1.0)]));
    let t = h.running(&[(4, 1.0)]);
    auto.prune(&h.view(), &t).unwrap();
    assert!(h
        .storage
        .get_trial(t.trial_id)
        .unwrap()
        .system_attrs
        .contains_key("completed_rung_0"));
    assert!(SuccessiveHalvingPrunerConfig::new()
        .with_bootstrap_count(1)
        .init()
        .is_err());
    assert!(SuccessiveHalvingPrunerConfig::new()
        .with_min_resource(Some(1))
        .with_reduction_factor(1)
        .init()
        .is_err());
}

#[test]
fn hyperband_routes_trials_to_brackets_by_crc32() {
    // Python: crc32(f"s_{n}".encode()) % 143 == [1, 52, 65, 111, 2] for n = 0..5, so with
    // HyperbandPruner(1, 81, 3) trial 3 is in bracket 1 (min_early_stopping_rate 1, first
    // rung at step 3) and the others in bracket 0 (first rung at step 1).
    let h = History::new(StudyDirection::Minimize, "s");
    let pruner = HyperbandPrunerConfig::new()
        .with_max_resource(Some(81))
        .init()
        .unwrap();
    for n in 0..4 {
        let t = h.running(&[(1, 1.0)]);
        assert_eq!(t.number, n);
        pruner.prune(&h.view(), &t).unwrap();
        let rung0 = h
            .storage
            .get_trial(t.trial_id)
            .unwrap()
            .system_attrs
            .contains_key("completed_rung_0");
        assert_eq!(rung0, n != 3, "trial {n}");
    }
    // "auto" max_resource needs a finished trial first.
    let h = History::new(StudyDirection::Minimize, "auto");
    let auto = HyperbandPruner::default();
    assert!(!h.prune(&auto, &[(1, 1.0)]));
    assert!(HyperbandPrunerConfig::new()
        .with_min_resource(0)
        .init()
        .is_err());
}

#[test]
fn wilcoxon_prunes_a_trial_consistently_worse_than_the_best() {
    for direction in [StudyDirection::Minimize, StudyDirection::Maximize] {
        let s = if direction == StudyDirection::Minimize {
            1.0
        } else {
            -1.0
        };
        let h = History::new(direction, "s");
        let pruner = WilcoxonPrunerConfig::new().init().unwrap();
        let best: Vec<(i64, f64)> = (0..10).map(|i| (i, s * i as f64)).collect();
        let mut t = finished(TrialState::Complete, Some(s * 0.0), &best);
        t.values = Some(vec![s * 4.5]);
        h.storage.create_new_trial(0, Some(t)).unwrap();
        let worse: Vec<(i64, f64)> = (0..10)
            .map(|i| (i, s * (i as f64 + 1.0 + 0.1 * i as f64)))
            .collect();
        assert!(h.prune(&pruner, &worse), "{direction:?}");
        let better: Vec<(i64, f64)> = (0..10).map(|i| (i, s * (i as f64 - 1.0))).collect();
        assert!(!h.prune(&pruner, &better));
        assert!(!h.prune(&pruner, &worse[..1]), "startup steps");
        assert!(!h.prune(&pruner, &[(0, f64::NAN), (1, 5.0)]));
    }
    assert!(WilcoxonPrunerConfig::new()
        .with_p_threshold(1.5)
        .init()
        .is_err());
}

fn every_pruner() -> Vec<(&'static str, Box<dyn Pruner>)> {
    vec![
        ("nop", Box::new(NopPruner)),
        (
            "median",
            Box::new(
                MedianPrunerConfig::new()
                    .with_n_startup_trials(1)
                    .init()
                    .unwrap(),
            ),
        ),
        (
            "percentile",
            Box::new(
                PercentilePrunerConfig::new(25.0)
                    .with_n_startup_trials(1)
                    .init()
                    .unwrap(),
            ),
        ),
        (
            "successive-halving",
            Box::new(
                SuccessiveHalvingPrunerConfig::new()
                    .with_min_resource(Some(1))
                    .with_reduction_factor(2)
                    .init()
                    .unwrap(),
            ),
        ),
        (
            "hyperband",
            Box::new(
                HyperbandPrunerConfig::new()
                    .with_max_resource(Some(9))
                    .init()
                    .unwrap(),
            ),
        ),
        (
            "threshold",
            Box::new(
                ThresholdPrunerConfig::new()
                    .with_upper(Some(1e9))
                    .init()
                    .unwrap(),
            ),
        ),
        (
            "patient",
            Box::new(
                PatientPrunerConfig::new(1)
                    .with_wrapped(Some(Box::new(MedianPruner::default())))
                    .init()
                    .unwrap(),
            ),
        ),
        ("wilcoxon", Box::new(WilcoxonPruner::default())),
    ]
}

/// Conformance: on an empty study and on a study with history, for both directions, no
/// pruner prunes a trial that has reported nothing, none fails on NaN values, and the
/// same question gets the same answer from a fresh pruner.
#[test]
fn every_pruner_conforms() {
    for direction in [StudyDirection::Minimize, StudyDirection::Maximize] {
        for (name, pruner) in every_pruner() {
            let h = History::new(direction, "c");
            assert!(!h.prune(&*pruner, &[]), "{name}: empty study, no report");
            assert!(!h.prune(&*pruner, &[(0, 0.0)]), "{name}: empty study");
            for i in 0..6 {
                let curve: Vec<(i64, f64)> = (0..10).map(|s| (s, (i + s) as f64)).collect();
                h.complete(&curve);
            }
            h.complete(&[(0, f64::NAN), (1, f64::NAN)]);
            assert!(!h.prune(&*pruner, &[]), "{name}: no report");
            h.prune(&*pruner, &[(0, f64::NAN), (3, f64::NAN)]);
            let curve: Vec<(i64, f64)> = (0..5).map(|s| (s, 100.0 + s as f64)).collect();
            let answers: Vec<bool> = every_pruner()
                .into_iter()
                .filter(|(n, _)| *n == name)
                .map(|(_, fresh)| h.prune(&*fresh, &curve))
                .chain([h.prune(&*pruner, &curve)])
                .collect();
            assert!(
                answers.windows(2).all(|w| w[0] == w[1]),
                "{name}: {answers:?}"
            );
        }
    }
}
