//! One function per command; [`run`] dispatches.

mod ask_tell;
mod export;
mod storage;
mod study;
mod trials;
mod watch;

use std::io::Write;
use std::sync::Arc;

use saturate_study::storage::Storage;
use saturate_study::{DefaultStudy, StudyConfig};
use serde_json::Value;

use crate::cli::{Cli, Command, StorageCommand, StudyCommand};
use crate::error::{CliError, Result};
use crate::records::METRIC_NAMES_ATTR;

/// Runs the parsed command line, writing its output to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<()> {
    let url = cli.storage.ok_or(CliError::MissingStorage)?;
    match cli.command {
        Command::Studies(args) => study::studies(&url, &args, out),
        Command::StudyNames(args) => study::study_names(&url, &args, out),
        Command::CreateStudy(args) => study::create_study(&url, &args, out),
        Command::DeleteStudy(args) => study::delete_study(&url, &args),
        Command::Study(StudyCommand::SetUserAttr(args)) => study::set_user_attr(&url, &args),
        Command::Trials(args) => trials::trials(&url, &args, trials::Which::All, out),
        Command::BestTrial(args) => trials::trials(&url, &args, trials::Which::Best, out),
        Command::BestTrials(args) => trials::trials(&url, &args, trials::Which::Pareto, out),
        Command::Ask(args) => ask_tell::ask(&url, &args, out),
        Command::Tell(args) => ask_tell::tell(&url, &args),
        Command::Storage(StorageCommand::Upgrade) => storage::upgrade(&url, out),
        Command::Export(args) => export::export(&url, &args, out),
        Command::Watch(args) => watch::watch(&url, &args, out),
        Command::Lineage(args) => trials::lineage(&url, &args, out),
    }
}

/// Opens the storage at `url`; a journal file must exist unless `create`.
fn storage_for(url: &str, create: bool) -> Result<Arc<dyn Storage>> {
    crate::storage::open(url, create)
}

/// Opens the storage at `url` (which must exist) and loads the study `name`.
fn load(url: &str, name: &str) -> Result<DefaultStudy> {
    let storage = storage_for(url, false)?;
    Ok(StudyConfig::new()
        .with_storage(storage)
        .with_name(name)
        .load()?)
}

/// Optuna's objective names, when the study has them (`study.set_metric_names`).
fn metric_names(storage: &dyn Storage, study_id: u64) -> Result<Option<Vec<String>>> {
    let attrs = storage.get_study_system_attrs(study_id)?;
    Ok(match attrs.get(METRIC_NAMES_ATTR) {
        Some(Value::Array(names)) => names
            .iter()
            .map(|n| n.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>(),
        _ => None,
    })
}

/// Writes `text` and a newline, as Python's `print`.
fn print(out: &mut dyn Write, text: &str) -> Result<()> {
    writeln!(out, "{text}")?;
    Ok(())
}
