//! `saturate`: Optuna's command-line interface over saturate's storages (a journal file,
//! `sqlite:///PATH`, `postgresql://...`), with Optuna's commands, arguments and output
//! shapes, plus `export` (CSV/JSON) and `watch` (a live table of a running study).
//!
//! Exit codes: 0 success, 1 an operation failed, 2 usage (arguments, storage URL), 3 the
//! storage cannot be opened or read, 4 no such study or trial.

mod cli;
mod commands;
mod error;
mod output;
mod records;
mod storage;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let mut stdout = std::io::stdout().lock();
    match commands::run(cli, &mut stdout) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = stdout.flush();
            eprintln!("error: {error}");
            if let Some(hint) = error.hint() {
                eprintln!("hint: {hint}");
            }
            ExitCode::from(error.exit_code() as u8)
        }
    }
}
