//! [`RdbStorage`]: the [`Storage`] contract over Optuna's tables.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{Local, NaiveDateTime, TimeZone, Utc};
use serde_json::Value;

use crate::distributions::Distribution;
use crate::error::{Result, StudyError};
use crate::json::Json;
use crate::storage::heartbeat::{Heartbeat, StaleTrialCallback};
use crate::storage::Storage;
use crate::trial::{FrozenTrial, Param, StudyDirection, TrialState};

use super::backend::{Conn, DbError, Row, SqlValue, Tx, TxError, TxResult};
use super::schema::{self, ALEMBIC_REVISION, SCHEMA_VERSION};
use super::url::{self, RdbUrl};

/// Optuna's `RDBStorage`: studies in a SQLite file or a PostgreSQL database, in the tables
/// Python Optuna 4.9 and 5.0 create, so both read and write the same studies at once.
///
/// Open one with [`RdbStorage::open`] and a URL (`sqlite:///study.db`,
/// `postgresql://user:password@host:5432/db`). Every method is one database transaction;
/// serialization failures, deadlocks and a busy SQLite file are retried (5 attempts, random
/// backoff), as Optuna retries them. Trial numbers are assigned under a lock on the study's
/// row, as Optuna assigns them, so concurrent workers (Python's included) never share one.
///
/// Ids: saturate's ids are the database's minus one (0-based, like the journal's); the
/// database's own (1-based) are what Python Optuna shows. SQLite (Optuna's schema has no
/// `AUTOINCREMENT`) hands the id of the newest study or trial out again once it is deleted;
/// PostgreSQL never reuses one.
///
/// Datetimes are kept as Optuna 5.0 keeps them: naive UTC in the database, naive local
/// time in [`FrozenTrial`]. (Optuna 4.x wrote naive local time into the same columns; on a
/// machine whose zone is UTC the two agree.)
///
/// The password never appears in `Debug`, errors or logs: [`RdbStorage::url`] and every
/// [`StudyError`] show it as `***`.
pub struct RdbStorage {
    url: String,
    inner: Mutex<Inner>,
    heartbeat: Option<Heartbeat>,
}

struct Inner {
    conn: Conn,
    /// The PostgreSQL URL (with its password) to reconnect with after the server closed
    /// the connection; never shown.
    reconnect: Option<String>,
    /// Parsed distributions by their JSON text.
    distributions: HashMap<String, Distribution>,
}

impl std::fmt::Debug for RdbStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RdbStorage")
            .field("url", &self.url)
            .field("heartbeat", &self.heartbeat)
            .finish_non_exhaustive()
    }
}

fn sid(db_id: i64) -> u64 {
    (db_id - 1) as u64
}

/// The database id of a saturate id (`None`: no such row can exist).
fn db_id(id: u64) -> Option<i64> {
    i64::try_from(id).ok().and_then(|id| id.checked_add(1))
}

fn to_db_time(local: NaiveDateTime) -> NaiveDateTime {
    Local
        .from_local_datetime(&local)
        .earliest()
        .map_or(local, |t| t.with_timezone(&Utc).naive_utc())
}

fn from_db_time(utc: NaiveDateTime) -> NaiveDateTime {
    Utc.from_utc_datetime(&utc)
        .with_timezone(&Local)
        .naive_local()
}

fn now_utc() -> NaiveDateTime {
    use chrono::{DurationRound, TimeDelta};
    let now = Utc::now().naive_utc();
    now.duration_trunc(TimeDelta::microseconds(1))
        .unwrap_or(now)
}

fn attr_json(value: &Value) -> String {
    Json::from_value(value).to_string(false)
}

