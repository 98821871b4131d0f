//! `sqlite:///...` and `postgresql://...` storages (saturate-study's `RdbStorage`, Optuna's
//! schema): the commands, Optuna's CLI on the same database, `storage upgrade`, credentials.
//!
//! PostgreSQL comes from `SATURATE_TEST_POSTGRES_URL` (scripts/test.sh starts a throwaway
//! server with scripts/setup-postgres.sh and sets it). Without it the PostgreSQL test fails
//! in CI and is skipped, saying so, elsewhere.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::interop::optuna;
use crate::support::{fails, json, ok, optuna_venv, run, tempdir};

const SPACE: &str = r#"{"x": {"name": "FloatDistribution", "attributes": {"low": -1.0, "high": 1.0, "log": false, "step": null}}, "k": {"name": "IntDistribution", "attributes": {"low": 0, "high": 9, "log": false, "step": 1}}}"#;

/// create-study, ask/tell (saturate and, when `venv`, Optuna taking turns), set-user-attr;
/// then every listing printed by both must be the same bytes.
fn round_trip(storage: &Path, study: &str, venv: Option<&Path>) {
    ok(
        storage,
        &[
            "create-study",
            "--study-name",
            study,
            "--direction",
            "maximize",
        ],
    );
    for number in 0..4 {
        let by_python = venv.is_some() && number % 2 == 1;
        let asked = if by_python {
            optuna(
                venv.unwrap(),
                storage,
                &["ask", "--study-name", study, "--search-space", SPACE],
            )
        } else {
            ok(
                storage,
                &["ask", "--study-name", study, "--search-space", SPACE],
            )
        };
        let asked = json(&asked);
        assert_eq!(asked["number"], number);
        let x = asked["params"]["x"].as_f64().unwrap();
        let n = number.to_string();
        let value = (1.0 - x * x).to_string();
        let tell = [
            "tell",
            "--study-name",
            study,
            "--trial-number",
            &n,
            "--values",
            &value,
        ];
        match venv {
            // Told by the other side.
            Some(venv) if !by_python => {
                optuna(venv, storage, &tell);
            }
            _ => {
                ok(storage, &tell);
            }
        }
    }
    ok(
        storage,
        &[
            "study",
            "set-user-attr",
            "--study-name",
            study,
            "-k",
            "k",
            "--value",
            "v",
        ],
    );
    let trials = json(&ok(
        storage,
        &["trials", "--study-name", study, "-f", "json"],
    ));
    assert_eq!(trials.as_array().unwrap().len(), 4);
    for t in trials.as_array().unwrap() {
        assert_eq!(t["state"], "COMPLETE");
        let x = t["params"]["x"].as_f64().unwrap();
        assert_eq!(t["value"], json!(1.0 - x * x));
    }
    let Some(venv) = venv else { return };
    for args in [
        &["trials", "--study-name", study, "-f", "json"][..],
        &["trials", "--study-name", study, "-f", "table", "--flatten"],
        &["best-trial", "--study-name", study, "-f", "yaml"],
        &["best-trials", "--study-name", study, "-f", "json"],
    ] {
        assert_eq!(
            ok(storage, args),
            optuna(venv, storage, args),
            "saturate vs optuna {args:?}"
        );
    }
}

