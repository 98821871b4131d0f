//! The training examples, run in their short mode: each writes a journal of 6 trials in groups
//! of 3 that saturate and Python Optuna 4.9.0 and 5.0.0 read alike, whose groups share their
//! shape hyperparameter, and whose values are accuracies.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use saturate::study::prelude::*;
use saturate::train::GROUP_ATTR;

use crate::support::{expected_backend, optuna_load, run_example};

/// Trials of every example's short mode.
const SHORT_TRIALS: usize = 6;

/// What an example's journal holds, as saturate reads it.
struct Journal {
    trials: Vec<Arc<FrozenTrial>>,
    complete: usize,
    best: f64,
}

/// Reads study `study` from `journal` and checks what every training example promises: the
/// short run's trial count, finite accuracies in [0, 1], one value of `shared` per group, and
/// the same counts and best value in Python Optuna.
fn check_journal(journal: &Path, study_name: &str, shared: &str, min_groups: usize) -> Journal {
    assert!(journal.exists(), "{} was not written", journal.display());
    let study = StudyConfig::new()
        .with_name(study_name)
        .with_storage(Arc::new(JournalStorage::open(journal).unwrap()))
        .load()
        .unwrap();
    let trials = study.trials(None).unwrap();
    assert_eq!(trials.len(), SHORT_TRIALS, "trials in the journal");
    assert!(
        trials.iter().all(|t| t.state.is_finished()),
        "a trial was left running: {:?}",
        trials.iter().map(|t| t.state).collect::<Vec<_>>()
    );
    let complete: Vec<_> = trials
        .iter()
        .filter(|t| t.state == TrialState::Complete)
        .collect();
    assert!(!complete.is_empty(), "no trial completed");
    for t in &complete {
        let value = t.value().unwrap();
        assert!(
            value.is_finite() && (0.0..=1.0).contains(&value),
            "trial {}: accuracy {value}",
            t.number
        );
    }
    let best = study.best_trial().unwrap().value().unwrap();

    let mut groups: BTreeMap<String, Vec<ParamValue>> = BTreeMap::new();
    for t in &trials {
        let group = t.system_attrs[GROUP_ATTR].as_str().unwrap().to_string();
        let value = t
            .param(shared)
            .unwrap_or_else(|| panic!("trial {} has no `{shared}`", t.number));
        groups.entry(group).or_default().push(value);
    }
    // 6 trials in groups of 3: two groups at the objective level; the trainer's refill may
    // put all of them in one group (never more than 3 at a time).
    assert!(groups.len() >= min_groups, "groups: {groups:?}");
    for (group, values) in &groups {
        assert!(
            values.iter().all(|v| v == &values[0]),
            "group {group} mixes values of the shared `{shared}`: {values:?}"
        );
    }

    for version in ["4.9.0", "5.0.0"] {
        let (n, c, b) = optuna_load(version, journal, study_name);
        assert_eq!(
            (n, c),
            (trials.len(), complete.len()),
            "Python Optuna {version}: (trials, complete)"
        );
        assert_eq!(b, Some(best), "Python Optuna {version}: best value");
    }
    let complete = complete.len();
    Journal {
        trials,
        complete,
        best,
    }
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn fashion_mnist_trains_a_study_of_cnn_groups() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_example(
        "fashion_mnist",
        &["--storage", "fm.journal"],
        &[],
        dir.path(),
    );
    let printed = stdout(&output);
    assert!(
        printed.contains("512 training / 256 validation images"),
        "{printed}"
    );
    let backend = printed
        .lines()
        .find_map(|l| l.strip_prefix("backend: "))
        .unwrap_or_else(|| panic!("the example names its backend:\n{printed}"));
    assert!(
        backend.contains(expected_backend()),
        "ran on {backend}, built for {}",
        expected_backend()
    );
    let journal = check_journal(&dir.path().join("fm.journal"), "fashion_mnist", "width", 1);
    assert!(printed.contains("best trial: #"), "{printed}");
    assert_eq!(
        journal.complete, SHORT_TRIALS,
        "every trial completes (refill included)"
    );
    assert!(printed.contains("3 members refilled"), "{printed}");
    // Every member trial carries the four member hyperparameters.
    for t in &journal.trials {
        for name in ["lr", "momentum", "weight_decay", "dropout"] {
            assert!(
                t.param(name).is_some(),
                "trial {} has no `{name}`",
                t.number
            );
        }
    }
    // Rerunning continues the study in the same journal.
    run_example(
        "fashion_mnist",
        &["--storage", "fm.journal"],
        &[],
        dir.path(),
    );
    let study = StudyConfig::new()
        .with_name("fashion_mnist")
        .with_storage(Arc::new(
            JournalStorage::open(dir.path().join("fm.journal")).unwrap(),
        ))
        .load()
        .unwrap();
    assert_eq!(study.trials(None).unwrap().len(), 2 * SHORT_TRIALS);
}

