//! The Tree-structured Parzen Estimator sampler.

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::rngs::StdRng;

use crate::distributions::Distribution;
use crate::error::{invalid_argument, Result};
use crate::samplers::base::{
    intersection_search_space, publish_relative_params, published_relative_params, sample_uniform,
    seeded_rng,
};
use crate::samplers::tpe::mixture::MixtureOfProducts;
use crate::samplers::tpe::multi_objective::{split_multi_objective, weights_below};
use crate::samplers::tpe::parzen_estimator::{
    build_parzen_estimator, default_weights, ParzenSettings,
};
use crate::samplers::{Sampler, SearchSpace};
use crate::study::StudyView;
use crate::trial::{FrozenTrial, StudyDirection, TrialState};

/// Where TPE with `constant_liar` publishes a RUNNING trial's relative parameters.
const RELATIVE_PARAMS_KEY: &str = "tpe:relative_params";

/// Optuna's default gamma: `min(ceil(0.1·n), 25)` trials form l(x).
pub fn default_gamma(n: usize) -> usize {
    n.div_ceil(10).min(25)
}

/// hyperopt's gamma: `min(ceil(0.25·√n), 25)`.
pub fn hyperopt_gamma(n: usize) -> usize {
    ((0.25 * (n as f64).sqrt()).ceil() as usize).min(25)
}

/// The TPE sampler (Bergstra et al., "Algorithms for Hyper-Parameter Optimization",
/// NeurIPS 2011; Watanabe, "Tree-Structured Parzen Estimator: Understanding Its Algorithm
/// Components and Their Roles for Better Empirical Performance", arXiv 2304.11127),
/// following Optuna 4.9's `TPESampler`.
///
/// Until `n_startup_trials` trials are COMPLETE or PRUNED it samples at random. Then it
/// splits the finished trials into the best `gamma(n)` ("below", l(x)) and the rest
/// ("above", g(x)): complete trials by value (non-domination rank for several
/// objectives), then pruned trials by (deepest step, last value), RUNNING trials always
/// above (`constant_liar`). It draws `n_ei_candidates` samples from l and keeps the one
/// maximising log l(x) − log g(x).
///
/// # NaN
///
/// A NaN objective fails its trial (the study does that, as Optuna does), and TPE leaves
/// failed trials out. A pruned trial whose last intermediate value is NaN ranks after the
/// pruned trials that reached the same step.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// let sampler = TpeSamplerConfig::new().with_seed(0).with_n_startup_trials(5).init()?;
/// let study = StudyConfig::new().with_sampler(sampler).init()?;
/// study.optimize(Some(12), None, |t| {
///     let x = t.suggest_float("x", -5.0, 5.0)?;
///     let act = t.suggest_categorical("act", ["relu", "gelu"])?;
///     Ok(x * x + if act == "relu" { 0.0 } else { 1.0 })
/// })?;
/// assert!(study.best_value()? < 25.0 + 1.0);
/// # Ok::<(), StudyError>(())
/// ```
///
/// The options (Optuna's names and defaults) are on [`TpeSamplerConfig`]. Its `group`
/// option is Optuna's decomposed search space, unrelated to saturate's training groups.
pub struct TpeSampler {
    rng: StdRng,
    n_startup_trials: usize,
    n_ei_candidates: usize,
    gamma: fn(usize) -> usize,
    weights: fn(usize) -> Vec<f64>,
    settings: ParzenSettings,
    group: bool,
    constant_liar: bool,
    /// Optuna 5.0's `multivariate=None`: decided by the study's number of objectives at its
    /// first trial (multivariate for one objective, independent for several).
    multivariate_auto: bool,
    /// Groups of the last inferred space (with `group`).
    groups: Vec<SearchSpace>,
}

