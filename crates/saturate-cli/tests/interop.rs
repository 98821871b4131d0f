//! The real `optuna` CLI (4.9.0) and `saturate` on the same journals: Python-written studies
//! read by saturate and saturate-written studies read by Optuna print the same bytes.

use std::path::Path;
use std::process::Command;

use crate::support::{ok, optuna_venv, tempdir};

/// Runs the real `optuna` command; panics with its stderr on failure.
pub fn optuna(venv: &Path, storage: &Path, args: &[&str]) -> String {
    let out = Command::new(venv.join("bin/optuna"))
        .arg("--storage")
        .arg(storage)
        .args(args)
        .env_remove("OPTUNA_STORAGE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "optuna {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Writes a journal with Python Optuna: a single-objective study (float log, int, categorical
/// with None and a bool, a pruned and a failed trial, user attributes), a unicode-named
/// two-objective study, and an objective-named one.
const PYTHON_STUDIES: &str = r#"
import sys, optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
optuna.logging.set_verbosity(optuna.logging.ERROR)
storage = JournalStorage(JournalFileBackend(sys.argv[1]))
s = optuna.create_study(study_name="py", storage=storage, sampler=optuna.samplers.RandomSampler(seed=1))
def objective(t):
    x = t.suggest_float("x", 1e-6, 1e3, log=True)
    n = t.suggest_int("n", -3, 3)
    c = t.suggest_categorical("c", [None, True, "a,b", 1.5])
    t.set_user_attr("big", 2**40)
    if t.number == 2:
        t.report(0.125, 0)
        raise optuna.TrialPruned()
    if t.number == 3:
        raise ValueError("boom")
    return x * 1e6 + n
s.optimize(objective, n_trials=6, catch=(ValueError,))
s.set_user_attr("owner", "python")
m = optuna.create_study(study_name="Pareto ∑", storage=storage, directions=["minimize", "maximize"], sampler=optuna.samplers.RandomSampler(seed=2))
m.optimize(lambda t: (t.suggest_float("a", 0, 1), t.suggest_float("b", 0, 1)), n_trials=5)
named = optuna.create_study(study_name="named", storage=storage, directions=["minimize", "maximize"])
named.set_metric_names(["loss", "acc"])
named.optimize(lambda t: (t.suggest_int("k", 0, 4), 0.5), n_trials=2)
"#;

#[test]
fn python_written_studies_print_the_same_in_saturate() {
    let Some(venv) = optuna_venv(&["python", "optuna"]) else {
        return;
    };
    let dir = tempdir();
    let journal = dir.path().join("py.log");
    let status = Command::new(venv.join("bin/python"))
        .args(["-c", PYTHON_STUDIES])
        .arg(&journal)
        .status()
        .unwrap();
    assert!(status.success());
    let j = journal.as_path();
    let commands: &[&[&str]] = &[
        &["studies", "-f", "json"],
        &["studies", "-f", "table"],
        &["studies", "-f", "yaml", "--flatten"],
        &["trials", "--study-name", "py", "-f", "json"],
        &["trials", "--study-name", "py", "-f", "table"],
        &["trials", "--study-name", "py", "-f", "yaml", "--flatten"],
        &[
            "best-trial",
            "--study-name",
            "py",
            "-f",
            "table",
            "--flatten",
        ],
        &["best-trials", "--study-name", "Pareto ∑", "-f", "yaml"],
        &["trials", "--study-name", "named", "-f", "json", "--flatten"],
    ];
    for args in commands {
        assert_eq!(
            ok(j, args),
            optuna(&venv, j, args),
            "saturate vs optuna {args:?}"
        );
    }
}

#[test]
fn saturate_written_studies_print_the_same_in_optuna_and_trials_cross_over() {
    let Some(venv) = optuna_venv(&["python", "optuna"]) else {
        return;
    };
    let dir = tempdir();
    let journal = dir.path().join("rs.log");
    let j = journal.as_path();
    ok(
        j,
        &[
            "create-study",
            "--study-name",
            "rs",
            "--direction",
            "maximize",
        ],
    );
    let space = r#"{"lr": {"name": "FloatDistribution", "attributes": {"low": 1e-05, "high": 0.1, "log": true, "step": null}}, "act": {"name": "CategoricalDistribution", "attributes": {"choices": ["relu", "gelu"]}}}"#;
    for (number, value) in [("0", "0.5"), ("1", "0.75")] {
        ok(j, &["ask", "--study-name", "rs", "--search-space", space]);
        ok(
            j,
            &[
                "tell",
                "--study-name",
                "rs",
                "--trial-number",
                number,
                "--values",
                value,
            ],
        );
    }
    ok(
        j,
        &[
            "study",
            "set-user-attr",
            "--study-name",
            "rs",
            "-k",
            "by",
            "--value",
            "saturate",
        ],
    );
    // Optuna asks trial 2; saturate tells it. saturate asks trial 3; Optuna tells it.
    let asked = optuna(
        &venv,
        j,
        &["ask", "--study-name", "rs", "--search-space", space],
    );
    assert!(
        asked.starts_with("{\"number\": 2, \"params\": {\"lr\": "),
        "{asked}"
    );
    ok(
        j,
        &[
            "tell",
            "--study-name",
            "rs",
            "--trial-number",
            "2",
            "--values",
            "0.25",
        ],
    );
    ok(j, &["ask", "--study-name", "rs", "--search-space", space]);
    optuna(
        &venv,
        j,
        &[
            "tell",
            "--study-name",
            "rs",
            "--trial-number",
            "3",
            "--state",
            "pruned",
        ],
    );
    for args in [
        &["studies", "-f", "json"][..],
        &["trials", "--study-name", "rs", "-f", "json"],
        &["trials", "--study-name", "rs", "-f", "table", "--flatten"],
        &["best-trial", "--study-name", "rs", "-f", "yaml"],
    ] {
        assert_eq!(
            ok(j, args),
            optuna(&venv, j, args),
            "saturate vs optuna {args:?}"
        );
    }
    let trials = crate::support::json(&ok(j, &["trials", "--study-name", "rs", "-f", "json"]));
    let states: Vec<&str> = trials
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["COMPLETE", "COMPLETE", "COMPLETE", "PRUNED"]);
}
