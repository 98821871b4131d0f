//! Operations as Optuna's journal lines (op codes 0–9).

use std::collections::BTreeMap;

use crate::distributions::Distribution;
use crate::json::Json;
use crate::storage::replay::{format_datetime, parse_datetime, Operation};
use crate::trial::{FrozenTrial, Param, StudyDirection, TrialState};

const CREATE_STUDY: i64 = 0;
const DELETE_STUDY: i64 = 1;
const SET_STUDY_USER_ATTR: i64 = 2;
const SET_STUDY_SYSTEM_ATTR: i64 = 3;
const CREATE_TRIAL: i64 = 4;
const SET_TRIAL_PARAM: i64 = 5;
const SET_TRIAL_STATE_VALUES: i64 = 6;
const SET_TRIAL_INTERMEDIATE_VALUE: i64 = 7;
const SET_TRIAL_USER_ATTR: i64 = 8;
const SET_TRIAL_SYSTEM_ATTR: i64 = 9;

fn datetime_json(dt: Option<&chrono::NaiveDateTime>) -> Json {
    dt.map_or(Json::Null, |dt| Json::Str(format_datetime(dt)))
}

fn int(id: u64) -> Json {
    Json::Int(id as i64)
}

fn floats(values: &[f64]) -> Json {
    Json::Array(values.iter().map(|v| Json::Float(*v)).collect())
}

fn attrs(map: &BTreeMap<String, serde_json::Value>) -> Json {
    Json::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Json::from_value(v)))
            .collect(),
    )
}

/// The internal value as Python writes it: a categorical index is an int.
fn internal_json(internal: f64, distribution: &Distribution) -> Json {
    match distribution {
        Distribution::Categorical(_) => Json::Int(internal as i64),
        _ => Json::Float(internal),
    }
}

/// The journal line (without newline) of an operation, as
/// `json.dumps(log, separators=(",", ":"))` writes it.
pub(crate) fn to_line(op: &Operation, worker_id: &str, out: &mut String) {
    let mut fields: Vec<(String, Json)> = Vec::with_capacity(8);
    let mut field = |key: &str, value: Json| fields.push((key.to_owned(), value));
    let code = match op {
        Operation::CreateStudy { .. } => CREATE_STUDY,
        Operation::DeleteStudy { .. } => DELETE_STUDY,
        Operation::SetStudyAttr { system: false, .. } => SET_STUDY_USER_ATTR,
        Operation::SetStudyAttr { system: true, .. } => SET_STUDY_SYSTEM_ATTR,
        Operation::CreateTrial { .. } => CREATE_TRIAL,
        Operation::SetTrialParam { .. } => SET_TRIAL_PARAM,
        Operation::SetTrialStateValues { .. } => SET_TRIAL_STATE_VALUES,
        Operation::SetTrialIntermediateValue { .. } => SET_TRIAL_INTERMEDIATE_VALUE,
        Operation::SetTrialAttr { system: false, .. } => SET_TRIAL_USER_ATTR,
        Operation::SetTrialAttr { system: true, .. } => SET_TRIAL_SYSTEM_ATTR,
    };
    field("op_code", Json::Int(code));
    field("worker_id", Json::Str(worker_id.to_owned()));
    match op {
        Operation::CreateStudy { name, directions } => {
            field("study_name", Json::Str(name.clone()));
            field(
                "directions",
                Json::Array(directions.iter().map(|d| Json::Int(d.code())).collect()),
            );
        }
        Operation::DeleteStudy { study_id } => field("study_id", int(*study_id)),
        Operation::SetStudyAttr {
            study_id,
            system,
            key,
            value,
        } => {
            field("study_id", int(*study_id));
            field(
                if *system { "system_attr" } else { "user_attr" },
                Json::Object(vec![(key.clone(), value.clone())]),
            );
        }
        Operation::CreateTrial {
            study_id,
            datetime_start,
            template,
        } => {
            field("study_id", int(*study_id));
            field("datetime_start", datetime_json(datetime_start.as_ref()));
            if let Some(t) = template {
                field("state", Json::Int(t.state.code()));
                let single = t.values.as_ref().filter(|v| v.len() == 1);
                field("value", single.map_or(Json::Null, |v| Json::Float(v[0])));
                field(
                    "values",
                    match (&t.values, single) {
                        (Some(values), None) => floats(values),
                        _ => Json::Null,
                    },
                );
                if let Some(dt) = &t.datetime_complete {
                    field("datetime_complete", Json::Str(format_datetime(dt)));
                }
                field(
                    "distributions",
                    Json::Object(
                        t.params
                            .iter()
                            .map(|(k, p)| (k.clone(), Json::Str(p.distribution.to_json_string())))
                            .collect(),
                    ),
                );
                field(
                    "params",
                    Json::Object(
                        t.params
                            .iter()
                            .map(|(k, p)| (k.clone(), internal_json(p.internal, &p.distribution)))
                            .collect(),
                    ),
                );
                field("user_attrs", attrs(&t.user_attrs));
                field("system_attrs", attrs(&t.system_attrs));
                field(
                    "intermediate_values",
                    Json::Object(
                        t.intermediate_values
                            .iter()
                            .map(|(s, v)| (s.to_string(), Json::Float(*v)))
                            .collect(),
                    ),
                );
            }
        }
        Operation::SetTrialParam {
            trial_id,
            name,
            internal,
            distribution,
        } => {
            field("trial_id", int(*trial_id));
            field("param_name", Json::Str(name.clone()));
            field(
                "param_value_internal",
                internal_json(*internal, distribution),
            );
            field("distribution", Json::Str(distribution.to_json_string()));
        }
        Operation::SetTrialStateValues {
            trial_id,
            state,
            values,
            datetime,
        } => {
            field("trial_id", int(*trial_id));
            field("state", Json::Int(state.code()));
            field("values", values.as_deref().map_or(Json::Null, floats));
            if *state == TrialState::Running {
                field("datetime_start", datetime_json(datetime.as_ref()));
            } else if state.is_finished() {
                field("datetime_complete", datetime_json(datetime.as_ref()));
            }
        }
        Operation::SetTrialIntermediateValue {
            trial_id,
            step,
            value,
        } => {
            field("trial_id", int(*trial_id));
            field("step", Json::Int(*step));
            field("intermediate_value", Json::Float(*value));
        }
        Operation::SetTrialAttr {
            trial_id,
            system,
            key,
            value,
        } => {
            field("trial_id", int(*trial_id));
            field(
                if *system { "system_attr" } else { "user_attr" },
                Json::Object(vec![(key.clone(), value.clone())]),
            );
        }
    }
    Json::Object(fields).write(out, true);
}