fn parse_attr(text: &str) -> Value {
    Json::parse(text)
        .map(|j| j.to_value())
        .unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn corrupt(what: &str) -> TxError {
    TxError::Db(DbError::Other(format!(
        "unexpected database content: {what}"
    )))
}

fn col(row: &Row, i: usize) -> &SqlValue {
    row.get(i).unwrap_or(&SqlValue::Null)
}

impl RdbStorage {
    /// Opens the database at `url`, creating Optuna's tables when absent.
    ///
    /// URLs: `sqlite:///relative.db`, `sqlite:////absolute/path.db`, `sqlite://` (in
    /// memory), `postgresql://user:password@host:port/database` (also `postgres://` and
    /// `postgresql+psycopg2://`). Without a password in the URL, `PGPASSWORD` is used.
    ///
    /// # Errors
    /// [`StudyError::InvalidStorageUrl`] for a URL of another kind,
    /// [`StudyError::Database`] when the database cannot be reached,
    /// [`StudyError::UnsupportedSchema`] for a database of another Optuna schema version.
    pub fn open(url: &str) -> Result<Self> {
        Self::connect(url, true)
    }

    /// Opens the database at `url` only if it already holds Optuna's tables, creating
    /// nothing: for readers (a listing, an export) that must not turn a wrong or emptied
    /// database into an empty study store.
    ///
    /// # Errors
    /// As [`RdbStorage::open`], and [`StudyError::MissingSchema`] when Optuna's tables are
    /// absent (a fresh database, another database name, or tables dropped since).
    pub fn open_existing(url: &str) -> Result<Self> {
        Self::connect(url, false)
    }

    fn connect(url: &str, create: bool) -> Result<Self> {
        let redacted = url::redact(url);
        let db_err = |e: DbError| StudyError::Database {
            url: redacted.clone(),
            reason: e.to_string(),
        };
        let parsed = url::parse(url)?;
        let reconnect = match &parsed {
            RdbUrl::Postgres(pg) => Some(pg.clone()),
            RdbUrl::Sqlite(_) => None,
        };
        let conn = match parsed {
            RdbUrl::Sqlite(path) => {
                Conn::Sqlite(super::sqlite::open(path.as_deref(), create).map_err(db_err)?)
            }
            RdbUrl::Postgres(pg) => {
                Conn::Postgres(Box::new(super::pg::connect(&pg).map_err(db_err)?))
            }
        };
        let storage = Self {
            url: redacted,
            inner: Mutex::new(Inner {
                conn,
                reconnect,
                distributions: HashMap::new(),
            }),
            heartbeat: None,
        };
        let (revision, version) = if create {
            storage.tx(true, |tx| Ok(schema::ensure(tx)?))?
        } else {
            let missing = storage.tx(false, |tx| Ok(schema::missing_tables(tx)?))?;
            if !missing.is_empty() {
                return Err(StudyError::MissingSchema {
                    url: storage.url.clone(),
                    missing: missing.join(", "),
                });
            }
            storage.tx(false, |tx| Ok(schema::read_version(tx)?))?
        };
        let revision_ok = revision.as_deref().is_none_or(|r| r == ALEMBIC_REVISION);
        let version_ok = version.is_none_or(|v| v == SCHEMA_VERSION);
        if !(revision_ok && version_ok) {
            return Err(StudyError::UnsupportedSchema {
                url: storage.url.clone(),
                found: format!(
                    "alembic {} / schema_version {}",
                    revision.as_deref().unwrap_or("(none)"),
                    version.map_or("(none)".into(), |v| v.to_string())
                ),
                expected: format!("alembic {ALEMBIC_REVISION} / schema_version {SCHEMA_VERSION}"),
            });
        }
        Ok(storage)
    }

    /// Turns heartbeats on (Optuna's `heartbeat_interval` / `grace_period`): a worker
    /// running a trial records a heartbeat every `interval`; a RUNNING trial whose last
    /// heartbeat is older than `grace_period` (default: twice the interval) is stale, and
    /// [`fail_stale_trials`](crate::storage::fail_stale_trials) marks it FAIL and calls
    /// `callback` (e.g. [`RetryFailedTrialCallback`](crate::storage::RetryFailedTrialCallback)).
    ///
    /// # Errors
    /// [`StudyError::InvalidArgument`] for a zero interval or grace period.
    pub fn with_heartbeat(
        mut self,
        interval: Duration,
        grace_period: Option<Duration>,
        callback: Option<StaleTrialCallback>,
    ) -> Result<Self> {
        self.heartbeat = Some(Heartbeat::new(interval, grace_period, callback)?);
        Ok(self)
    }

    /// The URL, its password shown as `***`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The connection, reconnected first if the server closed it (a restart, an idle
    /// timeout); a failed reconnection shows in the next call's error.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let (Conn::Postgres(client), Some(url)) = (&inner.conn, &inner.reconnect) {
            if client.is_closed() {
                match super::pg::connect(url) {
                    Ok(client) => {
                        log::info!("rdb: reconnected to {}", self.url);
                        inner.conn = Conn::Postgres(Box::new(client));
                    }
                    Err(e) => log::warn!("rdb: reconnecting to {} failed: {e}", self.url),
                }
            }
        }
        inner
    }

    fn tx<R>(&self, write: bool, mut body: impl FnMut(&mut Tx<'_>) -> TxResult<R>) -> Result<R> {
        let mut inner = self.lock();
        self.finish(inner.conn.transaction(write, &mut body))
    }

    fn tx_with_cache<R>(
        &self,
        write: bool,
        mut body: impl FnMut(&mut Tx<'_>, &mut HashMap<String, Distribution>) -> TxResult<R>,
    ) -> Result<R> {
        let mut inner = self.lock();
        let Inner {
            conn,
            distributions,
            ..
        } = &mut *inner;
        self.finish(conn.transaction(write, |tx| body(tx, distributions)))
    }

    fn finish<R>(&self, result: TxResult<R>) -> Result<R> {
        result.map_err(|e| match e {
            TxError::Study(e) => e,
            TxError::Db(e) => StudyError::Database {
                url: self.url.clone(),
                reason: e.to_string(),
            },
        })
    }
}

fn study_exists(tx: &mut Tx<'_>, study_id: u64, lock: bool) -> TxResult<i64> {
    let unknown = StudyError::UnknownStudyId { study_id };
    let Some(id) = db_id(study_id) else {
        return Err(unknown.into());
    };
    let sql = format!(
        "SELECT study_id FROM studies WHERE study_id = ?{}",
        if lock { tx.dialect().for_update() } else { "" }
    );
    if tx.query(&sql, &[id.into()])?.is_empty() {
        return Err(unknown.into());
    }
    Ok(id)
}

/// The trial's database id and state, locked for update when `lock`.
fn trial_state(tx: &mut Tx<'_>, trial_id: u64, lock: bool) -> TxResult<(i64, TrialState)> {
    let unknown = StudyError::UnknownTrial { trial_id };
    let Some(id) = db_id(trial_id) else {
        return Err(unknown.into());
    };
    let sql = format!(
        "SELECT state FROM trials WHERE trial_id = ?{}",
        if lock { tx.dialect().for_update() } else { "" }
    );
    let rows = tx.query(&sql, &[id.into()])?;
    let row = rows.first().ok_or(unknown)?;
    let state = col(row, 0)
        .text()
        .and_then(schema::parse_state)
        .ok_or_else(|| corrupt("trial state"))?;
    Ok((id, state))
}

fn updatable(tx: &mut Tx<'_>, trial_id: u64) -> TxResult<i64> {
    let (id, state) = trial_state(tx, trial_id, false)?;
    if state.is_finished() {
        return Err(StudyError::TrialFinished { trial_id, state }.into());
    }
    Ok(id)
}

fn upsert_attr(
    tx: &mut Tx<'_>,
    table: &str,
    owner: &str,
    id: i64,
    key: &str,
    value: &Value,
) -> TxResult<()> {
    tx.execute(
        &format!(
            "INSERT INTO {table} ({owner}, \"key\", value_json) VALUES (?, ?, ?) \
             ON CONFLICT ({owner}, \"key\") DO UPDATE SET value_json = excluded.value_json"
        ),
        &[id.into(), key.into(), attr_json(value).into()],
    )?;
    Ok(())
}

fn upsert_param(
    tx: &mut Tx<'_>,
    id: i64,
    name: &str,
    internal: f64,
    distribution: &Distribution,
) -> TxResult<()> {
    tx.execute(
        "INSERT INTO trial_params (trial_id, param_name, param_value, distribution_json) \
         VALUES (?, ?, ?, ?) ON CONFLICT (trial_id, param_name) DO UPDATE SET \
         param_value = excluded.param_value, distribution_json = excluded.distribution_json",
        &[
            id.into(),
            name.into(),
            SqlValue::Real(internal),
            distribution.to_json_string().into(),
        ],
    )?;
    Ok(())
}

fn upsert_value(tx: &mut Tx<'_>, id: i64, objective: usize, value: f64) -> TxResult<()> {
    let (stored, kind) = schema::value_to_stored(value);
    tx.execute(
        "INSERT INTO trial_values (trial_id, objective, value, value_type) VALUES (?, ?, ?, ?) \
         ON CONFLICT (trial_id, objective) DO UPDATE SET value = excluded.value, \
         value_type = excluded.value_type",
        &[id.into(), (objective as i64).into(), stored, kind.into()],
    )?;
    Ok(())
}

fn upsert_intermediate(tx: &mut Tx<'_>, id: i64, step: i64, value: f64) -> TxResult<()> {
    let (stored, kind) = schema::intermediate_to_stored(value);
    tx.execute(
        "INSERT INTO trial_intermediate_values (trial_id, step, intermediate_value, \
         intermediate_value_type) VALUES (?, ?, ?, ?) ON CONFLICT (trial_id, step) DO UPDATE \
         SET intermediate_value = excluded.intermediate_value, \
         intermediate_value_type = excluded.intermediate_value_type",
        &[id.into(), step.into(), stored, kind.into()],
    )?;
    Ok(())
}

fn distribution(cache: &mut HashMap<String, Distribution>, text: &str) -> TxResult<Distribution> {
    if let Some(d) = cache.get(text) {
        return Ok(d.clone());
    }
    let d = Distribution::from_json_str(text)?;
    cache.insert(text.to_owned(), d.clone());
    Ok(d)
}

/// Loads trials (`where` filters `trials`, with its parameters) and their children.
fn load_trials(
    tx: &mut Tx<'_>,
    cache: &mut HashMap<String, Distribution>,
    filter: &str,
    params: &[SqlValue],
) -> TxResult<Vec<FrozenTrial>> {
    let rows = tx.query(
        &format!(
            "SELECT trial_id, number, state, datetime_start, datetime_complete FROM trials \
             WHERE {filter} ORDER BY trial_id"
        ),
        params,
    )?;
    let mut trials = Vec::with_capacity(rows.len());
    let mut index = HashMap::with_capacity(rows.len());
    for row in &rows {
        let id = col(row, 0).int().ok_or_else(|| corrupt("trial_id"))?;
        let number = col(row, 1).int().ok_or_else(|| corrupt("trial number"))?;
        let state = col(row, 2)
            .text()
            .and_then(schema::parse_state)
            .ok_or_else(|| corrupt("trial state"))?;
        let mut trial = FrozenTrial::new(number as u64, sid(id), state);
        trial.datetime_start = col(row, 3).time().map(from_db_time);
        trial.datetime_complete = col(row, 4).time().map(from_db_time);
        index.insert(id, trials.len());
        trials.push(trial);
    }
    if trials.is_empty() {
        return Ok(trials);
    }
    let children = |columns: &str, table: &str, order: &str| {
        format!(
            "SELECT trial_id, {columns} FROM {table} WHERE trial_id IN \
             (SELECT trial_id FROM trials WHERE {filter}) ORDER BY {order}"
        )
    };
    let mut each = |tx: &mut Tx<'_>,
                    sql: String,
                    f: &mut dyn FnMut(&mut FrozenTrial, &Row) -> TxResult<()>|
     -> TxResult<()> {
        for row in tx.query(&sql, params)? {
            let id = col(&row, 0).int().ok_or_else(|| corrupt("trial_id"))?;
            if let Some(&i) = index.get(&id) {
                f(&mut trials[i], &row)?;
            }
        }
        Ok(())
    };
    each(
        tx,
        children(
            "param_name, param_value, distribution_json",
            "trial_params",
            "param_id",
        ),
        &mut |t, row| {
            let name = col(row, 1).text().ok_or_else(|| corrupt("param_name"))?;
            let internal = col(row, 2).real().ok_or_else(|| corrupt("param_value"))?;
            let text = col(row, 3)
                .text()
                .ok_or_else(|| corrupt("distribution_json"))?;
            let distribution = distribution(cache, text)?;
            t.params.insert(
                name.to_owned(),
                Param {
                    internal,
                    distribution,
                },
            );
            Ok(())
        },
    )?;
    each(
        tx,
        children(
            "objective, value, value_type",
            "trial_values",
            "trial_value_id",
        ),
        &mut |t, row| {
            let objective = col(row, 1).int().ok_or_else(|| corrupt("objective"))? as usize;
            let kind = col(row, 3).text().unwrap_or("FINITE");
            let value = schema::stored_to_value(col(row, 2), kind);
            let values = t.values.get_or_insert_with(Vec::new);
            if values.len() <= objective {
                values.resize(objective + 1, 0.0);
            }
            values[objective] = value;
            Ok(())
        },
    )?;
    each(
        tx,
        children(
            "step, intermediate_value, intermediate_value_type",
            "trial_intermediate_values",
            "trial_intermediate_value_id",
        ),
        &mut |t, row| {
            let step = col(row, 1).int().ok_or_else(|| corrupt("step"))?;
            let kind = col(row, 3).text().unwrap_or("FINITE");
            t.intermediate_values
                .insert(step, schema::stored_to_value(col(row, 2), kind));
            Ok(())
        },
    )?;
    for (table, system) in [
        ("trial_user_attributes", false),
        ("trial_system_attributes", true),
    ] {
        let order = format!("{table}_id").replace("attributes_id", "attribute_id");
        each(
            tx,
            children("\"key\", value_json", table, &order),
            &mut |t, row| {
                let key = col(row, 1).text().ok_or_else(|| corrupt("attribute key"))?;
                let value = parse_attr(col(row, 2).text().unwrap_or("null"));
                let attrs = if system {
                    &mut t.system_attrs
                } else {
                    &mut t.user_attrs
                };
                attrs.insert(key.to_owned(), value);
                Ok(())
            },
        )?;
    }
    Ok(trials)
}

fn study_attrs(tx: &mut Tx<'_>, study_id: u64, table: &str) -> TxResult<BTreeMap<String, Value>> {
    let id = study_exists(tx, study_id, false)?;
    Ok(tx
        .query(
            &format!("SELECT \"key\", value_json FROM {table} WHERE study_id = ?"),
            &[id.into()],
        )?
        .into_iter()
        .filter_map(|row| {
            let key = col(&row, 0).text()?.to_owned();
            Some((key, parse_attr(col(&row, 1).text().unwrap_or("null"))))
        })
        .collect())
}

impl Storage for RdbStorage {
    fn create_new_study(&self, directions: &[StudyDirection], name: &str) -> Result<u64> {
        let result = self.tx(true, |tx| {
            if !tx
                .query("SELECT study_id FROM studies WHERE study_name = ?", &[name.into()])?
                .is_empty()
            {
                return Err(StudyError::DuplicateStudy { name: name.into() }.into());
            }
            let id = tx.insert(
                "INSERT INTO studies (study_name) VALUES (?)",
                &[name.into()],
                "study_id",
            )?;
            for (objective, direction) in directions.iter().enumerate() {
                tx.execute(
                    "INSERT INTO study_directions (direction, study_id, objective) VALUES (?, ?, ?)",
                    &[
                        schema::direction_name(*direction).into(),
                        id.into(),
                        (objective as i64).into(),
                    ],
                )?;
            }
            Ok(sid(id))
        });
        match result {
            // Another worker created it between the check and the insert.
            Err(StudyError::Database { reason, .. })
                if reason.contains("ix_studies_study_name") || reason.contains("UNIQUE") =>
            {
                Err(StudyError::DuplicateStudy { name: name.into() })
            }
            other => other,
        }
    }

    fn delete_study(&self, study_id: u64) -> Result<()> {
        self.tx(true, |tx| {
            let id = study_exists(tx, study_id, true)?;
            let of_study = "trial_id IN (SELECT trial_id FROM trials WHERE study_id = ?)";
            for table in [
                "trial_params",
                "trial_values",
                "trial_intermediate_values",
                "trial_user_attributes",
                "trial_system_attributes",
                "trial_heartbeats",
            ] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE {of_study}"),
                    &[id.into()],
                )?;
            }
            for table in [
                "trials",
                "study_directions",
                "study_user_attributes",
                "study_system_attributes",
                "studies",
            ] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE study_id = ?"),
                    &[id.into()],
                )?;
            }
            Ok(())
        })
    }

    fn set_study_user_attr(&self, study_id: u64, key: &str, value: Value) -> Result<()> {
        self.tx(true, |tx| {
            let id = study_exists(tx, study_id, false)?;
            upsert_attr(tx, "study_user_attributes", "study_id", id, key, &value)
        })
    }

    fn set_study_system_attr(&self, study_id: u64, key: &str, value: Value) -> Result<()> {
        self.tx(true, |tx| {
            let id = study_exists(tx, study_id, false)?;
            upsert_attr(tx, "study_system_attributes", "study_id", id, key, &value)
        })
    }

    fn get_study_id_from_name(&self, name: &str) -> Result<u64> {
        self.tx(false, |tx| {
            let rows = tx.query(
                "SELECT study_id FROM studies WHERE study_name = ?",
                &[name.into()],
            )?;
            match rows.first().and_then(|r| col(r, 0).int()) {
                Some(id) => Ok(sid(id)),
                None => Err(StudyError::UnknownStudy { name: name.into() }.into()),
            }
        })
    }

    fn get_study_name_from_id(&self, study_id: u64) -> Result<String> {
        self.tx(false, |tx| {
            let id = db_id(study_id).ok_or(StudyError::UnknownStudyId { study_id })?;
            let rows = tx.query(
                "SELECT study_name FROM studies WHERE study_id = ?",
                &[id.into()],
            )?;
            rows.first()
                .and_then(|r| col(r, 0).text().map(str::to_owned))
                .ok_or_else(|| StudyError::UnknownStudyId { study_id }.into())
        })
    }

    fn get_study_directions(&self, study_id: u64) -> Result<Vec<StudyDirection>> {
        self.tx(false, |tx| {
            let id = study_exists(tx, study_id, false)?;
            tx.query(
                "SELECT direction FROM study_directions WHERE study_id = ? ORDER BY objective",
                &[id.into()],
            )?
            .iter()
            .map(|r| {
                col(r, 0)
                    .text()
                    .and_then(schema::parse_direction)
                    .ok_or_else(|| corrupt("study direction"))
            })
            .collect()
        })
    }

    fn get_study_user_attrs(&self, study_id: u64) -> Result<BTreeMap<String, Value>> {
        self.tx(false, |tx| {
            study_attrs(tx, study_id, "study_user_attributes")
        })
    }

    fn get_study_system_attrs(&self, study_id: u64) -> Result<BTreeMap<String, Value>> {
        self.tx(false, |tx| {
            study_attrs(tx, study_id, "study_system_attributes")
        })
    }

    fn get_all_studies(&self) -> Result<Vec<(u64, String)>> {
        self.tx(false, |tx| {
            Ok(tx
                .query(
                    "SELECT study_id, study_name FROM studies ORDER BY study_id",
                    &[],
                )?
                .into_iter()
                .filter_map(|r| Some((sid(col(&r, 0).int()?), col(&r, 1).text()?.to_owned())))
                .collect())
        })
    }

    fn create_new_trials(
        &self,
        study_id: u64,
        templates: &[Option<FrozenTrial>],
    ) -> Result<Vec<u64>> {
        self.tx(true, |tx| create_trials(tx, study_id, templates))
    }

    fn create_new_trials_beating(
        &self,
        study_id: u64,
        templates: &[Option<FrozenTrial>],
    ) -> Result<Vec<u64>> {
        if self.heartbeat.is_none() {
            return self.create_new_trials(study_id, templates);
        }
        self.tx(true, |tx| {
            let ids = create_trials(tx, study_id, templates)?;
            for (&id, template) in ids.iter().zip(templates) {
                if template
                    .as_ref()
                    .is_none_or(|t| t.state == TrialState::Running)
                {
                    beat(
                        tx,
                        db_id(id).ok_or(StudyError::UnknownTrial { trial_id: id })?,
                    )?;
                }
            }
            Ok(ids)
        })
    }

    fn set_trial_param(
        &self,
        trial_id: u64,
        name: &str,
        internal: f64,
        distribution: &Distribution,
    ) -> Result<()> {
        self.tx(true, |tx| {
            let id = updatable(tx, trial_id)?;
            // Optuna's `_check_and_set_param_distribution`: the name's distribution in the
            // study's other trials.
            let rows = tx.query(
                "SELECT p.distribution_json FROM trial_params p JOIN trials t \
                 ON p.trial_id = t.trial_id WHERE p.param_name = ? AND t.study_id = \
                 (SELECT study_id FROM trials WHERE trial_id = ?) LIMIT 1",
                &[name.into(), id.into()],
            )?;
            if let Some(text) = rows.first().and_then(|row| col(row, 0).text()) {
                let existing = Distribution::from_json_str(text)?;
                crate::distributions::check_compatible(name, &existing, distribution)?;
            }
            upsert_param(tx, id, name, internal, distribution)
        })
    }

    fn set_trial_state_values(
        &self,
        trial_id: u64,
        state: TrialState,
        values: Option<&[f64]>,
    ) -> Result<bool> {
        self.tx(true, |tx| {
            set_state_values(tx, trial_id, state, values).map(|set| set.is_some())
        })
    }

    fn start_waiting_trial_beating(&self, trial_id: u64) -> Result<bool> {
        let beating = self.heartbeat.is_some();
        self.tx(true, |tx| {
            let started = set_state_values(tx, trial_id, TrialState::Running, None)?;
            if let (Some(id), true) = (started, beating) {
                beat(tx, id)?;
            }
            Ok(started.is_some())
        })
    }

    fn set_trial_intermediate_value(&self, trial_id: u64, step: i64, value: f64) -> Result<()> {
        self.tx(true, |tx| {
            let id = updatable(tx, trial_id)?;
            upsert_intermediate(tx, id, step, value)
        })
    }

    fn set_trial_user_attr(&self, trial_id: u64, key: &str, value: Value) -> Result<()> {
        self.tx(true, |tx| {
            let id = updatable(tx, trial_id)?;
            upsert_attr(tx, "trial_user_attributes", "trial_id", id, key, &value)
        })
    }

    fn set_trial_system_attr(&self, trial_id: u64, key: &str, value: Value) -> Result<()> {
        self.tx(true, |tx| {
            let id = updatable(tx, trial_id)?;
            upsert_attr(tx, "trial_system_attributes", "trial_id", id, key, &value)
        })
    }

    fn get_trial(&self, trial_id: u64) -> Result<Arc<FrozenTrial>> {
        self.tx_with_cache(false, |tx, cache| {
            let id = db_id(trial_id).ok_or(StudyError::UnknownTrial { trial_id })?;
            load_trials(tx, cache, "trial_id = ?", &[id.into()])?
                .pop()
                .map(Arc::new)
                .ok_or_else(|| StudyError::UnknownTrial { trial_id }.into())
        })
    }

    fn get_all_trials(
        &self,
        study_id: u64,
        states: Option<&[TrialState]>,
    ) -> Result<Vec<Arc<FrozenTrial>>> {
        self.tx_with_cache(false, |tx, cache| {
            let id = study_exists(tx, study_id, false)?;
            let mut filter = "study_id = ?".to_string();
            let mut params = vec![SqlValue::Int(id)];
            if let Some(states) = states {
                if states.is_empty() {
                    return Ok(Vec::new());
                }
                let marks = vec!["?"; states.len()].join(", ");
                filter.push_str(&format!(" AND state IN ({marks})"));
                params.extend(states.iter().map(|s| schema::state_name(*s).into()));
            }
            Ok(load_trials(tx, cache, &filter, &params)?
                .into_iter()
                .map(Arc::new)
                .collect())
        })
    }

    fn heartbeat(&self) -> Option<&Heartbeat> {
        self.heartbeat.as_ref()
    }

    fn record_heartbeat(&self, trial_id: u64) -> Result<()> {
        self.tx(true, |tx| {
            let id = db_id(trial_id).ok_or(StudyError::UnknownTrial { trial_id })?;
            beat(tx, id)
        })
    }

    fn stale_trial_ids(&self, study_id: u64) -> Result<Vec<u64>> {
        let Some(heartbeat) = &self.heartbeat else {
            return Ok(Vec::new());
        };
        let grace =
            chrono::TimeDelta::from_std(heartbeat.grace_period()).unwrap_or(chrono::TimeDelta::MAX);
        self.tx(false, |tx| {
            let id = study_exists(tx, study_id, false)?;
            let now_sql = format!("SELECT {}", tx.dialect().now());
            let now = tx
                .query(&now_sql, &[])?
                .first()
                .and_then(|r| col(r, 0).time())
                .ok_or_else(|| corrupt("current time"))?;
            let rows = tx.query(
                "SELECT t.trial_id, h.heartbeat FROM trials t JOIN trial_heartbeats h \
                 ON h.trial_id = t.trial_id WHERE t.study_id = ? AND t.state = ? \
                 ORDER BY t.trial_id",
                &[id.into(), schema::state_name(TrialState::Running).into()],
            )?;
            Ok(rows
                .iter()
                .filter_map(|r| {
                    let beat = col(r, 1).time()?;
                    if now - beat > grace {
                        col(r, 0).int().map(sid)
                    } else {
                        None
                    }
                })
                .collect())
        })
    }
}

