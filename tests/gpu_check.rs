//! scripts/gpu-check.sh's dry run: no GPU, the bench binary and the parity, recommendation and
//! study-benchmark examples built in the dev profile for wgpu (CubeCL's kernels on the
//! machine's Vulkan device: lavapipe in CI), the examples in their short mode and a small part
//! of the plan run through the same steps as on the GPU. Checks that every planned (arm, model,
//! K) has a CSV row with a finite time, that the parity check, the recommendation and both arms
//! of the study benchmark ran and wrote their files, and that results.md has their tables, so
//! the GPU run's report cannot silently lose its shape (tests/examples_gpu.rs checks the
//! examples' results themselves).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

#[test]
fn gpu_check_dry_run_reports_every_planned_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let output = Command::new("bash")
        .arg(root.join("scripts/gpu-check.sh"))
        .args(["--dry-run", "--budget", "300"])
        .env("OUT", out.path())
        .current_dir(root)
        .output()
        .expect("bash runs scripts/gpu-check.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "gpu-check.sh --dry-run failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );

    // "plan: SATURATE_PROFILE=arm,model,K,steps": the dry run's own plan.
    let planned: BTreeSet<(String, String, usize)> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("plan: SATURATE_PROFILE="))
        .map(|spec| {
            let parts: Vec<&str> = spec.split(',').collect();
            (
                parts[0].to_string(),
                parts[1].to_string(),
                parts[2].parse().unwrap(),
            )
        })
        .collect();
    for arm in ["sequential", "grouped"] {
        for model in ["mlp8", "transformer"] {
            for k in [1, 2] {
                assert!(
                    planned.contains(&(arm.to_string(), model.to_string(), k)),
                    "the dry run plans {arm} {model} K={k}: {planned:?}"
                );
            }
        }
    }
    assert!(
        stdout.contains("setup-vulkan: Vulkan devices:"),
        "the dry run names its Vulkan device:\n{stdout}"
    );
    assert!(
        stdout.contains("would run: timeout")
            && stdout.contains("SATURATE_PROFILE=grouped,mlp8,1024,"),
        "the dry run prints the GPU plan's commands, up to grouped mlp8 K=1024"
    );

    let csv = std::fs::read_to_string(out.path().join("results.csv")).expect("results.csv");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("arm,model,K,ms_per_step,status,steps,first_step_ms,wall_s")
    );
    let mut reported = BTreeSet::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), 8, "row {line}");
        assert_eq!(fields[4], "ok", "row {line}");
        let ms: f64 = fields[3].parse().unwrap_or(f64::NAN);
        assert!(ms.is_finite() && ms > 0.0, "ms per step in row {line}");
        reported.insert((
            fields[0].to_string(),
            fields[1].to_string(),
            fields[2].parse::<usize>().unwrap(),
        ));
    }
    assert_eq!(reported, planned, "one CSV row per planned run");

    let md = std::fs::read_to_string(out.path().join("results.md")).expect("results.md");
    assert!(
        md.contains("| model | K | sequential ms/step | grouped ms/step | speedup"),
        "{md}"
    );
    for (_, model, k) in &planned {
        let row = format!("| {model} | {k} | ");
        let line = md.lines().find(|l| l.starts_with(&row));
        let line = line.unwrap_or_else(|| panic!("results.md has no row {row}:\n{md}"));
        assert!(line.contains("x |"), "a speedup in {line}");
    }
    // The parity check: one row per model and member (K = 2 in short mode), all within
    // tolerance, and the same rows in results.md.
    let parity = std::fs::read_to_string(out.path().join("parity.csv")).expect("parity.csv");
    let rows: Vec<&str> = parity.lines().skip(1).collect();
    assert_eq!(rows.len(), 6, "3 models x 2 members:\n{parity}");
    assert!(rows.iter().all(|r| r.ends_with(",true")), "{parity}");
    assert!(
        md.contains("## Parity: K members as a group vs each alone (atol 1e-5, rtol 1e-4): ok"),
        "{md}"
    );
    for model in ["mlp", "cnn", "transformer"] {
        assert!(
            md.contains(&format!("| {model} | 1 | ")),
            "a parity row for {model}: {md}"
        );
    }
    // The recommendation: a report for the three models and its table in results.md.
    let recommend: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("recommend.json")).expect("recommend.json"),
    )
    .unwrap();
    assert_eq!(recommend.as_array().map(Vec::len), Some(3), "{recommend}");
    assert!(md.contains("## Group-size recommendation: ok"), "{md}");
    assert!(
        md.contains("| model | K measured | base MiB | MiB per member |"),
        "{md}"
    );
    // The study benchmark: one row per arm, both on wgpu, and their table in results.md.
    let study = std::fs::read_to_string(out.path().join("study.csv")).expect("study.csv");
    let mut lines = study.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let arms: Vec<&str> = rows.iter().map(|r| r[column("arm")]).collect();
    assert_eq!(arms, ["sequential", "grouped"], "{study}");
    for row in &rows {
        assert!(row[column("backend")].contains("wgpu"), "{study}");
        let best: f64 = row[column("best_accuracy")].parse().unwrap();
        assert!((0.0..=1.0).contains(&best), "{study}");
    }
    assert!(
        md.contains("## Study benchmark: sequential: ok") && md.contains("grouped: ok"),
        "{md}"
    );
}
