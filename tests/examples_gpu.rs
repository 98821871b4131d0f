//! The examples behind the GPU check, in their short mode on NdArray: `parity_check` (the
//! examples' three models trained as a group vs each member alone, the binary
//! scripts/gpu-check.sh runs on CUDA) and `recommend_group_size` (the group-size search on the
//! three models, with its memory prediction checked against a measurement).

use crate::support::run_example;

#[test]
fn parity_check_short_mode_matches_every_member_trained_alone() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("parity.csv");
    run_example(
        "parity_check",
        &["--csv", csv.to_str().unwrap()],
        &[],
        dir.path(),
    );
    let text = std::fs::read_to_string(&csv).expect("parity_check writes --csv");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("model,member,lr,parameters,max_abs_diff,worst_parameter,max_change,ok")
    );
    let mut seen = Vec::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), 8, "row {line}");
        let diff: f64 = fields[4].parse().unwrap();
        let change: f64 = fields[6].parse().unwrap();
        assert!(fields[3].parse::<usize>().unwrap() > 0, "row {line}");
        // The example's own tolerance is per element; here: the largest difference is tiny
        // next to what training moved the weights.
        assert!(diff.is_finite() && diff <= 1e-4, "row {line}");
        assert!(change > 1e-4, "the member trained (row {line})");
        assert_eq!(fields[7], "true", "row {line}");
        seen.push((fields[0].to_string(), fields[1].parse::<usize>().unwrap()));
    }
    let expected: Vec<(String, usize)> = ["mlp", "cnn", "transformer"]
        .iter()
        .flat_map(|m| (0..2).map(move |k| (m.to_string(), k)))
        .collect();
    assert_eq!(
        seen, expected,
        "one row per model and member (K = 2 in short mode)"
    );
}

#[test]
fn recommend_group_size_short_mode_predicts_memory_within_ten_percent() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("recommend.json");
    run_example(
        "recommend_group_size",
        &["--json", json.to_str().unwrap()],
        &[],
        dir.path(),
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let models: Vec<&str> = report
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["mlp", "cnn", "transformer"]);
    for model in report.as_array().unwrap() {
        let recommendation = &model["recommendation"];
        let recommended = recommendation["recommended"].as_u64().unwrap();
        assert!((1..=4).contains(&recommended), "{model}");
        let ks: Vec<u64> = recommendation["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["group_size"].as_u64().unwrap())
            .collect();
        assert!(
            ks.len() >= 2 && ks[0] == 1,
            "measured K = 1 and more: {ks:?}"
        );
        assert!(ks.windows(2).all(|w| w[1] == 2 * w[0]), "{ks:?}");
        // More members hold more weights, gradients and activations.
        let slope = recommendation["memory_fit"]["slope"].as_f64().unwrap();
        assert!(slope.is_finite(), "{model}");
        // On the CPU the measurements (resident memory) resolve single pages, so the 10%
        // decides.
        let error = model["relative_error"].as_f64().unwrap();
        assert!(
            error <= 0.10,
            "prediction off by {:.1}%: {model}",
            error * 100.0
        );
        assert_eq!(model["within_tolerance"], true, "{model}");
        assert!(model["measured_at_recommended_bytes"].as_u64().unwrap() > 0);
    }
}
