//! Writing your own [`Sampler`] and [`Pruner`], and using them in a [`DefaultStudy`].
//!
//! - `LocalSearchSampler` samples around the best trial so far (a random step of at most
//!   `radius` times each parameter's range), and uniformly for its first trials, or when no
//!   trial is complete, or for a parameter the best trial does not have.
//! - `WorseThanBestPruner` prunes a trial whose intermediate value is worse than the best
//!   COMPLETE trial's value at the same step by more than `margin` (relative).
//!
//! Run: `cargo run --release --example custom_sampler_pruner`
//! (`SATURATE_SHORT=1`: 30 trials instead of 200).
//!
//! # The sampler contract ([`Sampler`])
//!
//! - Values are exchanged in the **internal representation**: the float itself for a float
//!   parameter, the integer as a float for an int one, the index of the choice for a
//!   categorical one. [`Distribution::to_external`] / [`Distribution::to_internal`] convert.
//! - Every value returned must lie in its distribution: [`Distribution::contains`] checks
//!   bounds, the step grid and the index range. A sampler that computes values (as a
//!   perturbation does) must clamp and snap them; `suggest` fails a value outside with
//!   `StudyError::SampledOutOfDistribution`.
//! - For each trial the study calls `before_trial`, then `infer_relative_search_space` and
//!   `sample_relative` (values sampled jointly; this sampler has none, the defaults return
//!   empty), then `sample_independent` once per parameter, on its first `suggest`.
//!   `after_trial` runs when the trial is told, before its state is stored. The sampler sees
//!   the study, RUNNING trials included, through the [`StudyView`] it is given.
//! - A sampler is `Send` and owned by the study (behind a lock): keep its state in the struct,
//!   and share counters with the caller through an `Arc`, as here.
//!
//! # The pruner contract ([`Pruner`])
//!
//! `prune` is called by `Trial::should_prune` with the trial as stored after its latest
//! `report`; it reads the other trials through the view. It is `Send + Sync` and takes `&self`:
//! a pruner keeps no mutable state of its own (it may write trial system attributes through
//! the view). A trial with no intermediate value must not be pruned.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use saturate::prelude::*;
use saturate::study::distributions::Distribution;
use saturate::study::study::StudyView;
use saturate::study::Result;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let short = std::env::var("SATURATE_SHORT").is_ok_and(|v| v == "1");
    let (n_trials, steps) = if short { (30, 10) } else { (200, 20) };

    let draws = Arc::new(SamplerDraws::default());
    let study = StudyConfig::new()
        .with_direction(StudyDirection::Minimize)
        .with_sampler(LocalSearchSampler::new(7, 0.15, 5, draws.clone()))
        .with_pruner(WorseThanBestPruner::new(0.25, 2))
        .init()?;

    study.optimize(Some(n_trials), None, |trial| {
        let x = trial.suggest_float("x", -3.0, 3.0)?;
        let y = trial.suggest_float("y", -3.0, 3.0)?;
        let scale = trial.suggest_float_log("scale", 0.1, 10.0)?;
        let terms = trial.suggest_int("terms", 1, 5)?;
        let shape = trial.suggest_categorical("shape", ["bowl", "valley"])?;
        let valley = shape == "valley";
        // The Rosenbrock valley plus penalties: the minimum is 0 at x = y = 1, scale = 1,
        // terms = 3, "valley".
        let target = (1.0 - x).powi(2)
            + 10.0 * (y - x * x).powi(2)
            + scale.ln().powi(2)
            + 0.5 * (terms - 3).abs() as f64
            + if valley { 0.0 } else { 1.0 };
        for step in 0..steps {
            trial.report(step, target + 4.0 / (1.0 + step as f64))?;
            if trial.should_prune()? {
                return Err(TrialPruned.into());
            }
        }
        Ok(target)
    })?;

    let trials = study.trials(None)?;
    let count = |state| trials.iter().filter(|t| t.state == state).count();
    println!(
        "trials: {} complete: {} pruned: {}",
        trials.len(),
        count(TrialState::Complete),
        count(TrialState::Pruned)
    );
    println!(
        "sampler: {} local draws, {} uniform draws",
        draws.local.load(Ordering::Relaxed),
        draws.uniform.load(Ordering::Relaxed)
    );
    let best = study.best_trial()?;
    println!(
        "best trial: {} value {:.6}",
        best.number,
        best.value().unwrap_or(f64::NAN)
    );
    for (name, param) in &best.params {
        println!("  {name} = {}", param.value());
    }
    Ok(())
}

/// How many values [`LocalSearchSampler`] drew each way (shared with `main`).
#[derive(Debug, Default)]
struct SamplerDraws {
    local: AtomicUsize,
    uniform: AtomicUsize,
}

/// Local search around the best trial, falling back to uniform sampling.
struct LocalSearchSampler {
    rng: SplitMix64,
    /// Largest step, as a fraction of each parameter's range (in log space for log ones).
    radius: f64,
    /// Trials sampled uniformly before the local search starts.
    n_startup_trials: usize,
    /// The best COMPLETE trial when the current trial started (chosen in `before_trial`, so
    /// all of a trial's parameters perturb the same parent).
    parent: Option<Arc<FrozenTrial>>,
    draws: Arc<SamplerDraws>,
}

impl LocalSearchSampler {
    fn new(seed: u64, radius: f64, n_startup_trials: usize, draws: Arc<SamplerDraws>) -> Self {
        Self {
            rng: SplitMix64(seed),
            radius,
            n_startup_trials,
            parent: None,
            draws,
        }
    }

