//! Exhaustive grid search.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde_json::Value;

use crate::distributions::{Distribution, ParamValue};
use crate::error::{Result, StudyError};
use crate::samplers::base::{seeded_rng, Sampler};
use crate::study::StudyView;
use crate::trial::FrozenTrial;

/// Visits every combination of the given values once (Optuna's `GridSampler`).
///
/// Each trial takes a grid point not yet used by any trial of the study (recorded in the
/// trial's system attributes `grid_id` and `search_space`, as Optuna does), choosing at
/// random among the unvisited ones; when all are used, it picks among all of them.
/// Suggesting a parameter that is not in the grid is [`StudyError::Sampler`].
///
/// # Example
///
/// ```
/// use std::collections::BTreeMap;
/// use saturate_study::prelude::*;
///
/// let grid: BTreeMap<String, Vec<ParamValue>> = [
///     ("depth".to_string(), vec![ParamValue::Int(2), ParamValue::Int(4)]),
///     ("act".to_string(), vec![ParamValue::from("relu"), ParamValue::from("gelu")]),
/// ]
/// .into();
/// let sampler = GridSamplerConfig::new(grid).with_seed(0).init()?;
/// assert_eq!(sampler.len(), 4);
/// let study = StudyConfig::new().with_sampler(sampler).init()?;
/// study.optimize(Some(4), None, |t| {
///     let depth = t.suggest_int("depth", 2, 4)?;
///     let _act = t.suggest_categorical("act", ["relu", "gelu"])?;
///     Ok(depth as f64)
/// })?;
/// # Ok::<(), StudyError>(())
/// ```
#[derive(Debug)]
pub struct GridSampler {
    names: Vec<String>,
    grid: Vec<Vec<ParamValue>>,
    rng: StdRng,
}

/// Configures a [`GridSampler`].
#[derive(Debug, Clone, PartialEq)]
pub struct GridSamplerConfig {
    /// The values of each parameter, by name (required; every list non-empty).
    pub search_space: BTreeMap<String, Vec<ParamValue>>,
    /// Seed of the order in which unvisited points are taken; `None`: from the operating
    /// system (default).
    pub seed: Option<u64>,
}

impl GridSamplerConfig {
    /// A config for the grid `search_space`.
    pub fn new(search_space: BTreeMap<String, Vec<ParamValue>>) -> Self {
        Self {
            search_space,
            seed: None,
        }
    }
    /// Sets [`Self::seed`].
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
    /// The sampler; [`StudyError::InvalidArgument`] when a parameter has no value.
    pub fn init(&self) -> Result<GridSampler> {
        if let Some((name, _)) = self.search_space.iter().find(|(_, v)| v.is_empty()) {
            return Err(StudyError::InvalidArgument {
                what: "search_space",
                reason: format!("parameter `{name}` has no value; give it at least one"),
            });
        }
        let search_space = &self.search_space;
        let seed = self.seed;
        let names: Vec<String> = search_space.keys().cloned().collect();
        let mut grid = vec![Vec::new()];
        for values in search_space.values() {
            grid = grid
                .into_iter()
                .flat_map(|point: Vec<ParamValue>| {
                    values.iter().map(move |v| {
                        let mut p = point.clone();
                        p.push(v.clone());
                        p
                    })
                })
                .collect();
        }
        Ok(GridSampler {
            names,
            grid,
            rng: seeded_rng(seed),
        })
    }
}

impl GridSampler {
    /// Number of grid points.
    pub fn len(&self) -> usize {
        self.grid.len()
    }

    /// Whether the grid is empty.
    pub fn is_empty(&self) -> bool {
        self.grid.is_empty()
    }
}

impl Sampler for GridSampler {
    fn before_trial(&mut self, study: &StudyView<'_>, trial: &FrozenTrial) -> Result<()> {
        if trial.system_attrs.contains_key("grid_id")
            || trial.system_attrs.contains_key("fixed_params")
        {
            return Ok(());
        }
        let used: Vec<usize> = study
            .trials(None)?
            .iter()
            .filter(|t| t.number != trial.number)
            .filter_map(|t| t.system_attrs.get("grid_id").and_then(Value::as_u64))
            .map(|id| id as usize)
            .collect();
        let mut unvisited: Vec<usize> =
            (0..self.grid.len()).filter(|i| !used.contains(i)).collect();
        if unvisited.is_empty() {
            unvisited = (0..self.grid.len()).collect();
        }
        unvisited.shuffle(&mut self.rng);
        let Some(&grid_id) = unvisited.first() else {
            return Ok(());
        };
        study.set_trial_system_attr(trial.trial_id, "grid_id", Value::from(grid_id))?;
        let space: serde_json::Map<String, Value> = self
            .names
            .iter()
            .zip(&self.grid[grid_id])
            .map(|(k, v)| (k.clone(), v.to_json().to_value()))
            .collect();
        study.set_trial_system_attr(trial.trial_id, "search_space", Value::Object(space))
    }

    fn sample_independent(
        &mut self,
        study: &StudyView<'_>,
        trial: &FrozenTrial,
        name: &str,
        distribution: &Distribution,
    ) -> Result<f64> {
        let Some(index) = self.names.iter().position(|n| n == name) else {
            return Err(StudyError::Sampler {
                reason: format!("parameter `{name}` is not in the grid"),
            });
        };
        // `before_trial` wrote the id to storage; the handle's copy predates it.
        let stored = study.storage.get_trial(trial.trial_id)?;
        let grid_id = stored
            .system_attrs
            .get("grid_id")
            .and_then(Value::as_u64)
            .ok_or_else(|| StudyError::Sampler {
                reason: "the trial has no grid point".into(),
            })? as usize;
        // A grid id written by another sampler (a resumed study with another grid).
        let value = self
            .grid
            .get(grid_id)
            .map(|point| &point[index])
            .ok_or_else(|| StudyError::Sampler {
                reason: format!(
                    "grid point {grid_id} is not in this grid of {}",
                    self.grid.len()
                ),
            })?;
        distribution
            .to_internal(value)
            .map_err(|_| StudyError::ParamOutOfDistribution {
                name: name.into(),
                value: value.to_string(),
                distribution: distribution.to_json_string(),
            })
    }
}
