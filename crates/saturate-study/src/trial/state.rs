//! Trial states and study directions, with Optuna's integer codes.

/// The life cycle of a trial (Optuna's `TrialState`, same integer codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrialState {
    /// Being evaluated.
    Running,
    /// Finished with values.
    Complete,
    /// Stopped early by a pruner; its value is its last intermediate value.
    Pruned,
    /// The objective failed, returned NaN, or the trial was abandoned.
    Fail,
    /// Enqueued, waiting for a worker to claim it.
    Waiting,
}

impl TrialState {
    /// Optuna's integer code (RUNNING = 0 ... WAITING = 4).
    pub fn code(self) -> i64 {
        match self {
            TrialState::Running => 0,
            TrialState::Complete => 1,
            TrialState::Pruned => 2,
            TrialState::Fail => 3,
            TrialState::Waiting => 4,
        }
    }

    /// The state of an Optuna integer code.
    pub fn from_code(code: i64) -> Option<Self> {
        Some(match code {
            0 => TrialState::Running,
            1 => TrialState::Complete,
            2 => TrialState::Pruned,
            3 => TrialState::Fail,
            4 => TrialState::Waiting,
            _ => return None,
        })
    }

    /// COMPLETE, PRUNED or FAIL: the trial can no longer change.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            TrialState::Complete | TrialState::Pruned | TrialState::Fail
        )
    }
}

/// Whether an objective is minimised or maximised (Optuna's `StudyDirection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StudyDirection {
    /// Not set (only seen in files written by others).
    NotSet,
    /// Smaller is better.
    Minimize,
    /// Larger is better.
    Maximize,
}

impl StudyDirection {
    /// Optuna's integer code (NOT_SET = 0, MINIMIZE = 1, MAXIMIZE = 2).
    pub fn code(self) -> i64 {
        match self {
            StudyDirection::NotSet => 0,
            StudyDirection::Minimize => 1,
            StudyDirection::Maximize => 2,
        }
    }

    /// The direction of an Optuna integer code.
    pub fn from_code(code: i64) -> Option<Self> {
        Some(match code {
            0 => StudyDirection::NotSet,
            1 => StudyDirection::Minimize,
            2 => StudyDirection::Maximize,
            _ => return None,
        })
    }

    /// `value` as a loss: itself when minimising, negated when maximising.
    pub fn to_loss(self, value: f64) -> f64 {
        match self {
            StudyDirection::Maximize => -value,
            _ => value,
        }
    }
}
