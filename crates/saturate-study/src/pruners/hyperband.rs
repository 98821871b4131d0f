//! Hyperband over successive-halving brackets.

use std::sync::Mutex;

use crate::error::{invalid_argument, Result};
use crate::pruners::base::Pruner;
use crate::pruners::SuccessiveHalvingPruner;
use crate::study::StudyView;
use crate::trial::{FrozenTrial, TrialState};

/// Hyperband (Li et al., "Hyperband: A Novel Bandit-Based Approach to Hyperparameter
/// Optimization", JMLR 2018) as Optuna's `HyperbandPruner` runs it: several
/// [`SuccessiveHalvingPruner`] brackets with `min_early_stopping_rate = bracket`; a trial's
/// bracket is `crc32("{study_name}_{number}") mod total budget`, and each bracket only
/// sees its own trials.
///
/// # NaN
///
/// As [`SuccessiveHalvingPruner`]: a NaN value at a rung is pruned.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// let pruner = HyperbandPrunerConfig::new()
///     .with_max_resource(Some(81))
///     .init()?;
/// let study = StudyConfig::new().with_pruner(pruner).init()?;
/// # let _ = study;
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug)]
pub struct HyperbandPruner {
    min_resource: i64,
    /// `None` = "auto": the largest last step of finished trials + 1.
    max_resource: Option<i64>,
    reduction_factor: i64,
    bootstrap_count: usize,
    brackets: Mutex<Option<Brackets>>,
}

#[derive(Debug)]
struct Brackets {
    budgets: Vec<u32>,
    total: u32,
    pruners: Vec<SuccessiveHalvingPruner>,
}

impl Default for HyperbandPruner {
    /// Optuna's defaults: min 1, max "auto", η = 3, no bootstrap.
    fn default() -> Self {
        HyperbandPrunerConfig::new().init().expect("valid defaults")
    }
}

impl HyperbandPruner {
    /// See [`HyperbandPrunerConfig`].
    fn new(
        min_resource: i64,
        max_resource: Option<i64>,
        reduction_factor: i64,
        bootstrap_count: usize,
    ) -> Result<Self> {
        if min_resource < 1 {
            return Err(invalid_argument(
                "min_resource",
                format!("must be at least 1, got {min_resource}"),
            ));
        }
        if reduction_factor < 2 {
            return Err(invalid_argument(
                "reduction_factor",
                format!("must be at least 2, got {reduction_factor}"),
            ));
        }
        if let Some(max) = max_resource.filter(|max| *max < min_resource) {
            return Err(invalid_argument(
                "max_resource",
                format!("{max} is below min_resource {min_resource}"),
            ));
        }
        Ok(Self {
            min_resource,
            max_resource,
            reduction_factor,
            bootstrap_count,
            brackets: Mutex::new(None),
        })
    }

    fn init(&self, study: &StudyView<'_>) -> Result<Option<Brackets>> {
        let max_resource = match self.max_resource {
            Some(m) => m,
            None => {
                let finished = study.trials(Some(&[TrialState::Complete, TrialState::Pruned]))?;
                match finished
                    .iter()
                    .filter_map(|t| t.last_step())
                    .map(|(s, _)| s)
                    .max()
                {
                    Some(last) => last + 1,
                    None => return Ok(None),
                }
            }
        };
        let eta = self.reduction_factor as f64;
        let ratio = max_resource as f64 / self.min_resource as f64;
        let n_brackets = (ratio.ln() / eta.ln()).floor() as i64 + 1;
        let n_brackets = n_brackets.max(1) as u32;
        let mut budgets = Vec::new();
        let mut pruners = Vec::new();
        for bracket in 0..n_brackets {
            let s = n_brackets - 1 - bracket;
            let budget = (n_brackets as f64 * eta.powi(s as i32) / (s + 1) as f64).ceil() as u32;
            budgets.push(budget);
            pruners.push(SuccessiveHalvingPruner::new(
                Some(self.min_resource),
                self.reduction_factor,
                bracket,
                self.bootstrap_count,
            )?);
        }
        Ok(Some(Brackets {
            total: budgets.iter().sum(),
            budgets,
            pruners,
        }))
    }
}

