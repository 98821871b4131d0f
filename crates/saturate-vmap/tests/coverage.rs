//! Op coverage: every op of burn 0.21's backend traits is covered by a differential case, i.e. a
//! comparison of the op through `Vmap<NdArray>` with the same op member by member on NdArray
//! that PASSED in this run, for K in {1, 3} and every batched/unbatched mix of its operands.
//!
//! How it is counted: `every_backend_op_has_a_differential_case` runs the differential cases
//! (`tests/ops/`, this same test binary, filter `ops::`) with [`COVERAGE_OUT`] set; each
//! passing case records its op there (`harness::record_covered`). A test that only mentions an
//! op, or a `#[should_panic]` test showing that NdArray lacks an op, records nothing.
//!
//! Exceptions, each with its reason: [`NOT_TESTABLE_ON_NDARRAY`] (ops NdArray does not
//! implement, so there is nothing to compare against here), [`PROPERTY_CHECKED`] (random draws
//! and `empty`, whose values have no member-by-member reference: they must pass their property
//! checks instead) and the quantized ops (`QTensorOps`:
//! a quantized tensor cannot carry a member axis; `quantization_is_unsupported_and_says_so`
//! checks the error).
//!
//! `ops_list.txt` lists the ops as `<trait> <required|provided> <op>`. It is written from
//! burn-backend 0.21.0's trait sources (`src/backend/ops/{tensor, int_tensor, bool_tensor,
//! activation, transaction, qtensor}.rs`, `modules/base.rs`) with
//! `scripts/ops_skeleton.py <file> --required` and `--provided`;
//! `ops_list_matches_burn_sources` checks it against those sources in the cargo registry, both
//! ways, so a new or renamed op cannot be forgotten.

use crate::harness::COVERAGE_OUT;

const OPS_LIST: &str = include_str!("ops_list.txt");

/// Ops NdArray does not implement: the differential harness has no reference for them on this
/// inner backend. Vmap forwards each to its inner backend (member axis folded into the batch,
/// or the axis argument shifted past it); with NdArray the inner "not supported" panic
/// surfaces, which the `#[should_panic]` tests next to them show (they do not count as
/// coverage). A backend that has them (LibTorch through the `tch` feature) can test them.
const NOT_TESTABLE_ON_NDARRAY: &[(&str, &str)] = &[
    ("float_argtopk", "NdArray: `argtopk` not implemented"),
    ("int_argtopk", "NdArray: `argtopk` not implemented"),
    ("rfft", "NdArray: no FFT"),
    ("irfft", "NdArray: no FFT"),
    (
        "ctc_loss_backward",
        "NdArray: `has_ctc_loss_backward()` is false (autodiff differentiates `ctc_loss`)",
    ),
];

/// Ops whose result has no member-by-member reference: random draws (a member's values cannot
/// equal an independent draw on the inner backend) and `float_empty` (unspecified values). Their
/// tests check properties instead (logical shape, member count, members drawn independently)
/// and record them with `harness::record_property_checked`.
const PROPERTY_CHECKED: &[&str] = &["float_random", "int_random", "float_empty"];

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

/// Runs the differential cases of this binary with the coverage registry on; returns the ops
/// they recorded.
fn run_differential_cases() -> std::collections::BTreeSet<String> {
    let out =
        std::env::temp_dir().join(format!("saturate-vmap-coverage-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let exe = std::env::current_exe().expect("the test binary's path");
    let run = std::process::Command::new(exe)
        .args(["ops::", "--test-threads", "2"])
        .env(COVERAGE_OUT, &out)
        .output()
        .expect("run the differential cases");
    assert!(
        run.status.success(),
        "the differential cases failed:\n{}",
        String::from_utf8_lossy(&run.stdout)
    );
    let recorded = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    recorded.lines().map(str::to_string).collect()
}

#[test]
fn every_backend_op_has_a_differential_case() {
    if std::env::var(COVERAGE_OUT).is_ok() {
        // The run started below; the registry is its output, not its input.
        return;
    }
    let covered = run_differential_cases();
    let untestable: Vec<&str> = NOT_TESTABLE_ON_NDARRAY.iter().map(|(op, _)| *op).collect();
    let listed = ops();
    let mut missing = Vec::new();
    for (trait_name, op) in &listed {
        if trait_name == "QTensorOps" || untestable.contains(&op.as_str()) {
            continue;
        }
        if PROPERTY_CHECKED.contains(&op.as_str()) {
            if !covered.contains(&format!("property {op}")) {
                missing.push(format!("{trait_name}::{op} (property checks)"));
            }
            continue;
        }
        if !covered.contains(op) {
            missing.push(format!("{trait_name}::{op}"));
        }
    }
    assert!(
        missing.is_empty(),
        "{} ops have no passing differential case:\n{}",
        missing.len(),
        missing.join("\n")
    );
    for op in untestable {
        assert!(
            listed.iter().any(|(_, o)| o == op),
            "`{op}` in NOT_TESTABLE_ON_NDARRAY is not an op of burn's traits"
        );
        assert!(
            !covered.contains(op),
            "`{op}` has a passing differential case: remove it from NOT_TESTABLE_ON_NDARRAY"
        );
    }
}

/// The `fn` names declared directly in `pub trait <trait_name>` (up to the trait's closing
/// brace: test functions after it are not ops).
fn trait_fns(src: &str, trait_name: &str) -> Vec<String> {
    let start = src
        .find(&format!("pub trait {trait_name}"))
        .unwrap_or_else(|| panic!("`pub trait {trait_name}` not found"));
    let mut out = Vec::new();
    for line in src[start..].lines().skip(1) {
        if line == "}" {
            break;
        }
        if let Some(rest) = line.strip_prefix("    fn ") {
            out.push(
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect(),
            );
        }
    }
    out
}

#[test]
fn ops_list_matches_burn_sources() {
    let home = std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
    let ops_dir = std::fs::read_dir(format!("{home}/registry/src"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.path().join("burn-backend-0.21.0/src/backend/ops"))
        .find(|p| p.exists());
    let Some(ops_dir) = ops_dir else {
        assert!(
            std::env::var("CI").is_err(),
            "burn-backend 0.21.0's sources are not in {home}/registry/src (set CARGO_HOME)"
        );
        eprintln!("burn-backend 0.21.0's sources not found under {home}; ops list not checked");
        return;
    };
    let listed = ops();
    let mut from_sources = Vec::new();
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
        for name in trait_fns(&src, trait_name) {
            assert!(
                listed.iter().any(|(t, op)| t == trait_name && *op == name),
                "{trait_name}::{name} is in burn's sources but not in tests/ops_list.txt"
            );
            from_sources.push((trait_name.to_string(), name));
        }
    }
    for entry in &listed {
        assert!(
            from_sources.contains(entry),
            "{}::{} is in tests/ops_list.txt but not in burn's sources",
            entry.0,
            entry.1
        );
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