/// Which Optuna release's TPE defaults a [`TpeSamplerConfig`] starts from
/// ([`TpeSamplerConfig::with_optuna_defaults`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OptunaDefaults {
    /// Optuna 4.9 (saturate's default): independent TPE, no constant liar.
    #[default]
    V4_9,
    /// Optuna 5.0: multivariate TPE for single-objective studies (independent for
    /// multi-objective ones, as Optuna 5.0 decides by the study) and constant liar.
    V5_0,
}

impl std::fmt::Debug for TpeSampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TpeSampler")
            .field("n_startup_trials", &self.n_startup_trials)
            .field("n_ei_candidates", &self.n_ei_candidates)
            .field("settings", &self.settings)
            .field("group", &self.group)
            .field("constant_liar", &self.constant_liar)
            .field("multivariate_auto", &self.multivariate_auto)
            .finish()
    }
}

/// Configures a [`TpeSampler`]; the defaults are Optuna 4.9's
/// ([`with_optuna_defaults`](Self::with_optuna_defaults) switches to 5.0's).
#[derive(Debug, Clone)]
pub struct TpeSamplerConfig {
    seed: Option<u64>,
    n_startup_trials: usize,
    n_ei_candidates: usize,
    gamma: fn(usize) -> usize,
    weights: fn(usize) -> Vec<f64>,
    settings: ParzenSettings,
    group: bool,
    constant_liar: bool,
    multivariate_auto: bool,
}

impl Default for TpeSamplerConfig {
    fn default() -> Self {
        Self {
            seed: None,
            n_startup_trials: 10,
            n_ei_candidates: 24,
            gamma: default_gamma,
            weights: default_weights,
            settings: ParzenSettings {
                prior_weight: 1.0,
                consider_magic_clip: true,
                consider_endpoints: false,
                multivariate: false,
            },
            group: false,
            constant_liar: false,
            multivariate_auto: false,
        }
    }
}

impl TpeSamplerConfig {
    /// Optuna's defaults.
    pub fn new() -> Self {
        Self::default()
    }
    /// Seed for reproducible sampling (default: from the operating system).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
    /// Random trials before TPE starts (10).
    pub fn with_n_startup_trials(mut self, n: usize) -> Self {
        self.n_startup_trials = n;
        self
    }
    /// Candidates drawn from l(x) per sample (24; at least 1).
    pub fn with_n_ei_candidates(mut self, n: usize) -> Self {
        self.n_ei_candidates = n;
        self
    }
    /// How many finished trials form l(x) ([`default_gamma`]).
    pub fn with_gamma(mut self, gamma: fn(usize) -> usize) -> Self {
        self.gamma = gamma;
        self
    }
    /// Kernel weights of the observations, oldest first.
    pub fn with_weights(mut self, weights: fn(usize) -> Vec<f64>) -> Self {
        self.weights = weights;
        self
    }
    /// Weight of the prior kernel (1.0; finite and positive).
    pub fn with_prior_weight(mut self, w: f64) -> Self {
        self.settings.prior_weight = w;
        self
    }
    /// Clip σ from below by (high − low)/min(100, 1 + n_kernels) (true).
    pub fn with_consider_magic_clip(mut self, on: bool) -> Self {
        self.settings.consider_magic_clip = on;
        self
    }
    /// Let the outermost kernels' σ see the bounds (false).
    pub fn with_consider_endpoints(mut self, on: bool) -> Self {
        self.settings.consider_endpoints = on;
        self
    }
    /// Model the parameters jointly (false).
    pub fn with_multivariate(mut self, on: bool) -> Self {
        self.settings.multivariate = on;
        self.multivariate_auto = false;
        self
    }
    /// Start from the defaults of an Optuna release: `multivariate` and `constant_liar` take
    /// that release's defaults (Optuna 5.0 made both default on; its `multivariate` follows
    /// the study: on for one objective, off for several). The other defaults are the same in
    /// both. Call it before the options it should not override.
    pub fn with_optuna_defaults(mut self, version: OptunaDefaults) -> Self {
        match version {
            OptunaDefaults::V4_9 => {
                self.settings.multivariate = false;
                self.multivariate_auto = false;
                self.constant_liar = false;
            }
            OptunaDefaults::V5_0 => {
                self.settings.multivariate = false;
                self.multivariate_auto = true;
                self.constant_liar = true;
            }
        }
        self
    }
    /// With `multivariate`, model each group of parameters that always appear together
    /// jointly (false).
    pub fn with_group(mut self, on: bool) -> Self {
        self.group = on;
        self
    }
    /// Count RUNNING trials as bad ones so that concurrent trials spread out (false).
    pub fn with_constant_liar(mut self, on: bool) -> Self {
        self.constant_liar = on;
        self
    }
    /// The sampler.
    ///
    /// # Errors
    /// [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument) for
    /// `n_ei_candidates` 0 or a prior weight that is not finite and positive.
    pub fn init(&self) -> Result<TpeSampler> {
        if self.n_ei_candidates == 0 {
            return Err(invalid_argument(
                "TPE n_ei_candidates",
                "it must be at least 1",
            ));
        }
        let w = self.settings.prior_weight;
        if !(w.is_finite() && w > 0.0) {
            return Err(invalid_argument(
                "TPE prior_weight",
                format!("{w} is not finite and positive"),
            ));
        }
        Ok(TpeSampler {
            rng: seeded_rng(self.seed),
            n_startup_trials: self.n_startup_trials,
            n_ei_candidates: self.n_ei_candidates,
            gamma: self.gamma,
            weights: self.weights,
            settings: self.settings,
            group: self.group && (self.settings.multivariate || self.multivariate_auto),
            constant_liar: self.constant_liar,
            multivariate_auto: self.multivariate_auto,
            groups: Vec::new(),
        })
    }
}

