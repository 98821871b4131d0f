//! optuna-dashboard (0.21, from scripts/setup-python.sh) over saturate-written journals:
//! through its HTTP API every study lists and opens, with the trial counts and best trials
//! `saturate` reports.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{json, ok, optuna_venv, tempdir, write_journal, write_studies};

/// The dashboard process, stopped when dropped (also when an assertion fails).
struct Dashboard(Child);

impl Drop for Dashboard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET path` over HTTP/1.0 (the server closes the connection after the body): status, body.
fn get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port))?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let response = String::from_utf8(response).expect("UTF-8 response");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {head:?}"));
    Ok((status, body.to_string()))
}

fn start(venv: &Path, storage: &Path) -> (Dashboard, u16) {
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(venv.join("bin/optuna-dashboard"))
        .arg(storage)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--server",
            "wsgiref",
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut dashboard = Dashboard(child);
    let deadline = Instant::now() + Duration::from_secs(45);
    loop {
        if let Ok((200, _)) = get(port, "/api/meta") {
            return (dashboard, port);
        }
        if let Some(status) = dashboard.0.try_wait().unwrap() {
            let mut stderr = String::new();
            dashboard
                .0
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            panic!("optuna-dashboard exited ({status}):\n{stderr}");
        }
        assert!(
            Instant::now() < deadline,
            "optuna-dashboard did not answer on port {port} within 45 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn dashboard_lists_and_opens_every_saturate_study_in_a_journal() {
    let Some(venv) = optuna_venv(&["optuna-dashboard"]) else {
        return;
    };
    let dir = tempdir();
    let journal = dir.path().join("studies.log");
    let expected = write_journal(&journal);
    check(&venv, &journal, &expected);
}

#[test]
fn dashboard_lists_and_opens_every_saturate_study_in_sqlite() {
    let Some(venv) = optuna_venv(&["optuna-dashboard"]) else {
        return;
    };
    let dir = tempdir();
    let url = format!("sqlite:///{}", dir.path().join("studies.db").display());
    let storage = saturate_study::storage::RdbStorage::open(&url).unwrap();
    let expected = write_studies(std::sync::Arc::new(storage));
    check(&venv, Path::new(&url), &expected);
}

#[test]
fn dashboard_lists_and_opens_every_saturate_study_in_postgresql() {
    let Some(server) = crate::rdb::postgres_url() else {
        return;
    };
    let Some(venv) = optuna_venv(&["optuna-dashboard"]) else {
        return;
    };
    // A database of its own: the dashboard lists every study in it.
    let (mut client, name, url) = crate::rdb::fresh_database(&server, "cli_dashboard");
    // psycopg2 for SQLAlchemy (see rdb.rs); saturate takes the same URL.
    let url = url.replacen("postgresql://", "postgresql+psycopg2://", 1);
    let storage = saturate_study::storage::RdbStorage::open(&url).unwrap();
    let expected = write_studies(std::sync::Arc::new(storage));
    check(&venv, Path::new(&url), &expected);
    client
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .unwrap();
}

/// Starts the dashboard over `storage` (a journal path or a URL) and checks every study
/// against `saturate`'s output.
fn check(venv: &Path, storage: &Path, expected: &[(&str, usize)]) {
    let j = storage;
    let (_dashboard, port) = start(venv, j);

    let (status, body) = get(port, "/api/studies").unwrap();
    assert_eq!(status, 200, "{body}");
    let listed = json(&body)["study_summaries"].as_array().unwrap().clone();
    let names: Vec<&str> = listed
        .iter()
        .map(|s| s["study_name"].as_str().unwrap())
        .collect();
    let saturate_names: Vec<String> = json(&ok(j, &["study-names", "-f", "json"]))
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, saturate_names);
    assert_eq!(names, expected.iter().map(|(n, _)| *n).collect::<Vec<_>>());

    let studies = json(&ok(j, &["studies", "-f", "json"]));
    for (summary, (name, n_trials)) in listed.iter().zip(expected) {
        let id = summary["study_id"].as_u64().unwrap();
        let (status, body) = get(port, &format!("/api/studies/{id}")).unwrap();
        assert_eq!(status, 200, "study {name}: {body}");
        let detail = json(&body);
        assert_eq!(detail["name"], *name);
        let reported = studies
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == *name)
            .unwrap();
        let trials = detail["trials"].as_array().unwrap();
        assert_eq!(trials.len(), *n_trials);
        assert_eq!(reported["n_trials"], *n_trials as u64);
        let directions: Vec<String> = reported["direction"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().to_lowercase())
            .collect();
        assert_eq!(detail["directions"], serde_json::json!(directions));

        // Best trials: numbers and values as `saturate best-trials` prints them.
        let best = json(&ok(
            j,
            &[
                "best-trials",
                "--study-name",
                name,
                "-f",
                "json",
                "--flatten",
            ],
        ));
        let best = best.as_array().unwrap();
        let dashboard_best = detail["best_trials"].as_array().unwrap();
        let numbers = |ts: &[Value]| -> Vec<u64> {
            ts.iter().map(|t| t["number"].as_u64().unwrap()).collect()
        };
        let mut dashboard_numbers = numbers(dashboard_best);
        dashboard_numbers.sort();
        assert_eq!(dashboard_numbers, numbers(best), "best trials of {name}");
        for t in dashboard_best {
            let mine = best.iter().find(|b| b["number"] == t["number"]).unwrap();
            let values = t["values"].as_array().unwrap();
            if values.len() == 1 {
                assert_eq!(values[0], mine["value"]);
            } else {
                for (i, v) in values.iter().enumerate() {
                    assert_eq!(*v, mine[format!("values_{i}")]);
                }
            }
        }
        // States as saturate prints them (the dashboard capitalises Optuna's names).
        let mine = json(&ok(j, &["trials", "--study-name", name, "-f", "json"]));
        for (theirs, mine) in trials.iter().zip(mine.as_array().unwrap()) {
            assert_eq!(theirs["number"], mine["number"]);
            assert_eq!(
                theirs["state"].as_str().unwrap().to_uppercase(),
                mine["state"].as_str().unwrap()
            );
        }
    }
    // The single study's pruned and failed trials are there.
    let (_, body) = get(port, &format!("/api/studies/{}", listed[0]["study_id"])).unwrap();
    let states: Vec<String> = json(&body)["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["state"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        states,
        ["Complete", "Complete", "Pruned", "Complete", "Fail", "Complete"]
    );
}
