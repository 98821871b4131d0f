//! `ask` / `tell` round trips through the journal.

use serde_json::json;

use crate::support::{assert_key_order, fails, json, ok, tempdir};

const SPACE: &str = r#"{"x": {"name": "FloatDistribution", "attributes": {"low": -1.0, "high": 1.0, "log": false, "step": null}},
 "n": {"name": "IntDistribution", "attributes": {"low": 1, "high": 8, "log": false, "step": 1}},
 "act": {"name": "CategoricalDistribution", "attributes": {"choices": ["relu", "gelu"]}}}"#;

#[test]
fn ask_then_tell_completes_prunes_and_fails_trials() {
    let dir = tempdir();
    let journal = dir.path().join("j.log");
    let j = journal.as_path();
    ok(j, &["create-study", "--study-name", "s"]);
    let stderr = fails(j, &["ask", "--study-name", "nope"], 2);
    assert!(stderr.contains("create-study"), "{stderr}");

    let mut asked = Vec::new();
    for _ in 0..4 {
        let out = ok(
            j,
            &[
                "ask",
                "--study-name",
                "s",
                "--sampler",
                "RandomSampler",
                "--sampler-kwargs",
                r#"{"seed": 7}"#,
                "--search-space",
                SPACE,
            ],
        );
        // Parameters in the search space's order, as Python's dict keeps it.
        assert_key_order(&out, &["number", "params", "x", "n", "act"]);
        let trial = json(&out);
        let x = trial["params"]["x"].as_f64().unwrap();
        let n = trial["params"]["n"].as_i64().unwrap();
        assert!((-1.0..=1.0).contains(&x) && (1..=8).contains(&n), "{out}");
        assert!(["relu", "gelu"].contains(&trial["params"]["act"].as_str().unwrap()));
        asked.push(trial);
    }
    let numbers: Vec<i64> = asked
        .iter()
        .map(|t| t["number"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, [0, 1, 2, 3]);

    ok(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            "0",
            "--values",
            "1.5",
        ],
    );
    ok(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            "1",
            "--values",
            "-0.25",
            "--state",
            "complete",
        ],
    );
    ok(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            "2",
            "--state",
            "pruned",
        ],
    );
    // NaN fails the trial with a warning, as Optuna's tell does without a state.
    let out = crate::support::run(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            "3",
            "--values",
            "nan",
        ],
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not acceptable"));

    let trials = json(&ok(j, &["trials", "--study-name", "s", "-f", "json"]));
    let summary: Vec<_> = trials
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["state"].as_str().unwrap(), t["value"].clone()))
        .collect();
    assert_eq!(
        summary,
        [
            ("COMPLETE", json!(1.5)),
            ("COMPLETE", json!(-0.25)),
            ("PRUNED", json!(null)),
            ("FAIL", json!(null))
        ]
    );
    // The told parameters are the asked ones.
    for (told, asked) in trials.as_array().unwrap().iter().zip(&asked) {
        assert_eq!(told["params"], asked["params"]);
    }
    let best = json(&ok(j, &["best-trial", "--study-name", "s", "-f", "json"]));
    assert_eq!(best["number"], 1);

    let stderr = fails(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            "0",
            "--values",
            "2",
        ],
        1,
    );
    assert!(
        stderr.contains("already finished") && stderr.contains("--skip-if-finished"),
        "{stderr}"
    );
    ok(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            "0",
            "--values",
            "2",
            "--skip-if-finished",
        ],
    );
    let stderr = fails(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            "9",
            "--values",
            "2",
        ],
        2,
    );
    assert!(stderr.contains("has not been created"), "{stderr}");

    // Argument combinations Optuna refuses, refused before anything is written.
    let fresh = json(&ok(j, &["ask", "--study-name", "s"]));
    assert_eq!(fresh, json!({"number": 4, "params": {}}));
    let n = "4";
    fails(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            n,
            "--state",
            "complete",
        ],
        2,
    );
    fails(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            n,
            "--values",
            "1",
            "--state",
            "fail",
        ],
        2,
    );
    // With `--state complete` a wrong count is an error and the trial stays RUNNING (without
    // a state it would fail the trial with a warning, as for NaN above).
    fails(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            n,
            "--values",
            "1",
            "2",
            "--state",
            "complete",
        ],
        2,
    );
    ok(
        j,
        &[
            "tell",
            "--study-name",
            "s",
            "--trial-number",
            n,
            "--state",
            "fail",
        ],
    );
    let last = json(&ok(j, &["trials", "--study-name", "s", "-f", "json"]))[4].clone();
    assert_eq!(last["state"], "FAIL");

    let stderr = fails(
        j,
        &["ask", "--study-name", "s", "--sampler-kwargs", "{}"],
        2,
    );
    assert!(stderr.contains("--sampler"), "{stderr}");
    let stderr = fails(
        j,
        &["ask", "--study-name", "s", "--sampler", "GPSampler"],
        2,
    );
    assert!(stderr.contains("TPESampler"), "{stderr}");
    let stderr = fails(
        j,
        &[
            "ask",
            "--study-name",
            "s",
            "--search-space",
            r#"{"x": {"name": "FloatDistribution", "attributes": {"low": 2.0, "high": 1.0}}}"#,
        ],
        2,
    );
    assert!(stderr.contains("--search-space"), "{stderr}");
}

