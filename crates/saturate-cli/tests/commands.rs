//! Each Optuna command, each output format, errors and exit codes.

use serde_json::{json, Value};

use crate::support::{assert_key_order, fails, json, ok, run, tempdir, write_journal};

#[test]
fn create_list_set_attr_and_delete_studies() {
    let dir = tempdir();
    let journal = dir.path().join("j.log");
    let j = journal.as_path();
    assert_eq!(ok(j, &["create-study", "--study-name", "a"]), "a\n");
    assert_eq!(
        ok(
            j,
            &[
                "create-study",
                "--study-name",
                "b",
                "--directions",
                "minimize",
                "maximize"
            ]
        ),
        "b\n"
    );
    let stderr = fails(j, &["create-study", "--study-name", "a"], 1);
    assert!(
        stderr.contains("already exists") && stderr.contains("--skip-if-exists"),
        "{stderr}"
    );
    assert_eq!(
        ok(
            j,
            &["create-study", "--study-name", "a", "--skip-if-exists"]
        ),
        "a\n"
    );
    // A study without a name gets Optuna's generated one.
    let generated = ok(j, &["create-study", "--direction", "maximize"]);
    assert!(generated.starts_with("no-name-"), "{generated}");

    ok(
        j,
        &[
            "study",
            "set-user-attr",
            "--study-name",
            "a",
            "-k",
            "owner",
            "--value",
            "me",
        ],
    );
    let studies = json(&ok(j, &["studies", "-f", "json"]));
    assert_eq!(studies.as_array().unwrap().len(), 3);
    assert_eq!(
        studies[0],
        json!({"name": "a", "direction": ["MINIMIZE"], "n_trials": 0, "datetime_start": null,
               "user_attrs": {"owner": "me"}})
    );
    assert_eq!(studies[1]["direction"], json!(["MINIMIZE", "MAXIMIZE"]));
    assert_eq!(studies[1]["user_attrs"], json!({}));
    assert_eq!(studies[2]["direction"], json!(["MAXIMIZE"]));

    let flat = json(&ok(j, &["studies", "-f", "json", "--flatten"]));
    assert_eq!(flat[1]["direction_0"], "MINIMIZE");
    assert_eq!(flat[1]["direction_1"], "MAXIMIZE");
    assert!(flat[0].get("direction_1").is_none());

    let table = ok(j, &["studies"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 7, "{table}");
    assert!(
        lines[1].starts_with("| name ") && lines[1].contains("| user_attrs "),
        "{table}"
    );
    assert!(lines[3].contains("| ('MINIMIZE',) "), "{table}");
    assert!(lines[4].contains("('MINIMIZE', 'MAXIMIZE')"), "{table}");
    assert!(
        lines[3].contains("|        0 |"),
        "n_trials is right-aligned: {table}"
    );

    let yaml = ok(j, &["studies", "-f", "yaml"]);
    assert!(yaml.starts_with("- datetime_start: null\n  direction:\n  - MINIMIZE\n  n_trials: 0\n  name: a\n  user_attrs:\n    owner: me\n"), "{yaml}");

    let names = ok(j, &["study-names"]);
    assert_eq!(names.lines().take(2).collect::<Vec<_>>(), ["a", "b"]);

    ok(j, &["delete-study", "--study-name", "b"]);
    let names = json(&ok(j, &["study-names", "-f", "json"]));
    assert!(
        !names.as_array().unwrap().iter().any(|n| n["name"] == "b"),
        "{names}"
    );
    let stderr = fails(j, &["delete-study", "--study-name", "b"], 4);
    assert!(
        stderr.contains("no study named `b`") && stderr.contains("studies"),
        "{stderr}"
    );
}

#[test]
fn trials_and_best_trials_in_every_format() {
    let dir = tempdir();
    let journal = dir.path().join("j.log");
    write_journal(&journal);
    let j = journal.as_path();

    let text = ok(j, &["trials", "--study-name", "single", "-f", "json"]);
    let first = &text[..text.find("}, {").unwrap()];
    assert_key_order(
        first,
        &[
            "number",
            "value",
            "datetime_start",
            "datetime_complete",
            "duration",
            "params",
            "act",
            "n",
            "x",
            "user_attrs",
            "state",
        ],
    );
    let trials = json(&text);
    let trials = trials.as_array().unwrap();
    assert_eq!(trials.len(), 6);
    let states: Vec<&str> = trials
        .iter()
        .map(|t| t["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["COMPLETE", "COMPLETE", "PRUNED", "COMPLETE", "FAIL", "COMPLETE"]
    );
    for t in trials {
        let params = t["params"].as_object().unwrap();
        assert_eq!(params.len(), 3);
        let x = params["x"].as_f64().unwrap();
        assert!((-2.0..=2.0).contains(&x));
        assert!(params["n"].is_i64());
        assert_eq!(t["user_attrs"]["tag"], format!("t{}", t["number"]));
        let duration = t["duration"].as_str().unwrap();
        assert!(duration.starts_with("0:00:0"), "{duration}");
    }
    // The pruned trial's value is its last report (Optuna's rule); a failed trial has none.
    assert_eq!(trials[2]["value"], json!(4.5));
    assert_eq!(trials[4]["value"], Value::Null);

    // The best trial is the complete one with the lowest value.
    let best_number = trials
        .iter()
        .filter(|t| t["state"] == "COMPLETE")
        .min_by(|a, b| {
            a["value"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["value"].as_f64().unwrap())
        })
        .unwrap()["number"]
        .clone();
    let best = json(&ok(
        j,
        &["best-trial", "--study-name", "single", "-f", "json"],
    ));
    assert!(best.is_object(), "best-trial prints one record: {best}");
    assert_eq!(best["number"], best_number);
    let flat = json(&ok(
        j,
        &[
            "best-trial",
            "--study-name",
            "single",
            "-f",
            "json",
            "--flatten",
        ],
    ));
    assert_eq!(flat["params_x"], best["params"]["x"]);
    assert_eq!(flat["user_attrs_tag"], best["user_attrs"]["tag"]);

    let table = ok(j, &["best-trial", "--study-name", "single"]);
    assert_eq!(table.lines().count(), 5, "{table}");
    let yaml = ok(j, &["best-trial", "--study-name", "single", "-f", "yaml"]);
    assert!(
        yaml.contains(&format!("\nnumber: {best_number}\n")),
        "{yaml}"
    );
    assert!(yaml.contains("\nparams:\n  act: "), "{yaml}");

    // Multi-objective: `values` columns; best-trial refuses, best-trials gives the front.
    let multi = json(&ok(
        j,
        &["trials", "--study-name", "multi", "-f", "json", "--flatten"],
    ));
    for t in multi.as_array().unwrap() {
        let a = t["params_a"].as_f64().unwrap();
        assert_eq!(t["values_0"].as_f64().unwrap(), a);
        assert_eq!(t["values_1"].as_f64().unwrap(), a * a + 0.25);
    }
    let stderr = fails(j, &["best-trial", "--study-name", "multi"], 1);
    assert!(stderr.contains("single-objective"), "{stderr}");
    // Minimise a, maximise a² + 1/4: both rise with a, so every trial is on the front.
    let front = json(&ok(
        j,
        &["best-trials", "--study-name", "multi", "-f", "json"],
    ));
    assert_eq!(front.as_array().unwrap().len(), 5);
    assert_eq!(front[0]["values"].as_array().unwrap().len(), 2);
    let table = ok(j, &["best-trials", "--study-name", "multi"]);
    assert!(
        table.lines().nth(1).unwrap().contains("| values "),
        "{table}"
    );

    // Unicode names go through every format.
    let name = "ニューラル網 🙂";
    let studies = ok(j, &["studies", "-f", "json"]);
    assert!(
        studies.contains(r#""\u30cb\u30e5\u30fc\u30e9\u30eb\u7db2 \ud83d\ude42""#),
        "{studies}"
    );
    assert_eq!(json(&studies)[2]["name"], name);
    let unicode = json(&ok(j, &["best-trials", "--study-name", name, "-f", "json"]));
    assert_eq!(unicode.as_array().unwrap().len(), 1);
    assert!(ok(j, &["study-names"]).contains(name));

    let value = ok(j, &["trials", "--study-name", "single", "-f", "value"]);
    assert_eq!(value.lines().count(), 6);
    assert!(value.lines().nth(4).unwrap().contains(" FAIL"), "{value}");
}

#[test]
fn watch_once_prints_the_study_and_its_latest_trials() {
    let dir = tempdir();
    let journal = dir.path().join("j.log");
    write_journal(&journal);
    let j = journal.as_path();
    let best = json(&ok(
        j,
        &["best-trial", "--study-name", "single", "-f", "json"],
    ));
    // An interval no sleep can last is a usage error, not a panic.
    for interval in ["1e30", "0", "-1", "nan"] {
        let stderr = crate::support::fails(
            j,
            &[
                "watch",
                "--study-name",
                "single",
                &format!("--interval={interval}"),
            ],
            2,
        );
        assert!(stderr.contains("--interval"), "{stderr}");
    }
    let screen = ok(
        j,
        &["watch", "--study-name", "single", "--once", "--tail", "3"],
    );
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(
        lines[0],
        "study single (MINIMIZE): 6 trials: 4 complete, 1 pruned, 1 fail"
    );
    assert_eq!(
        lines[1],
        format!("best: trial {} value {}", best["number"], best["value"])
    );
    assert!(
        lines[3].contains("| number |") && lines[3].contains("params_x"),
        "{screen}"
    );
    let rows: Vec<&&str> = lines.iter().filter(|l| l.starts_with("|      ")).collect();
    assert_eq!(rows.len(), 3, "--tail 3: {screen}");
    assert!(
        rows[0].contains("|      3 |") && rows[2].contains("|      5 |"),
        "{screen}"
    );
    assert!(
        screen.ends_with("(latest 3 of 6 trials; --tail 0 shows all)\n"),
        "{screen}"
    );
    assert!(!screen.contains('\x1b'), "--once does not clear the screen");

    let screen = ok(j, &["watch", "--study-name", "multi", "--once"]);
    assert!(
        screen.contains("Pareto front: trials 0, 1, 2, 3, 4"),
        "{screen}"
    );
}

#[test]
fn errors_say_what_to_do_and_set_the_exit_code() {
    let dir = tempdir();
    let missing = dir.path().join("nope.log");
    let stderr = fails(&missing, &["studies"], 3);
    assert!(
        stderr.contains("no journal file") && stderr.contains("create-study"),
        "{stderr}"
    );
    assert!(
        !missing.exists(),
        "reading commands do not create the journal"
    );

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_saturate"))
        .arg("studies")
        .env_remove("OPTUNA_STORAGE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--storage"));

    // OPTUNA_STORAGE stands in for --storage, as in Optuna.
    let journal = dir.path().join("env.log");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_saturate"))
        .args(["create-study", "--study-name", "from-env"])
        .env("OPTUNA_STORAGE", &journal)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(ok(&journal, &["study-names"]).contains("from-env"));

    let stderr = fails(std::path::Path::new("redis://u:pw@h/0"), &["studies"], 2);
    assert!(
        stderr.contains("Redis") && !stderr.contains("pw@"),
        "{stderr}"
    );
    let stderr = fails(&journal, &["trials", "--study-name", "absent"], 4);
    assert!(stderr.contains("no study named `absent`"), "{stderr}");
    let stderr = fails(&journal, &["best-trial", "--study-name", "from-env"], 1);
    assert!(stderr.contains("no completed trial"), "{stderr}");

    // Clap's own usage errors exit with 2 too.
    assert_eq!(run(&journal, &["trials"]).status.code(), Some(2));
    assert_eq!(
        run(&journal, &["studies", "-f", "xml"]).status.code(),
        Some(2)
    );
}

#[test]
fn credentials_in_a_database_url_are_never_printed() {
    let url = std::path::Path::new("postgresql://alice:s3cr3t-pw@127.0.0.1:1/optuna");
    for args in [
        &["studies"][..],
        &["storage", "upgrade"],
        &["create-study", "--study-name", "x"],
    ] {
        let out = run(url, args);
        assert_eq!(
            out.status.code(),
            Some(3),
            "no server there: the storage cannot be opened"
        );
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!text.contains("s3cr3t-pw"), "{args:?}: {text}");
        assert!(
            text.contains("alice"),
            "the message names the URL, redacted: {text}"
        );
    }
}

#[test]
fn storage_upgrade_reports_a_journal_has_no_schema() {
    let dir = tempdir();
    let journal = dir.path().join("j.log");
    ok(&journal, &["create-study", "--study-name", "a"]);
    let text = ok(&journal, &["storage", "upgrade"]);
    assert!(
        text.contains("journal file") && text.contains("nothing to upgrade"),
        "{text}"
    );
}

#[test]
fn watch_refreshes_as_a_running_study_grows() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    let dir = tempdir();
    let journal = dir.path().join("j.log");
    let j = journal.as_path();
    ok(j, &["create-study", "--study-name", "live"]);
    ok(j, &["ask", "--study-name", "live"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_saturate"))
        .args(["--storage", journal.to_str().unwrap()])
        .args(["watch", "--study-name", "live", "--interval", "0.1"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let screen = Arc::new(Mutex::new(String::new()));
    let mut stdout = child.stdout.take().unwrap();
    let sink = screen.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let wait_for = |text: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !screen.lock().unwrap().contains(text) {
            assert!(Instant::now() < deadline, "watch never showed {text:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait_for("study live (MINIMIZE): 1 trial: 1 running");
    ok(
        j,
        &[
            "tell",
            "--study-name",
            "live",
            "--trial-number",
            "0",
            "--values",
            "0.5",
        ],
    );
    ok(j, &["ask", "--study-name", "live"]);
    wait_for("study live (MINIMIZE): 2 trials: 1 running, 1 complete");
    wait_for("best: trial 0 value 0.5");
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    let screen = screen.lock().unwrap();
    assert!(
        screen.matches("\x1b[2J\x1b[H").count() >= 2,
        "each refresh clears the terminal"
    );
}

/// Runs `saturate --storage <journal> <args>` as a user without write permission on a
/// mode-444 journal in a mode-555 directory: as `nobody` through `setpriv` when the tests run
/// as root (root ignores permissions), as the current user otherwise.
fn run_without_write_permission(journal: &std::path::Path, args: &[&str]) -> std::process::Output {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false);
    let mut command = if root {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_saturate"));
        c
    } else {
        std::process::Command::new(env!("CARGO_BIN_EXE_saturate"))
    };
    command
        .arg("--storage")
        .arg(journal)
        .args(args)
        .env_remove("OPTUNA_STORAGE")
        .output()
        .expect("setpriv (util-linux) runs the binary")
}

/// The reading commands read a journal they may not write (Python Optuna reads one), and a
/// writing command on it fails with the file named: the permissions do bite.
#[test]
fn reading_commands_read_a_journal_they_may_not_write() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir();
    let shared = dir.path().join("ro");
    std::fs::create_dir(&shared).unwrap();
    let journal = shared.join("j.log");
    write_journal(&journal);
    let before = std::fs::read(&journal).unwrap();
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o555)).unwrap();
    // `dir` itself is 0700: let other users through to `ro`.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for args in [
        &["studies"][..],
        &["study-names"],
        &["trials", "--study-name", "single"],
        &["best-trial", "--study-name", "single"],
        &["export", "--study-name", "single"],
    ] {
        let out = run_without_write_permission(&journal, args);
        assert!(
            out.status.success(),
            "saturate {args:?} on a read-only journal: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run_without_write_permission(
        &journal,
        &[
            "study",
            "set-user-attr",
            "--study-name",
            "single",
            "--key",
            "k",
            "--value",
            "v",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("j.log"),
        "a write to a read-only journal: {stderr}"
    );
    assert_eq!(std::fs::read(&journal).unwrap(), before);
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `lineage` follows the population-based-training parents of a trial back to the first
/// generation: one record per segment, with the epochs it covered.
#[test]
fn lineage_prints_the_segments_that_led_to_a_trial() {
    use saturate_study::lineage::{GENERATION_ATTR, PARENT_ATTR, START_STEP_ATTR};
    use saturate_study::prelude::*;
    let dir = tempdir();
    let journal = dir.path().join("pbt.log");
    let storage: std::sync::Arc<dyn saturate_study::storage::Storage> =
        std::sync::Arc::new(JournalStorage::open(&journal).unwrap());
    let study = StudyConfig::new()
        .with_name("pbt")
        .with_storage(storage)
        .init()
        .unwrap();
    let member = |lr: f64, steps: std::ops::RangeInclusive<i64>, parent: Option<(u64, i64)>| {
        let mut fixed = FixedParams::new();
        fixed.insert("lr".into(), ParamValue::Float(lr));
        let mut t = study.ask_with(fixed).unwrap();
        t.suggest_float_log("lr", 1e-3, 1.0).unwrap();
        if let Some((parent, start)) = parent {
            t.set_system_attr(PARENT_ATTR, parent).unwrap();
            t.set_system_attr(GENERATION_ATTR, 1).unwrap();
            t.set_system_attr(START_STEP_ATTR, start).unwrap();
        }
        for step in steps.clone() {
            t.report(step, 1.0 / step as f64).unwrap();
        }
        study.tell(&t, &[1.0 / *steps.end() as f64]).unwrap();
    };
    member(0.1, 1..=4, None);
    member(0.01, 1..=2, None);
    member(0.12, 3..=4, Some((0, 2)));
    let text = ok(
        &journal,
        &[
            "lineage",
            "--study-name",
            "pbt",
            "--trial-number",
            "2",
            "-f",
            "json",
        ],
    );
    let rows = json(&text);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{text}");
    let get = |i: usize, key: &str| rows[i][key].clone();
    assert_eq!(
        (get(0, "number"), get(0, "start_step"), get(0, "end_step")),
        (json!(0), json!(0), json!(2))
    );
    assert_eq!(
        (get(1, "number"), get(1, "start_step"), get(1, "end_step")),
        (json!(2), json!(2), json!(4))
    );
    assert_eq!(get(1, "params")["lr"], json!(0.12));
    let stderr = fails(
        &journal,
        &["lineage", "--study-name", "pbt", "--trial-number", "9"],
        4,
    );
    assert!(stderr.contains("no trial number 9"), "{stderr}");
}