#[test]
fn sqlite_studies_round_trip_with_optuna() {
    let venv = optuna_venv(&["python", "optuna"]);
    let dir = tempdir();
    let db = dir.path().join("studies.db");
    let url = format!("sqlite:///{}", db.display());
    let storage = Path::new(&url);
    let stderr = fails(storage, &["studies"], 3);
    assert!(
        stderr.contains("no SQLite database") && stderr.contains("create-study"),
        "{stderr}"
    );
    assert!(!db.exists(), "reading commands do not create the database");

    round_trip(storage, "sq", venv.as_deref());
    let studies = json(&ok(storage, &["studies", "-f", "json"]));
    assert_eq!(studies[0]["name"], "sq");
    assert_eq!(studies[0]["n_trials"], 4);
    assert_eq!(studies[0]["user_attrs"], json!({"k": "v"}));
    let csv = ok(storage, &["export", "--study-name", "sq"]);
    assert_eq!(csv.lines().count(), 5);

    let report = ok(storage, &["storage", "upgrade"]);
    assert!(
        report.contains("schema version 12 (alembic v3.2.0.a)") && report.contains("up to date"),
        "{report}"
    );
    if let Some(venv) = &venv {
        let out = Command::new(venv.join("bin/optuna"))
            .args(["--storage", &url, "storage", "upgrade"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("This storage is up-to-date."),
            "Optuna agrees: {stderr}"
        );
    }
    ok(storage, &["delete-study", "--study-name", "sq"]);
    assert_eq!(ok(storage, &["study-names"]), "\n");
}

#[test]
fn postgresql_studies_round_trip_with_optuna_and_hide_the_password() {
    let Some(url) = postgres_url() else {
        return;
    };
    let venv = optuna_venv(&["python", "optuna"]);
    // SQLAlchemy 2.1 reads plain `postgresql://` as psycopg 3; the venv has psycopg2
    // (scripts/setup-postgres.sh). saturate takes the driver-qualified form too.
    let url = url.replacen("postgresql://", "postgresql+psycopg2://", 1);
    let storage = Path::new(&url);
    // The database is shared with other tests: a name of our own.
    let study = format!("cli-{}-{}", std::process::id(), rand_suffix());
    round_trip(storage, &study, venv.as_deref());

    let password = url
        .split_once("://")
        .and_then(|(_, rest)| rest.split_once('@'))
        .and_then(|(user, _)| user.split_once(':'))
        .map(|(_, password)| password.to_owned())
        .expect("the test server's URL has a password");
    let mut seen = String::new();
    for args in [
        &["trials", "--study-name", "absent-study"][..],
        &["storage", "upgrade"],
        &["best-trial", "--study-name", &study, "-f", "json"],
    ] {
        let out = run(storage, args);
        seen.push_str(&String::from_utf8_lossy(&out.stdout));
        seen.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let wrong = url.replacen(&format!(":{password}@"), ":wrong-password@", 1);
    let out = run(Path::new(&wrong), &["studies"]);
    assert_eq!(out.status.code(), Some(3));
    seen.push_str(&String::from_utf8_lossy(&out.stderr));
    assert!(
        seen.contains(":***@"),
        "messages name the URL, redacted: {seen}"
    );
    assert!(
        !seen.contains(&password) && !seen.contains("wrong-password"),
        "{seen}"
    );
}

/// A new, empty database on the test server named `{prefix}_{pid}` (dropped first if a
/// killed run left it): a client connected to the server (to drop it when done), its name
/// and its URL.
pub fn fresh_database(server: &str, prefix: &str) -> (postgres::Client, String, String) {
    let name = format!("{prefix}_{}", std::process::id());
    let mut client = postgres::Client::connect(server, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .unwrap();
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let url = format!("{}/{name}", &server[..server.rfind('/').unwrap()]);
    (client, name, url)
}

/// The test server's URL; `None` (outside CI only, saying so) when there is none.
pub fn postgres_url() -> Option<String> {
    match std::env::var("SATURATE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => panic!(
            "SATURATE_TEST_POSTGRES_URL is not set: scripts/test.sh starts a PostgreSQL with \
             scripts/setup-postgres.sh and sets it"
        ),
        _ => {
            eprintln!(
                "note: SATURATE_TEST_POSTGRES_URL is not set: a PostgreSQL CLI test is skipped"
            );
            None
        }
    }
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64
}

/// Reading commands on a database without Optuna's tables (an empty SQLite file; a
/// PostgreSQL database whose tables were dropped after use) fail with exit code 3 and say
/// what to do, and create nothing there; `create-study` still creates the tables.
#[test]
fn reading_commands_never_create_tables_in_an_emptied_database() {
    let reads: [&[&str]; 5] = [
        &["studies"],
        &["study-names"],
        &["trials", "--study-name", "s"],
        &["export", "--study-name", "s"],
        &["storage", "upgrade"],
    ];
    let check = |storage: &Path| {
        for args in reads {
            let stderr = fails(storage, args, 3);
            assert!(
                stderr.contains("holds no Optuna study storage")
                    && stderr.contains("missing tables: studies")
                    && stderr.contains("create-study"),
                "{args:?}: {stderr}"
            );
        }
    };

    // SQLite: an empty file is an empty database.
    let dir = tempdir();
    let db = dir.path().join("empty.db");
    std::fs::write(&db, b"").unwrap();
    let url = format!("sqlite:///{}", db.display());
    check(Path::new(&url));
    assert_eq!(
        std::fs::metadata(&db).unwrap().len(),
        0,
        "no table was created in the file"
    );
    ok(Path::new(&url), &["create-study", "--study-name", "s"]);
    assert_eq!(ok(Path::new(&url), &["study-names"]), "s\n");

    // PostgreSQL: a database of its own, used, then its tables dropped.
    let Some(server) = postgres_url() else {
        return;
    };
    let (mut client, name, url) = fresh_database(&server, "cli_dropped");
    let storage = Path::new(&url);
    ok(storage, &["create-study", "--study-name", "s"]);
    assert_eq!(ok(storage, &["study-names"]), "s\n");
    let tables = |url: &str| -> i64 {
        let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
        db.query_one(
            "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()",
            &[],
        )
        .unwrap()
        .get(0)
    };
    assert!(tables(&url) > 0);
    {
        let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        db.batch_execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
            .unwrap();
    }
    assert_eq!(tables(&url), 0);
    check(storage);
    assert_eq!(tables(&url), 0, "no table was created by a reading command");
    client
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .unwrap();
}