/// Creates trials in an open transaction (see [`Storage::create_new_trials`]).
fn create_trials(
    tx: &mut Tx<'_>,
    study_id: u64,
    templates: &[Option<FrozenTrial>],
) -> TxResult<Vec<u64>> {
    // Optuna: "This lock is necessary because the trial creation is not an atomic
    // operation and the calculation of trial.number is prone to race conditions."
    let study = study_exists(tx, study_id, true)?;
    let mut ids = Vec::with_capacity(templates.len());
    for template in templates {
        let (state, start, complete) = match template {
            None => (TrialState::Running, Some(now_utc()), None),
            Some(t) => (
                t.state,
                t.datetime_start.map(to_db_time),
                t.datetime_complete.map(to_db_time),
            ),
        };
        let id = tx.insert(
            "INSERT INTO trials (number, study_id, state, datetime_start, \
                 datetime_complete) VALUES (NULL, ?, ?, ?, ?)",
            &[
                study.into(),
                schema::state_name(state).into(),
                start.into(),
                complete.into(),
            ],
            "trial_id",
        )?;
        if let Some(t) = template {
            if let Some(values) = &t.values {
                for (objective, value) in values.iter().enumerate() {
                    upsert_value(tx, id, objective, *value)?;
                }
            }
            for (name, param) in &t.params {
                upsert_param(tx, id, name, param.internal, &param.distribution)?;
            }
            for (key, value) in &t.user_attrs {
                upsert_attr(tx, "trial_user_attributes", "trial_id", id, key, value)?;
            }
            for (key, value) in &t.system_attrs {
                upsert_attr(tx, "trial_system_attributes", "trial_id", id, key, value)?;
            }
            for (step, value) in &t.intermediate_values {
                upsert_intermediate(tx, id, *step, *value)?;
            }
        }
        // `TrialModel.count_past_trials`.
        let number = tx
            .query(
                "SELECT COUNT(*) FROM trials WHERE study_id = ? AND trial_id < ?",
                &[study.into(), id.into()],
            )?
            .first()
            .and_then(|r| col(r, 0).int())
            .ok_or_else(|| corrupt("trial count"))?;
        tx.execute(
            "UPDATE trials SET number = ? WHERE trial_id = ?",
            &[number.into(), id.into()],
        )?;
        ids.push(sid(id));
    }
    Ok(ids)
}

