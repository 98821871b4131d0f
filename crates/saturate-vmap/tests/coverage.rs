//! Every op of burn 0.21's backend traits must have a differential case (its name as a string
//! literal in `tests/ops/*.rs`). Unsupported ops have a `#[should_panic]` case naming them.
//!
//! `ops_list.txt` is generated from burn-backend 0.21.0's trait sources by
//! `scripts/ops_skeleton.py` (see `scripts/ops_list.sh`); `ops_list_matches_burn_sources`
//! regenerates it when the sources are in the cargo registry, so a new op can't be forgotten.

const OPS_LIST: &str = include_str!("ops_list.txt");

/// The case files. An op that is not supported under vmap has a `#[should_panic]` case that
/// names it, so it is listed too. Quantized ops are all unsupported (they panic with a message
/// naming the op; `q_into_data` returns the batched-read error).
const CASES: &[&str] = &[
    include_str!("ops/float.rs"),
    include_str!("ops/activation.rs"),
    include_str!("ops/transaction.rs"),
    include_str!("ops/int.rs"),
    include_str!("ops/bool.rs"),
    include_str!("ops/module.rs"),
];

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

/// Quantized tensors cannot carry a member axis: quantizing panics with a message naming the op.
#[test]
#[should_panic(expected = "`quantize` is not supported under vmap")]
fn quantization_is_unsupported_and_says_so() {
    use burn::tensor::ops::QTensorOps;
    use burn::tensor::quantization::QuantScheme;
    let tensor = crate::harness::random_on_group(2, vec![4]);
    let _ = crate::harness::V::quantize_dynamic(tensor, &QuantScheme::default());
}
