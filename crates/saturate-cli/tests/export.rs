//! `export --format csv|json`: contents checked against the study.

use serde_json::json;

use crate::support::{json, ok, tempdir, write_journal};

#[test]
fn csv_has_one_row_per_trial_with_optuna_columns() {
    let dir = tempdir();
    let journal = dir.path().join("j.log");
    write_journal(&journal);
    let j = journal.as_path();
    let csv = ok(j, &["export", "--study-name", "single", "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "number,value,datetime_start,datetime_complete,duration,params_act,params_n,params_x,user_attrs_tag,state"
    );
    assert_eq!(lines.len(), 7);
    let trials = json(&ok(j, &["trials", "--study-name", "single", "-f", "json"]));
    for (line, trial) in lines[1..].iter().zip(trials.as_array().unwrap()) {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), 10, "{line}");
        assert_eq!(fields[0], trial["number"].to_string());
        match trial["value"].as_f64() {
            Some(v) => assert_eq!(fields[1].parse::<f64>().unwrap(), v, "exact value: {line}"),
            None => assert_eq!(fields[1], ""),
        }
        // Microseconds kept; the table's seconds are a prefix.
        assert!(
            fields[2].starts_with(trial["datetime_start"].as_str().unwrap()),
            "{line}"
        );
        assert_eq!(fields[2].len(), "2026-01-01 00:00:00.000000".len());
        assert!(fields[4].parse::<f64>().unwrap() >= 0.0);
        assert_eq!(fields[5], trial["params"]["act"].as_str().unwrap());
        assert_eq!(fields[6], trial["params"]["n"].to_string());
        assert_eq!(
            fields[7].parse::<f64>().unwrap(),
            trial["params"]["x"].as_f64().unwrap()
        );
        assert_eq!(fields[8], trial["user_attrs"]["tag"].as_str().unwrap());
        assert_eq!(fields[9], trial["state"].as_str().unwrap());
    }

    let multi = ok(j, &["export", "--study-name", "multi"]);
    assert!(
        multi.starts_with("number,values_0,values_1,datetime_start,"),
        "{multi}"
    );
}

#[test]
fn json_holds_the_whole_study() {
    let dir = tempdir();
    let journal = dir.path().join("j.log");
    write_journal(&journal);
    let out = dir.path().join("single.json");
    let j = journal.as_path();
    let printed = ok(
        j,
        &[
            "export",
            "--study-name",
            "single",
            "--format",
            "json",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(printed, "", "-o writes the file, not stdout");
    let doc = json(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(doc["study_name"], "single");
    assert_eq!(doc["directions"], json!(["MINIMIZE"]));
    assert_eq!(doc["user_attrs"], json!({"owner": "tests"}));
    let trials = doc["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 6);
    let listed = json(&ok(j, &["trials", "--study-name", "single", "-f", "json"]));
    for (exported, listed) in trials.iter().zip(listed.as_array().unwrap()) {
        assert_eq!(exported["number"], listed["number"]);
        assert_eq!(exported["state"], listed["state"]);
        assert_eq!(exported["params"], listed["params"]);
        assert_eq!(exported["user_attrs"], listed["user_attrs"]);
        match listed["value"].as_f64() {
            Some(v) => assert_eq!(exported["values"], json!([v])),
            None if listed["state"] == "FAIL" => assert_eq!(exported["values"], json!(null)),
            None => {}
        }
        assert_eq!(
            exported["distributions"]["x"],
            json!({"name": "FloatDistribution", "attributes": {"step": null, "low": -2.0, "high": 2.0, "log": false}})
        );
    }
    assert_eq!(
        trials[2]["intermediate_values"],
        json!({"0": 5.0, "1": 4.5})
    );
    assert_eq!(trials[4]["system_attrs"]["fail_reason"], "diverged");
}

/// `export -o` onto the storage's own file is refused (it would replace the study with CSV),
/// whichever way the path is spelt; the journal is left as it was.
#[test]
fn export_onto_the_storage_itself_is_refused() {
    let dir = tempdir();
    let journal = dir.path().join("j.log");
    write_journal(&journal);
    let before = std::fs::read(&journal).unwrap();
    let j = journal.as_path();
    let spelt_otherwise = dir.path().join(".").join("j.log");
    for output in [journal.to_str().unwrap(), spelt_otherwise.to_str().unwrap()] {
        let stderr =
            crate::support::fails(j, &["export", "--study-name", "single", "-o", output], 2);
        assert!(stderr.contains("the storage itself"), "{stderr}");
    }
    assert_eq!(std::fs::read(&journal).unwrap(), before);
    // Another file is fine.
    let csv = dir.path().join("out.csv");
    ok(
        j,
        &[
            "export",
            "--study-name",
            "single",
            "-o",
            csv.to_str().unwrap(),
        ],
    );
    assert!(std::fs::read_to_string(&csv)
        .unwrap()
        .starts_with("number,"));
}