/// The operation of a journal line. `Ok(None)` for records this reader skips (op 10,
/// DISCARD_TRIALS of Optuna 5, which 5.0 itself ignores).
/// Distributions by their JSON string: a journal repeats the same few strings on most
/// lines, so each is parsed once.
pub(crate) type DistributionCache = std::collections::HashMap<String, Distribution>;

fn distribution(text: &str, cache: &mut DistributionCache) -> Result<Distribution, String> {
    if let Some(d) = cache.get(text) {
        return Ok(d.clone());
    }
    let d = Distribution::from_json_str(text).map_err(|e| e.to_string())?;
    cache.insert(text.to_owned(), d.clone());
    Ok(d)
}

pub(crate) fn from_line(
    line: &str,
    cache: &mut DistributionCache,
) -> Result<Option<Operation>, String> {
    let json = Json::parse(line)?;
    let get = |key: &str| json.get(key).ok_or_else(|| format!("missing `{key}`"));
    let id = |key: &str| -> Result<u64, String> {
        get(key)?
            .as_i64()
            .and_then(|i| u64::try_from(i).ok())
            .ok_or_else(|| format!("`{key}` is not an id"))
    };
    let float = |j: &Json| j.as_f64().ok_or_else(|| "expected a number".to_owned());
    let one_attr = |key: &str| -> Result<(String, Json), String> {
        match get(key)? {
            Json::Object(fields) if fields.len() == 1 => Ok(fields[0].clone()),
            _ => Err(format!("`{key}` must be an object with one key")),
        }
    };
    let datetime = |key: &str| -> Result<Option<chrono::NaiveDateTime>, String> {
        match json.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Str(s)) => parse_datetime(s)
                .map(Some)
                .ok_or_else(|| format!("bad datetime `{s}`")),
            Some(_) => Err(format!("`{key}` is not a string")),
        }
    };
    let code = get("op_code")?.as_i64().ok_or("`op_code` is not an int")?;
    Ok(Some(match code {
        CREATE_STUDY => Operation::CreateStudy {
            name: get("study_name")?
                .as_str()
                .ok_or("`study_name` is not a string")?
                .to_owned(),
            directions: match get("directions")? {
                Json::Array(items) => items
                    .iter()
                    .map(|d| d.as_i64().and_then(StudyDirection::from_code))
                    .collect::<Option<_>>()
                    .ok_or("bad direction")?,
                _ => return Err("`directions` is not a list".into()),
            },
        },
        DELETE_STUDY => Operation::DeleteStudy {
            study_id: id("study_id")?,
        },
        SET_STUDY_USER_ATTR | SET_STUDY_SYSTEM_ATTR => {
            let system = code == SET_STUDY_SYSTEM_ATTR;
            let (key, value) = one_attr(if system { "system_attr" } else { "user_attr" })?;
            Operation::SetStudyAttr {
                study_id: id("study_id")?,
                system,
                key,
                value,
            }
        }
        CREATE_TRIAL => {
            if json.get("datetime_start").is_none() {
                return Err("missing `datetime_start`".into());
            }
            let template = if json.get("state").is_some() || json.get("params").is_some() {
                Some(Box::new(template_from(
                    &json,
                    datetime("datetime_complete")?,
                    cache,
                )?))
            } else {
                None
            };
            Operation::CreateTrial {
                study_id: id("study_id")?,
                datetime_start: datetime("datetime_start")?,
                template,
            }
        }
        SET_TRIAL_PARAM => {
            let distribution = distribution(
                get("distribution")?
                    .as_str()
                    .ok_or("`distribution` is not a string")?,
                cache,
            )?;
            Operation::SetTrialParam {
                trial_id: id("trial_id")?,
                name: get("param_name")?
                    .as_str()
                    .ok_or("`param_name` is not a string")?
                    .to_owned(),
                internal: float(get("param_value_internal")?)?,
                distribution,
            }
        }
        SET_TRIAL_STATE_VALUES => {
            let state = get("state")?
                .as_i64()
                .and_then(TrialState::from_code)
                .ok_or("bad state")?;
            let values = match get("values")? {
                Json::Null => None,
                Json::Array(items) => Some(items.iter().map(float).collect::<Result<_, _>>()?),
                _ => return Err("`values` is not a list".into()),
            };
            let datetime = match state {
                TrialState::Running => datetime("datetime_start")?,
                s if s.is_finished() => datetime("datetime_complete")?,
                _ => None,
            };
            Operation::SetTrialStateValues {
                trial_id: id("trial_id")?,
                state,
                values,
                datetime,
            }
        }
        SET_TRIAL_INTERMEDIATE_VALUE => Operation::SetTrialIntermediateValue {
            trial_id: id("trial_id")?,
            step: get("step")?.as_i64().ok_or("`step` is not an int")?,
            value: float(get("intermediate_value")?)?,
        },
        SET_TRIAL_USER_ATTR | SET_TRIAL_SYSTEM_ATTR => {
            let system = code == SET_TRIAL_SYSTEM_ATTR;
            let (key, value) = one_attr(if system { "system_attr" } else { "user_attr" })?;
            Operation::SetTrialAttr {
                trial_id: id("trial_id")?,
                system,
                key,
                value,
            }
        }
        10 => return Ok(None),
        other => return Err(format!("unknown op_code {other}")),
    }))
}