#[test]
fn mnist_mlp_without_data_uses_the_shipped_subset_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_example("mnist_mlp", &[], &[], dir.path());
    let printed = stdout(&output);
    assert!(printed.contains("no --data given"), "{printed}");
    let journal = check_journal(
        &dir.path().join("mnist_mlp.journal"),
        "mnist_mlp",
        "hidden",
        2,
    );
    assert!(journal.complete >= 1);
    // An MLP that trained at all beats chance (10 classes) after one short epoch.
    assert!(journal.best > 0.2, "best accuracy {}", journal.best);
}

#[test]
fn patch_transformer_trains_groups_of_one_d_model() {
    let dir = tempfile::tempdir().unwrap();
    run_example("patch_transformer", &[], &[], dir.path());
    let journal = check_journal(
        &dir.path().join("patch_transformer.journal"),
        "patch_transformer",
        "d_model",
        2,
    );
    for t in &journal.trials {
        let d_model = t.param("d_model").unwrap().as_f64().unwrap();
        assert!(
            [16.0, 32.0, 48.0, 64.0].contains(&d_model),
            "d_model {d_model}"
        );
    }
}

/// The study benchmark's smoke test: both arms of `--short` (2 trials, one group of 2) append
/// one row each to a CSV of the benchmark's columns, with a complete run, a profile, and a
/// fixed-time budget consistent with the arm's own wall time; `--table` tabulates them.
#[test]
fn study_bench_short_records_both_arms_and_tabulates_them() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("study.csv");
    let csv_arg = csv.to_str().unwrap();
    run_example(
        "study_bench",
        &["--arm", "sequential", "--seed", "1", "--csv", csv_arg],
        &[],
        dir.path(),
    );
    let rows = |csv: &Path| -> Vec<BTreeMap<String, String>> {
        let text = std::fs::read_to_string(csv).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        lines
            .map(|line| {
                let fields: Vec<&str> = line.split(',').collect();
                assert_eq!(fields.len(), header.len(), "row {line}");
                header
                    .iter()
                    .zip(fields)
                    .map(|(h, f)| (h.to_string(), f.to_string()))
                    .collect()
            })
            .collect()
    };
    let num = |row: &BTreeMap<String, String>, column: &str| -> f64 {
        row[column]
            .parse()
            .unwrap_or_else(|_| panic!("{column} = {:?}", row[column]))
    };
    let sequential_wall = num(&rows(&csv)[0], "wall_seconds");
    // The grouped arm with the sequential arm's wall time as its budget.
    run_example(
        "study_bench",
        &[
            "--arm",
            "grouped",
            "--seed",
            "1",
            "--csv",
            csv_arg,
            "--budget-seconds",
            &sequential_wall.to_string(),
        ],
        &[],
        dir.path(),
    );
    let written = rows(&csv);
    assert_eq!(written.len(), 2);
    for (row, (arm, k)) in written.iter().zip([("sequential", 1.0), ("grouped", 2.0)]) {
        assert_eq!(row["arm"], arm);
        assert_eq!(row["seed"], "1");
        assert!(
            row["backend"].contains(expected_backend()),
            "{arm}: ran on {}, built for {}",
            row["backend"],
            expected_backend()
        );
        assert_eq!(
            (num(row, "train_images"), num(row, "valid_images")),
            (512.0, 256.0)
        );
        assert_eq!((num(row, "trials"), num(row, "group_size")), (2.0, k));
        // The width is searched: the sequential arm's 2 trials drew one or two widths, the
        // grouped arm's first group one (more groups may follow within the budget).
        assert_eq!(row["width"], "8-16 step 4");
        let widths = num(row, "widths_tried");
        assert!((1.0..=3.0).contains(&widths), "{arm}: {widths} widths");
        let best = num(row, "best_accuracy");
        assert!((0.0..=1.0).contains(&best), "{arm}: best accuracy {best}");
        let wall = num(row, "wall_seconds");
        assert!(wall > 0.0 && wall == num(row, "profile_wall_seconds"));
        assert!(num(row, "profile_cpu_seconds") > 0.0, "{arm}: CPU time");
        assert!(
            num(row, "profile_peak_resident_bytes") > 0.0,
            "{arm}: peak RSS"
        );
        assert!(
            (num(row, "trials_per_minute") - 2.0 / (wall / 60.0)).abs() < 1e-9,
            "{arm}: trials/minute"
        );
        // Trials that finished within the budget: all of them when the arm's own 2 trials
        // took no longer than the budget (the grouped arm may add more), and the best among
        // them is never better than the study's best unless more trials ran.
        let budget = num(row, "budget_seconds");
        assert_eq!(
            budget, sequential_wall,
            "{arm}: the budget is the sequential wall time"
        );
        let in_budget = num(row, "budget_trials");
        if wall <= budget {
            assert!(
                in_budget >= 2.0,
                "{arm}: {in_budget} trials within the budget"
            );
        }
        if arm == "sequential" || (arm == "grouped" && in_budget == 2.0) {
            assert_eq!(num(row, "budget_best_accuracy"), best, "{arm}");
        }
    }
    assert_eq!(written[0]["budget_trials"], "2");

    // The runner one trial at a time (`--group-size 1`): its own row and label.
    run_example(
        "study_bench",
        &[
            "--arm",
            "grouped",
            "--seed",
            "1",
            "--group-size",
            "1",
            "--csv",
            csv_arg,
        ],
        &[],
        dir.path(),
    );
    let last = rows(&csv).pop().unwrap();
    assert_eq!(
        (last["arm"].as_str(), last["group_size"].as_str()),
        ("grouped", "1")
    );
    assert_eq!(num(&last, "trials"), 2.0);

    let table = run_example("study_bench", &["--table", csv_arg], &[], dir.path());
    let table = stdout(&table);
    let lines: Vec<&str> = table.lines().collect();
    // The rows, a blank line, then the spread over seeds (one seed here: IQR of one value).
    assert_eq!(lines.len(), 11, "{table}");
    assert!(lines[2].starts_with("| 1 | sequential |"), "{table}");
    assert!(lines[2].contains("| 1.00x |"), "{table}");
    assert!(lines[3].starts_with("| 1 | grouped K=2 |"), "{table}");
    assert!(lines[4].starts_with("| 1 | grouped K=1 |"), "{table}");
    assert!(lines[5].is_empty(), "{table}");
    assert!(lines[6].contains("median (IQR)"), "{table}");
    let best = format!("{:.4}", num(&written[0], "best_accuracy"));
    assert!(
        lines[8].starts_with(&format!("| sequential | 1 | {best} ({best} to {best}) |")),
        "{table}"
    );
    assert!(lines[9].starts_with("| grouped K=2 | 1 |"), "{table}");
    assert!(lines[10].starts_with("| grouped K=1 | 1 |"), "{table}");
}

