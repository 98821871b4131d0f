//! `trials`, `best-trial`, `best-trials`, `lineage`.

use std::io::Write;

use saturate_study::Study;

use super::{load, metric_names, print};
use crate::cli::{LineageArgs, TrialsArgs};
use crate::error::Result;
use crate::output::{format_output, Cell, Key};
use crate::records::trial_records;

/// Which trials a command prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Every trial.
    All,
    /// The best trial of a single-objective study (one record).
    Best,
    /// The trials on the Pareto front.
    Pareto,
}

pub fn trials(url: &str, args: &TrialsArgs, which: Which, out: &mut dyn Write) -> Result<()> {
    let study = load(url, &args.study_name)?;
    let trials = study.trials(None)?;
    let names = metric_names(study.storage().as_ref(), study.id())?;
    let (records, columns) = trial_records(&trials, study.directions().len(), names.as_deref());
    let number_of = |r: &crate::output::Record| match r.get(&("number".to_string(), Key::None)) {
        Some(Cell::Int(n)) => *n as u64,
        _ => unreachable!("every record has a number"),
    };
    let text = match which {
        Which::All => format_output(&records, &columns, args.format, args.flatten, false),
        Which::Best => {
            let best = study.best_trial()?.number;
            let record: Vec<_> = records
                .into_iter()
                .filter(|r| number_of(r) == best)
                .collect();
            format_output(&record, &columns, args.format, args.flatten, true)
        }
        Which::Pareto => {
            let best: Vec<u64> = study.best_trials()?.iter().map(|t| t.number).collect();
            let records: Vec<_> = records
                .into_iter()
                .filter(|r| best.contains(&number_of(r)))
                .collect();
            format_output(&records, &columns, args.format, args.flatten, false)
        }
    };
    print(out, &text)
}

/// `lineage`: one record per segment of the trial's lineage, first generation first, with
/// the epochs it covered (`start_step`, `end_step`).
pub fn lineage(url: &str, args: &LineageArgs, out: &mut dyn Write) -> Result<()> {
    let study = load(url, &args.study_name)?;
    let segments = saturate_study::lineage::lineage(&study, args.trial_number)?;
    let all = study.trials(None)?;
    let chain: Vec<_> = segments
        .iter()
        .filter_map(|s| all.iter().find(|t| t.number == s.trial_number).cloned())
        .collect();
    let names = metric_names(study.storage().as_ref(), study.id())?;
    let (mut records, trial_columns) =
        trial_records(&chain, study.directions().len(), names.as_deref());
    for (record, segment) in records.iter_mut().zip(&segments) {
        record.insert(
            ("start_step".into(), Key::None),
            Cell::Int(i128::from(segment.start_step)),
        );
        let end = segment
            .end_step
            .map_or(Cell::None, |e| Cell::Int(i128::from(e)));
        record.insert(("end_step".into(), Key::None), end);
    }
    let mut columns = vec![
        ("number".to_string(), Key::None),
        ("start_step".to_string(), Key::None),
        ("end_step".to_string(), Key::None),
    ];
    columns.extend(
        trial_columns
            .into_iter()
            .filter(|(name, _)| name != "number"),
    );
    let text = format_output(&records, &columns, args.format, args.flatten, false);
    print(out, &text)
}
