//! `burn_train` in its short mode: burn-train's own loop trains a CNN group with per-member
//! metrics, keeps each member's best checkpoint, and one member runs as a plain module.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::run_example;

/// Members of the example's group.
const MEMBERS: usize = 4;
/// Epochs of the short mode.
const EPOCHS: usize = 2;

/// The `key=value` pairs of the example's `RESULT` line.
fn result_line(stdout: &str) -> BTreeMap<String, String> {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT line in:\n{stdout}"));
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The values a burn-train metric log holds (`value,count` per line).
fn logged(path: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()));
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let value = l.split(',').next().unwrap();
            value
                .parse()
                .unwrap_or_else(|e| panic!("{}: `{l}`: {e}", path.display()))
        })
        .collect()
}

#[test]
fn burn_train_trains_a_group_with_per_member_metrics_and_best_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_example("burn_train", &[], &[], dir.path());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result = result_line(&stdout);
    let out = dir.path().join("burn_train");

    // burn-train logged loss and accuracy of every member, in both splits, every epoch.
    let mut final_losses = Vec::new();
    for k in 0..MEMBERS {
        for split in ["train", "valid"] {
            for epoch in 1..=EPOCHS {
                let epoch_dir = out.join(split).join(format!("epoch-{epoch}"));
                let loss = logged(&epoch_dir.join(format!("Loss_member_{k}.log")));
                let accuracy = logged(&epoch_dir.join(format!("Accuracy_member_{k}.log")));
                assert!(!loss.is_empty() && !accuracy.is_empty());
                assert!(
                    loss.iter().all(|v| v.is_finite() && *v > 0.0),
                    "{split} loss of member {k}, epoch {epoch}: {loss:?}"
                );
                assert!(
                    accuracy.iter().all(|v| (0.0..=100.0).contains(v)),
                    "{split} accuracy of member {k}, epoch {epoch}: {accuracy:?}"
                );
                if split == "train" && epoch == EPOCHS {
                    final_losses.push(loss);
                }
            }
        }
    }
    // Members differ (initialisation, dropout, learning-rate factor): so do their losses.
    for k in 1..MEMBERS {
        assert_ne!(
            final_losses[k], final_losses[0],
            "member {k} logged member 0's loss"
        );
    }

    // Every member's best epoch has its checkpoint, and every member its own file.
    let best: Vec<usize> = result["best_epochs"]
        .split(',')
        .map(|e| e.parse().expect("every member has a best epoch"))
        .collect();
    assert_eq!(best.len(), MEMBERS);
    for (k, epoch) in best.iter().enumerate() {
        assert!(
            (1..=EPOCHS).contains(epoch),
            "member {k}: best epoch {epoch}"
        );
        let checkpoint = out.join("checkpoint").join(format!("model-{epoch}.mpk"));
        assert!(checkpoint.exists(), "{} is missing", checkpoint.display());
        let member = out.join(format!("member-{k}.mpk"));
        assert!(member.exists(), "{} is missing", member.display());
    }

    // The plain module computed what the group computed.
    let gap: f64 = result["logit_gap"].parse().unwrap();
    assert!(gap <= 1e-4, "logit gap {gap}");
    let accuracy: f64 = result["plain_accuracy"].parse().unwrap();
    assert!((0.0..=1.0).contains(&accuracy), "accuracy {accuracy}");
}