impl Default for TpeSampler {
    /// Optuna's defaults, seeded from the operating system.
    fn default() -> Self {
        TpeSamplerConfig::new()
            .init()
            .expect("the default TPE settings are valid")
    }
}

impl TpeSampler {
    fn finished_count(trials: &[Arc<FrozenTrial>]) -> usize {
        trials
            .iter()
            .filter(|t| matches!(t.state, TrialState::Complete | TrialState::Pruned))
            .count()
    }

    /// The relative parameters a RUNNING trial published (constant liar, multivariate).
    fn published_params(&self, trial: &FrozenTrial) -> Option<BTreeMap<String, f64>> {
        if trial.state != TrialState::Running || !self.settings.multivariate {
            return None;
        }
        published_relative_params(trial, RELATIVE_PARAMS_KEY)
    }

    fn sample(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        space: &SearchSpace,
        all: &[Arc<FrozenTrial>],
    ) -> Result<BTreeMap<String, f64>> {
        // A kernel over a single value has zero width (NaN density): take the value.
        let mut sampled: BTreeMap<String, f64> = space
            .iter()
            .filter_map(|(name, d)| Some((name.clone(), d.single_value()?)))
            .collect();
        let space: SearchSpace = space
            .iter()
            .filter(|(name, _)| !sampled.contains_key(*name))
            .map(|(name, d)| (name.clone(), d.clone()))
            .collect();
        if space.is_empty() {
            return Ok(sampled);
        }
        let space = &space;
        // Borrowed, not cloned: a thousand `Arc` clones and drops per suggestion cost more
        // than the split itself.
        let trials: Vec<&FrozenTrial> = all
            .iter()
            .map(|t| &**t)
            .filter(|t| t.number != trial.number)
            .filter(|t| match t.state {
                TrialState::Complete | TrialState::Pruned => true,
                TrialState::Running => self.constant_liar,
                _ => false,
            })
            .collect();
        let (l, g) = self.estimators(study, space, &trials);
        let candidates = l.sample(&mut self.rng, self.n_ei_candidates);
        let log_l = l.log_pdf(&candidates);
        let log_g = g.log_pdf(&candidates);
        let best = (0..candidates.len())
            .max_by(|a, b| {
                (log_l[*a] - log_g[*a])
                    .total_cmp(&(log_l[*b] - log_g[*b]))
                    .then(b.cmp(a))
            })
            .expect("at least one candidate");
        sampled.extend(space.keys().cloned().zip(candidates[best].iter().copied()));
        Ok(sampled)
    }

