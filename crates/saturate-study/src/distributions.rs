//! Parameter distributions, with Optuna's internal representation and JSON form.
//!
//! Every parameter is stored as one `f64`, its *internal* value: the value itself for a
//! [`FloatDistribution`], the integer as a float for an [`IntDistribution`], and the index
//! of the choice for a [`CategoricalDistribution`]. The JSON form is exactly what Optuna's
//! `distribution_to_json` writes (`json.dumps({"name": .., "attributes": ..})`, attribute
//! order included), so journal files are byte-compatible.

use std::fmt;

use crate::error::{invalid, Result, StudyError};
use crate::json::Json;

/// A continuous range `[low, high]`, optionally log-scaled or discretised by `step`.
#[derive(Debug, Clone, PartialEq)]
pub struct FloatDistribution {
    /// Lower bound (inclusive).
    pub low: f64,
    /// Upper bound (inclusive). With a step, adjusted down to `low + k·step`.
    pub high: f64,
    /// Sample in log space.
    pub log: bool,
    /// Discretisation step, if any.
    pub step: Option<f64>,
}

/// An integer range `[low, high]` with a step (1 by default), optionally log-scaled.
#[derive(Debug, Clone, PartialEq)]
pub struct IntDistribution {
    /// Lower bound (inclusive).
    pub low: i64,
    /// Upper bound (inclusive), adjusted down to `low + k·step`.
    pub high: i64,
    /// Sample in log space (only with `step == 1`, and `low >= 1`).
    pub log: bool,
    /// Step between values.
    pub step: i64,
}

/// One choice of a categorical parameter: what JSON (and Optuna) allows.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    /// Python's `None`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
}

impl From<&str> for Choice {
    fn from(s: &str) -> Self {
        Choice::Str(s.to_owned())
    }
}
impl From<String> for Choice {
    fn from(s: String) -> Self {
        Choice::Str(s)
    }
}
impl From<bool> for Choice {
    fn from(b: bool) -> Self {
        Choice::Bool(b)
    }
}
impl From<i64> for Choice {
    fn from(i: i64) -> Self {
        Choice::Int(i)
    }
}
impl From<i32> for Choice {
    fn from(i: i32) -> Self {
        Choice::Int(i.into())
    }
}
impl From<f64> for Choice {
    fn from(f: f64) -> Self {
        Choice::Float(f)
    }
}
impl<T: Into<Choice>> From<Option<T>> for Choice {
    fn from(o: Option<T>) -> Self {
        o.map_or(Choice::Null, Into::into)
    }
}

impl Choice {
    pub(crate) fn to_json(&self) -> Json {
        match self {
            Choice::Null => Json::Null,
            Choice::Bool(b) => Json::Bool(*b),
            Choice::Int(i) => Json::Int(*i),
            Choice::Float(f) => Json::Float(*f),
            Choice::Str(s) => Json::Str(s.clone()),
        }
    }

    pub(crate) fn from_json(json: &Json) -> Result<Choice> {
        Ok(match json {
            Json::Null => Choice::Null,
            Json::Bool(b) => Choice::Bool(*b),
            Json::Int(i) => Choice::Int(*i),
            Json::Float(f) => Choice::Float(*f),
            // `Choice::Int` is an i64: the nearest float, as before integers outside it
            // were read.
            big @ Json::BigInt(_) => Choice::Float(big.as_f64().unwrap_or(f64::NAN)),
            Json::Str(s) => Choice::Str(s.clone()),
            other => {
                return Err(invalid(format!(
                    "categorical choice {} is not null, bool, number or string",
                    other.to_string(true)
                )))
            }
        })
    }

