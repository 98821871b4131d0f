//! The Gaussian process sampler.

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::Rng;

use crate::distributions::Distribution;
use crate::error::{invalid_argument, Result};
use crate::samplers::base::{
    intersection_search_space, publish_relative_params, published_relative_params, sample_uniform,
    seeded_rng,
};
use crate::samplers::gp::acquisition::Acquisition;
use crate::samplers::gp::ehvi::LogEhvi;
use crate::samplers::gp::optimize::{optimize_acquisition, OptimizeSettings};
use crate::samplers::gp::regressor::{
    fit_kernel_params, KernelParams, TrainingData, MINIMUM_NOISE_VAR,
};
use crate::samplers::gp::search_space::GpSearchSpace;
use crate::samplers::{Sampler, SearchSpace};
use crate::study::StudyView;
use crate::trial::{FrozenTrial, StudyDirection, TrialState};

/// Where the sampler publishes a trial's relative parameters, for the trials asked after
/// it while it is RUNNING (the same chunked JSON as Optuna's `gp:relative_params:<i>`,
/// with values in the internal representation, as saturate's TPE writes them).
const RELATIVE_PARAMS_KEY: &str = "gp:relative_params";
/// Standard deviations below this count as this when standardising.
const STANDARDIZE_EPS: f64 = 1e-10;
/// Quasi-random fantasies of qLogEI.
const N_QMC_SAMPLES: usize = 128;

/// Bayesian optimisation with a Gaussian process, following Optuna 5.0's `GPSampler`.
///
/// The GP has a Matérn 5/2 kernel with one lengthscale per parameter (automatic relevance
/// determination), a kernel scale and a noise variance, fitted by maximum a posteriori
/// under Optuna's priors with L-BFGS, warm-started from the previous fit. Parameters are
/// normalised to [0, 1] (in log space for log distributions; integers and steps on a grid
/// widened by half a step); categorical parameters are compared by Hamming distance.
/// Objective values are standardised. The next point maximises the log expected
/// improvement (Ament et al., "Unexpected Improvements to Expected Improvement for
/// Bayesian Optimization", NeurIPS 2023) over 2048 scrambled Sobol candidates refined by
/// L-BFGS-B on the continuous parameters and a grid search on the discrete ones.
///
/// When trials are RUNNING (asked together, or in parallel workers), the acquisition is
/// qLogEI, as in Optuna 5.0: the expected best improvement of the candidate together with
/// the RUNNING trials, over 128 quasi-random fantasies of their outcomes drawn from the GP.
/// A candidate close to a RUNNING trial adds little, so trials asked together spread. Each
/// trial publishes its relative parameters in system attributes (`gp:relative_params:<i>`)
/// so that later trials see where the RUNNING ones will be before they suggest them.
///
/// With constraints ([`Trial::set_constraint`](crate::trial::Trial::set_constraint)), each
/// constraint gets a GP of its own, and the log expected improvement over the best feasible
/// value is added to the log probability of each constraint being satisfied (Optuna's
/// `LogCEI`); while no trial is feasible only those probabilities count. With RUNNING
/// trials (Optuna's `qLogCEI`), each constraint's GP draws fantasies at the RUNNING trials
/// too, and a sample's utility of a point is its log improvement plus each constraint's
/// smoothed log feasibility `log σ((y − t) / 0.01)`. Every completed trial must set the
/// same constraints ([`StudyError::Sampler`](crate::StudyError::Sampler) otherwise).
///
/// Studies with several objectives get one GP per objective, and the next point maximises
/// the log expected hypervolume improvement over the completed trials' values (Optuna 5.0's
/// `LogEHVI`; Daulton et al., "Differentiable Expected Hypervolume Improvement", NeurIPS
/// 2020), estimated over 128 quasi-random samples of the objectives with the not yet
/// dominated region cut into boxes (Lacour et al., 2017). With RUNNING trials it is
/// `qLogEHVI`: each sample also counts the objectives' fantasies at the RUNNING points as
/// observed, so trials asked together spread along the front. With constraints
/// (`LogCEHVI`, `qLogCEHVI`), only feasible trials count and each constraint's probability
/// of feasibility is added, as for one objective. The local search starts from up to
/// `n_local_search / 2` trials of the Pareto front.
///
/// Until `n_startup_trials` trials are COMPLETE, and for parameters outside the
/// intersection search space, values are drawn at random.
///
/// # Example
///
/// ```
/// use saturate_study::prelude::*;
///
/// let sampler = GpSamplerConfig::new().with_seed(0).with_n_startup_trials(5).init()?;
/// let study = StudyConfig::new().with_sampler(sampler).init()?;
/// study.optimize(Some(15), None, |t| {
///     let x = t.suggest_float("x", -5.0, 5.0)?;
///     let n = t.suggest_int("n", 0, 4)?;
///     Ok((x - 1.0).powi(2) + n as f64)
/// })?;
/// assert!(study.best_value()? < 4.0);
/// # Ok::<(), StudyError>(())
/// ```
///
/// Two objectives: the trade-off between `x²` and `(x − 2)²` is every `x` in [0, 2].
///
/// ```
/// use saturate_study::prelude::*;
///
/// let sampler = GpSamplerConfig::new().with_seed(0).with_n_startup_trials(5).init()?;
/// let study = StudyConfig::new()
///     .with_directions([StudyDirection::Minimize, StudyDirection::Minimize])
///     .with_sampler(sampler)
///     .init()?;
/// study.optimize(Some(15), None, |t| {
///     let x = t.suggest_float("x", -5.0, 5.0)?;
///     Ok(vec![x * x, (x - 2.0).powi(2)])
/// })?;
/// let front = study.best_trials()?;
/// assert!(front.iter().any(|t| (0.0..=2.0).contains(&t.params["x"].internal)));
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug)]
pub struct GpSampler {
    rng: StdRng,
    independent_rng: StdRng,
    n_startup_trials: usize,
    deterministic_objective: bool,
    settings: OptimizeSettings,
    /// The last fit's kernel parameters: the next fit starts from them.
    cache: Option<KernelParams>,
    /// The same for each constraint's GP.
    constraint_cache: Vec<KernelParams>,
    /// The same for each objective's GP of a multi-objective study.
    objective_caches: Vec<KernelParams>,
}

