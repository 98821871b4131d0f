//! Every op of burn 0.21's backend traits must have a differential case (its name as a string
//! literal in `tests/ops/*.rs`) or be listed in `UNSUPPORTED` with the reason.
//!
//! `ops_list.txt` is generated from burn-backend 0.21.0's trait sources by
//! `scripts/ops_skeleton.py` (see `scripts/ops_list.sh`); `ops_list_matches_burn_sources`
//! regenerates it when the sources are in the cargo registry, so a new op can't be forgotten.

const OPS_LIST: &str = include_str!("ops_list.txt");

const CASES: &[&str] = &[include_str!("ops/float.rs")];

/// Ops that are not supported under vmap, with the reason (they panic with a message naming
/// the op). Quantized ops are covered by a blanket rule below.
const UNSUPPORTED: &[(&str, &str)] = &[];

fn ops() -> Vec<(String, String)> {
    OPS_LIST
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut parts = l.split_whitespace();
            let trait_name = parts.next().unwrap().to_string();
            let _kind = parts.next().unwrap();
            (trait_name, parts.next().unwrap().to_string())
        })
        .collect()
}

#[test]
fn every_backend_op_has_a_differential_case() {
    let mut missing = Vec::new();
    for (trait_name, op) in ops() {
        if trait_name == "QTensorOps" {
            continue;
        }
        let needle = format!("\"{op}\"");
        if !CASES.iter().any(|src| src.contains(&needle)) {
            missing.push(format!("{trait_name}::{op}"));
        }
    }
    assert!(
        missing.is_empty(),
        "{} ops have no differential case:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn ops_list_matches_burn_sources() {
    let home = std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
    let Ok(index_dirs) = std::fs::read_dir(format!("{home}/registry/src")) else {
        eprintln!("cargo registry sources not found; skipping the ops list check");
        return;
    };
    for dir in index_dirs.flatten() {
        let ops_dir = dir.path().join("burn-backend-0.21.0/src/backend/ops");
        if !ops_dir.exists() {
            continue;
        }
        let listed = ops();
        for (file, trait_name) in [
            ("tensor.rs", "FloatTensorOps"),
            ("int_tensor.rs", "IntTensorOps"),
            ("bool_tensor.rs", "BoolTensorOps"),
            ("modules/base.rs", "ModuleOps"),
            ("activation.rs", "ActivationOps"),
            ("transaction.rs", "TransactionOps"),
            ("qtensor.rs", "QTensorOps"),
        ] {
            let src = std::fs::read_to_string(ops_dir.join(file)).unwrap();
            let start = src.find(&format!("pub trait {trait_name}")).unwrap();
            for line in src[start..].lines() {
                if let Some(rest) = line.strip_prefix("    fn ") {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    assert!(
                        listed.iter().any(|(t, op)| t == trait_name && *op == name),
                        "{trait_name}::{name} is in burn's sources but not in tests/ops_list.txt"
                    );
                }
            }
        }
        return;
    }
}