    /// Python's `==` between choices (`1 == 1.0`, `True == 1`).
    fn python_eq(&self, other: &Choice) -> bool {
        fn number(c: &Choice) -> Option<f64> {
            match c {
                Choice::Bool(b) => Some(f64::from(u8::from(*b))),
                Choice::Int(i) => Some(*i as f64),
                Choice::Float(f) => Some(*f),
                _ => None,
            }
        }
        match (self, other) {
            (Choice::Null, Choice::Null) => true,
            (Choice::Str(a), Choice::Str(b)) => a == b,
            _ => matches!((number(self), number(other)), (Some(a), Some(b)) if a == b),
        }
    }
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json().to_string(true))
    }
}

/// A categorical set of choices; the internal value is the index of the choice.
#[derive(Debug, Clone, PartialEq)]
pub struct CategoricalDistribution {
    /// The choices, in order.
    pub choices: Vec<Choice>,
}

/// The value of a parameter as the user sees it (its *external* representation).
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// From a [`FloatDistribution`].
    Float(f64),
    /// From an [`IntDistribution`].
    Int(i64),
    /// From a [`CategoricalDistribution`].
    Categorical(Choice),
}

impl ParamValue {
    /// The value as a float (ints converted, categorical numbers too); `None` for
    /// non-numeric choices.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ParamValue::Float(f) => Some(*f),
            ParamValue::Int(i) => Some(*i as f64),
            ParamValue::Categorical(Choice::Int(i)) => Some(*i as f64),
            ParamValue::Categorical(Choice::Float(f)) => Some(*f),
            ParamValue::Categorical(_) => None,
        }
    }

    /// The value as JSON, as a trial's `fixed_params` attribute stores it (NaN and ±inf,
    /// which JSON lacks, become `null`).
    pub fn to_json_value(&self) -> serde_json::Value {
        self.to_json().to_value()
    }

    pub(crate) fn to_json(&self) -> Json {
        match self {
            ParamValue::Float(f) => Json::Float(*f),
            ParamValue::Int(i) => Json::Int(*i),
            ParamValue::Categorical(c) => c.to_json(),
        }
    }
}

/// Optuna's `check_distribution_compatibility`: one parameter name keeps its distribution kind
/// (float, int, categorical) and log setting across a study's trials, and a categorical one
/// its choices; bounds and steps may change.
pub(crate) fn check_compatible(
    name: &str,
    existing: &Distribution,
    requested: &Distribution,
) -> crate::Result<()> {
    let reason = match (existing, requested) {
        (Distribution::Float(a), Distribution::Float(b)) if a.log != b.log => {
            Some("a different log setting")
        }
        (Distribution::Int(a), Distribution::Int(b)) if a.log != b.log => {
            Some("a different log setting")
        }
        (Distribution::Categorical(a), Distribution::Categorical(b)) if a.choices != b.choices => {
            Some("other categorical choices")
        }
        (Distribution::Float(_), Distribution::Float(_))
        | (Distribution::Int(_), Distribution::Int(_))
        | (Distribution::Categorical(_), Distribution::Categorical(_)) => None,
        _ => Some("a different distribution kind"),
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(crate::StudyError::DistributionConflict {
            name: name.into(),
            existing: existing.to_json_string(),
            requested: requested.to_json_string(),
            reason,
        }),
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json().to_string(true))
    }
}

impl From<f64> for ParamValue {
    fn from(f: f64) -> Self {
        ParamValue::Float(f)
    }
}
impl From<i64> for ParamValue {
    fn from(i: i64) -> Self {
        ParamValue::Int(i)
    }
}
impl From<Choice> for ParamValue {
    fn from(c: Choice) -> Self {
        ParamValue::Categorical(c)
    }
}
impl From<&str> for ParamValue {
    fn from(s: &str) -> Self {
        ParamValue::Categorical(s.into())
    }
}

/// A parameter distribution.
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// Continuous.
    Float(FloatDistribution),
    /// Integer.
    Int(IntDistribution),
    /// Categorical.
    Categorical(CategoricalDistribution),
}

