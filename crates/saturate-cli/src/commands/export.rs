//! `export --format csv|json`: every trial of a study, for spreadsheets and scripts.

use std::collections::BTreeSet;
use std::io::Write;

use saturate_study::{FrozenTrial, Study};
use serde_json::{json, Map, Value};

use super::{load, metric_names};
use crate::cli::{ExportArgs, ExportFormat};
use crate::error::Result;
use crate::output::{py_float_repr, Cell};
use crate::records::{direction_name, duration_micros, param_cell, state_name};

/// Datetimes in exports keep their microseconds (as pandas writes them).
const EXPORT_DATETIME: &str = "%Y-%m-%d %H:%M:%S%.6f";

pub fn export(url: &str, args: &ExportArgs, out: &mut dyn Write) -> Result<()> {
    if let Some(path) = &args.output {
        refuse_the_storage_itself(url, path)?;
    }
    let study = load(url, &args.study_name)?;
    let trials = study.trials(None)?;
    let text = match args.format {
        ExportFormat::Csv => {
            let names = metric_names(study.storage().as_ref(), study.id())?;
            csv(&trials, study.directions().len(), names.as_deref())
        }
        ExportFormat::Json => {
            let doc = json!({
                "study_name": study.name(),
                "directions": study.directions().iter().map(|d| direction_name(*d)).collect::<Vec<_>>(),
                "user_attrs": study.user_attrs()?,
                "system_attrs": study.system_attrs()?,
                "trials": trials.iter().map(|t| trial_json(t)).collect::<Vec<_>>(),
            });
            let mut text = serde_json::to_string_pretty(&doc).expect("JSON values serialise");
            text.push('\n');
            text
        }
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).map_err(|source| saturate_study::StudyError::Io {
                path: path.clone(),
                source,
            })?
        }
        None => out.write_all(text.as_bytes())?,
    }
    Ok(())
}

/// `-o` naming the storage's own file (the journal, or the SQLite database) would replace the
/// study with its export.
fn refuse_the_storage_itself(url: &str, output: &std::path::Path) -> Result<()> {
    let storage_file = match crate::storage::sqlite_file(url) {
        Some(file) => file,
        None if !url.contains("://") => std::path::PathBuf::from(url),
        None => return Ok(()),
    };
    let same = match (output.canonicalize(), storage_file.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        return Err(crate::error::usage(
            "--output",
            format!(
                "{} is the storage itself: writing the export there would replace the study; \
                 give another file",
                output.display()
            ),
        ));
    }
    Ok(())
}

fn seconds(trial: &FrozenTrial) -> Option<f64> {
    duration_micros(trial).map(|us| us as f64 / 1e6)
}

/// A finite float, or `null` (JSON has no NaN or infinity).
fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

fn trial_json(trial: &FrozenTrial) -> Value {
    let params: Map<String, Value> = trial
        .params
        .iter()
        .map(|(name, p)| (name.clone(), cell_json(&param_cell(&p.value()))))
        .collect();
    let distributions: Map<String, Value> = trial
        .params
        .iter()
        .map(|(name, p)| {
            let json = serde_json::from_str(&p.distribution.to_json_string())
                .expect("a distribution's JSON parses");
            (name.clone(), json)
        })
        .collect();
    let intermediate: Map<String, Value> = trial
        .intermediate_values
        .iter()
        .map(|(step, v)| (step.to_string(), number(*v)))
        .collect();
    json!({
        "number": trial.number,
        "state": state_name(trial.state),
        "values": trial.values.as_ref().map(|vs| vs.iter().map(|v| number(*v)).collect::<Vec<_>>()),
        "datetime_start": trial.datetime_start.map(|d| d.format(EXPORT_DATETIME).to_string()),
        "datetime_complete": trial.datetime_complete.map(|d| d.format(EXPORT_DATETIME).to_string()),
        "duration": seconds(trial),
        "params": params,
        "distributions": distributions,
        "intermediate_values": intermediate,
        "user_attrs": trial.user_attrs,
        "system_attrs": trial.system_attrs,
    })
}

fn cell_json(cell: &Cell) -> Value {
    match cell {
        Cell::None => Value::Null,
        Cell::Bool(b) => Value::Bool(*b),
        Cell::Int(i) => json!(*i as i64),
        Cell::Float(f) => number(*f),
        other => Value::String(other.py_str()),
    }
}

/// One CSV field: Python's `str` of the value, quoted when it holds `,`, `"` or a newline.
fn field(cell: &Cell) -> String {
    let text = match cell {
        Cell::None => String::new(),
        Cell::Float(f) => py_float_repr(*f),
        Cell::Map(_) | Cell::List(_) | Cell::Tuple(_) => crate::output::json_dumps(cell),
        other => other.py_str(),
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// Optuna's `trials_dataframe` columns, flattened: number, value (or values_i / metric
/// names), datetime_start, datetime_complete, duration (seconds), params_*, user_attrs_*,
/// state.
fn csv(
    trials: &[std::sync::Arc<FrozenTrial>],
    objectives: usize,
    metric_names: Option<&[String]>,
) -> String {
    let params: BTreeSet<&String> = trials.iter().flat_map(|t| t.params.keys()).collect();
    let attrs: BTreeSet<&String> = trials.iter().flat_map(|t| t.user_attrs.keys()).collect();
    let value_columns: Vec<String> = match (objectives, metric_names) {
        (_, Some(names)) => names.iter().map(|n| format!("values_{n}")).collect(),
        (1, None) => vec!["value".into()],
        (n, None) => (0..n).map(|i| format!("values_{i}")).collect(),
    };
    let mut header = vec!["number".to_string()];
    header.extend(value_columns);
    header.extend(["datetime_start", "datetime_complete", "duration"].map(String::from));
    header.extend(params.iter().map(|p| format!("params_{p}")));
    header.extend(attrs.iter().map(|a| format!("user_attrs_{a}")));
    header.push("state".into());
    let mut lines = vec![header
        .iter()
        .map(|h| field(&Cell::str(h.clone())))
        .collect::<Vec<_>>()
        .join(",")];
    for trial in trials {
        let mut row = vec![Cell::Int(trial.number as i128)];
        for i in 0..objectives {
            row.push(
                trial
                    .values
                    .as_ref()
                    .and_then(|v| v.get(i))
                    .map_or(Cell::None, |v| Cell::Float(*v)),
            );
        }
        let time = |d: Option<chrono::NaiveDateTime>| {
            d.map_or(Cell::None, |d| {
                Cell::Str(d.format(EXPORT_DATETIME).to_string())
            })
        };
        row.push(time(trial.datetime_start));
        row.push(time(trial.datetime_complete));
        row.push(seconds(trial).map_or(Cell::None, Cell::Float));
        for p in &params {
            row.push(
                trial
                    .params
                    .get(*p)
                    .map_or(Cell::None, |v| param_cell(&v.value())),
            );
        }
        for a in &attrs {
            row.push(trial.user_attrs.get(*a).map_or(Cell::None, Cell::from));
        }
        row.push(Cell::str(state_name(trial.state)));
        lines.push(row.iter().map(field).collect::<Vec<_>>().join(","));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}
