//! Trials and studies as Optuna's CLI records (its `_create_records_and_aggregate_column`).

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::NaiveDateTime;
use saturate_study::distributions::ParamValue;
use saturate_study::{FrozenTrial, StudyDirection, TrialState};

use crate::output::{Cell, Column, Key, Record};

/// Optuna's `_DATETIME_FORMAT`.
pub const DATETIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// The study system attribute where Optuna keeps objective names.
pub const METRIC_NAMES_ATTR: &str = "study:metric_names";

/// A datetime as the CLI prints it (seconds, no fraction).
pub fn datetime(dt: Option<NaiveDateTime>) -> Cell {
    dt.map_or(Cell::None, |dt| {
        Cell::Str(dt.format(DATETIME_FORMAT).to_string())
    })
}

/// Python's `str(timedelta)`: `H:MM:SS[.ffffff]`, with `N day(s), ` in front past a day.
pub fn timedelta_str(micros: i64) -> String {
    const DAY: i64 = 86_400_000_000;
    let days = micros.div_euclid(DAY);
    let rest = micros.rem_euclid(DAY);
    let (seconds, fraction) = (rest / 1_000_000, rest % 1_000_000);
    let clock = format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
    let clock = if fraction == 0 {
        clock
    } else {
        format!("{clock}.{fraction:06}")
    };
    match days {
        0 => clock,
        1 | -1 => format!("{days} day, {clock}"),
        _ => format!("{days} days, {clock}"),
    }
}

/// A trial's duration in microseconds, when it has both ends.
pub fn duration_micros(trial: &FrozenTrial) -> Option<i64> {
    let (start, end) = (trial.datetime_start?, trial.datetime_complete?);
    (end - start).num_microseconds()
}

/// Optuna's name for a state (`COMPLETE`).
pub fn state_name(state: TrialState) -> &'static str {
    match state {
        TrialState::Running => "RUNNING",
        TrialState::Complete => "COMPLETE",
        TrialState::Pruned => "PRUNED",
        TrialState::Fail => "FAIL",
        TrialState::Waiting => "WAITING",
    }
}

/// Optuna's name for a direction (`MINIMIZE`).
pub fn direction_name(direction: StudyDirection) -> &'static str {
    match direction {
        StudyDirection::NotSet => "NOT_SET",
        StudyDirection::Minimize => "MINIMIZE",
        StudyDirection::Maximize => "MAXIMIZE",
    }
}

/// A parameter's user-facing value.
pub fn param_cell(value: &ParamValue) -> Cell {
    match value {
        ParamValue::Float(f) => Cell::Float(*f),
        ParamValue::Int(i) => Cell::Int(*i as i128),
        ParamValue::Categorical(choice) => choice_cell(choice),
    }
}

fn choice_cell(choice: &saturate_study::Choice) -> Cell {
    use saturate_study::Choice;
    match choice {
        Choice::Null => Cell::None,
        Choice::Bool(b) => Cell::Bool(*b),
        Choice::Int(i) => Cell::Int(*i as i128),
        Choice::Float(f) => Cell::Float(*f),
        Choice::Str(s) => Cell::Str(s.clone()),
    }
}

/// The records and columns of `trials` for Optuna's `trials` / `best-trial(s)` commands:
/// number, value(s), datetime_start, datetime_complete, duration, params, user_attrs, state.
pub fn trial_records(
    trials: &[Arc<FrozenTrial>],
    n_objectives: usize,
    metric_names: Option<&[String]>,
) -> (Vec<Record>, Vec<Column>) {
    let attrs = [
        "number",
        if n_objectives > 1 { "values" } else { "value" },
        "datetime_start",
        "datetime_complete",
        "duration",
        "params",
        "user_attrs",
        "state",
    ];
    let mut seen: Vec<BTreeSet<Column>> = vec![BTreeSet::new(); attrs.len()];
    let mut records = Vec::with_capacity(trials.len());
    for trial in trials {
        let mut record = Record::new();
        let mut put = |slot: usize, key: Key, cell: Cell| {
            let column = (attrs[slot].to_string(), key);
            seen[slot].insert(column.clone());
            record.insert(column, cell);
        };
        put(0, Key::None, Cell::Int(trial.number as i128));
        if n_objectives > 1 {
            for i in 0..n_objectives {
                let value = trial
                    .values
                    .as_ref()
                    .and_then(|v| v.get(i))
                    .map_or(Cell::None, |v| Cell::Float(*v));
                let key = match metric_names {
                    Some(names) => Key::Name(names[i].clone()),
                    None => Key::Index(i),
                };
                put(1, key, value);
            }
        } else {
            let key = metric_names
                .and_then(|n| n.first())
                .map_or(Key::None, |n| Key::Name(n.clone()));
            // Optuna's `FrozenTrial.value` is None unless there is exactly one value.
            put(1, key, trial.value().map_or(Cell::None, Cell::Float));
        }
        put(2, Key::None, datetime(trial.datetime_start));
        put(3, Key::None, datetime(trial.datetime_complete));
        put(
            4,
            Key::None,
            duration_micros(trial).map_or(Cell::None, |us| Cell::Str(timedelta_str(us))),
        );
        for (name, param) in &trial.params {
            put(5, Key::Name(name.clone()), param_cell(&param.value()));
        }
        for (key, value) in &trial.user_attrs {
            put(6, Key::Name(key.clone()), Cell::from(value));
        }
        put(7, Key::None, Cell::str(state_name(trial.state)));
        records.push(record);
    }
    let columns = seen.into_iter().flatten().collect();
    (records, columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_python_timedelta() {
        assert_eq!(timedelta_str(34_282), "0:00:00.034282");
        assert_eq!(timedelta_str(3_661_000_000), "1:01:01");
        assert_eq!(timedelta_str(86_400_000_000 + 5), "1 day, 0:00:00.000005");
        assert_eq!(timedelta_str(2 * 86_400_000_000), "2 days, 0:00:00");
        assert_eq!(timedelta_str(-1), "-1 day, 23:59:59.999999");
    }
}
