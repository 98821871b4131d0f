//! The define-by-run trial handle.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::distributions::{
    CategoricalDistribution, Choice, Distribution, FloatDistribution, IntDistribution, ParamValue,
};
use crate::error::{invalid_argument, Result, StudyError};
use crate::samplers::SearchSpace;
use crate::study::StudyCore;
use crate::trial::{FrozenTrial, Param};

/// Returned (as an error) by an objective to say the trial was pruned, like raising
/// Optuna's `TrialPruned`: `return Err(TrialPruned.into())`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("trial pruned")]
pub struct TrialPruned;

impl TrialPruned {
    /// Whether `error`, or any error in its [`source`](std::error::Error::source) chain, is a
    /// `TrialPruned`: an objective that wraps its errors (`anyhow`'s `context`, a
    /// `thiserror` variant with `#[source]`) still prunes its trial.
    pub fn in_chain(error: &(dyn std::error::Error + 'static)) -> bool {
        let mut next = Some(error);
        while let Some(e) = next {
            if e.is::<TrialPruned>() {
                return true;
            }
            next = e.source();
        }
        false
    }
}

/// A running trial: parameters are suggested on first use (define-by-run).
///
/// Suggesting a name twice returns the first value; suggesting it again with another
/// distribution is [`StudyError::IncompatibleDistribution`].
pub struct Trial {
    pub(crate) study: Arc<StudyCore>,
    pub(crate) frozen: FrozenTrial,
    pub(crate) relative_space: SearchSpace,
    pub(crate) relative_params: BTreeMap<String, f64>,
}

impl std::fmt::Debug for Trial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trial")
            .field("number", &self.frozen.number)
            .field("trial_id", &self.frozen.trial_id)
            .field("params", &self.frozen.params)
            .finish()
    }
}

impl Trial {
    /// The trial's number in its study.
    pub fn number(&self) -> u64 {
        self.frozen.number
    }

    /// The trial's id in its storage.
    pub fn id(&self) -> u64 {
        self.frozen.trial_id
    }

    /// The trial as this handle knows it (params suggested so far, reports, attributes).
    pub fn frozen(&self) -> &FrozenTrial {
        &self.frozen
    }

    /// The parameters suggested so far, by name.
    pub fn params(&self) -> BTreeMap<String, ParamValue> {
        self.frozen
            .params
            .iter()
            .map(|(k, p)| (k.clone(), p.value()))
            .collect()
    }

    /// A float in `[low, high]`.
    pub fn suggest_float(&mut self, name: &str, low: f64, high: f64) -> Result<f64> {
        self.suggest_float_with(name, low, high, false, None)
    }

    /// A float in `[low, high]`, log-uniform (`low > 0`).
    pub fn suggest_float_log(&mut self, name: &str, low: f64, high: f64) -> Result<f64> {
        self.suggest_float_with(name, low, high, true, None)
    }

    /// A float in `{low, low + step, ...} ∩ [low, high]`.
    pub fn suggest_float_step(
        &mut self,
        name: &str,
        low: f64,
        high: f64,
        step: f64,
    ) -> Result<f64> {
        self.suggest_float_with(name, low, high, false, Some(step))
    }

    /// A float with every option of Optuna's `suggest_float`.
    pub fn suggest_float_with(
        &mut self,
        name: &str,
        low: f64,
        high: f64,
        log: bool,
        step: Option<f64>,
    ) -> Result<f64> {
        let distribution = FloatDistribution::new(low, high, log, step)?.into();
        Ok(self.suggest(name, distribution)?.as_f64().expect("a float"))
    }

    /// An integer in `[low, high]`.
    pub fn suggest_int(&mut self, name: &str, low: i64, high: i64) -> Result<i64> {
        self.suggest_int_with(name, low, high, false, 1)
    }

    /// An integer in `[low, high]`, log-uniform (`low >= 1`).
    pub fn suggest_int_log(&mut self, name: &str, low: i64, high: i64) -> Result<i64> {
        self.suggest_int_with(name, low, high, true, 1)
    }

    /// An integer in `{low, low + step, ...} ∩ [low, high]`.
    pub fn suggest_int_step(&mut self, name: &str, low: i64, high: i64, step: i64) -> Result<i64> {
        self.suggest_int_with(name, low, high, false, step)
    }

    /// An integer with every option of Optuna's `suggest_int`.
    pub fn suggest_int_with(
        &mut self,
        name: &str,
        low: i64,
        high: i64,
        log: bool,
        step: i64,
    ) -> Result<i64> {
        let distribution = IntDistribution::new(low, high, log, step)?.into();
        match self.suggest(name, distribution)? {
            ParamValue::Int(i) => Ok(i),
            other => unreachable!("an int distribution gave {other:?}"),
        }
    }