    /// The Parzen estimators l(x) (the good trials) and g(x) (the others) over `space` from
    /// `trials` (RUNNING ones among them count as bad: the constant liar).
    fn estimators(
        &self,
        study: &StudyView<'_>,
        space: &SearchSpace,
        trials: &[&FrozenTrial],
    ) -> (MixtureOfProducts, MixtureOfProducts) {
        let n = trials
            .iter()
            .filter(|t| t.state != TrialState::Running)
            .count();
        let (below, above) = split_trials(study, trials, (self.gamma)(n));

        let below_weights = (study.directions().len() > 1).then(|| weights_below(study, &below));
        let estimator = |this: &Self, group: &[&FrozenTrial], weights: Option<Vec<f64>>| {
            let mut observations = vec![Vec::with_capacity(group.len()); space.len()];
            let mut kept_weights = Vec::new();
            let mut row = Vec::with_capacity(space.len());
            for (i, t) in group.iter().enumerate() {
                let published = this.published_params(t);
                let lookup = |k: &str| {
                    t.params
                        .get(k)
                        .map(|p| p.internal)
                        .or_else(|| published.as_ref().and_then(|p| p.get(k).copied()))
                };
                row.clear();
                for (name, distribution) in space {
                    match lookup(name) {
                        Some(x) => row.push(clip_to(distribution, x)),
                        None => break,
                    }
                }
                if row.len() == space.len() {
                    for (obs, x) in observations.iter_mut().zip(&row) {
                        obs.push(*x);
                    }
                    if let Some(w) = &weights {
                        kept_weights.push(w[i]);
                    }
                }
            }
            let n = observations.first().map_or(0, Vec::len);
            let weights = match weights {
                Some(_) => Some(kept_weights),
                None => Some((this.weights)(n)),
            };
            build_parzen_estimator(&observations, space, this.settings, weights)
        };
        (
            estimator(self, &below, below_weights),
            estimator(self, &above, None),
        )
    }
}

/// Observations outside the distribution (a fixed parameter out of range) are clipped
/// so that the kernels stay inside the support.
fn clip_to(distribution: &Distribution, x: f64) -> f64 {
    match distribution {
        Distribution::Float(d) => x.clamp(d.low, d.high),
        Distribution::Int(d) => x.clamp(d.low as f64, d.high as f64),
        Distribution::Categorical(c) => x.clamp(0.0, (c.choices.len() - 1) as f64),
    }
}

