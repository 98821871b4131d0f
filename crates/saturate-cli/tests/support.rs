//! Running the binary, writing journals with saturate-study, finding Python.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use saturate_study::prelude::*;

/// Runs `saturate --storage <storage> <args>`.
pub fn run(storage: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_saturate"))
        .arg("--storage")
        .arg(storage)
        .args(args)
        .env_remove("OPTUNA_STORAGE")
        .output()
        .expect("the saturate binary runs")
}

/// Runs it and returns stdout; panics with stderr when it fails.
pub fn ok(storage: &Path, args: &[&str]) -> String {
    let out = run(storage, args);
    assert!(
        out.status.success(),
        "saturate {args:?} failed ({:?}):\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Runs it, expects exit code `code`, returns stderr.
pub fn fails(storage: &Path, args: &[&str], code: i32) -> String {
    let out = run(storage, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "saturate {args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    stderr
}

/// Asserts that `keys` appear in this order in the JSON `text` (serde_json's maps sort keys,
/// so order is checked on the text).
pub fn assert_key_order(text: &str, keys: &[&str]) {
    let positions: Vec<usize> = keys
        .iter()
        .map(|k| {
            text.find(&format!("\"{k}\": "))
                .unwrap_or_else(|| panic!("no key `{k}` in {text}"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "keys not in order {keys:?}: {text}"
    );
}

/// Parses JSON output.
pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// A journal with three studies written by saturate-study: `single` (minimize; 6 trials: 4
/// complete, one pruned after two reports, one failed; user attributes), `multi` (minimize,
/// maximize; 5 complete trials) and a unicode-named single-objective study. Returns the
/// studies' (name, trial count) pairs.
pub fn write_journal(path: &Path) -> Vec<(&'static str, usize)> {
    write_studies(Arc::new(JournalStorage::open(path).unwrap()))
}

/// [`write_journal`]'s studies, in any storage.
pub fn write_studies(storage: Arc<dyn Storage>) -> Vec<(&'static str, usize)> {
    let single = StudyConfig::new()
        .with_name("single")
        .with_storage(storage.clone())
        .with_sampler(RandomSamplerConfig::new().with_seed(3).init())
        .init()
        .unwrap();
    for i in 0..6 {
        let mut t = single.ask().unwrap();
        let x = t.suggest_float("x", -2.0, 2.0).unwrap();
        let n = t.suggest_int("n", 1, 4).unwrap();
        let act = t.suggest_categorical("act", ["relu", "gelu"]).unwrap();
        t.set_user_attr("tag", format!("t{i}")).unwrap();
        match i {
            2 => {
                t.report(0, 5.0).unwrap();
                t.report(1, 4.5).unwrap();
                single.tell_pruned(&t).unwrap();
            }
            4 => {
                single.tell_fail(&t, "diverged").unwrap();
            }
            _ => {
                let bonus = if act == "relu" { 0.0 } else { 0.5 };
                single.tell(&t, &[x * x + n as f64 + bonus]).unwrap();
            }
        }
    }
    single.set_user_attr("owner", "tests".into()).unwrap();
    let multi = StudyConfig::new()
        .with_name("multi")
        .with_storage(storage.clone())
        .with_directions([StudyDirection::Minimize, StudyDirection::Maximize])
        .with_sampler(RandomSamplerConfig::new().with_seed(4).init())
        .init()
        .unwrap();
    for _ in 0..5 {
        let mut t = multi.ask().unwrap();
        let a = t.suggest_float("a", 0.0, 1.0).unwrap();
        multi.tell(&t, &[a, a * a + 0.25]).unwrap();
    }
    let unicode = StudyConfig::new()
        .with_name("ニューラル網 🙂")
        .with_storage(storage)
        .with_direction(StudyDirection::Maximize)
        .with_sampler(RandomSamplerConfig::new().with_seed(5).init())
        .init()
        .unwrap();
    for _ in 0..3 {
        let mut t = unicode.ask().unwrap();
        let lr = t.suggest_float_log("lr", 1e-5, 1e-1).unwrap();
        unicode.tell(&t, &[-lr.ln()]).unwrap();
    }
    vec![("single", 6), ("multi", 5), ("ニューラル網 🙂", 3)]
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The Optuna 4.9.0 venv (`SATURATE_OPTUNA_VENV` or target/venv/optuna-4.9.0). `None` only
/// when it is missing, `SATURATE_SKIP_INTEROP=1` and not in CI; otherwise a missing venv
/// panics with the command that sets it up. `needs` lists executables the test needs in the
/// venv's bin/ (`optuna`, `optuna-dashboard`).
pub fn optuna_venv(needs: &[&str]) -> Option<PathBuf> {
    let venv = std::env::var_os("SATURATE_OPTUNA_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/venv/optuna-4.9.0"));
    let missing: Vec<PathBuf> = needs
        .iter()
        .map(|n| venv.join("bin").join(n))
        .filter(|p| !p.exists())
        .collect();
    if missing.is_empty() {
        return Some(venv);
    }
    let skip = std::env::var_os("SATURATE_SKIP_INTEROP").is_some_and(|v| v == "1");
    if skip && std::env::var_os("CI").is_none() {
        eprintln!("note: SATURATE_SKIP_INTEROP=1: Python checks skipped ({missing:?} missing)");
        return None;
    }
    panic!(
        "missing {missing:?}: run scripts/setup-python.sh (or point SATURATE_OPTUNA_VENV at a venv \
         with optuna 4.9 and optuna-dashboard); outside CI, SATURATE_SKIP_INTEROP=1 skips these checks"
    );
}
