//! Optuna's RDB schema (`optuna/storages/_rdb/models.py`, schema version 12, alembic
//! revision `v3.2.0.a`), as SQLAlchemy creates it for SQLite and PostgreSQL in Optuna 4.9
//! and 5.0 (the two create the same tables).

use crate::trial::{StudyDirection, TrialState};

use super::backend::{DbError, Dialect, SqlValue, Tx};

/// `models.SCHEMA_VERSION`.
pub(crate) const SCHEMA_VERSION: i64 = 12;
/// The alembic head revision of Optuna 4.9 and 5.0.
pub(crate) const ALEMBIC_REVISION: &str = "v3.2.0.a";
/// What `version_info.library_version` says for a database saturate created: the Optuna
/// release whose schema it writes (Optuna shows it in its schema-mismatch message).
pub(crate) const LIBRARY_VERSION: &str = "4.9.0";

/// The tables in creation order (parents first); `{id}` is the primary-key type,
/// `{state}` etc. the enum column types.
const TABLES: &[(&str, &str)] = &[
    (
        "studies",
        "CREATE TABLE studies (
	study_id {serial} NOT NULL, 
	study_name VARCHAR(512) NOT NULL, 
	PRIMARY KEY (study_id)
)",
    ),
    (
        "version_info",
        "CREATE TABLE version_info (
	version_info_id INTEGER NOT NULL, 
	schema_version INTEGER, 
	library_version VARCHAR(256), 
	PRIMARY KEY (version_info_id), 
	CHECK (version_info_id=1)
)",
    ),
    (
        "study_directions",
        "CREATE TABLE study_directions (
	study_direction_id {serial} NOT NULL, 
	direction {studydirection} NOT NULL, 
	study_id INTEGER NOT NULL, 
	objective INTEGER NOT NULL, 
	PRIMARY KEY (study_direction_id), 
	UNIQUE (study_id, objective), 
	FOREIGN KEY(study_id) REFERENCES studies (study_id)
)",
    ),
    (
        "study_user_attributes",
        "CREATE TABLE study_user_attributes (
	study_user_attribute_id {serial} NOT NULL, 
	study_id INTEGER, 
	{key} VARCHAR(512), 
	value_json TEXT, 
	PRIMARY KEY (study_user_attribute_id), 
	UNIQUE (study_id, {key}), 
	FOREIGN KEY(study_id) REFERENCES studies (study_id)
)",
    ),
    (
        "study_system_attributes",
        "CREATE TABLE study_system_attributes (
	study_system_attribute_id {serial} NOT NULL, 
	study_id INTEGER, 
	{key} VARCHAR(512), 
	value_json TEXT, 
	PRIMARY KEY (study_system_attribute_id), 
	UNIQUE (study_id, {key}), 
	FOREIGN KEY(study_id) REFERENCES studies (study_id)
)",
    ),
    (
        "trials",
        "CREATE TABLE trials (
	trial_id {serial} NOT NULL, 
	number INTEGER, 
	study_id INTEGER, 
	state {trialstate} NOT NULL, 
	datetime_start {datetime}, 
	datetime_complete {datetime}, 
	PRIMARY KEY (trial_id), 
	FOREIGN KEY(study_id) REFERENCES studies (study_id)
)",
    ),
    (
        "trial_user_attributes",
        "CREATE TABLE trial_user_attributes (
	trial_user_attribute_id {serial} NOT NULL, 
	trial_id INTEGER, 
	{key} VARCHAR(512), 
	value_json TEXT, 
	PRIMARY KEY (trial_user_attribute_id), 
	UNIQUE (trial_id, {key}), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
)",
    ),
    (
        "trial_system_attributes",
        "CREATE TABLE trial_system_attributes (
	trial_system_attribute_id {serial} NOT NULL, 
	trial_id INTEGER, 
	{key} VARCHAR(512), 
	value_json TEXT, 
	PRIMARY KEY (trial_system_attribute_id), 
	UNIQUE (trial_id, {key}), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
)",
    ),
    (
        "trial_params",
        "CREATE TABLE trial_params (
	param_id {serial} NOT NULL, 
	trial_id INTEGER, 
	param_name VARCHAR(512), 
	param_value {float}, 
	distribution_json TEXT, 
	PRIMARY KEY (param_id), 
	UNIQUE (trial_id, param_name), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
)",
    ),
    (
        "trial_values",
        "CREATE TABLE trial_values (
	trial_value_id {serial} NOT NULL, 
	trial_id INTEGER NOT NULL, 
	objective INTEGER NOT NULL, 
	value {float}, 
	value_type {trialvaluetype} NOT NULL, 
	PRIMARY KEY (trial_value_id), 
	UNIQUE (trial_id, objective), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
)",
    ),
    (
        "trial_intermediate_values",
        "CREATE TABLE trial_intermediate_values (
	trial_intermediate_value_id {serial} NOT NULL, 
	trial_id INTEGER NOT NULL, 
	step INTEGER NOT NULL, 
	intermediate_value {float}, 
	intermediate_value_type {trialintermediatevaluetype} NOT NULL, 
	PRIMARY KEY (trial_intermediate_value_id), 
	UNIQUE (trial_id, step), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
)",
    ),
    (
        "trial_heartbeats",
        "CREATE TABLE trial_heartbeats (
	trial_heartbeat_id {serial} NOT NULL, 
	trial_id INTEGER NOT NULL, 
	heartbeat {datetime} NOT NULL, 
	PRIMARY KEY (trial_heartbeat_id), 
	UNIQUE (trial_id), 
	FOREIGN KEY(trial_id) REFERENCES trials (trial_id)
)",
    ),
    (
        "alembic_version",
        "CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
)",
    ),
];