    /// One of `choices` (strings, numbers, booleans, [`Choice`] values), returned as the
    /// type given: `let width: i64 = trial.suggest_categorical("width", [16, 32, 64])?;`.
    /// The study stores it as a [`Choice`] (what Optuna stores).
    pub fn suggest_categorical<C: Into<Choice> + Clone>(
        &mut self,
        name: &str,
        choices: impl IntoIterator<Item = C>,
    ) -> Result<C> {
        let given: Vec<C> = choices.into_iter().collect();
        let distribution =
            CategoricalDistribution::new(given.iter().cloned().map(Into::into).collect())?;
        let value = self.suggest(name, distribution.clone().into())?;
        Ok(given[distribution.index_of_suggested(&value)].clone())
    }

    /// A value from any distribution: the stored one if `name` was suggested before, the
    /// fixed one if the trial was enqueued or asked with it, the only one of a single-value
    /// distribution (`low == high`; the sampler is not asked, as in Optuna), else the
    /// sampler's.
    ///
    /// # Errors
    /// [`StudyError::SampledOutOfDistribution`] if the sampler returns a value outside
    /// `distribution` (NaN included); nothing is stored then.
    pub fn suggest(&mut self, name: &str, distribution: Distribution) -> Result<ParamValue> {
        distribution.validate()?;
        if let Some(param) = self.frozen.params.get(name) {
            if param.distribution != distribution {
                return Err(StudyError::IncompatibleDistribution {
                    name: name.into(),
                    existing: param.distribution.to_json_string(),
                    requested: distribution.to_json_string(),
                });
            }
            return Ok(param.value());
        }
        let internal = if let Some(internal) = self.fixed_value(name, &distribution)? {
            internal
        } else if let Some(internal) = distribution.single_value() {
            internal
        } else {
            let sampled = match self.relative_params.get(name) {
                Some(internal) if self.relative_space.get(name) == Some(&distribution) => *internal,
                _ => {
                    let view = self.study.view();
                    self.study.sampler().sample_independent(
                        &view,
                        &self.frozen,
                        name,
                        &distribution,
                    )?
                }
            };
            if !distribution.contains(sampled) {
                return Err(StudyError::SampledOutOfDistribution {
                    name: name.into(),
                    value: sampled,
                    distribution: distribution.to_json_string(),
                });
            }
            sampled
        };
        self.study
            .storage
            .set_trial_param(self.frozen.trial_id, name, internal, &distribution)?;
        let value = distribution.to_external(internal);
        self.frozen.params.insert(
            name.into(),
            Param {
                internal,
                distribution,
            },
        );
        Ok(value)
    }

    /// Records `value` for `name` as if it had been suggested from `distribution`, without
    /// asking the sampler: for a value decided elsewhere, such as the shared hyperparameter of
    /// a group of trials trained together (sampled once, recorded on every trial).
    ///
    /// Recording the same value and distribution again is a no-op.
    ///
    /// # Errors
    /// - [`StudyError::IncompatibleDistribution`] if `name` already has another distribution;
    /// - [`StudyError::ParamOutOfDistribution`] if `value` is not in `distribution`, or `name`
    ///   already holds another value.
    pub fn record_param(
        &mut self,
        name: &str,
        distribution: Distribution,
        value: &ParamValue,
    ) -> Result<()> {
        distribution.validate()?;
        let out_of_distribution = || StudyError::ParamOutOfDistribution {
            name: name.into(),
            value: value.to_string(),
            distribution: distribution.to_json_string(),
        };
        let internal = distribution
            .to_internal(value)
            .map_err(|_| out_of_distribution())?;
        if !distribution.contains(internal) {
            return Err(out_of_distribution());
        }
        if let Some(param) = self.frozen.params.get(name) {
            if param.distribution != distribution {
                return Err(StudyError::IncompatibleDistribution {
                    name: name.into(),
                    existing: param.distribution.to_json_string(),
                    requested: distribution.to_json_string(),
                });
            }
            if param.internal.to_bits() != internal.to_bits() {
                return Err(out_of_distribution());
            }
            return Ok(());
        }
        self.study
            .storage
            .set_trial_param(self.frozen.trial_id, name, internal, &distribution)?;
        self.frozen.params.insert(
            name.into(),
            Param {
                internal,
                distribution,
            },
        );
        Ok(())
    }

    fn fixed_value(&self, name: &str, distribution: &Distribution) -> Result<Option<f64>> {
        let Some(value) = self
            .frozen
            .system_attrs
            .get("fixed_params")
            .and_then(|fixed| fixed.get(name))
        else {
            return Ok(None);
        };
        let external = match (distribution, value) {
            (Distribution::Categorical(_), v) => {
                ParamValue::Categorical(Choice::from_json(&crate::json::Json::from_value(v))?)
            }
            (Distribution::Int(_), Value::Number(n)) if n.is_i64() => {
                ParamValue::Int(n.as_i64().expect("checked"))
            }
            (_, Value::Number(n)) => ParamValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            _ => ParamValue::Categorical(Choice::Null),
        };
        distribution.to_internal(&external).map(Some).map_err(|_| {
            StudyError::ParamOutOfDistribution {
                name: name.into(),
                value: value.to_string(),
                distribution: distribution.to_json_string(),
            }
        })
    }