impl FloatDistribution {
    /// Checks the parameters as Optuna does; with a step, `high` is moved down to the last
    /// grid point `low + k·step`.
    pub fn new(low: f64, high: f64, log: bool, step: Option<f64>) -> Result<Self> {
        if log && step.is_some() {
            return Err(invalid(
                "a float distribution cannot have both log and step",
            ));
        }
        if low.is_nan() || high.is_nan() || low > high {
            return Err(invalid(format!("low {low} > high {high}")));
        }
        if log && low <= 0.0 {
            return Err(invalid(format!(
                "log distribution needs low > 0, got {low}"
            )));
        }
        let mut high = high;
        if let Some(step) = step {
            if step.is_nan() || step <= 0.0 {
                return Err(invalid(format!("step must be positive, got {step}")));
            }
            let ratio = (high - low) / step;
            let k = (ratio + 1e-9 * ratio.abs().max(1.0)).floor();
            // Optuna does this in decimal arithmetic; 15 significant digits undo the
            // binary rounding of `k·step` (0.3·3 gives 0.9, not 0.8999999999999999).
            let adjusted: f64 = format!("{:.14e}", low + k * step)
                .parse()
                .expect("a formatted float parses");
            if (adjusted - high).abs() > 1e-12 * high.abs().max(1.0) {
                high = adjusted;
            }
        }
        Ok(Self {
            low,
            high,
            log,
            step,
        })
    }
}

impl IntDistribution {
    /// Checks the parameters as Optuna does; `high` is moved down to `low + k·step`.
    pub fn new(low: i64, high: i64, log: bool, step: i64) -> Result<Self> {
        if step <= 0 {
            return Err(invalid(format!("step must be positive, got {step}")));
        }
        if log && step != 1 {
            return Err(invalid("an int distribution with log needs step 1"));
        }
        if low > high {
            return Err(invalid(format!("low {low} > high {high}")));
        }
        if log && low < 1 {
            return Err(invalid(format!(
                "log distribution needs low >= 1, got {low}"
            )));
        }
        let high = low + (high - low) / step * step;
        Ok(Self {
            low,
            high,
            log,
            step,
        })
    }
}

impl CategoricalDistribution {
    /// Needs at least one choice.
    pub fn new(choices: Vec<Choice>) -> Result<Self> {
        if choices.is_empty() {
            return Err(invalid(
                "a categorical distribution needs at least one choice",
            ));
        }
        Ok(Self { choices })
    }

    /// Index of a choice (Python equality).
    pub fn index_of(&self, choice: &Choice) -> Option<usize> {
        self.choices.iter().position(|c| c.python_eq(choice))
    }

    /// Index of a suggested value (a [`ParamValue::Categorical`] of one of the choices).
    ///
    /// # Panics
    /// If `value` is not one of the choices: a value suggested from this distribution
    /// always is.
    pub fn index_of_suggested(&self, value: &ParamValue) -> usize {
        match value {
            ParamValue::Categorical(c) => self
                .index_of(c)
                .expect("a suggested categorical value is one of its distribution's choices"),
            other => panic!("a categorical distribution gave {other:?}"),
        }
    }
}

impl Distribution {
    /// Checks a distribution built by hand (its fields are public) as the constructors
    /// do; constructors' outputs always pass.
    pub fn validate(&self) -> Result<()> {
        let same = match self {
            Distribution::Float(d) => FloatDistribution::new(d.low, d.high, d.log, d.step)? == *d,
            Distribution::Int(d) => IntDistribution::new(d.low, d.high, d.log, d.step)? == *d,
            Distribution::Categorical(c) if c.choices.is_empty() => {
                return Err(invalid(
                    "a categorical distribution needs at least one choice",
                ))
            }
            Distribution::Categorical(_) => true,
        };
        if same {
            Ok(())
        } else {
            Err(invalid(format!(
                "{self} is not on its step grid (high must be low + k·step)"
            )))
        }
    }