const INDEXES: &[&str] = &[
    "CREATE UNIQUE INDEX ix_studies_study_name ON studies (study_name)",
    "CREATE INDEX ix_trials_study_id ON trials (study_id)",
];

/// PostgreSQL's native enum types (SQLAlchemy names them after the Python enum).
const PG_ENUMS: &[(&str, &[&str])] = &[
    ("studydirection", &["NOT_SET", "MINIMIZE", "MAXIMIZE"]),
    (
        "trialstate",
        &["RUNNING", "COMPLETE", "PRUNED", "FAIL", "WAITING"],
    ),
    ("trialvaluetype", &["FINITE", "INF_POS", "INF_NEG"]),
    (
        "trialintermediatevaluetype",
        &["FINITE", "INF_POS", "INF_NEG", "NAN"],
    ),
];

fn render(ddl: &str, dialect: Dialect) -> String {
    let pairs: &[(&str, &str)] = match dialect {
        Dialect::Sqlite => &[
            ("{serial}", "INTEGER"),
            ("{key}", "\"key\""),
            ("{datetime}", "DATETIME"),
            ("{float}", "FLOAT"),
            ("{studydirection}", "VARCHAR(8)"),
            ("{trialstate}", "VARCHAR(8)"),
            ("{trialvaluetype}", "VARCHAR(7)"),
            ("{trialintermediatevaluetype}", "VARCHAR(7)"),
        ],
        Dialect::Postgres => &[
            ("{serial}", "SERIAL"),
            ("{key}", "key"),
            ("{datetime}", "TIMESTAMP WITHOUT TIME ZONE"),
            ("{float}", "FLOAT(53)"),
            ("{studydirection}", "studydirection"),
            ("{trialstate}", "trialstate"),
            ("{trialvaluetype}", "trialvaluetype"),
            ("{trialintermediatevaluetype}", "trialintermediatevaluetype"),
        ],
    };
    pairs
        .iter()
        .fold(ddl.to_owned(), |sql, (from, to)| sql.replace(from, to))
}

fn existing_tables(tx: &mut Tx<'_>) -> Result<Vec<String>, DbError> {
    let sql = match tx.dialect() {
        Dialect::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table'",
        Dialect::Postgres => {
            "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
        }
    };
    Ok(tx
        .query(sql, &[])?
        .into_iter()
        .filter_map(|row| row.first().and_then(|v| v.text().map(str::to_owned)))
        .collect())
}

/// The tables of Optuna's schema that the database lacks (all of them for an empty one).
pub(crate) fn missing_tables(tx: &mut Tx<'_>) -> Result<Vec<&'static str>, DbError> {
    let existing = existing_tables(tx)?;
    Ok(TABLES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !existing.iter().any(|t| t == name))
        .collect())
}

/// What an existing schema says (`(alembic revision, schema version)`), creating nothing.
pub(crate) fn read_version(tx: &mut Tx<'_>) -> Result<(Option<String>, Option<i64>), DbError> {
    let version = tx
        .query(
            "SELECT schema_version FROM version_info WHERE version_info_id = 1",
            &[],
        )?
        .first()
        .and_then(|r| r.first().and_then(SqlValue::int));
    let revision = tx
        .query("SELECT version_num FROM alembic_version", &[])?
        .first()
        .and_then(|r| r.first().and_then(|v| v.text().map(str::to_owned)));
    Ok((revision, version))
}

