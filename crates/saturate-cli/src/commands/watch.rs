//! `watch`: a live table of a running study (saturate's addition).

use std::io::Write;
use std::time::Duration;

use saturate_study::Study;

use super::study::state_counts;
use super::{load, metric_names};
use crate::cli::WatchArgs;
use crate::error::{usage, Result};
use crate::output::{format_output, py_float_repr, Format};
use crate::records::{direction_name, state_name, trial_records};

pub fn watch(url: &str, args: &WatchArgs, out: &mut dyn Write) -> Result<()> {
    if !(args.interval > 0.0 && args.interval.is_finite()) {
        return Err(usage(
            "--interval",
            format!("{} is not a positive number of seconds", args.interval),
        ));
    }
    let interval = Duration::try_from_secs_f64(args.interval).map_err(|_| {
        usage(
            "--interval",
            format!("{} seconds is longer than a sleep can last", args.interval),
        )
    })?;
    let study = load(url, &args.study_name)?;
    loop {
        let screen = render(&study, args)?;
        if !args.once {
            // Clear the terminal and go home before each refresh.
            write!(out, "\x1b[2J\x1b[H")?;
        }
        write!(out, "{screen}")?;
        out.flush()?;
        if args.once {
            return Ok(());
        }
        std::thread::sleep(interval);
    }
}

fn render(study: &saturate_study::DefaultStudy, args: &WatchArgs) -> Result<String> {
    let trials = study.trials(None)?;
    let directions: Vec<&str> = study
        .directions()
        .iter()
        .map(|d| direction_name(*d))
        .collect();
    let counts: Vec<String> = state_counts(&trials)
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{n} {}", state_name(s).to_lowercase()))
        .collect();
    let mut text = format!(
        "study {} ({}): {} trial{}{}{}\n",
        study.name(),
        directions.join(", "),
        trials.len(),
        if trials.len() == 1 { "" } else { "s" },
        if counts.is_empty() { "" } else { ": " },
        counts.join(", ")
    );
    if study.directions().len() == 1 {
        if let Ok(best) = study.best_trial() {
            let value = best.value().map_or("-".into(), py_float_repr);
            text.push_str(&format!("best: trial {} value {value}\n", best.number));
        }
    } else {
        let front = study.best_trials()?;
        let numbers: Vec<String> = front.iter().map(|t| t.number.to_string()).collect();
        text.push_str(&format!("Pareto front: trials {}\n", numbers.join(", ")));
    }
    let shown = if args.tail == 0 {
        trials.len()
    } else {
        args.tail.min(trials.len())
    };
    let recent = &trials[trials.len() - shown..];
    let names = metric_names(study.storage().as_ref(), study.id())?;
    let (records, columns) = trial_records(recent, study.directions().len(), names.as_deref());
    let columns: Vec<_> = columns
        .into_iter()
        .filter(|(attr, _)| !matches!(attr.as_str(), "datetime_complete" | "user_attrs"))
        .collect();
    if !records.is_empty() {
        text.push_str(&format_output(
            &records,
            &columns,
            Format::Table,
            true,
            false,
        ));
        text.push('\n');
    }
    if shown < trials.len() {
        text.push_str(&format!(
            "(latest {shown} of {} trials; --tail 0 shows all)\n",
            trials.len()
        ));
    }
    Ok(text)
}
