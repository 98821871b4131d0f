//! Running the examples: `cargo test` (no target selected, as in `scripts/test.sh`) builds them
//! next to this binary; `cargo test --test main` alone does not (run `cargo build --examples`
//! first).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The path of example `name`'s binary (built by `cargo test` in `target/<profile>/examples`).
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/<profile>/deps/main-<hash> -> target/<profile>/examples/<name>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps")
        .join("examples");
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: `cargo test` without a target filter builds the examples (or run \
         `cargo build --examples`)",
        path.display()
    );
    path
}

/// Runs example `name` with `args` and extra environment in its short mode
/// (`SATURATE_SHORT=1`), in `dir`; panics with its output if it fails.
pub fn run_example(name: &str, args: &[&str], env: &[(&str, &str)], dir: &Path) -> Output {
    let output = Command::new(example(name))
        .args(args)
        .envs(env.iter().copied())
        .env("SATURATE_SHORT", "1")
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("could not start example {name}: {e}"));
    assert!(
        output.status.success(),
        "example {name} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The Python interpreter of the Optuna `version` venv made by `scripts/setup-python.sh`.
pub fn optuna_python(version: &str) -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/venv")
        .join(format!("optuna-{version}"))
        .join("bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup-python.sh (these tests need Python Optuna)",
        python.display()
    );
    python
}

/// Loads study `study` from the journal at `journal` with Python Optuna `version`; returns
/// `(number of trials, number of COMPLETE trials, best value or None)` as Optuna sees them.
pub fn optuna_load(version: &str, journal: &Path, study: &str) -> (usize, usize, Option<f64>) {
    let script = r#"
import sys, optuna
from optuna.storages.journal import JournalFileBackend, JournalStorage
s = optuna.load_study(study_name=sys.argv[2], storage=JournalStorage(JournalFileBackend(sys.argv[1])))
complete = [t for t in s.trials if t.state == optuna.trial.TrialState.COMPLETE]
best = s.best_value if complete and len(s.directions) == 1 else None
print(len(s.trials), len(complete), best)
"#;
    let out = Command::new(optuna_python(version))
        .args(["-c", script, journal.to_str().unwrap(), study])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Python Optuna {version} could not load {}: {}",
        journal.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut parts = text.split_whitespace();
    let trials = parts.next().unwrap().parse().unwrap();
    let complete = parts.next().unwrap().parse().unwrap();
    let best = parts.next().and_then(|b| b.parse().ok());
    (trials, complete, best)
}

/// The word Burn's name of the examples' backend contains for this build's features (the
/// examples pick their backend the same way: examples/common/backend.rs). With `--features
/// wgpu`, this binary checks that the examples it runs really ran on wgpu.
pub fn expected_backend() -> &'static str {
    if cfg!(feature = "cuda") {
        "cuda"
    } else if cfg!(feature = "wgpu") {
        "wgpu"
    } else if cfg!(feature = "tch") {
        "tch"
    } else {
        "ndarray"
    }
}