/// Configures a [`GpSampler`]; the defaults are Optuna 5.0's.
#[derive(Debug, Clone, PartialEq)]
pub struct GpSamplerConfig {
    /// Seed of the sampler's generators; `None`: from the operating system (default).
    pub seed: Option<u64>,
    /// COMPLETE trials sampled at random before the GP starts (default 10).
    pub n_startup_trials: usize,
    /// Fix the noise variance at its minimum (1e-6): the objective returns the same value
    /// for the same parameters (default false).
    pub deterministic_objective: bool,
    /// Quasi-random candidates scored before the local search (default 2048; at least 1).
    pub n_preliminary_samples: usize,
    /// Starting points of the local search, the best trial so far included (default 10;
    /// at least 2).
    pub n_local_search: usize,
}

impl Default for GpSamplerConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl GpSamplerConfig {
    /// Optuna 5.0's defaults.
    pub fn new() -> Self {
        Self {
            seed: None,
            n_startup_trials: 10,
            deterministic_objective: false,
            n_preliminary_samples: 2048,
            n_local_search: 10,
        }
    }
    /// Sets [`Self::seed`].
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
    /// Sets [`Self::n_startup_trials`].
    pub fn with_n_startup_trials(mut self, n_startup_trials: usize) -> Self {
        self.n_startup_trials = n_startup_trials;
        self
    }
    /// Sets [`Self::deterministic_objective`].
    pub fn with_deterministic_objective(mut self, deterministic_objective: bool) -> Self {
        self.deterministic_objective = deterministic_objective;
        self
    }
    /// Sets [`Self::n_preliminary_samples`].
    pub fn with_n_preliminary_samples(mut self, n_preliminary_samples: usize) -> Self {
        self.n_preliminary_samples = n_preliminary_samples;
        self
    }
    /// Sets [`Self::n_local_search`].
    pub fn with_n_local_search(mut self, n_local_search: usize) -> Self {
        self.n_local_search = n_local_search;
        self
    }
    /// The sampler; [`StudyError::InvalidArgument`](crate::StudyError::InvalidArgument)
    /// names the first argument out of its range.
    pub fn init(&self) -> Result<GpSampler> {
        if self.n_preliminary_samples == 0 {
            return Err(invalid_argument(
                "n_preliminary_samples",
                "must be at least 1, got 0",
            ));
        }
        if self.n_local_search < 2 {
            return Err(invalid_argument(
                "n_local_search",
                format!("must be at least 2, got {}", self.n_local_search),
            ));
        }
        Ok(GpSampler {
            rng: seeded_rng(self.seed),
            independent_rng: seeded_rng(self.seed.map(|s| s.wrapping_add(1))),
            n_startup_trials: self.n_startup_trials,
            deterministic_objective: self.deterministic_objective,
            settings: OptimizeSettings {
                n_preliminary_samples: self.n_preliminary_samples,
                n_local_search: self.n_local_search,
                tol: 1e-4,
            },
            cache: None,
            constraint_cache: Vec::new(),
            objective_caches: Vec::new(),
        })
    }
}