/// Creates what is missing (as SQLAlchemy's `create_all` does), stamps a new database with
/// schema version 12 and alembic revision `v3.2.0.a`, and returns what an existing one says
/// (`(alembic revision, schema version)`).
pub(crate) fn ensure(tx: &mut Tx<'_>) -> Result<(Option<String>, Option<i64>), DbError> {
    let dialect = tx.dialect();
    if dialect == Dialect::Postgres {
        // Workers starting together: one creates, the others wait and then see the tables.
        tx.execute("SELECT pg_advisory_xact_lock(4242424242)", &[])?;
        for (name, labels) in PG_ENUMS {
            let exists = !tx
                .query(
                    "SELECT 1 FROM pg_type WHERE typname = ?",
                    &[SqlValue::from(*name)],
                )?
                .is_empty();
            if !exists {
                let labels: Vec<String> = labels.iter().map(|l| format!("'{l}'")).collect();
                tx.execute(
                    &format!("CREATE TYPE {name} AS ENUM ({})", labels.join(", ")),
                    &[],
                )?;
            }
        }
    }
    let existing = existing_tables(tx)?;
    for (name, ddl) in TABLES {
        if !existing.iter().any(|t| t == name) {
            tx.execute(&render(ddl, dialect), &[])?;
            if *name == "studies" {
                tx.execute(INDEXES[0], &[])?;
            }
            if *name == "trials" {
                tx.execute(INDEXES[1], &[])?;
            }
        }
    }
    let (revision, version) = read_version(tx)?;
    if version.is_none() {
        tx.execute(
            "INSERT INTO version_info (version_info_id, schema_version, library_version) \
             VALUES (1, ?, ?)",
            &[SCHEMA_VERSION.into(), LIBRARY_VERSION.into()],
        )?;
    }
    if revision.is_none() {
        tx.execute(
            "INSERT INTO alembic_version (version_num) VALUES (?)",
            &[ALEMBIC_REVISION.into()],
        )?;
    }
    Ok((revision, version))
}

pub(crate) fn state_name(state: TrialState) -> &'static str {
    match state {
        TrialState::Running => "RUNNING",
        TrialState::Complete => "COMPLETE",
        TrialState::Pruned => "PRUNED",
        TrialState::Fail => "FAIL",
        TrialState::Waiting => "WAITING",
    }
}

pub(crate) fn parse_state(name: &str) -> Option<TrialState> {
    [
        TrialState::Running,
        TrialState::Complete,
        TrialState::Pruned,
        TrialState::Fail,
        TrialState::Waiting,
    ]
    .into_iter()
    .find(|s| state_name(*s) == name)
}

pub(crate) fn direction_name(direction: StudyDirection) -> &'static str {
    match direction {
        StudyDirection::NotSet => "NOT_SET",
        StudyDirection::Minimize => "MINIMIZE",
        StudyDirection::Maximize => "MAXIMIZE",
    }
}

pub(crate) fn parse_direction(name: &str) -> Option<StudyDirection> {
    match name {
        "NOT_SET" => Some(StudyDirection::NotSet),
        "MINIMIZE" => Some(StudyDirection::Minimize),
        "MAXIMIZE" => Some(StudyDirection::Maximize),
        _ => None,
    }
}

/// `TrialValueModel.value_to_stored_repr` (NaN is not a storable objective value).
pub(crate) fn value_to_stored(value: f64) -> (SqlValue, &'static str) {
    if value == f64::INFINITY {
        (SqlValue::Null, "INF_POS")
    } else if value == f64::NEG_INFINITY {
        (SqlValue::Null, "INF_NEG")
    } else {
        (SqlValue::Real(value), "FINITE")
    }
}

/// `TrialIntermediateValueModel.intermediate_value_to_stored_repr`.
pub(crate) fn intermediate_to_stored(value: f64) -> (SqlValue, &'static str) {
    if value.is_nan() {
        (SqlValue::Null, "NAN")
    } else {
        value_to_stored(value)
    }
}

/// The inverse of both: the type column decides, the value column holds finite values.
pub(crate) fn stored_to_value(value: &SqlValue, kind: &str) -> f64 {
    match kind {
        "INF_POS" => f64::INFINITY,
        "INF_NEG" => f64::NEG_INFINITY,
        "NAN" => f64::NAN,
        _ => value.real().unwrap_or(f64::NAN),
    }
}
