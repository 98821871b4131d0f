//! The lineage of a trial in a population-based training run: each constant-hyperparameter
//! segment of a member is a trial, and a trial that started from a copy of another member's
//! weights names that member's trial in [`PARENT_ATTR`]. saturate-train's PBT writes these
//! attributes; this module reads them (the `saturate lineage` command prints them).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::distributions::ParamValue;
use crate::error::{Result, StudyError};
use crate::study::Study;

/// Trial system attribute: the number of the trial this one's weights were copied from.
pub const PARENT_ATTR: &str = "saturate:pbt_parent";
/// Trial system attribute: 0 for a member of the first population, the parent's + 1 after.
pub const GENERATION_ATTR: &str = "saturate:pbt_generation";
/// Trial system attribute: the member's epoch count when this trial started (its first
/// intermediate value is at the next epoch).
pub const START_STEP_ATTR: &str = "saturate:pbt_start_step";

/// One constant-hyperparameter segment of a PBT member's history.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// The trial of this segment.
    pub trial_number: u64,
    /// Its parameters (shared and member).
    pub params: BTreeMap<String, ParamValue>,
    /// The member's epoch count when the segment started (0 for the first generation).
    pub start_step: i64,
    /// The epoch count when it ended: where the next segment starts, or the trial's last
    /// intermediate value for the last one (`None` if it reported nothing).
    pub end_step: Option<i64>,
}

/// The hyperparameter schedule that led to trial `trial_number` of a PBT run: its ancestors'
/// segments, first generation first, each cut where its child started (the child's weights
/// were copied at that epoch), and the trial's own segment last. A trial that is not part of
/// a PBT run has a lineage of one segment.
///
/// # Errors
/// A storage error; [`StudyError::UnknownTrialNumber`] for a trial or parent number that is
/// not in the study.
pub fn lineage<S: Study + ?Sized>(study: &S, trial_number: u64) -> Result<Vec<Segment>> {
    let trials = study.trials(None)?;
    let find = |number: u64| {
        trials
            .iter()
            .find(|t| t.number == number)
            .ok_or(StudyError::UnknownTrialNumber { number })
    };
    let mut chain = Vec::new();
    let mut current = find(trial_number)?;
    let mut end_step = current.last_step().map(|(step, _)| step);
    loop {
        let start_step = current
            .system_attrs
            .get(START_STEP_ATTR)
            .and_then(Value::as_i64)
            .unwrap_or(0);
        chain.push(Segment {
            trial_number: current.number,
            params: current
                .params
                .iter()
                .map(|(name, p)| (name.clone(), p.value()))
                .collect(),
            start_step,
            end_step,
        });
        match current
            .system_attrs
            .get(PARENT_ATTR)
            .and_then(Value::as_u64)
        {
            Some(parent) => {
                current = find(parent)?;
                end_step = Some(start_step);
            }
            None => break,
        }
        if chain.len() > trials.len() {
            // A parent cycle cannot come from the trainer; stop rather than loop.
            break;
        }
    }
    chain.reverse();
    Ok(chain)
}