/// Splits trials into l(x) and g(x) as Optuna's `_split_trials` does (see [`TpeSampler`]).
/// Both halves come back in number order. Only the few best trials are ranked: selecting
/// them is linear in the number of trials, where a full sort was not.
pub(crate) fn split_trials<'a>(
    study: &StudyView<'_>,
    trials: &[&'a FrozenTrial],
    n_below: usize,
) -> (Vec<&'a FrozenTrial>, Vec<&'a FrozenTrial>) {
    let mut complete = Vec::new();
    let mut pruned = Vec::new();
    // Optuna 5.0: a finished trial with a positive constraint value ranks after every
    // feasible one, by its total violation (a RUNNING trial has no constraints yet).
    let mut infeasible = Vec::new();
    for (i, t) in trials.iter().enumerate() {
        match t.state {
            TrialState::Complete | TrialState::Pruned if t.infeasibility() > 0.0 => {
                infeasible.push(i)
            }
            TrialState::Complete => complete.push(i),
            TrialState::Pruned => pruned.push(i),
            _ => {}
        }
    }
    let mut below = vec![false; trials.len()];
    let directions = study.directions();
    let n_complete_below = n_below.min(complete.len());
    let mut n_marked = 0;
    if directions.len() <= 1 {
        let direction = study.direction();
        // Ties rank in trial order, as the stable sort Optuna uses.
        let rank = |a: &usize, b: &usize| {
            let (x, y) = (
                trials[*a].value().unwrap_or(f64::NAN),
                trials[*b].value().unwrap_or(f64::NAN),
            );
            match direction {
                StudyDirection::Maximize => y.total_cmp(&x),
                _ => x.total_cmp(&y),
            }
            .then(a.cmp(b))
        };
        if n_complete_below > 0 && n_complete_below < complete.len() {
            complete.select_nth_unstable_by(n_complete_below, rank);
        }
        for i in &complete[..n_complete_below] {
            below[*i] = true;
        }
        n_marked = n_complete_below;
    } else {
        let candidates = complete.iter().map(|i| trials[*i]).collect();
        let (best, _) = split_multi_objective(directions, candidates, n_complete_below);
        let numbers: std::collections::BTreeSet<u64> = best.iter().map(|t| t.number).collect();
        for i in &complete {
            if numbers.contains(&trials[*i].number) {
                below[*i] = true;
                n_marked += 1;
            }
        }
    }
    let n_pruned_below = (n_below - n_marked.min(n_below)).min(pruned.len());
    let score = |t: &FrozenTrial| -> (f64, f64) {
        match t.last_step() {
            Some((step, value)) if value.is_nan() => (-(step as f64), f64::INFINITY),
            Some((step, value)) => (
                -(step as f64),
                if study.direction() == StudyDirection::Maximize {
                    -value
                } else {
                    value
                },
            ),
            None => (1.0, 0.0),
        }
    };
    pruned.sort_by(|a, b| {
        let (sa, sb) = (score(trials[*a]), score(trials[*b]));
        sa.0.total_cmp(&sb.0).then(sa.1.total_cmp(&sb.1))
    });
    for i in &pruned[..n_pruned_below] {
        below[*i] = true;
    }
    let n_infeasible_below =
        (n_below - (n_marked + n_pruned_below).min(n_below)).min(infeasible.len());
    if n_infeasible_below > 0 {
        // A stable sort: equal violations keep trial order, as Python's `sorted`.
        infeasible.sort_by(|a, b| {
            trials[*a]
                .infeasibility()
                .total_cmp(&trials[*b].infeasibility())
        });
        for i in &infeasible[..n_infeasible_below] {
            below[*i] = true;
        }
    }
    let mut l = Vec::new();
    let mut g = Vec::new();
    for (t, is_below) in trials.iter().zip(below) {
        match (is_below, t.state) {
            (true, _) => l.push(*t),
            (false, TrialState::Complete | TrialState::Pruned | TrialState::Running) => g.push(*t),
            _ => {}
        }
    }
    if !trials.is_sorted_by_key(|t| t.number) {
        l.sort_by_key(|t| t.number);
        g.sort_by_key(|t| t.number);
    }
    (l, g)
}

impl Sampler for TpeSampler {
    fn infer_relative_search_space(
        &mut self,
        study: &StudyView<'_>,
        _trial: &FrozenTrial,
    ) -> Result<SearchSpace> {
        if self.multivariate_auto {
            // Optuna 5.0: multivariate unless the study has several objectives (`group`
            // needs it either way). A sampler serves one study, so once is enough.
            self.settings.multivariate = self.group || study.directions().len() == 1;
            self.multivariate_auto = false;
        }
        if !self.settings.multivariate {
            return Ok(SearchSpace::new());
        }
        let trials = study.trials(Some(&[TrialState::Complete]))?;
        if self.group {
            self.groups = group_decomposed_search_space(&trials);
            return Ok(self
                .groups
                .iter()
                .flat_map(|g| g.iter().filter(|(_, d)| !d.single()))
                .map(|(k, d)| (k.clone(), d.clone()))
                .collect());
        }
        Ok(intersection_search_space(&trials))
    }