/// The PBT example's short mode: one group of 4 for 4 epochs with an exploit step after epoch
/// 2, so 5 trials (4 first members, 1 copy), all complete; the copy names its parent; the
/// run prints the best final member's schedule; Python Optuna reads the same study.
#[test]
fn pbt_trains_one_population_and_prints_a_lineage() {
    use saturate::train::pbt::{PARENT_ATTR, START_STEP_ATTR};
    let dir = tempfile::tempdir().unwrap();
    let output = run_example("pbt", &["--storage", "pbt.journal"], &[], dir.path());
    let printed = stdout(&output);
    assert!(printed.contains("(1 exploits)"), "{printed}");
    assert!(printed.contains("best final member: trial"), "{printed}");
    let journal = dir.path().join("pbt.journal");
    let study = StudyConfig::new()
        .with_name("pbt-0")
        .with_storage(Arc::new(JournalStorage::open(&journal).unwrap()))
        .load()
        .unwrap();
    let trials = study.trials(None).unwrap();
    assert_eq!(trials.len(), 5);
    assert!(trials.iter().all(|t| t.state == TrialState::Complete));
    let children: Vec<_> = trials
        .iter()
        .filter(|t| t.system_attrs.contains_key(PARENT_ATTR))
        .collect();
    assert_eq!(children.len(), 1);
    assert_eq!(
        children[0].system_attrs[START_STEP_ATTR],
        serde_json::json!(2)
    );
    for version in ["4.9.0", "5.0.0"] {
        let (n, complete, best) = optuna_load(version, &journal, "pbt-0");
        assert_eq!((n, complete), (5, 5), "Python Optuna {version}");
        assert_eq!(best, study.best_value().ok(), "Python Optuna {version}");
    }
    // A second run starts a new study in the same journal, its first two members from the
    // values `--member` pins, the others sampled.
    let pinned = "width=8,lr=0.05,momentum=0.5,weight_decay=0.0001,dropout=0.2";
    let args = [
        "--storage",
        "pbt.journal",
        "--member",
        pinned,
        "--member",
        pinned,
    ];
    run_example("pbt", &args, &[], dir.path());
    let storage = JournalStorage::open(&journal).unwrap();
    let names: Vec<String> = saturate::study::storage::Storage::get_all_studies(&storage)
        .unwrap()
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(names, vec!["pbt-0".to_string(), "pbt-0-2".to_string()]);
    let second = StudyConfig::new()
        .with_name("pbt-0-2")
        .with_storage(Arc::new(storage))
        .load()
        .unwrap();
    let trials = second.trials(None).unwrap();
    let value = |t: &FrozenTrial, name: &str| t.param(name).and_then(|v| v.as_f64()).unwrap();
    for t in &trials[..2] {
        let values = ["width", "lr", "momentum", "weight_decay", "dropout"].map(|n| value(t, n));
        assert_eq!(values, [8.0, 0.05, 0.5, 0.0001, 0.2], "trial {}", t.number);
    }
    // Trials 2 and 3 are the sampled members (the copy at the exploit is trial 4).
    assert!(trials[2..4].iter().all(|t| value(t, "lr") != 0.05));
    // A spec it cannot read is an error that names it.
    let bad = std::process::Command::new(crate::support::example("pbt"))
        .args(["--storage", "pbt.journal", "--member", "lr=fast"])
        .env("SATURATE_SHORT", "1")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("--member lr=fast: lr fast"), "{stderr}");
}