#[test]
fn ask_formats_and_multi_objective_tell() {
    let dir = tempdir();
    let journal = dir.path().join("j.log");
    let j = journal.as_path();
    ok(
        j,
        &[
            "create-study",
            "--study-name",
            "m",
            "--directions",
            "minimize",
            "maximize",
        ],
    );
    let space = r#"{"a": {"name": "IntDistribution", "attributes": {"low": 3, "high": 3, "log": false, "step": 1}}}"#;
    // A single-value distribution gives its value.
    let yaml = ok(
        j,
        &[
            "ask",
            "--study-name",
            "m",
            "--search-space",
            space,
            "-f",
            "yaml",
        ],
    );
    assert_eq!(yaml, "number: 0\nparams:\n  a: 3\n");
    let flat = ok(
        j,
        &[
            "ask",
            "--study-name",
            "m",
            "--search-space",
            space,
            "-f",
            "json",
            "--flatten",
        ],
    );
    assert_eq!(flat, "{\"number\": 1, \"params_a\": 3}\n");
    let table = ok(j, &["ask", "--study-name", "m", "-f", "table"]);
    assert!(table.contains("| number | params |"), "{table}");
    ok(
        j,
        &[
            "tell",
            "--study-name",
            "m",
            "--trial-number",
            "0",
            "--values",
            "1",
            "-2.5",
        ],
    );
    ok(
        j,
        &[
            "tell",
            "--study-name",
            "m",
            "--trial-number",
            "1",
            "--values",
            "0.5",
            "-3",
        ],
    );
    let trials = json(&ok(j, &["trials", "--study-name", "m", "-f", "json"]));
    assert_eq!(trials[0]["values"], json!([1.0, -2.5]));
    assert_eq!(trials[2]["values"], json!([null, null]));
    assert_eq!(trials[2]["state"], "RUNNING");
    let front = json(&ok(j, &["best-trials", "--study-name", "m", "-f", "json"]));
    assert_eq!(
        front.as_array().unwrap().len(),
        2,
        "neither dominates: {front}"
    );
}

/// ±inf completes a trial with that value, as Optuna's `tell` (only NaN fails it).
#[test]
fn tell_with_an_infinite_value_completes_the_trial() {
    let dir = tempdir();
    let journal = dir.path().join("j.log");
    let j = journal.as_path();
    ok(j, &["create-study", "--study-name", "s"]);
    for (number, value) in [("0", "--values=inf"), ("1", "--values=-inf")] {
        ok(j, &["ask", "--study-name", "s"]);
        let out = crate::support::run(
            j,
            &["tell", "--study-name", "s", "--trial-number", number, value],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains("not acceptable"), "{stderr}");
    }
    let out = ok(j, &["trials", "--study-name", "s", "-f", "yaml"]);
    assert_eq!(out.matches("COMPLETE").count(), 2, "{out}");
    assert!(
        out.contains("value: .inf") && out.contains("value: -.inf"),
        "{out}"
    );
    let best = ok(j, &["best-trial", "--study-name", "s", "-f", "yaml"]);
    assert!(best.contains("value: -.inf"), "{best}");
}