    /// Records an intermediate objective value at `step` (NaN allowed), as Optuna's
    /// `Trial.report`: a step reported before keeps its first value, and the new one is
    /// ignored with a warning (through the `log` crate).
    ///
    /// # Errors
    /// - [`StudyError::MultiObjective`] in a study with several objectives (pruning
    ///   needs one; Optuna raises `NotImplementedError`);
    /// - [`StudyError::InvalidArgument`] for a negative step.
    pub fn report(&mut self, step: i64, value: f64) -> Result<()> {
        if self.study.directions.len() > 1 {
            return Err(StudyError::MultiObjective {
                operation: "report",
                objectives: self.study.directions.len(),
            });
        }
        if step < 0 {
            return Err(invalid_argument(
                "step",
                format!("{step} is negative; steps start at 0"),
            ));
        }
        if let Some(first) = self.frozen.intermediate_values.get(&step) {
            log::warn!(
                "trial {}: step {step} is already reported (value {first}); the value {value} \
                 is ignored",
                self.frozen.number
            );
            return Ok(());
        }
        self.study
            .storage
            .set_trial_intermediate_value(self.frozen.trial_id, step, value)?;
        self.frozen.intermediate_values.insert(step, value);
        Ok(())
    }

    /// Whether the study's pruner says to stop this trial now.
    pub fn should_prune(&self) -> Result<bool> {
        if self.study.directions.len() > 1 {
            return Err(StudyError::MultiObjective {
                operation: "should_prune",
                objectives: self.study.directions.len(),
            });
        }
        let trial = self.study.storage.get_trial(self.frozen.trial_id)?;
        self.study.pruner.prune(&self.study.view(), &trial)
    }

    /// Sets a user attribute.
    pub fn set_user_attr(&mut self, key: &str, value: impl Into<Value>) -> Result<()> {
        let value = value.into();
        self.study
            .storage
            .set_trial_user_attr(self.frozen.trial_id, key, value.clone())?;
        self.frozen.user_attrs.insert(key.into(), value);
        Ok(())
    }

    /// Records a constraint value, as Optuna 5.0's `trial.set_constraint`: the trial is
    /// feasible when every constraint value is zero or less. Stored as the system attribute
    /// `constraints:<key>`, which Python Optuna 5.0 reads back as `trial.constraints`.
    ///
    /// With constraints in a study, [`Study::best_trial`](crate::study::Study::best_trial)
    /// and [`Study::best_trials`](crate::study::Study::best_trials) choose among feasible
    /// trials, and the TPE sampler ranks infeasible trials after every feasible one (by the
    /// sum of their positive constraint values). Set the constraints before the trial is
    /// told.
    ///
    /// A key set twice keeps its first value (with a warning in the log), as in Optuna.
    /// A NaN value is [`StudyError::InvalidArgument`].
    ///
    /// ```
    /// use saturate_study::prelude::*;
    ///
    /// let study = StudyConfig::new().init()?;
    /// for x in [0.5, 2.0, 3.0] {
    ///     let mut trial = study.ask_with([("x".to_string(), ParamValue::Float(x))].into())?;
    ///     let x = trial.suggest_float("x", -4.0, 4.0)?;
    ///     trial.set_constraint("x_at_least_1", 1.0 - x)?; // feasible when x >= 1
    ///     study.tell(&trial, &[x * x])?;
    /// }
    /// // x = 0.5 has the lowest value but is infeasible.
    /// assert_eq!(study.best_value()?, 4.0);
    /// # Ok::<(), saturate_study::StudyError>(())
    /// ```
    pub fn set_constraint(&mut self, key: &str, value: f64) -> Result<()> {
        if value.is_nan() {
            return Err(invalid_argument(
                "value",
                format!("constraint `{key}` is NaN; give a number (<= 0 means satisfied)"),
            ));
        }
        let attr = format!("{}:{key}", super::frozen::CONSTRAINTS_KEY);
        if self.frozen.system_attrs.contains_key(&attr) {
            log::warn!(
                "trial {}: constraint `{key}` is already set; the new value {value} is ignored",
                self.frozen.number
            );
            return Ok(());
        }
        self.set_system_attr(&attr, value)
    }

    /// Sets a system attribute.
    pub fn set_system_attr(&mut self, key: &str, value: impl Into<Value>) -> Result<()> {
        let value = value.into();
        self.study
            .storage
            .set_trial_system_attr(self.frozen.trial_id, key, value.clone())?;
        self.frozen.system_attrs.insert(key.into(), value);
        Ok(())
    }
}
