//! The stored snapshot of a trial.

use std::collections::BTreeMap;

use chrono::NaiveDateTime;
use serde_json::Value;

use crate::distributions::{Distribution, ParamValue};
use crate::trial::TrialState;

/// One parameter of a trial: its internal value and its distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Optuna's internal representation (the float, the int as a float, the choice index).
    pub internal: f64,
    /// The distribution it was suggested from.
    pub distribution: Distribution,
}

impl Param {
    /// The user-facing value.
    pub fn value(&self) -> ParamValue {
        self.distribution.to_external(self.internal)
    }
}

/// A snapshot of a trial as stored (Optuna's `FrozenTrial`).
#[derive(Debug, Clone, PartialEq)]
pub struct FrozenTrial {
    /// Index of the trial in its study (0-based).
    pub number: u64,
    /// Id of the trial in its storage (0-based, across studies, for the journal).
    pub trial_id: u64,
    /// Current state.
    pub state: TrialState,
    /// Objective values (COMPLETE, and PRUNED with its last intermediate value).
    pub values: Option<Vec<f64>>,
    /// When it started running (naive local time, as Optuna 4.x writes).
    pub datetime_start: Option<NaiveDateTime>,
    /// When it finished.
    pub datetime_complete: Option<NaiveDateTime>,
    /// Parameters by name.
    pub params: BTreeMap<String, Param>,
    /// Reported intermediate values by step.
    pub intermediate_values: BTreeMap<i64, f64>,
    /// User attributes.
    pub user_attrs: BTreeMap<String, Value>,
    /// System attributes (used by samplers, pruners, enqueue).
    pub system_attrs: BTreeMap<String, Value>,
}

impl FrozenTrial {
    /// A fresh trial in `state` with nothing else set.
    pub fn new(number: u64, trial_id: u64, state: TrialState) -> Self {
        Self {
            number,
            trial_id,
            state,
            values: None,
            datetime_start: None,
            datetime_complete: None,
            params: BTreeMap::new(),
            intermediate_values: BTreeMap::new(),
            user_attrs: BTreeMap::new(),
            system_attrs: BTreeMap::new(),
        }
    }

    /// The single objective value, if any.
    pub fn value(&self) -> Option<f64> {
        match self.values.as_deref() {
            Some([v]) => Some(*v),
            _ => None,
        }
    }

    /// The user-facing value of a parameter.
    pub fn param(&self, name: &str) -> Option<ParamValue> {
        self.params.get(name).map(Param::value)
    }

    /// The last reported step and its value.
    pub fn last_step(&self) -> Option<(i64, f64)> {
        self.intermediate_values
            .iter()
            .next_back()
            .map(|(s, v)| (*s, *v))
    }

    /// The trial's constraint values by name, as Optuna 5.0's `FrozenTrial.constraints`
    /// reads them from the system attributes: the list Optuna 4's `constraints_func` writes
    /// under `constraints` (named `"0"`, `"1"`, ...), then one `constraints:<name>` attribute
    /// per [`Trial::set_constraint`](crate::trial::Trial::set_constraint) (which wins over a
    /// list entry of the same name). Empty for an unconstrained trial. A value that is not
    /// a number (a hand-edited attribute) is left out.
    pub fn constraints(&self) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        if let Some(Value::Array(list)) = self.system_attrs.get(CONSTRAINTS_KEY) {
            for (i, v) in list.iter().enumerate() {
                if let Some(v) = v.as_f64() {
                    out.insert(i.to_string(), v);
                }
            }
        }
        for (key, value) in &self.system_attrs {
            if let (Some(name), Some(v)) = (constraint_name(key), value.as_f64()) {
                out.insert(name.to_owned(), v);
            }
        }
        out
    }

    /// The sum of the constraint values above zero: 0 for a feasible (or unconstrained)
    /// trial. Optuna's TPE ranks infeasible trials by it.
    pub fn infeasibility(&self) -> f64 {
        self.constraints().values().filter(|v| **v > 0.0).sum()
    }

    /// Whether every constraint value is zero or less (true for an unconstrained trial).
    pub fn is_feasible(&self) -> bool {
        self.constraints().values().all(|v| *v <= 0.0)
    }

    /// Whether the trial carries any constraint value.
    pub fn is_constrained(&self) -> bool {
        self.system_attrs.contains_key(CONSTRAINTS_KEY)
            || self
                .system_attrs
                .keys()
                .any(|k| constraint_name(k).is_some())
    }
}

/// The system attribute of Optuna's constraint values: the list of Optuna 4's
/// `constraints_func`, and the prefix of Optuna 5's per-name `constraints:<name>`.
pub const CONSTRAINTS_KEY: &str = "constraints";

/// The constraint name of a `constraints:<name>` system attribute.
pub(crate) fn constraint_name(key: &str) -> Option<&str> {
    key.strip_prefix(CONSTRAINTS_KEY)?.strip_prefix(':')
}