    fn sample_relative(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        space: &SearchSpace,
    ) -> Result<BTreeMap<String, f64>> {
        if space.is_empty() {
            return Ok(BTreeMap::new());
        }
        let all = study.trials(None)?;
        if Self::finished_count(&all) < self.n_startup_trials {
            return Ok(BTreeMap::new());
        }
        let mut params = BTreeMap::new();
        if self.group {
            for group in self.groups.clone() {
                let sub: SearchSpace = group
                    .into_iter()
                    .filter(|(k, d)| !d.single() && space.contains_key(k))
                    .collect();
                if !sub.is_empty() {
                    params.extend(self.sample(study, trial, &sub, &all)?);
                }
            }
        } else {
            params = self.sample(study, trial, space, &all)?;
        }
        if self.constant_liar && !params.is_empty() {
            publish_relative_params(study, trial.trial_id, RELATIVE_PARAMS_KEY, &params)?;
        }
        Ok(params)
    }

    fn sample_independent(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        name: &str,
        distribution: &Distribution,
    ) -> Result<f64> {
        let all = study.trials(None)?;
        if Self::finished_count(&all) < self.n_startup_trials {
            return Ok(sample_uniform(&mut self.rng, distribution));
        }
        let space: SearchSpace = [(name.to_owned(), distribution.clone())].into();
        Ok(self.sample(study, trial, &space, &all)?[name])
    }

    /// TPE's own criterion on the finished trials (RUNNING ones are left out, so a group's
    /// members in flight do not count against their own values): l(x) and g(x) over the
    /// parameters of `values` jointly, `n_ei_candidates` candidates drawn from l, and the
    /// values are still promising when their l(x)/g(x) is at least the best candidate's,
    /// that is when TPE would choose them (or values as good) now. Before
    /// `n_startup_trials` finished trials: `Some(true)`, too early to tell. Suited to
    /// discrete shared values (widths, depths): a continuous value is rarely the best of
    /// the candidates.
    fn still_promising(
        &mut self,
        study: &StudyView<'_>,
        values: &BTreeMap<String, (Distribution, f64)>,
    ) -> Result<Option<bool>> {
        let space: SearchSpace = values
            .iter()
            .filter(|(_, (d, _))| !d.single())
            .map(|(name, (d, _))| (name.clone(), d.clone()))
            .collect();
        if space.is_empty() {
            return Ok(None);
        }
        let all = study.trials(Some(&[TrialState::Complete, TrialState::Pruned]))?;
        if all.len() < self.n_startup_trials {
            return Ok(Some(true));
        }
        let trials: Vec<&FrozenTrial> = all.iter().map(|t| &**t).collect();
        let (l, g) = self.estimators(study, &space, &trials);
        let point = vec![space
            .iter()
            .map(|(name, d)| clip_to(d, values[name].1))
            .collect::<Vec<f64>>()];
        let candidates = l.sample(&mut self.rng, self.n_ei_candidates);
        let ratio = |xs: &[Vec<f64>]| -> Vec<f64> {
            l.log_pdf(xs)
                .iter()
                .zip(g.log_pdf(xs))
                .map(|(a, b)| a - b)
                .collect()
        };
        let best = ratio(&candidates)
            .into_iter()
            .fold(f64::NEG_INFINITY, f64::max);
        let own = ratio(&point)[0];
        // Equal up to rounding counts as as good (the same value drawn as a candidate).
        Ok(Some(own >= best - 1e-9 * best.abs().max(1.0)))
    }
}