fn template_from(
    json: &Json,
    datetime_complete: Option<chrono::NaiveDateTime>,
    cache: &mut DistributionCache,
) -> Result<FrozenTrial, String> {
    let state = match json.get("state") {
        None => TrialState::Running,
        Some(s) => s
            .as_i64()
            .and_then(TrialState::from_code)
            .ok_or("bad state")?,
    };
    let mut trial = FrozenTrial::new(0, 0, state);
    trial.datetime_complete = datetime_complete;
    let to_floats = |items: &[Json]| {
        items
            .iter()
            .map(|v| v.as_f64().ok_or_else(|| "value is not a number".to_owned()))
            .collect::<Result<Vec<_>, _>>()
    };
    trial.values = match (json.get("values"), json.get("value")) {
        (Some(Json::Array(items)), _) => Some(to_floats(items)?),
        (_, Some(v)) if *v != Json::Null => Some(vec![v.as_f64().ok_or("bad `value`")?]),
        _ => None,
    };
    let object = |key: &str| match json.get(key) {
        Some(Json::Object(fields)) => fields.as_slice(),
        _ => &[],
    };
    let distributions = object("distributions");
    for (name, internal) in object("params") {
        let text = distributions
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, d)| d.as_str())
            .ok_or_else(|| format!("no distribution for param `{name}`"))?;
        let distribution = distribution(text, cache)?;
        trial.params.insert(
            name.clone(),
            Param {
                internal: internal.as_f64().ok_or("param is not a number")?,
                distribution,
            },
        );
    }
    for (key, value) in object("user_attrs") {
        trial.user_attrs.insert(key.clone(), value.to_value());
    }
    for (key, value) in object("system_attrs") {
        trial.system_attrs.insert(key.clone(), value.to_value());
    }
    for (step, value) in object("intermediate_values") {
        trial.intermediate_values.insert(
            step.parse().map_err(|_| format!("bad step `{step}`"))?,
            value.as_f64().ok_or("intermediate value is not a number")?,
        );
    }
    Ok(trial)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_outside_i64_in_attributes_are_rewritten_exactly() {
        // Lines as Optuna writes them for `set_user_attr("big", 2**70)` and
        // `set_system_attr("max", [2**64 - 1, -(2**63) - 1])`.
        for line in [
            r#"{"op_code":8,"worker_id":"w","trial_id":0,"user_attr":{"big":1180591620717411303424}}"#,
            r#"{"op_code":3,"worker_id":"w","study_id":0,"system_attr":{"max":[18446744073709551615,-9223372036854775809]}}"#,
        ] {
            let op = from_line(line, &mut DistributionCache::new())
                .unwrap()
                .unwrap();
            let mut rewritten = String::new();
            to_line(&op, "w", &mut rewritten);
            assert_eq!(rewritten, line);
        }
    }
}
