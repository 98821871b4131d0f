//! Enqueued (WAITING) trials matched to groups by their shared parameters.
//!
//! A WAITING trial comes from `enqueue` (its `fixed_params`), from a retry callback (a copy
//! of a failed trial's `params`) or from Python Optuna's `enqueue_trial`. It *pins* the values
//! it names. The oldest WAITING trial leads the next group: the group's shared values are
//! sampled on it, so the values it pins are used; every other WAITING trial that pins no
//! shared value other than the leader's joins it, and new trials fill the rest. A WAITING
//! trial that pins another shared value waits for a group it agrees with (it leads one when
//! it is the oldest). Refill takes WAITING trials that agree with the running group's shared
//! values the same way.
//!
//! Which parameters are shared is recorded on the study (system attribute
//! [`SHARED_PARAMS_ATTR`]) by every group that suggests them. Before any group of the study
//! has done so, nothing is known to be shared, and the group takes WAITING trials in order.

use std::collections::{BTreeMap, BTreeSet};

use saturate_study::study::FixedParams;
use saturate_study::{FrozenTrial, Study, Trial, TrialState};
use serde_json::Value;

use crate::error::Result;

/// Study system attribute: the names of the parameters that the runner's groups suggested
/// as shared (a JSON list of strings), by which WAITING trials are matched to groups.
pub const SHARED_PARAMS_ATTR: &str = "saturate:shared_params";

/// The values a WAITING trial pins, as JSON: its parameters (a retried copy has them) and its
/// fixed parameters (enqueued).
fn pinned(trial: &FrozenTrial) -> BTreeMap<String, Value> {
    let mut values: BTreeMap<String, Value> = trial
        .params
        .iter()
        .map(|(name, param)| (name.clone(), param.value().to_json_value()))
        .collect();
    if let Some(Value::Object(fixed)) = trial.system_attrs.get("fixed_params") {
        for (name, value) in fixed {
            values.entry(name.clone()).or_insert_with(|| value.clone());
        }
    }
    values
}

/// The value a trial pins for `name` (see [`pinned`]), if any.
pub(crate) fn pinned_value(trial: &FrozenTrial, name: &str) -> Option<Value> {
    if let Some(param) = trial.params.get(name) {
        return Some(param.value().to_json_value());
    }
    match trial.system_attrs.get("fixed_params") {
        Some(Value::Object(fixed)) => fixed.get(name).cloned(),
        _ => None,
    }
}

/// Equal values; numbers by value (an enqueued `16` and a sampled `16.0` agree).
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Whether `candidate` pins no shared value other than `values` has: every shared name it
/// pins has the same value there.
fn agrees(
    candidate: &BTreeMap<String, Value>,
    values: &BTreeMap<String, Value>,
    shared: &BTreeSet<String>,
) -> bool {
    shared.iter().all(|name| match candidate.get(name) {
        None => true,
        Some(value) => values.get(name).is_some_and(|v| same_value(v, value)),
    })
}

/// The shared names recorded on the study; `None` before any group recorded them.
fn shared_names<S: Study>(study: &S) -> Result<Option<BTreeSet<String>>> {
    let attrs = study.system_attrs()?;
    Ok(attrs.get(SHARED_PARAMS_ATTR).map(|names| {
        names
            .as_array()
            .map(|names| {
                names
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }))
}

/// Adds `names` to the study's shared names (one read; a write only when one is new).
pub(crate) fn record_shared_names<'n, S: Study>(
    study: &S,
    names: impl IntoIterator<Item = &'n str>,
) -> Result<()> {
    let names: BTreeSet<String> = names.into_iter().map(str::to_owned).collect();
    if names.is_empty() {
        return Ok(());
    }
    let known = shared_names(study)?;
    if known
        .as_ref()
        .is_some_and(|known| known.is_superset(&names))
    {
        return Ok(());
    }
    let all: BTreeSet<String> = known.unwrap_or_default().into_iter().chain(names).collect();
    study.set_system_attr(
        SHARED_PARAMS_ATTR,
        Value::from(all.into_iter().collect::<Vec<_>>()),
    )?;
    Ok(())
}

/// The `k` trials of a new group: the oldest WAITING trial leads it, WAITING trials that
/// agree with it on the shared parameters join, new trials fill the rest.
pub(crate) fn ask_group<S: Study>(study: &S, k: usize) -> Result<Vec<Trial>> {
    loop {
        let waiting = study.trials(Some(&[TrialState::Waiting]))?;
        let Some(leader) = waiting.first() else {
            return Ok(study.ask_new(&vec![FixedParams::new(); k])?);
        };
        // The leader first, alone: if another worker took it, look again.
        let mut trials = study.claim_waiting(&[leader.trial_id])?;
        if trials.is_empty() {
            continue;
        }
        let lead = pinned(leader);
        let shared = shared_names(study)?;
        let joining: Vec<u64> = waiting[1..]
            .iter()
            .filter(|w| {
                shared
                    .as_ref()
                    .is_none_or(|shared| agrees(&pinned(w), &lead, shared))
            })
            .take(k - 1)
            .map(|w| w.trial_id)
            .collect();
        trials.extend(study.claim_waiting(&joining)?);
        let fresh = k - trials.len();
        if fresh > 0 {
            trials.extend(study.ask_new(&vec![FixedParams::new(); fresh])?);
        }
        return Ok(trials);
    }
}

/// Trials for `n` free slots of a running group whose shared values are `shared`: WAITING
/// trials that agree with them first, then new trials with them fixed.
pub(crate) fn ask_refill<S: Study>(
    study: &S,
    shared: &FixedParams,
    n: usize,
) -> Result<Vec<Trial>> {
    let values: BTreeMap<String, Value> = shared
        .iter()
        .map(|(name, value)| (name.clone(), value.to_json_value()))
        .collect();
    let names: BTreeSet<String> = shared_names(study)?
        .unwrap_or_default()
        .into_iter()
        .chain(shared.keys().cloned())
        .collect();
    let waiting = study.trials(Some(&[TrialState::Waiting]))?;
    let joining: Vec<u64> = waiting
        .iter()
        .filter(|w| agrees(&pinned(w), &values, &names))
        .take(n)
        .map(|w| w.trial_id)
        .collect();
    let mut trials = study.claim_waiting(&joining)?;
    let fresh = n - trials.len();
    if fresh > 0 {
        trials.extend(study.ask_new(&vec![shared.clone(); fresh])?);
    }
    Ok(trials)
}