    /// Converts a user-facing value to the internal float.
    pub fn to_internal(&self, value: &ParamValue) -> Result<f64> {
        let internal = match (self, value) {
            (Distribution::Float(_), v) if v.as_f64().is_some() => v.as_f64(),
            (Distribution::Int(_), ParamValue::Int(i)) => Some(*i as f64),
            (Distribution::Int(_), ParamValue::Float(f)) if f.fract() == 0.0 => Some(*f),
            (Distribution::Categorical(c), ParamValue::Categorical(choice)) => {
                c.index_of(choice).map(|i| i as f64)
            }
            (Distribution::Categorical(c), v) => {
                let as_choice = match v {
                    ParamValue::Float(f) => Choice::Float(*f),
                    ParamValue::Int(i) => Choice::Int(*i),
                    ParamValue::Categorical(_) => unreachable!("matched above"),
                };
                c.index_of(&as_choice).map(|i| i as f64)
            }
            _ => None,
        };
        internal.ok_or_else(|| StudyError::ParamOutOfDistribution {
            name: String::new(),
            value: value.to_string(),
            distribution: self.to_json_string(),
        })
    }

    /// Converts an internal float to the user-facing value.
    pub fn to_external(&self, internal: f64) -> ParamValue {
        match self {
            Distribution::Float(_) => ParamValue::Float(internal),
            Distribution::Int(_) => ParamValue::Int(internal.round() as i64),
            Distribution::Categorical(c) => {
                let index = (internal.round().max(0.0) as usize).min(c.choices.len() - 1);
                ParamValue::Categorical(c.choices[index].clone())
            }
        }
    }

    /// Whether an internal value lies in the distribution (bounds, grid, index range).
    pub fn contains(&self, internal: f64) -> bool {
        match self {
            Distribution::Float(d) => {
                if !(d.low <= internal && internal <= d.high) {
                    return false;
                }
                match d.step {
                    None => true,
                    Some(step) => {
                        let k = (internal - d.low) / step;
                        (k - k.round()).abs() < 1e-8
                    }
                }
            }
            Distribution::Int(d) => {
                internal.fract() == 0.0
                    && d.low as f64 <= internal
                    && internal <= d.high as f64
                    && (internal as i64 - d.low) % d.step == 0
            }
            Distribution::Categorical(c) => {
                internal.fract() == 0.0 && 0.0 <= internal && internal < c.choices.len() as f64
            }
        }
    }

    /// Whether the distribution has exactly one value.
    pub fn single(&self) -> bool {
        match self {
            Distribution::Float(d) => match d.step {
                None => d.low == d.high,
                Some(step) => d.low + step > d.high,
            },
            Distribution::Int(d) => d.low + d.step > d.high,
            Distribution::Categorical(c) => c.choices.len() == 1,
        }
    }

    /// The only value of a [single](Self::single) distribution, in the internal
    /// representation (`low`, or choice 0); `None` if it has several.
    pub fn single_value(&self) -> Option<f64> {
        if !self.single() {
            return None;
        }
        Some(match self {
            Distribution::Float(d) => d.low,
            Distribution::Int(d) => d.low as f64,
            Distribution::Categorical(_) => 0.0,
        })
    }

