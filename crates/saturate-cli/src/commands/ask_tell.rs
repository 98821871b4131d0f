//! `ask` and `tell`.

use std::fmt;
use std::io::Write;

use saturate_study::distributions::Distribution;
use saturate_study::prelude::{RandomSamplerConfig, TpeSamplerConfig};
use saturate_study::{Study, StudyConfig, StudyError, TrialState};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::{print, storage_for};
use crate::cli::{AskArgs, StateArg, TellArgs};
use crate::error::{usage, CliError, Result};
use crate::output::{format_output, Column, Key, Record};
use crate::records::{param_cell, state_name};

/// A JSON object's entries in the order written (a search space is sampled in that order,
/// as Python's dict keeps it).
struct Ordered(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

fn seed(kwargs: &serde_json::Map<String, Value>, sampler: &str) -> Result<Option<u64>> {
    for key in kwargs.keys() {
        if key != "seed" {
            return Err(usage(
                "--sampler-kwargs",
                format!("{sampler} takes only `seed` here, not `{key}`"),
            ));
        }
    }
    match kwargs.get("seed") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            usage(
                "--sampler-kwargs",
                format!("`seed` must be a non-negative integer, not {v}"),
            )
        }),
    }
}

pub fn ask(url: &str, args: &AskArgs, out: &mut dyn Write) -> Result<()> {
    let storage = storage_for(url, false)?;
    let kwargs: serde_json::Map<String, Value> = match &args.sampler_kwargs {
        None => serde_json::Map::new(),
        Some(_) if args.sampler.is_none() => return Err(usage(
            "--sampler-kwargs",
            "it is set without `--sampler`; give `--sampler` as well or omit `--sampler-kwargs`",
        )),
        Some(text) => serde_json::from_str(text)
            .map_err(|e| usage("--sampler-kwargs", format!("not a JSON object: {e}")))?,
    };
    let builder = StudyConfig::new()
        .with_storage(storage)
        .with_name(&args.study_name);
    let builder = match args.sampler.as_deref() {
        None => builder,
        Some("TPESampler") => {
            let mut tpe = TpeSamplerConfig::new();
            if let Some(seed) = seed(&kwargs, "TPESampler")? {
                tpe = tpe.with_seed(seed);
            }
            builder.with_sampler(tpe.init()?)
        }
        Some("RandomSampler") => {
            let mut random = RandomSamplerConfig::new();
            if let Some(seed) = seed(&kwargs, "RandomSampler")? {
                random = random.with_seed(seed);
            }
            builder.with_sampler(random.init())
        }
        Some(other) => {
            return Err(usage(
                "--sampler",
                format!("`{other}` is not available from the command line; use `TPESampler` or `RandomSampler`"),
            ))
        }
    };
    let space: Vec<(String, Distribution)> = match &args.search_space {
        None => Vec::new(),
        Some(text) => {
            let Ordered(entries) = serde_json::from_str(text)
                .map_err(|e| usage("--search-space", format!("not a JSON object: {e}")))?;
            entries
                .into_iter()
                .map(|(name, json)| {
                    Distribution::from_json_str(&json.to_string())
                        .map(|d| (name, d))
                        .map_err(|e| usage("--search-space", e.to_string()))
                })
                .collect::<Result<_>>()?
        }
    };
    let study = match builder.load() {
        Err(StudyError::UnknownStudy { name }) => {
            return Err(usage(
                "--study-name",
                format!("no study named `{name}`; create it first with `saturate create-study --study-name {name}` (ask does not create studies, as in Optuna 4)"),
            ))
        }
        other => other?,
    };
    let mut trial = study.ask()?;
    let mut record = Record::new();
    let number: Column = ("number".into(), Key::None);
    record.insert(
        number.clone(),
        crate::output::Cell::Int(trial.number() as i128),
    );
    let mut columns = vec![number];
    if space.is_empty() && !args.flatten {
        let params: Column = ("params".into(), Key::None);
        record.insert(params.clone(), crate::output::Cell::Map(Vec::new()));
        columns.push(params);
    }
    for (name, distribution) in space {
        let value = trial.suggest(&name, distribution)?;
        let column: Column = ("params".into(), Key::Name(name));
        record.insert(column.clone(), param_cell(&value));
        columns.push(column);
    }
    print(
        out,
        &format_output(&[record], &columns, args.format, args.flatten, true),
    )
}

pub fn tell(url: &str, args: &TellArgs) -> Result<()> {
    let storage = storage_for(url, false)?;
    let study_id = storage.get_study_id_from_name(&args.study_name)?;
    let directions = storage.get_study_directions(study_id)?;
    let trial = storage
        .get_all_trials(study_id, None)?
        .into_iter()
        .find(|t| t.number == args.trial_number)
        .ok_or_else(|| {
            usage(
                "--trial-number",
                format!(
                    "cannot tell trial {} of `{}`: it has not been created (`saturate ask` creates trials)",
                    args.trial_number, args.study_name
                ),
            )
        })?;
    if trial.state.is_finished() && args.skip_if_finished {
        eprintln!(
            "trial {} is already {}; skipped (--skip-if-finished)",
            trial.number,
            state_name(trial.state)
        );
        return Ok(());
    }
    if trial.state != TrialState::Running {
        return Err(CliError::Study(StudyError::TrialFinished {
            trial_id: trial.trial_id,
            state: trial.state,
        }));
    }
    let values = args.values.as_deref();
    let feasible = |values: &[f64]| -> Option<String> {
        if let Some(bad) = values.iter().find(|v| v.is_nan()) {
            return Some(format!("the value {bad} is not acceptable"));
        }
        (values.len() != directions.len()).then(|| {
            format!(
                "the number of the values {} did not match the number of the objectives {}",
                values.len(),
                directions.len()
            )
        })
    };
    let (state, values) = match (args.state, values) {
        (Some(StateArg::Complete), None) => {
            return Err(usage(
                "--values",
                "values are required when the state is complete",
            ))
        }
        (Some(StateArg::Pruned | StateArg::Fail), Some(_)) => {
            return Err(usage(
                "--values",
                "values cannot be given when the state is pruned or fail",
            ))
        }
        (Some(StateArg::Complete), Some(values)) => {
            if let Some(reason) = feasible(values) {
                return Err(usage("--values", reason));
            }
            (TrialState::Complete, Some(values.to_vec()))
        }
        (Some(StateArg::Pruned), None) => {
            let last = trial.last_step().map(|(_, v)| vec![v]);
            (TrialState::Pruned, last.filter(|v| feasible(v).is_none()))
        }
        (Some(StateArg::Fail), None) => (TrialState::Fail, None),
        (None, values) => match values.map_or(Some("no values were given".to_string()), feasible) {
            None => (TrialState::Complete, values.map(<[f64]>::to_vec)),
            Some(reason) => {
                eprintln!("warning: trial {} failed: {reason}", trial.number);
                storage.set_trial_system_attr(
                    trial.trial_id,
                    "fail_reason",
                    Value::from(reason),
                )?;
                (TrialState::Fail, None)
            }
        },
    };
    storage.set_trial_state_values(trial.trial_id, state, values.as_deref())?;
    Ok(())
}
