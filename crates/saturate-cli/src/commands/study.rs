//! `studies`, `study-names`, `create-study`, `delete-study`, `study set-user-attr`.

use std::io::Write;

use saturate_study::{StudyDirection, TrialState};
use serde_json::Value;

use super::print;
use crate::cli::{
    CreateStudyArgs, DirectionArg, ListArgs, NamesArgs, SetUserAttrArgs, StudyNameArg,
};
use crate::error::Result;
use crate::output::{format_output, Cell, Key, Record};
use crate::records::{datetime, direction_name};

pub fn studies(url: &str, args: &ListArgs, out: &mut dyn Write) -> Result<()> {
    let storage = crate::storage::open(url, false)?;
    let mut records = Vec::new();
    for (study_id, name) in storage.get_all_studies()? {
        let trials = storage.get_all_trials(study_id, None)?;
        let start = trials.iter().filter_map(|t| t.datetime_start).min();
        let directions = storage.get_study_directions(study_id)?;
        let user_attrs = storage.get_study_user_attrs(study_id)?;
        let mut record = Record::new();
        record.insert(("name".into(), Key::None), Cell::Str(name));
        record.insert(
            ("direction".into(), Key::None),
            Cell::Tuple(
                directions
                    .iter()
                    .map(|d| Cell::str(direction_name(*d)))
                    .collect(),
            ),
        );
        record.insert(
            ("n_trials".into(), Key::None),
            Cell::Int(trials.len() as i128),
        );
        record.insert(("datetime_start".into(), Key::None), datetime(start));
        record.insert(
            ("user_attrs".into(), Key::None),
            Cell::Map(
                user_attrs
                    .iter()
                    .map(|(k, v)| (k.clone(), Cell::from(v)))
                    .collect(),
            ),
        );
        records.push(record);
    }
    let mut columns: Vec<_> = ["name", "direction", "n_trials", "datetime_start"]
        .iter()
        .map(|c| (c.to_string(), Key::None))
        .collect();
    let has_attrs = records
        .iter()
        .any(|r| r[&("user_attrs".to_string(), Key::None)] != Cell::Map(Vec::new()));
    if has_attrs {
        columns.push(("user_attrs".into(), Key::None));
    }
    print(
        out,
        &format_output(&records, &columns, args.format, args.flatten, false),
    )
}

pub fn study_names(url: &str, args: &NamesArgs, out: &mut dyn Write) -> Result<()> {
    let storage = crate::storage::open(url, false)?;
    let column = ("name".to_string(), Key::None);
    let records: Vec<Record> = storage
        .get_all_studies()?
        .into_iter()
        .map(|(_, name)| Record::from([(column.clone(), Cell::Str(name))]))
        .collect();
    print(
        out,
        &format_output(&records, &[column], args.format, false, false),
    )
}

fn direction(d: DirectionArg) -> StudyDirection {
    match d {
        DirectionArg::Minimize => StudyDirection::Minimize,
        DirectionArg::Maximize => StudyDirection::Maximize,
    }
}

pub fn create_study(url: &str, args: &CreateStudyArgs, out: &mut dyn Write) -> Result<()> {
    let storage = crate::storage::open(url, true)?;
    let directions: Vec<StudyDirection> = match (&args.direction, &args.directions) {
        (Some(d), _) => vec![direction(*d)],
        (None, Some(ds)) => ds.iter().copied().map(direction).collect(),
        (None, None) => vec![StudyDirection::Minimize],
    };
    let mut builder = saturate_study::StudyConfig::new()
        .with_storage(storage)
        .with_directions(directions)
        .with_load_if_exists(args.skip_if_exists);
    if let Some(name) = &args.study_name {
        builder = builder.with_name(name);
    }
    let study = builder.init()?;
    print(out, saturate_study::Study::name(&study))
}

pub fn delete_study(url: &str, args: &StudyNameArg) -> Result<()> {
    let storage = crate::storage::open(url, false)?;
    let study_id = storage.get_study_id_from_name(&args.study_name)?;
    storage.delete_study(study_id)?;
    Ok(())
}

pub fn set_user_attr(url: &str, args: &SetUserAttrArgs) -> Result<()> {
    let storage = crate::storage::open(url, false)?;
    let study_id = storage.get_study_id_from_name(&args.study_name)?;
    storage.set_study_user_attr(study_id, &args.key, Value::String(args.value.clone()))?;
    Ok(())
}

/// Counts of trials by state, in Optuna's state order.
pub fn state_counts(
    trials: &[std::sync::Arc<saturate_study::FrozenTrial>],
) -> Vec<(TrialState, usize)> {
    [
        TrialState::Running,
        TrialState::Waiting,
        TrialState::Complete,
        TrialState::Pruned,
        TrialState::Fail,
    ]
    .into_iter()
    .map(|s| (s, trials.iter().filter(|t| t.state == s).count()))
    .collect()
}
