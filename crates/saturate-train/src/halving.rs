//! Successive halving across shared values: the refill rule of
//! [`TrainerConfig::with_refill_halving`](crate::TrainerConfig::with_refill_halving).
//!
//! The resource is trials. A set of shared values (an *arm*: a width, a depth) reaches
//! rung `r` once it has taken `r × K` trials (K the group size). A group whose arm stands
//! at rung `r` may take more trials only while the arm is among the best `⌊m / η⌋` of the
//! `m` arms that reached rung `r`, each arm ranked by the best value of its first `r × K`
//! trials, as asynchronous successive halving (ASHA; Li et al., MLSys 2020) promotes a
//! configuration to the next rung. An arm alone at its rung is not promoted, so the first
//! group of a study takes no more than its first K trials and the next group samples its
//! own shared values; a later arm is refilled only once it beats the arms before it. A
//! declined refill is not final: the trainer asks again at the group's next refill.

use std::collections::BTreeMap;
use std::sync::Arc;

use saturate_study::{FrozenTrial, StudyDirection, TrialState};

/// Whether the arm `shared` (internal values of the shared parameters, by name) may take
/// more trials: see the module's documentation. `trials` are the study's trials in any
/// order; waiting (enqueued, not started) trials and trials without every shared parameter
/// are ignored. An arm below its first rung (fewer than `group_size` trials) always may.
pub(crate) fn promotes(
    trials: &[Arc<FrozenTrial>],
    shared: &BTreeMap<String, f64>,
    group_size: usize,
    eta: usize,
    direction: StudyDirection,
) -> bool {
    let group_size = group_size.max(1);
    let mut arms: BTreeMap<Vec<u64>, Vec<&FrozenTrial>> = BTreeMap::new();
    for trial in trials {
        if trial.state == TrialState::Waiting {
            continue;
        }
        let key: Option<Vec<u64>> = shared
            .keys()
            .map(|name| trial.params.get(name).map(|p| p.internal.to_bits()))
            .collect();
        if let Some(key) = key {
            arms.entry(key).or_default().push(trial);
        }
    }
    let own_key: Vec<u64> = shared.values().map(|v| v.to_bits()).collect();
    let taken = arms.get(&own_key).map_or(0, Vec::len);
    let rung = taken / group_size;
    if rung == 0 {
        return true;
    }
    let budget = rung * group_size;
    // Each arm at the rung, scored by the best COMPLETE value of its first `budget` trials
    // (`None`: none of them completed, ranked below every score).
    let score = |arm: &mut Vec<&FrozenTrial>| -> Option<f64> {
        arm.sort_by_key(|t| t.number);
        arm[..budget]
            .iter()
            .filter(|t| t.state == TrialState::Complete)
            .filter_map(|t| t.value())
            .filter(|v| !v.is_nan())
            .reduce(|a, b| if better(b, a, direction) { b } else { a })
    };
    let mut own = None;
    let mut others = Vec::new();
    for (key, arm) in &mut arms {
        if arm.len() < budget {
            continue;
        }
        if *key == own_key {
            own = score(arm);
        } else {
            others.push(score(arm));
        }
    }
    let at_rung = others.len() + 1;
    let promoted = at_rung / eta.max(1);
    let ahead = others
        .iter()
        .filter(|other| match (other, own) {
            (Some(o), Some(s)) => better(*o, s, direction),
            (Some(_), None) => true,
            (None, _) => false,
        })
        .count();
    ahead < promoted
}

/// `a` strictly better than `b` in `direction` (minimised unless maximised).
fn better(a: f64, b: f64, direction: StudyDirection) -> bool {
    match direction {
        StudyDirection::Maximize => a > b,
        _ => a < b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use saturate_study::distributions::{Distribution, IntDistribution};
    use saturate_study::trial::Param;

    /// A trial numbered `number` of width `width`, in `state` with `value`.
    fn trial(number: u64, width: f64, state: TrialState, value: Option<f64>) -> Arc<FrozenTrial> {
        let mut t = FrozenTrial::new(number, number, state);
        t.params.insert(
            "width".into(),
            Param {
                internal: width,
                distribution: Distribution::Int(IntDistribution::new(8, 16, false, 4).unwrap()),
            },
        );
        t.values = value.map(|v| vec![v]);
        Arc::new(t)
    }

    fn width(w: f64) -> BTreeMap<String, f64> {
        BTreeMap::from([("width".to_string(), w)])
    }

    fn complete(number: u64, w: f64, value: f64) -> Arc<FrozenTrial> {
        trial(number, w, TrialState::Complete, Some(value))
    }

    #[test]
    fn an_arm_below_its_first_rung_is_refilled_and_one_alone_at_its_rung_is_not() {
        let max = StudyDirection::Maximize;
        let one: Vec<_> = (0..3).map(|i| complete(i, 8.0, 0.5)).collect();
        assert!(promotes(&one, &width(8.0), 4, 2, max));
        let four: Vec<_> = (0..4).map(|i| complete(i, 8.0, 0.5)).collect();
        assert!(!promotes(&four, &width(8.0), 4, 2, max));
        // A new arm, nothing taken yet.
        assert!(promotes(&four, &width(12.0), 4, 2, max));
    }

    #[test]
    fn the_better_of_two_arms_at_a_rung_is_promoted_with_eta_2_and_neither_with_eta_3() {
        for (direction, good, bad) in [
            (StudyDirection::Maximize, 0.9, 0.4),
            (StudyDirection::Minimize, 0.4, 0.9),
        ] {
            let mut trials: Vec<_> = (0..4).map(|i| complete(i, 8.0, bad)).collect();
            trials.extend((4..8).map(|i| complete(i, 12.0, good)));
            assert!(promotes(&trials, &width(12.0), 4, 2, direction));
            assert!(!promotes(&trials, &width(8.0), 4, 2, direction));
            assert!(!promotes(&trials, &width(12.0), 4, 3, direction));
        }
    }

    #[test]
    fn arms_are_compared_on_their_first_budget_trials_and_running_ones_count_as_taken() {
        let max = StudyDirection::Maximize;
        // Width 8: four trials at 0.5, then a fifth (refilled) at 0.99.
        let mut trials: Vec<_> = (0..4).map(|i| complete(i, 8.0, 0.5)).collect();
        trials.push(complete(4, 8.0, 0.99));
        // Width 12: 0.6 among its first four; two still running, one pruned.
        trials.push(complete(5, 12.0, 0.6));
        trials.push(trial(6, 12.0, TrialState::Running, None));
        trials.push(trial(7, 12.0, TrialState::Pruned, None));
        trials.push(trial(8, 12.0, TrialState::Running, None));
        // Rung 1: width 8's first four (best 0.5) against width 12's (best 0.6).
        assert!(promotes(&trials, &width(12.0), 4, 2, max));
        // An arm with no completed trial ranks below one with any.
        let mut unfinished: Vec<_> = (0..4).map(|i| complete(i, 8.0, 0.1)).collect();
        unfinished.extend((4..8).map(|i| trial(i, 12.0, TrialState::Running, None)));
        assert!(!promotes(&unfinished, &width(12.0), 4, 2, max));
        // Waiting (enqueued) trials are not taken.
        let waiting: Vec<_> = (0..4)
            .map(|i| trial(i, 8.0, TrialState::Waiting, None))
            .collect();
        assert!(promotes(&waiting, &width(8.0), 4, 2, max));
    }
}