    /// Optuna's class name (`FloatDistribution`, ...).
    pub fn class_name(&self) -> &'static str {
        match self {
            Distribution::Float(_) => "FloatDistribution",
            Distribution::Int(_) => "IntDistribution",
            Distribution::Categorical(_) => "CategoricalDistribution",
        }
    }

    pub(crate) fn to_json(&self) -> Json {
        let attributes = match self {
            Distribution::Float(d) => vec![
                ("step".into(), d.step.map_or(Json::Null, Json::Float)),
                ("low".into(), Json::Float(d.low)),
                ("high".into(), Json::Float(d.high)),
                ("log".into(), Json::Bool(d.log)),
            ],
            Distribution::Int(d) => vec![
                ("log".into(), Json::Bool(d.log)),
                ("step".into(), Json::Int(d.step)),
                ("low".into(), Json::Int(d.low)),
                ("high".into(), Json::Int(d.high)),
            ],
            Distribution::Categorical(c) => vec![(
                "choices".into(),
                Json::Array(c.choices.iter().map(Choice::to_json).collect()),
            )],
        };
        Json::Object(vec![
            ("name".into(), Json::Str(self.class_name().into())),
            ("attributes".into(), Json::Object(attributes)),
        ])
    }

    /// Exactly what Optuna's `distribution_to_json` returns.
    pub fn to_json_string(&self) -> String {
        self.to_json().to_string(false)
    }

    /// Parses what Optuna's `json_to_distribution` accepts: the current class names, the
    /// deprecated ones (`UniformDistribution`, `LogUniformDistribution`,
    /// `DiscreteUniformDistribution`, `IntUniformDistribution`, `IntLogUniformDistribution`),
    /// missing optional attributes, and the short `{"type": "float", ..}` form.
    pub fn from_json_str(text: &str) -> Result<Self> {
        let json = Json::parse(text).map_err(|e| invalid(format!("{e} in `{text}`")))?;
        Self::from_json(&json).map_err(|e| match e {
            StudyError::InvalidDistribution { reason } => invalid(format!("{reason} in `{text}`")),
            other => other,
        })
    }

    pub(crate) fn from_json(json: &Json) -> Result<Self> {
        let (name, attrs) = match (json.get("name"), json.get("type")) {
            (Some(Json::Str(name)), _) => {
                (name.as_str(), json.get("attributes").unwrap_or(&Json::Null))
            }
            (_, Some(Json::Str(kind))) => (
                match kind.as_str() {
                    "float" => "FloatDistribution",
                    "int" => "IntDistribution",
                    "categorical" => "CategoricalDistribution",
                    _ => return Err(invalid(format!("unknown distribution type `{kind}`"))),
                },
                json,
            ),
            _ => return Err(invalid("no distribution name")),
        };
        let float = |key: &str| attrs.get(key).and_then(Json::as_f64);
        let int = |key: &str| attrs.get(key).and_then(Json::as_i64);
        let flag = |key: &str| matches!(attrs.get(key), Some(Json::Bool(true)));
        let need = |v: Option<f64>, key: &str| v.ok_or_else(|| invalid(format!("missing `{key}`")));
        let need_int =
            |v: Option<i64>, key: &str| v.ok_or_else(|| invalid(format!("missing `{key}`")));
        Ok(match name {
            "FloatDistribution"
            | "UniformDistribution"
            | "LogUniformDistribution"
            | "DiscreteUniformDistribution" => {
                let log = flag("log") || name == "LogUniformDistribution";
                let step = float("step").or(float("q"));
                Distribution::Float(FloatDistribution::new(
                    need(float("low"), "low")?,
                    need(float("high"), "high")?,
                    log,
                    step,
                )?)
            }
            "IntDistribution" | "IntUniformDistribution" | "IntLogUniformDistribution" => {
                let log = flag("log") || name == "IntLogUniformDistribution";
                Distribution::Int(IntDistribution::new(
                    need_int(int("low"), "low")?,
                    need_int(int("high"), "high")?,
                    log,
                    int("step").unwrap_or(1),
                )?)
            }
            "CategoricalDistribution" => {
                let Some(Json::Array(choices)) = attrs.get("choices") else {
                    return Err(invalid("missing `choices`"));
                };
                Distribution::Categorical(CategoricalDistribution::new(
                    choices
                        .iter()
                        .map(Choice::from_json)
                        .collect::<Result<_>>()?,
                )?)
            }
            other => return Err(invalid(format!("unknown distribution `{other}`"))),
        })
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json_string())
    }
}