/// Standardises values to mean 0 and standard deviation 1, infinite ones clipped to the
/// finite extremes first (all 0 when none is finite).
pub(crate) fn standardize(values: &[f64]) -> Vec<f64> {
    standardize_with_moments(values).0
}

/// The completed trials' parameters (in the order of `space`), normalised for the GP.
fn normalized_points(
    gp_space: &GpSearchSpace,
    space: &SearchSpace,
    completed: &[Arc<FrozenTrial>],
) -> Vec<Vec<f64>> {
    completed
        .iter()
        .map(|t| {
            let internal: Vec<f64> = space.keys().map(|k| t.params[k].internal).collect();
            gp_space.normalize(&internal)
        })
        .collect()
}

/// 1 for a maximised objective, −1 for a minimised one: the GPs maximise.
fn maximising_sign(direction: StudyDirection) -> f64 {
    if direction == StudyDirection::Maximize {
        1.0
    } else {
        -1.0
    }
}

impl GpSampler {
    fn sample_with_gp(
        &mut self,
        direction: StudyDirection,
        completed: &[Arc<FrozenTrial>],
        running: &[Vec<f64>],
        space: &SearchSpace,
    ) -> Result<Vec<f64>> {
        let gp_space = GpSearchSpace::new(space);
        let x = normalized_points(&gp_space, space, completed);
        // The GP maximises.
        let sign = maximising_sign(direction);
        let y = standardize(
            &completed
                .iter()
                .map(|t| sign * t.value().unwrap_or(f64::NAN))
                .collect::<Vec<_>>(),
        );
        if self
            .cache
            .as_ref()
            .is_some_and(|c| c.inverse_squared_lengthscales.len() != gp_space.dim())
        {
            self.cache = None;
        }
        // With constraints (Optuna's LogCEI): the best feasible value is the threshold
        // (-∞ while none is feasible), and each constraint gets a GP of its own.
        let constraints = constraint_values(completed)?;
        let feasible: Vec<bool> = match &constraints {
            Some(c) => c.iter().map(|row| row.iter().all(|v| *v <= 0.0)).collect(),
            None => vec![true; y.len()],
        };
        let best = (0..y.len())
            .filter(|i| feasible[*i])
            .max_by(|a, b| y[*a].total_cmp(&y[*b]));
        let threshold = best.map_or(f64::NEG_INFINITY, |i| y[i]);
        let warm_starts: Vec<Vec<f64>> = best.map(|i| x[i].clone()).into_iter().collect();
        let constraint_gps = match &constraints {
            Some(c) => self.fit_constraints(&x, c, &gp_space),
            None => Vec::new(),
        };
        let data = TrainingData::new(x, y, gp_space.is_categorical());
        let gp = fit_kernel_params(
            data,
            self.cache.as_ref(),
            MINIMUM_NOISE_VAR,
            self.deterministic_objective,
        );
        self.cache = Some(gp.params.clone());
        // With RUNNING trials, qLogEI (qLogCEI with constraints; while no trial is feasible
        // only the constraints' terms count).
        let acquisition = if running.is_empty() {
            Acquisition::log_ei(gp, threshold)
        } else {
            let running = running.iter().map(|r| gp_space.normalize(r)).collect();
            let seed = self.rng.random_range(0..1u32 << 30);
            Acquisition::q_log_ei(gp, threshold, running, N_QMC_SAMPLES, seed)
        }
        .with_constraints(constraint_gps);
        let (point, _) = optimize_acquisition(
            &acquisition,
            &gp_space,
            &warm_starts,
            self.settings,
            &mut self.rng,
        );
        Ok(gp_space.unnormalize(&point))
    }