    /// `parent`'s value moved by a random step, clamped and snapped onto the distribution.
    fn perturb(&mut self, parent: f64, distribution: &Distribution) -> f64 {
        let step = self.radius * (2.0 * self.rng.next_f64() - 1.0);
        match distribution {
            Distribution::Float(d) if d.log => {
                let (lo, hi) = (d.low.ln(), d.high.ln());
                (parent.ln() + step * (hi - lo)).exp().clamp(d.low, d.high)
            }
            Distribution::Float(d) => {
                let moved = (parent + step * (d.high - d.low)).clamp(d.low, d.high);
                match d.step {
                    // Snap onto the grid `low + k * step`, as `contains` requires.
                    Some(grid) => (d.low + ((moved - d.low) / grid).round() * grid).min(d.high),
                    None => moved,
                }
            }
            Distribution::Int(d) => {
                let range = (d.high - d.low) as f64;
                // At least one grid step, or an int parameter would never move.
                let delta = (step * range).round() as i64;
                let delta = if delta == 0 {
                    d.step * if step < 0.0 { -1 } else { 1 }
                } else {
                    delta
                };
                let moved = (parent as i64 + delta).clamp(d.low, d.high);
                (d.low + (moved - d.low) / d.step * d.step) as f64
            }
            // Keep the parent's choice most of the time.
            Distribution::Categorical(c) => {
                if self.rng.next_f64() < 0.8 {
                    parent
                } else {
                    (self.rng.next_f64() * c.choices.len() as f64).floor()
                }
            }
        }
    }
}

impl Sampler for LocalSearchSampler {
    fn before_trial(&mut self, study: &StudyView<'_>, _trial: &FrozenTrial) -> Result<()> {
        let complete = study.trials(Some(&[TrialState::Complete]))?;
        let direction = study.direction();
        self.parent = if complete.len() < self.n_startup_trials {
            None
        } else {
            complete
                .into_iter()
                .filter(|t| t.value().is_some_and(f64::is_finite))
                .min_by(|a, b| {
                    let loss = |t: &FrozenTrial| direction.to_loss(t.value().unwrap_or(f64::NAN));
                    loss(a).total_cmp(&loss(b))
                })
        };
        Ok(())
    }

    fn sample_independent(
        &mut self,
        _study: &StudyView<'_>,
        _trial: &FrozenTrial,
        name: &str,
        distribution: &Distribution,
    ) -> Result<f64> {
        // The parent's value is reusable only if it was suggested from the same distribution.
        let parent_value = self
            .parent
            .as_ref()
            .and_then(|p| p.params.get(name))
            .filter(|p| p.distribution == *distribution)
            .map(|p| p.internal);
        if let Some(parent) = parent_value {
            let value = self.perturb(parent, distribution);
            if distribution.contains(value) {
                self.draws.local.fetch_add(1, Ordering::Relaxed);
                return Ok(value);
            }
        }
        self.draws.uniform.fetch_add(1, Ordering::Relaxed);
        Ok(uniform(self.rng.next_f64(), distribution))
    }

    fn after_trial(
        &mut self,
        _study: &StudyView<'_>,
        _trial: &FrozenTrial,
        _state: TrialState,
        _values: Option<&[f64]>,
    ) -> Result<()> {
        // The next trial chooses its own parent.
        self.parent = None;
        Ok(())
    }
}

/// `u` in [0, 1) mapped uniformly onto a distribution (log-uniformly for log ones), in the
/// internal representation.
fn uniform(u: f64, distribution: &Distribution) -> f64 {
    match distribution {
        Distribution::Float(d) => match d.step {
            Some(step) => {
                let n = ((d.high - d.low) / step).round() + 1.0;
                (d.low + (u * n).floor().min(n - 1.0) * step).min(d.high)
            }
            None if d.log => {
                let (lo, hi) = (d.low.ln(), d.high.ln());
                (lo + u * (hi - lo)).exp().clamp(d.low, d.high)
            }
            None => (d.low + u * (d.high - d.low)).clamp(d.low, d.high),
        },
        // Uniform over the grid (a log int distribution is sampled uniformly here too).
        Distribution::Int(d) => {
            let n = ((d.high - d.low) / d.step + 1) as f64;
            d.low as f64 + (u * n).floor().min(n - 1.0) * d.step as f64
        }
        Distribution::Categorical(c) => {
            let n = c.choices.len() as f64;
            (u * n).floor().min(n - 1.0)
        }
    }
}

/// Prunes a trial worse than the best COMPLETE trial at the same step by more than `margin`
/// (relative to the best's magnitude), once past `n_warmup_steps`. A NaN value is pruned.
struct WorseThanBestPruner {
    margin: f64,
    n_warmup_steps: i64,
}

impl WorseThanBestPruner {
    fn new(margin: f64, n_warmup_steps: i64) -> Self {
        Self {
            margin,
            n_warmup_steps,
        }
    }
}

impl Pruner for WorseThanBestPruner {
    fn prune(&self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<bool> {
        let Some((step, value)) = trial.last_step() else {
            return Ok(false);
        };
        if step < self.n_warmup_steps {
            return Ok(false);
        }
        if value.is_nan() {
            return Ok(true);
        }
        let direction = study.direction();
        let best_at_step = study
            .trials(Some(&[TrialState::Complete]))?
            .iter()
            .filter_map(|t| t.intermediate_values.get(&step).copied())
            .filter(|v| v.is_finite())
            .map(|v| direction.to_loss(v))
            .min_by(f64::total_cmp);
        Ok(match best_at_step {
            Some(best) => direction.to_loss(value) - best > self.margin * best.abs(),
            None => false,
        })
    }
}

/// A tiny seeded generator (SplitMix64), so the example needs no `rand` dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}