impl From<FloatDistribution> for Distribution {
    fn from(d: FloatDistribution) -> Self {
        Distribution::Float(d)
    }
}
impl From<IntDistribution> for Distribution {
    fn from(d: IntDistribution) -> Self {
        Distribution::Int(d)
    }
}
impl From<CategoricalDistribution> for Distribution {
    fn from(d: CategoricalDistribution) -> Self {
        Distribution::Categorical(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_matches_optuna_byte_for_byte() {
        // Strings from a journal written by Optuna 4.9 (see shared/reference/optuna.md).
        let float = Distribution::Float(FloatDistribution::new(1e-5, 0.1, true, None).unwrap());
        assert_eq!(
            float.to_json_string(),
            r#"{"name": "FloatDistribution", "attributes": {"step": null, "low": 1e-05, "high": 0.1, "log": true}}"#
        );
        let int = Distribution::Int(IntDistribution::new(1, 9, false, 2).unwrap());
        assert_eq!(
            int.to_json_string(),
            r#"{"name": "IntDistribution", "attributes": {"log": false, "step": 2, "low": 1, "high": 9}}"#
        );
        let cat = Distribution::Categorical(
            CategoricalDistribution::new(vec!["a".into(), "b".into(), Choice::Null, 1.5.into()])
                .unwrap(),
        );
        assert_eq!(
            cat.to_json_string(),
            r#"{"name": "CategoricalDistribution", "attributes": {"choices": ["a", "b", null, 1.5]}}"#
        );
        for d in [float, int, cat] {
            assert_eq!(Distribution::from_json_str(&d.to_json_string()).unwrap(), d);
        }
    }

    #[test]
    fn reads_legacy_and_short_forms() {
        let d = Distribution::from_json_str(
            r#"{"name": "LogUniformDistribution", "attributes": {"low": 0.1, "high": 1.0}}"#,
        )
        .unwrap();
        assert_eq!(
            d,
            Distribution::Float(FloatDistribution::new(0.1, 1.0, true, None).unwrap())
        );
        let d =
            Distribution::from_json_str(r#"{"type":"int","low":0,"high":10,"step":5}"#).unwrap();
        assert_eq!(
            d,
            Distribution::Int(IntDistribution::new(0, 10, false, 5).unwrap())
        );
        let d = Distribution::from_json_str(
            r#"{"name": "DiscreteUniformDistribution", "attributes": {"low": 0.0, "high": 1.0, "q": 0.25}}"#,
        )
        .unwrap();
        assert_eq!(
            d,
            Distribution::Float(FloatDistribution::new(0.0, 1.0, false, Some(0.25)).unwrap())
        );
        assert!(Distribution::from_json_str(r#"{"name": "Nope", "attributes": {}}"#).is_err());
    }

    #[test]
    fn high_is_adjusted_to_the_step_grid() {
        assert_eq!(IntDistribution::new(1, 10, false, 2).unwrap().high, 9);
        assert_eq!(
            FloatDistribution::new(0.0, 1.0, false, Some(0.3))
                .unwrap()
                .high,
            0.9
        );
        assert_eq!(
            FloatDistribution::new(0.0, 1.0, false, Some(0.25))
                .unwrap()
                .high,
            1.0
        );
    }

    #[test]
    fn internal_representation() {
        let cat = Distribution::Categorical(
            CategoricalDistribution::new(vec![true.into(), Choice::Null, "x".into(), 2.into()])
                .unwrap(),
        );
        assert_eq!(
            cat.to_internal(&ParamValue::Categorical("x".into()))
                .unwrap(),
            2.0
        );
        assert_eq!(cat.to_internal(&ParamValue::Int(2)).unwrap(), 3.0);
        assert_eq!(cat.to_external(1.0), ParamValue::Categorical(Choice::Null));
        assert!(cat.contains(3.0) && !cat.contains(4.0) && !cat.contains(0.5));
        let int = Distribution::Int(IntDistribution::new(0, 10, false, 5).unwrap());
        assert!(int.contains(5.0) && !int.contains(3.0));
        assert_eq!(int.to_external(10.0), ParamValue::Int(10));
        assert!(int
            .to_internal(&ParamValue::Categorical("a".into()))
            .is_err());
    }
}