    /// The next point of a multi-objective study: one GP per objective, log expected
    /// hypervolume improvement (see [`LogEhvi`]).
    fn sample_multi_objective(
        &mut self,
        directions: &[StudyDirection],
        completed: &[Arc<FrozenTrial>],
        running: &[Vec<f64>],
        space: &SearchSpace,
    ) -> Result<Vec<f64>> {
        let gp_space = GpSearchSpace::new(space);
        let x = normalized_points(&gp_space, space, completed);
        let m = directions.len();
        // Each objective standardised on its own, signed so that the GPs maximise.
        let columns: Vec<Vec<f64>> = directions
            .iter()
            .enumerate()
            .map(|(j, direction)| {
                let sign = maximising_sign(*direction);
                standardize(
                    &completed
                        .iter()
                        .map(|t| sign * t.values.as_ref().map_or(f64::NAN, |v| v[j]))
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        if self.objective_caches.len() != m
            || self
                .objective_caches
                .first()
                .is_some_and(|c| c.inverse_squared_lengthscales.len() != gp_space.dim())
        {
            self.objective_caches.clear();
        }
        let gps: Vec<_> = columns
            .iter()
            .enumerate()
            .map(|(j, y)| {
                let data = TrainingData::new(x.clone(), y.clone(), gp_space.is_categorical());
                fit_kernel_params(
                    data,
                    self.objective_caches.get(j),
                    MINIMUM_NOISE_VAR,
                    self.deterministic_objective,
                )
            })
            .collect();
        self.objective_caches = gps.iter().map(|gp| gp.params.clone()).collect();
        let constraints = constraint_values(completed)?;
        let feasible: Vec<usize> = match &constraints {
            Some(c) => (0..c.len())
                .filter(|i| c[*i].iter().all(|v| *v <= 0.0))
                .collect(),
            None => (0..completed.len()).collect(),
        };
        let constraint_gps = match &constraints {
            Some(c) => self.fit_constraints(&x, c, &gp_space),
            None => Vec::new(),
        };
        let rows: Vec<Vec<f64>> = feasible
            .iter()
            .map(|i| columns.iter().map(|c| c[*i]).collect())
            .collect();
        // The local search also starts from up to n_local_search / 2 Pareto-optimal trials.
        let front: Vec<usize> = (0..rows.len())
            .filter(|i| {
                !rows.iter().any(|other| {
                    other.iter().zip(&rows[*i]).all(|(a, b)| a >= b)
                        && other.iter().zip(&rows[*i]).any(|(a, b)| a > b)
                })
            })
            .collect();
        let size = (self.settings.n_local_search / 2).min(front.len());
        let chosen = rand::seq::index::sample(&mut self.rng, front.len(), size);
        let warm_starts: Vec<Vec<f64>> = chosen
            .iter()
            .map(|c| x[feasible[front[c]]].clone())
            .collect();
        let seed = self.rng.random_range(0..1u32 << 30);
        let running = running.iter().map(|r| gp_space.normalize(r)).collect();
        let feasible_y = (!rows.is_empty()).then_some(rows);
        let acquisition = LogEhvi::new(
            gps,
            feasible_y,
            running,
            constraint_gps,
            N_QMC_SAMPLES,
            seed,
        );
        let (point, _) = optimize_acquisition(
            &acquisition,
            &gp_space,
            &warm_starts,
            self.settings,
            &mut self.rng,
        );
        Ok(gp_space.unnormalize(&point))
    }

    /// One GP per constraint, fitted to the negated constraint values (the GP maximises:
    /// feasible is above the threshold), standardised, with the threshold where the
    /// constraint value is 0.
    fn fit_constraints(
        &mut self,
        x: &[Vec<f64>],
        constraints: &[Vec<f64>],
        gp_space: &GpSearchSpace,
    ) -> Vec<(crate::samplers::gp::regressor::GpRegressor, f64)> {
        let count = constraints.first().map_or(0, Vec::len);
        if self.constraint_cache.len() != count
            || self
                .constraint_cache
                .first()
                .is_some_and(|c| c.inverse_squared_lengthscales.len() != gp_space.dim())
        {
            self.constraint_cache.clear();
        }
        let mut fitted = Vec::with_capacity(count);
        let mut caches = Vec::with_capacity(count);
        for j in 0..count {
            let negated: Vec<f64> = constraints.iter().map(|row| -row[j]).collect();
            let (standardized, mean, std) = standardize_with_moments(&negated);
            let data = TrainingData::new(x.to_vec(), standardized, gp_space.is_categorical());
            let gp = fit_kernel_params(
                data,
                self.constraint_cache.get(j),
                MINIMUM_NOISE_VAR,
                self.deterministic_objective,
            );
            caches.push(gp.params.clone());
            fitted.push((gp, -mean / std.max(STANDARDIZE_EPS)));
        }
        self.constraint_cache = caches;
        fitted
    }
}

/// The completed trials' constraint values (in the order of their names), or `None` when
/// no trial carries constraints.
///
/// # Errors
/// [`StudyError::Sampler`](crate::StudyError::Sampler) when trials carry different numbers
/// of constraints (as Optuna refuses them).
fn constraint_values(completed: &[Arc<FrozenTrial>]) -> Result<Option<Vec<Vec<f64>>>> {
    if !completed.iter().any(|t| t.is_constrained()) {
        return Ok(None);
    }
    let rows: Vec<Vec<f64>> = completed
        .iter()
        .map(|t| t.constraints().into_values().collect())
        .collect();
    if let Some(t) = rows.iter().position(|r| r.len() != rows[0].len()) {
        return Err(crate::StudyError::Sampler {
            reason: format!(
                "GpSampler: trial {} has {} constraint(s) and trial {} has {}; every \
                 completed trial must set the same constraints",
                completed[0].number,
                rows[0].len(),
                completed[t].number,
                rows[t].len()
            ),
        });
    }
    Ok(Some(rows))
}

/// [`standardize`], also returning the mean and standard deviation it used.
fn standardize_with_moments(values: &[f64]) -> (Vec<f64>, f64, f64) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let (low, high) = if finite.is_empty() {
        (0.0, 0.0)
    } else {
        (
            finite.iter().copied().fold(f64::INFINITY, f64::min),
            finite.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    };
    let clipped: Vec<f64> = values.iter().map(|v| v.clamp(low, high)).collect();
    let n = clipped.len() as f64;
    let mean = clipped.iter().sum::<f64>() / n;
    let std = (clipped.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    let standardized = clipped
        .iter()
        .map(|v| (v - mean) / std.max(STANDARDIZE_EPS))
        .collect();
    (standardized, mean, std)
}

impl Sampler for GpSampler {
    fn infer_relative_search_space(
        &mut self,
        study: &StudyView<'_>,
        _trial: &FrozenTrial,
    ) -> Result<SearchSpace> {
        Ok(intersection_search_space(
            &study.trials(Some(&[TrialState::Complete]))?,
        ))
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
        let trials = study.trials(Some(&[TrialState::Complete, TrialState::Running]))?;
        let n_objectives = study.directions().len();
        let completed: Vec<Arc<FrozenTrial>> = trials
            .iter()
            .filter(|t| {
                t.state == TrialState::Complete
                    && t.values.as_ref().is_some_and(|v| v.len() == n_objectives)
            })
            .filter(|t| space.keys().all(|k| t.params.contains_key(k)))
            .cloned()
            .collect();
        if completed.len() < self.n_startup_trials || completed.is_empty() {
            return Ok(BTreeMap::new());
        }
        let running: Vec<Vec<f64>> = trials
            .iter()
            .filter(|t| t.state == TrialState::Running && t.trial_id != trial.trial_id)
            .filter_map(|t| {
                let mut params =
                    published_relative_params(t, RELATIVE_PARAMS_KEY).unwrap_or_default();
                params.extend(t.params.iter().map(|(k, p)| (k.clone(), p.internal)));
                space.keys().map(|k| params.get(k).copied()).collect()
            })
            .collect();
        let values = if n_objectives > 1 {
            self.sample_multi_objective(study.directions(), &completed, &running, space)?
        } else {
            self.sample_with_gp(study.direction(), &completed, &running, space)?
        };
        let params: BTreeMap<String, f64> = space.keys().cloned().zip(values).collect();
        publish_relative_params(study, trial.trial_id, RELATIVE_PARAMS_KEY, &params)?;
        Ok(params)
    }

    fn sample_independent(
        &mut self,
        _study: &StudyView<'_>,
        _trial: &FrozenTrial,
        _name: &str,
        distribution: &Distribution,
    ) -> Result<f64> {
        Ok(sample_uniform(&mut self.independent_rng, distribution))
    }
}