/// Records a heartbeat of trial `id` (a database id) in an open transaction.
fn beat(tx: &mut Tx<'_>, id: i64) -> TxResult<()> {
    let now = tx.dialect().now();
    let updated = tx.execute(
        &format!("UPDATE trial_heartbeats SET heartbeat = {now} WHERE trial_id = ?"),
        &[id.into()],
    )?;
    if updated == 0 {
        tx.execute(
            &format!("INSERT INTO trial_heartbeats (trial_id, heartbeat) VALUES (?, {now})"),
            &[id.into()],
        )?;
    }
    Ok(())
}

/// Sets a trial's state and values in an open transaction (see
/// [`Storage::set_trial_state_values`]); the trial's database id when it was set, `None`
/// when RUNNING was asked for a trial that is not WAITING.
fn set_state_values(
    tx: &mut Tx<'_>,
    trial_id: u64,
    state: TrialState,
    values: Option<&[f64]>,
) -> TxResult<Option<i64>> {
    let (id, current) = trial_state(tx, trial_id, true)?;
    if current.is_finished() {
        return Err(StudyError::TrialFinished {
            trial_id,
            state: current,
        }
        .into());
    }
    if state == TrialState::Running && current != TrialState::Waiting {
        return Ok(None);
    }
    if let Some(values) = values {
        for (objective, value) in values.iter().enumerate() {
            upsert_value(tx, id, objective, *value)?;
        }
    }
    tx.execute(
        "UPDATE trials SET state = ? WHERE trial_id = ?",
        &[schema::state_name(state).into(), id.into()],
    )?;
    if state == TrialState::Running {
        tx.execute(
            "UPDATE trials SET datetime_start = ? WHERE trial_id = ?",
            &[SqlValue::Time(now_utc()), id.into()],
        )?;
    }
    if state.is_finished() {
        tx.execute(
            "UPDATE trials SET datetime_complete = ? WHERE trial_id = ?",
            &[SqlValue::Time(now_utc()), id.into()],
        )?;
    }
    Ok(Some(id))
}
