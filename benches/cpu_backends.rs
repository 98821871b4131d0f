//! Burn 0.21 CPU backends compared (issue 5): one training step (forward, cross-entropy,
//! backward, SGD) of K models stepped one after another on `Autodiff<Inner>` vs one batched
//! group on `Autodiff<Vmap<Inner>>`, K in {1, 8}, on the three benchmark models.
//!
//! Protocol: per arm, warm-up steps (at least one, and for at least 0.3 s), then the median of 5
//! timed steps (`SAMPLES` overrides 5). Prints one markdown row per model.
//!
//! Run: `cargo bench --bench cpu_backends [-- mlp8 mlp784 cnn]` (all models when none is
//! named). The inner backend is chosen by the facade's features, one per build:
//! default NdArray (simd + multi-threads), `--features flex`, `candle`, `cpu`,
//! `openblas-system`, `blas-netlib`. `scripts/bench-cpu-backends.sh` runs them all;
//! results in book/src/cpu-backends.md.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use burn::backend::Autodiff;
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;
use common::{batch, train_step, Lr, Model, Net};
use saturate::vmap::{per_member, Batched, Vmap};

#[cfg(feature = "cpu")]
type Inner = burn::backend::Cpu;
#[cfg(all(feature = "candle", not(feature = "cpu")))]
type Inner = burn::backend::Candle;
#[cfg(all(feature = "flex", not(any(feature = "cpu", feature = "candle"))))]
type Inner = burn::backend::Flex;
#[cfg(not(any(feature = "cpu", feature = "candle", feature = "flex")))]
type Inner = burn::backend::NdArray<f32, i64>;
type Seq = Autodiff<Inner>;
type Grouped = Autodiff<Vmap<Inner>>;

/// The backend's name as the docs' table spells it.
fn backend_name() -> &'static str {
    if cfg!(feature = "cpu") {
        "cpu (CubeCL)"
    } else if cfg!(feature = "candle") {
        "candle"
    } else if cfg!(feature = "flex") {
        "flex"
    } else if cfg!(feature = "openblas-system") {
        "ndarray + openblas-system"
    } else if cfg!(feature = "blas-netlib") {
        "ndarray + blas-netlib"
    } else {
        "ndarray (simd + mt)"
    }
}

fn model_name(model: Model) -> &'static str {
    match model {
        Model::Mlp8 => "MLP 8-16-4 b64",
        Model::Mlp784 => "MLP 784-128-10 b128",
        Model::Cnn => "SmallCNN(16) b128",
    }
}

/// Warm-up, then the median of `samples` timed calls of `step`; the device is synced after
/// each call so asynchronous backends are timed to completion.
fn measure(samples: usize, mut step: impl FnMut()) -> Duration {
    let sync = || Inner::sync(&Default::default()).expect("sync");
    let start = Instant::now();
    let mut warm = 0;
    while warm == 0 || start.elapsed() < Duration::from_millis(300) {
        step();
        sync();
        warm += 1;
    }
    let mut times: Vec<Duration> = (0..samples)
        .map(|_| {
            let t = Instant::now();
            step();
            sync();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[samples / 2]
}

fn sequential(model: Model, k: usize, samples: usize) -> Duration {
    let device = Default::default();
    let (x, y) = batch::<Inner>(model, &device);
    let x = Tensor::<Seq, 2>::from_data(x.into_data(), &device);
    let y = Tensor::from_data(y.into_data(), &device);
    let mut nets: Vec<Net<Seq>> = (0..k).map(|_| Net::new(model, &device)).collect();
    let lrs: Vec<f64> = (0..k).map(|i| 0.01 * (i + 1) as f64).collect();
    measure(samples, || {
        nets = std::mem::take(&mut nets)
            .into_iter()
            .zip(&lrs)
            .map(|(net, &lr)| train_step(net, x.clone(), y.clone(), Lr::Scalar(lr)))
            .collect();
    })
}

fn grouped(model: Model, k: usize, samples: usize) -> Duration {
    let inner_device = Default::default();
    let group: Batched<Net<Grouped>> =
        Batched::init(k, &inner_device, |d| Net::new(model, d)).unwrap();
    let device = group.device();
    // The data batch is shared by all members: built from data, it stays unbatched.
    let (x, y) = batch::<Inner>(model, &inner_device);
    let x = Tensor::<Grouped, 2>::from_data(x.into_data(), &device);
    let y = Tensor::from_data(y.into_data(), &device);
    let lrs: Vec<f64> = (0..k).map(|i| 0.01 * (i + 1) as f64).collect();
    let lr = per_member::<Vmap<Inner>>(&lrs, &device).unwrap();
    let mut net = Some(group.into_inner());
    measure(samples, || {
        let stepped = train_step(
            net.take().unwrap(),
            x.clone(),
            y.clone(),
            Lr::PerMember(lr.clone()),
        );
        net = Some(stepped);
    })
}

/// Runs one arm unless `ARMS` (a comma-separated subset of `seq1,grp1,seq8,grp8`, for
/// profiling) leaves it out; a panic (an op the backend or a batching rule does not support)
/// becomes `None` and its message is printed to stderr.
fn arm(key: &str, label: &str, f: impl FnOnce() -> Duration) -> Option<Duration> {
    if std::env::var("ARMS").is_ok_and(|arms| !arms.split(',').any(|a| a == key)) {
        return None;
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(d) => {
            eprintln!("  {label}: {:.3} ms", ms(d));
            Some(d)
        }
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            eprintln!("  {label}: FAILED: {msg}");
            None
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn cell(d: Option<Duration>) -> String {
    d.map_or("failed".into(), |d| format!("{:.3}", ms(d)))
}

fn main() {
    let samples: usize = std::env::var("SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    // cargo bench passes `--bench`; other arguments name models.
    let names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let models: Vec<Model> = [
        ("mlp8", Model::Mlp8),
        ("mlp784", Model::Mlp784),
        ("cnn", Model::Cnn),
    ]
    .into_iter()
    .filter(|(n, _)| names.is_empty() || names.iter().any(|a| a == n))
    .map(|(_, m)| m)
    .collect();
    let backend = backend_name();
    let malloc = if std::env::var("GLIBC_TUNABLES").is_ok_and(|v| v.contains("mmap_threshold")) {
        " + malloc tunables"
    } else {
        ""
    };
    let mut rows = Vec::new();
    for model in models {
        eprintln!("{backend}{malloc} / {}:", model_name(model));
        let s1 = arm("seq1", "sequential K=1", || sequential(model, 1, samples));
        let g1 = arm("grp1", "grouped K=1", || grouped(model, 1, samples));
        let s8 = arm("seq8", "sequential K=8", || sequential(model, 8, samples));
        let g8 = arm("grp8", "grouped K=8", || grouped(model, 8, samples));
        let ratio = match (s8, g8) {
            (Some(s), Some(g)) => format!("{:.2}", s.as_secs_f64() / g.as_secs_f64()),
            _ => "-".into(),
        };
        rows.push(format!(
            "| {backend}{malloc} | {} | {} | {} | {} | {} | {ratio} |",
            model_name(model),
            cell(s1),
            cell(g1),
            cell(s8),
            cell(g8)
        ));
    }
    println!("| backend | model | seq K=1 (ms) | grouped K=1 (ms) | seq K=8 (ms) | grouped K=8 (ms) | seq/grouped K=8 |");
    println!("|---|---|---|---|---|---|---|");
    for row in rows {
        println!("{row}");
    }
}