/// Optuna's `_GroupDecomposedSearchSpace`: splits the parameters into groups such that
/// every COMPLETE trial's parameter set is a union of groups.
pub(crate) fn group_decomposed_search_space(trials: &[Arc<FrozenTrial>]) -> Vec<SearchSpace> {
    let mut groups: Vec<SearchSpace> = Vec::new();
    for trial in trials {
        let mut remaining: SearchSpace = trial
            .params
            .iter()
            .map(|(k, p)| (k.clone(), p.distribution.clone()))
            .collect();
        let mut next = Vec::new();
        for group in groups {
            let (inside, outside): (SearchSpace, SearchSpace) = group
                .into_iter()
                .partition(|(k, _)| remaining.contains_key(k));
            for k in inside.keys() {
                remaining.remove(k);
            }
            next.push(inside);
            next.push(outside);
        }
        next.push(remaining);
        groups = next.into_iter().filter(|g| !g.is_empty()).collect();
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{InMemoryStorage, Storage};

    fn trial(state: TrialState, value: Option<f64>, steps: &[(i64, f64)]) -> Option<FrozenTrial> {
        let mut t = FrozenTrial::new(0, 0, state);
        t.values = value.map(|v| vec![v]);
        t.intermediate_values = steps.iter().copied().collect();
        Some(t)
    }

    fn split_numbers(direction: StudyDirection, n_below: usize) -> (Vec<u64>, Vec<u64>) {
        let storage = InMemoryStorage::new();
        storage.create_new_study(&[direction], "s").unwrap();
        let s = if direction == StudyDirection::Minimize {
            1.0
        } else {
            -1.0
        };
        let templates = [
            trial(TrialState::Complete, Some(s * 3.0), &[]), // 0
            trial(TrialState::Pruned, Some(s * 9.0), &[(1, s * 9.0)]), // 1: shallow
            trial(TrialState::Complete, Some(s * 1.0), &[]), // 2: best
            trial(TrialState::Pruned, None, &[(5, f64::NAN)]), // 3: deep, NaN
            trial(TrialState::Pruned, Some(s * 7.0), &[(5, s * 7.0)]), // 4: deep
            trial(TrialState::Running, None, &[]),           // 5
            trial(TrialState::Pruned, None, &[]),            // 6: no report
        ];
        storage.create_new_trials(0, &templates).unwrap();
        let directions = [direction];
        let view = StudyView::new(&storage, 0, "s", &directions);
        let trials = view.trials(None).unwrap();
        let trials: Vec<&FrozenTrial> = trials.iter().map(|t| &**t).collect();
        let (below, above) = split_trials(&view, &trials, n_below);
        let numbers = |v: Vec<&FrozenTrial>| v.iter().map(|t| t.number).collect();
        (numbers(below), numbers(above))
    }

    #[test]
    fn split_ranks_complete_then_pruned_by_depth_and_value_running_above() {
        for direction in [StudyDirection::Minimize, StudyDirection::Maximize] {
            assert_eq!(
                split_numbers(direction, 1),
                (vec![2], vec![0, 1, 3, 4, 5, 6])
            );
            assert_eq!(
                split_numbers(direction, 2),
                (vec![0, 2], vec![1, 3, 4, 5, 6])
            );
            // Pruned: deepest first, then by value with NaN last; no report ranks last.
            assert_eq!(
                split_numbers(direction, 3),
                (vec![0, 2, 4], vec![1, 3, 5, 6])
            );
            assert_eq!(
                split_numbers(direction, 4),
                (vec![0, 2, 3, 4], vec![1, 5, 6])
            );
            assert_eq!(
                split_numbers(direction, 5),
                (vec![0, 1, 2, 3, 4], vec![5, 6])
            );
            assert_eq!(
                split_numbers(direction, 99),
                (vec![0, 1, 2, 3, 4, 6], vec![5])
            );
        }
    }

    #[test]
    fn split_ranks_infeasible_trials_after_feasible_ones_by_violation() {
        // Checked against Optuna 5.0's `_split_trials` on the same trials (values, states
        // and `constraints:c` system attributes) for n_below = 1..=6.
        let storage = InMemoryStorage::new();
        storage
            .create_new_study(&[StudyDirection::Minimize], "s")
            .unwrap();
        let with_constraint = |t: Option<FrozenTrial>, c: Option<f64>| {
            let mut t = t.unwrap();
            if let Some(c) = c {
                t.system_attrs.insert("constraints:c".into(), c.into());
            }
            Some(t)
        };
        let templates = [
            with_constraint(trial(TrialState::Complete, Some(1.0), &[]), Some(2.0)), // 0: best value, infeasible
            with_constraint(trial(TrialState::Complete, Some(3.0), &[]), None),      // 1
            with_constraint(trial(TrialState::Pruned, Some(5.0), &[(2, 5.0)]), Some(0.0)), // 2
            with_constraint(trial(TrialState::Complete, Some(0.0), &[]), Some(0.5)), // 3: infeasible, less
            trial(TrialState::Running, None, &[]),                                   // 4
            with_constraint(trial(TrialState::Complete, Some(2.0), &[]), Some(-1.0)), // 5
            with_constraint(trial(TrialState::Pruned, Some(4.0), &[(1, 4.0)]), Some(0.5)), // 6: ties 3
        ];
        storage.create_new_trials(0, &templates).unwrap();
        let directions = [StudyDirection::Minimize];
        let view = StudyView::new(&storage, 0, "s", &directions);
        let trials = view.trials(None).unwrap();
        let trials: Vec<&FrozenTrial> = trials.iter().map(|t| &**t).collect();
        let split = |n| {
            let (l, g) = split_trials(&view, &trials, n);
            let numbers = |v: Vec<&FrozenTrial>| v.iter().map(|t| t.number).collect::<Vec<_>>();
            (numbers(l), numbers(g))
        };
        assert_eq!(split(1), (vec![5], vec![0, 1, 2, 3, 4, 6]));
        assert_eq!(split(2), (vec![1, 5], vec![0, 2, 3, 4, 6]));
        assert_eq!(split(3), (vec![1, 2, 5], vec![0, 3, 4, 6]));
        assert_eq!(split(4), (vec![1, 2, 3, 5], vec![0, 4, 6]));
        assert_eq!(split(5), (vec![1, 2, 3, 5, 6], vec![0, 4]));
        assert_eq!(split(6), (vec![0, 1, 2, 3, 5, 6], vec![4]));
    }

    #[test]
    fn group_decomposition_splits_on_co_occurrence() {
        use crate::distributions::FloatDistribution;
        use crate::trial::Param;
        let d = Distribution::Float(FloatDistribution::new(0.0, 1.0, false, None).unwrap());
        let with = |names: &[&str]| {
            let mut t = FrozenTrial::new(0, 0, TrialState::Complete);
            for n in names {
                t.params.insert(
                    n.to_string(),
                    Param {
                        internal: 0.5,
                        distribution: d.clone(),
                    },
                );
            }
            Arc::new(t)
        };
        let groups = group_decomposed_search_space(&[
            with(&["a", "b", "x"]),
            with(&["a", "b", "y"]),
            with(&["a", "b", "x"]),
        ]);
        let names: Vec<Vec<&str>> = groups
            .iter()
            .map(|g| g.keys().map(String::as_str).collect())
            .collect();
        assert_eq!(names, vec![vec!["a", "b"], vec!["x"], vec!["y"]]);
    }

    #[test]
    fn gammas() {
        assert_eq!(
            (
                default_gamma(0),
                default_gamma(1),
                default_gamma(10),
                default_gamma(11)
            ),
            (0, 1, 1, 2)
        );
        assert_eq!(default_gamma(1000), 25);
        assert_eq!((hyperopt_gamma(16), hyperopt_gamma(17)), (1, 2));
    }
}