/// Configures a [`HyperbandPruner`]; the defaults are Optuna's (min 1, max `"auto"`, η = 3, no bootstrap).
#[derive(Debug, Clone, PartialEq)]
pub struct HyperbandPrunerConfig {
    /// Steps before the first rung of the most aggressive bracket (default 1; at least 1).
    pub min_resource: i64,
    /// Steps of a full trial; `None` is Optuna's `"auto"`: the largest last step of the finished trials + 1 (default `None`).
    pub max_resource: Option<i64>,
    /// η of every bracket (default 3; at least 2).
    pub reduction_factor: i64,
    /// Values a rung needs before it promotes any trial (default 0).
    pub bootstrap_count: usize,
}

impl Default for HyperbandPrunerConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl HyperbandPrunerConfig {
    /// Optuna's defaults.
    pub fn new() -> Self {
        Self {
            min_resource: 1,
            max_resource: None,
            reduction_factor: 3,
            bootstrap_count: 0,
        }
    }
    /// Sets [`Self::min_resource`].
    pub fn with_min_resource(mut self, min_resource: i64) -> Self {
        self.min_resource = min_resource;
        self
    }
    /// Sets [`Self::max_resource`].
    pub fn with_max_resource(mut self, max_resource: Option<i64>) -> Self {
        self.max_resource = max_resource;
        self
    }
    /// Sets [`Self::reduction_factor`].
    pub fn with_reduction_factor(mut self, reduction_factor: i64) -> Self {
        self.reduction_factor = reduction_factor;
        self
    }
    /// Sets [`Self::bootstrap_count`].
    pub fn with_bootstrap_count(mut self, bootstrap_count: usize) -> Self {
        self.bootstrap_count = bootstrap_count;
        self
    }
    /// The pruner; [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument)
    /// names the first argument out of its range.
    pub fn init(&self) -> Result<HyperbandPruner> {
        HyperbandPruner::new(
            self.min_resource,
            self.max_resource,
            self.reduction_factor,
            self.bootstrap_count,
        )
    }
}

impl Brackets {
    fn bracket_of(&self, study_name: &str, number: u64) -> usize {
        let mut n = crc32fast::hash(format!("{study_name}_{number}").as_bytes()) % self.total;
        for (bracket, budget) in self.budgets.iter().enumerate() {
            if n < *budget {
                return bracket;
            }
            n -= budget;
        }
        unreachable!("n < total budget")
    }
}

impl Pruner for HyperbandPruner {
    fn prune(&self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<bool> {
        let mut guard = self.brackets.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            *guard = self.init(study)?;
        }
        let Some(brackets) = guard.as_ref() else {
            return Ok(false);
        };
        let name = study.name().to_owned();
        let bracket = brackets.bracket_of(&name, trial.number);
        let same_bracket = |t: &FrozenTrial| brackets.bracket_of(&name, t.number) == bracket;
        brackets.pruners[bracket].prune(&study.filtered(&same_bracket), trial)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_match_optuna() {
        // Optuna 4.9: p = HyperbandPruner(1, 81, 3); p._try_initialization(study)
        // p._trial_allocation_budgets == [81, 34, 15, 8, 5], total 143, and
        // [crc32(f"s_{n}".encode()) % 143 for n in range(5)] == [1, 52, 65, 111, 2].
        let pruner = HyperbandPrunerConfig::new()
            .with_max_resource(Some(81))
            .init()
            .unwrap();
        let storage = crate::storage::InMemoryStorage::new();
        let view = StudyView::new(&storage, 0, "s", &[crate::trial::StudyDirection::Minimize]);
        let brackets = pruner.init(&view).unwrap().unwrap();
        assert_eq!(brackets.budgets, vec![81, 34, 15, 8, 5]);
        assert_eq!(brackets.total, 143);
        let ids: Vec<usize> = (0..5).map(|n| brackets.bracket_of("s", n)).collect();
        // 1 -> 0, 52 -> 0, 65 -> 0, 111 -> 81+34=115 > 111 -> 1, 2 -> 0
        assert_eq!(ids, vec![0, 0, 0, 1, 0]);
    }
}
