//! Pruning by a paired Wilcoxon signed-rank test against the best trial.

use crate::error::{invalid_argument, Result};
use crate::normal::ndtr;
use crate::pruners::base::Pruner;
use crate::study::StudyView;
use crate::trial::{FrozenTrial, StudyDirection, TrialState};

/// Compares the trial's intermediate values with the best trial's at the same steps
/// (e.g. per-fold or per-instance scores) with a one-sided Wilcoxon signed-rank test and
/// prunes when the trial is worse with p < `p_threshold` (Optuna's `WilcoxonPruner`,
/// `zero_method="zsplit"`). Exact p-values without ties or zeros up to 50 pairs,
/// the normal approximation otherwise, as SciPy does.
///
/// # NaN
///
/// A trial with a non-finite intermediate value is never pruned (nor when the best trial
/// has one); the best trial is the best COMPLETE trial whose value is not NaN.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// let pruner = WilcoxonPrunerConfig::new().with_p_threshold(0.05).init()?;
/// let study = StudyConfig::new().with_pruner(pruner).init()?;
/// # let _ = study;
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug, Clone)]
pub struct WilcoxonPruner {
    p_threshold: f64,
    n_startup_steps: usize,
}

impl Default for WilcoxonPruner {
    /// Optuna's defaults: p < 0.1, 2 startup steps.
    fn default() -> Self {
        WilcoxonPrunerConfig::new().init().expect("valid defaults")
    }
}

impl WilcoxonPruner {
    /// See [`WilcoxonPrunerConfig`].
    fn new(p_threshold: f64, n_startup_steps: usize) -> Result<Self> {
        if !(0.0..=1.0).contains(&p_threshold) {
            return Err(invalid_argument(
                "p_threshold",
                format!("{p_threshold} is not in [0, 1]"),
            ));
        }
        Ok(Self {
            p_threshold,
            n_startup_steps,
        })
    }
}

/// Configures a [`WilcoxonPruner`]; the defaults are Optuna's (p < 0.1, 2 startup steps).
#[derive(Debug, Clone, PartialEq)]
pub struct WilcoxonPrunerConfig {
    /// Prune when the one-sided p-value is below this (default 0.1; in [0, 1]).
    pub p_threshold: f64,
    /// Steps (pairs) needed before testing (default 2).
    pub n_startup_steps: usize,
}

impl Default for WilcoxonPrunerConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl WilcoxonPrunerConfig {
    /// Optuna's defaults.
    pub fn new() -> Self {
        Self {
            p_threshold: 0.1,
            n_startup_steps: 2,
        }
    }
    /// Sets [`Self::p_threshold`].
    pub fn with_p_threshold(mut self, p_threshold: f64) -> Self {
        self.p_threshold = p_threshold;
        self
    }
    /// Sets [`Self::n_startup_steps`].
    pub fn with_n_startup_steps(mut self, n_startup_steps: usize) -> Self {
        self.n_startup_steps = n_startup_steps;
        self
    }
    /// The pruner; [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument)
    /// names the first argument out of its range.
    pub fn init(&self) -> Result<WilcoxonPruner> {
        WilcoxonPruner::new(self.p_threshold, self.n_startup_steps)
    }
}

/// One-sided p-value of the signed-rank statistic: `greater` tests whether the
/// differences are shifted above zero.
pub(crate) fn wilcoxon_p_value(diffs: &[f64], greater: bool) -> f64 {
    let n = diffs.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| diffs[*a].abs().total_cmp(&diffs[*b].abs()));
    let mut ranks = vec![0.0; n];
    let mut ties = false;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && diffs[order[j + 1]].abs() == diffs[order[i]].abs() {
            j += 1;
        }
        let average = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        if t > 1.0 {
            ties = true;
            tie_term += t * t * t - t;
        }
        for k in i..=j {
            ranks[order[k]] = average;
        }
        i = j + 1;
    }
    let zeros = diffs.contains(&0.0);
    // zsplit: a zero difference counts half for each sign.
    let r_plus: f64 = diffs
        .iter()
        .zip(&ranks)
        .map(|(d, r)| {
            if *d > 0.0 {
                *r
            } else if *d == 0.0 {
                r / 2.0
            } else {
                0.0
            }
        })
        .sum();
    if n <= 50 && !ties && !zeros {
        // Exact distribution of W+ over 2^n equally likely sign patterns.
        let max = n * (n + 1) / 2;
        let mut counts = vec![0f64; max + 1];
        counts[0] = 1.0;
        for rank in 1..=n {
            for w in (rank..=max).rev() {
                counts[w] += counts[w - rank];
            }
        }
        let total: f64 = counts.iter().sum();
        let w = r_plus.round() as usize;
        let tail: f64 = if greater {
            counts[w..].iter().sum()
        } else {
            counts[..=w].iter().sum()
        };
        return (tail / total).min(1.0);
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let variance = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term / 48.0;
    let z = (r_plus - mean) / variance.sqrt();
    if greater {
        ndtr(-z)
    } else {
        ndtr(z)
    }
}

impl Pruner for WilcoxonPruner {
    fn prune(&self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<bool> {
        if trial.intermediate_values.is_empty()
            || trial.intermediate_values.values().any(|v| !v.is_finite())
        {
            return Ok(false);
        }
        let direction = study.direction();
        let best = study
            .trials(Some(&[TrialState::Complete]))?
            .into_iter()
            .filter(|t| t.value().is_some_and(|v| !v.is_nan()))
            .min_by(|a, b| {
                let loss = |t: &FrozenTrial| direction.to_loss(t.value().expect("filtered"));
                loss(a).total_cmp(&loss(b))
            });
        let Some(best) = best else {
            return Ok(false);
        };
        if best.intermediate_values.is_empty()
            || best.intermediate_values.values().any(|v| !v.is_finite())
        {
            return Ok(false);
        }
        let diffs: Vec<f64> = trial
            .intermediate_values
            .iter()
            .filter_map(|(step, v)| best.intermediate_values.get(step).map(|b| v - b))
            .collect();
        if diffs.len() < self.n_startup_steps.max(2) {
            return Ok(false);
        }
        let mean = |it: &mut dyn Iterator<Item = &f64>| {
            let v: Vec<f64> = it.copied().collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        let best_mean = mean(&mut best.intermediate_values.values());
        let trial_mean = mean(&mut trial.intermediate_values.values());
        let (greater, average_is_best) = match direction {
            StudyDirection::Maximize => (false, best_mean <= trial_mean),
            _ => (true, best_mean >= trial_mean),
        };
        let p = wilcoxon_p_value(&diffs, greater);
        Ok(p < self.p_threshold && !average_is_best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_match_scipy() {
        // scipy.stats.wilcoxon(d, alternative=..., zero_method="zsplit").pvalue
        // d = [1, 2, 3, 4, 5]: greater -> 0.03125 (exact), less -> 1.0
        assert!((wilcoxon_p_value(&[1.0, 2.0, 3.0, 4.0, 5.0], true) - 0.03125).abs() < 1e-12);
        assert!((wilcoxon_p_value(&[1.0, 2.0, 3.0, 4.0, 5.0], false) - 1.0).abs() < 1e-12);
        // d = [1, -2, 3, 4, -5, 6]: W+ = 14 of 21, exact greater = P(W+ >= 14) = 18/64.
        assert!(
            (wilcoxon_p_value(&[1.0, -2.0, 3.0, 4.0, -5.0, 6.0], true) - 18.0 / 64.0).abs() < 1e-12
        );
    }
}
