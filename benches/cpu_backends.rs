//! Burn 0.21 CPU backends compared (issue 5): one training step (forward, cross-entropy,
//! backward, SGD) of K models stepped one after another on `Autodiff<Inner>` vs one batched
//! group on `Autodiff<Vmap<Inner>>`, K in {1, 8} (`KS=2,4,8,16` for others), on the three
//! benchmark models.
//!
//! Protocol: per arm, warm-up steps (at least one, and for at least 0.3 s), then the median of 5
//! timed steps (`SAMPLES` overrides 5). Prints one markdown row per model.
//!
//! Run: `cargo bench --bench cpu_backends [-- mlp8 mlp784 cnn]` (all models when none is
//! named). The inner backend is chosen by the facade's features, one per build:
//! default NdArray (multi-threads), `--features flex`, `candle`, `cpu`,
//! `openblas-system`, `blas-netlib`, `tch` (LibTorch on the CPU, built against a
//! pip-installed PyTorch: `source scripts/setup-tch.sh` first). `scripts/bench-cpu-backends.sh`
//! runs them all; results in book/src/cpu-backends.md.
//!
//! `CONV_LOWERING=inner|gemm|host` picks Vmap's convolution lowering
//! (`saturate::vmap::ConvLowering`: the inner backend's own convolution, unfold + one K-batched
//! matmul, or the host im2col kernels); without it, the library's default for the inner backend.
//! The bench applies saturate's allocator settings (`saturate::malloc::tune`) like the examples;
//! `SATURATE_MALLOC=system` measures glibc's defaults. Each row names its lowering and malloc.
//!
//! Parity: `cargo bench --bench cpu_backends -- parity` trains K = 4 members as one group on
//! `Autodiff<Vmap<Inner>>` and each member alone on `Autodiff<Inner>` from the member's initial
//! weights (same batch, same plain SGD, one learning rate per member), 5 steps, and compares
//! every parameter within atol 1e-5 + rtol 1e-4 (saturate-vmap's parity tolerance). Models:
//! MLP 8-16-4, MLP 784-128-10 and SmallCNN(16) without its dropout (a member alone cannot
//! reproduce the group's random masks). It also trains member 0 alone twice and prints the
//! largest difference, which shows whether the inner backend itself is run-to-run
//! deterministic, and each member alone from a start 1-2 ulp away against the member alone,
//! which shows how far the training run alone amplifies rounding-sized differences (neither
//! counts in the verdict). Exits with status 1 when a member is out of tolerance.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use burn::backend::Autodiff;
use burn::module::{AutodiffModule, Module, ModuleMapper, ModuleVisitor, Param};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::optim::GradientsParams;
use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::backend::{AutodiffBackend, Backend, BackendTypes};
use burn::tensor::{Int, Tensor, TensorData};
use common::{batch, train_step, Lr, Model, Net, SgdStep};
use saturate::vmap::{
    conv_lowering, member_data, per_member, set_conv_lowering, Batched, ConvLowering, DeepCopy,
    Vmap, VmapDevice,
};

#[cfg(feature = "tch")]
type Inner = burn::backend::LibTorch<f32>;
#[cfg(all(feature = "cpu", not(feature = "tch")))]
type Inner = burn::backend::Cpu;
#[cfg(all(feature = "candle", not(any(feature = "tch", feature = "cpu"))))]
type Inner = burn::backend::Candle;
#[cfg(all(
    feature = "flex",
    not(any(feature = "tch", feature = "cpu", feature = "candle"))
))]
type Inner = burn::backend::Flex;
#[cfg(not(any(feature = "tch", feature = "cpu", feature = "candle", feature = "flex")))]
type Inner = burn::backend::NdArray<f32, i64>;
type Seq = Autodiff<Inner>;
type Grouped = Autodiff<Vmap<Inner>>;

/// The backend's name as the docs' table spells it.
fn backend_name() -> &'static str {
    if cfg!(feature = "tch") {
        "libtorch (tch, CPU)"
    } else if cfg!(feature = "cpu") {
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
        "ndarray (mt)"
    }
}

fn model_name(model: Model) -> &'static str {
    match model {
        Model::Mlp8 => "MLP 8-16-4 b64",
        Model::Mlp784 => "MLP 784-128-10 b128",
        Model::Cnn => "SmallCNN(16) b128",
        Model::Transformer => "PatchTransformer(32) b128",
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

/// Runs one arm unless `ARMS` (a comma-separated subset of `seq1,grp1,seq8,grp8,...`, for
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

/// Parity tolerance per element (f32), saturate-vmap's: `|group - alone| <= ATOL + RTOL *
/// |alone|`.
const ATOL: f64 = 1e-5;
/// See [`ATOL`].
const RTOL: f64 = 1e-4;
/// Members of the parity run, and their learning rates (all different).
const PARITY_LRS: [f64; 4] = [0.1, 0.03, 0.2, 0.05];
/// SGD steps of the parity run.
const PARITY_STEPS: usize = 5;

/// SmallCNN(16) of `benches/common` without its dropout layer, for the parity run: dropout's
/// random masks are what a member trained alone cannot reproduce.
#[derive(Module, Debug)]
struct ParityCnn<B: Backend> {
    conv1: Conv2d<B>,
    conv2: Conv2d<B>,
    pool: MaxPool2d,
    fc: Linear<B>,
    relu: Relu,
}

impl<B: Backend> ParityCnn<B> {
    fn new(device: &B::Device) -> Self {
        let conv = |i, o| {
            Conv2dConfig::new([i, o], [3, 3])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(device)
        };
        Self {
            conv1: conv(1, 16),
            conv2: conv(16, 32),
            pool: MaxPool2dConfig::new([2, 2]).with_strides([2, 2]).init(),
            fc: LinearConfig::new(32 * 7 * 7, 10).init(device),
            relu: Relu::new(),
        }
    }
    fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        let n = x.dims()[0];
        let x = x.reshape([n, 1, 28, 28]);
        let x = self.pool.forward(self.relu.forward(self.conv1.forward(x)));
        let x = self.pool.forward(self.relu.forward(self.conv2.forward(x)));
        let [n, c, h, w] = x.dims();
        self.fc.forward(x.reshape([n, c * h * w]))
    }
}

/// A module the parity run trains: its forward pass on flat inputs.
trait Forward<B: Backend>: Module<B> {
    fn logits(&self, x: Tensor<B, 2>) -> Tensor<B, 2>;
}

impl<B: Backend> Forward<B> for Net<B> {
    fn logits(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.forward(x)
    }
}

impl<B: Backend> Forward<B> for ParityCnn<B> {
    fn logits(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.forward(x)
    }
}

/// One step of the parity run: forward, cross-entropy, backward, the bench's plain SGD.
fn parity_step<B: AutodiffBackend, M: AutodiffModule<B> + Forward<B>>(
    module: M,
    x: Tensor<B, 2>,
    y: Tensor<B, 1, Int>,
    lr: Lr<B::InnerBackend>,
) -> M {
    let logits = module.logits(x);
    let loss = CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(logits, y);
    let mut grads = GradientsParams::from_grads(loss.backward(), &module);
    module.map(&mut SgdStep {
        grads: &mut grads,
        lr,
    })
}

/// Every float parameter of a module, flattened, in visit order; for a group, one list per
/// member.
#[derive(Default)]
struct Params {
    per_member: Vec<Vec<Vec<f32>>>,
}

impl<B: Backend> ModuleVisitor<B> for Params {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        self.per_member.resize(1, Vec::new());
        self.per_member[0].push(flat(param.val().into_data()));
    }
}

/// [`Params`] of a group: [`member_data`] splits each batched parameter by member.
#[derive(Default)]
struct GroupParams {
    per_member: Vec<Vec<Vec<f32>>>,
}

impl ModuleVisitor<Grouped> for GroupParams {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<Grouped, D>>) {
        let members = member_data(param.val());
        self.per_member.resize(members.len(), Vec::new());
        for (k, data) in members.into_iter().enumerate() {
            self.per_member[k].push(flat(data));
        }
    }
}

fn flat(data: TensorData) -> Vec<f32> {
    data.convert::<f32>().into_vec::<f32>().expect("f32 data")
}

fn params<B: Backend, M: Module<B>>(module: &M) -> Vec<Vec<f32>> {
    let mut p = Params::default();
    module.visit(&mut p);
    p.per_member.pop().unwrap_or_default()
}

/// The largest `|a - b|`, and whether every element is within `ATOL + RTOL * |b|` (NaN fails).
fn max_diff(a: &[Vec<f32>], b: &[Vec<f32>]) -> (f64, bool) {
    assert_eq!(a.len(), b.len(), "parameter count");
    let mut worst = 0.0f64;
    let mut ok = true;
    for (a, b) in a.iter().zip(b) {
        assert_eq!(a.len(), b.len(), "parameter size");
        for (&x, &y) in a.iter().zip(b) {
            let d = (f64::from(x) - f64::from(y)).abs();
            if d.is_nan() || d > ATOL + RTOL * f64::from(y).abs() {
                ok = false;
            }
            worst = if d.is_nan() {
                f64::INFINITY
            } else {
                worst.max(d)
            };
        }
    }
    (worst, ok)
}

/// Every float parameter times `1 + 2^-23`: one or two ulp away from where it was, the size of
/// the rounding differences between two convolution algorithms.
struct Nudge;

impl<B: AutodiffBackend> ModuleMapper<B> for Nudge {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let (id, tensor, mapper) = param.consume();
        let nudged = tensor.inner().mul_scalar(1.0 + f32::EPSILON as f64);
        Param::from_mapped_value(id, Tensor::from_inner(nudged).require_grad(), mapper)
    }
}

/// Trains a group of `PARITY_LRS.len()` members and each member alone; prints one row per
/// member and returns whether all are within tolerance.
fn parity<MG, MA>(
    name: &str,
    model: Model,
    init_group: impl Fn(&VmapDevice<Inner>) -> MG,
    init_alone: impl Fn(&<Inner as BackendTypes>::Device) -> MA,
) -> bool
where
    MG: AutodiffModule<Grouped> + DeepCopy<Grouped> + Forward<Grouped>,
    MA: AutodiffModule<Seq> + Forward<Seq> + Clone,
{
    let device = Default::default();
    let k = PARITY_LRS.len();
    let group: Batched<MG> = Batched::init(k, &device, init_group).unwrap();
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let alone: Vec<MA> = (0..k)
        .map(|i| {
            let member = group.member::<Grouped>(i).unwrap();
            let bytes = Recorder::<Grouped>::record(&recorder, member.into_record(), ()).unwrap();
            let record = Recorder::<Seq>::load(&recorder, bytes, &device).unwrap();
            init_alone(&device).load_record(record)
        })
        .collect();
    let (x, y) = batch::<Inner>(model, &device);
    let group_device = group.device();
    let gx = Tensor::<Grouped, 2>::from_data(x.to_data(), &group_device);
    let gy = Tensor::<Grouped, 1, Int>::from_data(y.to_data(), &group_device);
    let lr = per_member::<Vmap<Inner>>(&PARITY_LRS, &group_device).unwrap();
    let mut net = group.into_inner();
    for _ in 0..PARITY_STEPS {
        net = parity_step(net, gx.clone(), gy.clone(), Lr::PerMember(lr.clone()));
    }
    let mut grouped = GroupParams::default();
    net.visit(&mut grouped);

    let sx = Tensor::<Seq, 2>::from_data(x.into_data(), &device);
    let sy = Tensor::<Seq, 1, Int>::from_data(y.into_data(), &device);
    let train_alone = |m: MA, lr: f64| {
        (0..PARITY_STEPS).fold(m, |m, _| {
            parity_step(m, sx.clone(), sy.clone(), Lr::Scalar(lr))
        })
    };
    let mut all_ok = true;
    for (i, (m, &lr)) in alone.iter().zip(&PARITY_LRS).enumerate() {
        let before = params(m);
        let trained = params(&train_alone(m.clone(), lr));
        let (change, _) = max_diff(&trained, &before);
        let (diff, ok) = max_diff(&grouped.per_member[i], &trained);
        all_ok &= ok;
        println!(
            "| {} | {name} | {i} | {lr} | {diff:.3e} | {change:.3e} | {} |",
            backend_name(),
            if ok { "ok" } else { "FAILED" }
        );
    }
    // The inner backend's own sensitivity, not counted in the verdict: each member alone
    // again from a start 1-2 ulp away (every parameter times 1 + 2^-23), against the same
    // member alone from its own start. Differences of the size of the group's show that the
    // training run itself amplifies rounding-sized differences that much.
    for (i, (m, &lr)) in alone.iter().zip(&PARITY_LRS).enumerate() {
        let trained = params(&train_alone(m.clone(), lr));
        let nudged = params(&train_alone(m.clone().map(&mut Nudge), lr));
        let (diff, ok) = max_diff(&nudged, &trained);
        println!(
            "| {} | {name} | {i} alone, from a 1-2 ulp nudged start | {lr} | {diff:.3e} | - | {} |",
            backend_name(),
            if ok {
                "within tolerance"
            } else {
                "out of tolerance"
            }
        );
    }
    // The inner backend against itself: member 0 alone, trained twice.
    let once = params(&train_alone(alone[0].clone(), PARITY_LRS[0]));
    let twice = params(&train_alone(alone[0].clone(), PARITY_LRS[0]));
    let (diff, _) = max_diff(&once, &twice);
    println!(
        "| {} | {name} | 0 alone, twice | {} | {diff:.3e} | - | {} |",
        backend_name(),
        PARITY_LRS[0],
        if diff == 0.0 {
            "bit for bit"
        } else {
            "differs"
        }
    );
    all_ok
}

/// The parity run (`-- parity`); exits with status 1 when a member is out of tolerance.
fn parity_main() {
    println!(
        "parity on {}: K = {}, {PARITY_STEPS} SGD steps, atol {ATOL:e}, rtol {RTOL:e}, conv \
         lowering {:?}",
        backend_name(),
        PARITY_LRS.len(),
        saturate::vmap::conv_lowering::<Inner>()
    );
    println!("| backend | model | member | lr | max abs diff group vs alone | max change in training | ok |");
    println!("|---|---|---|---|---|---|---|");
    let mut ok = true;
    for (name, model) in [
        ("MLP 8-16-4", Model::Mlp8),
        ("MLP 784-128-10", Model::Mlp784),
    ] {
        ok &= parity(name, model, |d| Net::new(model, d), |d| Net::new(model, d));
    }
    ok &= parity(
        "SmallCNN(16) w/o dropout",
        Model::Cnn,
        ParityCnn::new,
        ParityCnn::new,
    );
    if ok {
        println!("parity: ok");
    } else {
        eprintln!("parity: FAILED");
        std::process::exit(1);
    }
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
    // The lowering in effect: the library's default for the inner backend unless
    // `CONV_LOWERING` picks one.
    if let Ok(name) = std::env::var("CONV_LOWERING") {
        let lowering: ConvLowering = name
            .parse()
            .unwrap_or_else(|e| panic!("CONV_LOWERING: {e}"));
        set_conv_lowering::<Inner>(lowering);
    }
    let lowering = conv_lowering::<Inner>().to_string();
    if names.iter().any(|a| a == "parity") {
        parity_main();
        return;
    }
    let models: Vec<Model> = [
        ("mlp8", Model::Mlp8),
        ("mlp784", Model::Mlp784),
        ("cnn", Model::Cnn),
    ]
    .into_iter()
    .filter(|(n, _)| names.is_empty() || names.iter().any(|a| a == n))
    .map(|(_, m)| m)
    .collect();
    // The allocator settings saturate's examples use (`saturate::malloc::tune`), unless
    // `SATURATE_MALLOC=system` or glibc tunables from the environment are being measured.
    let tuned = std::env::var("GLIBC_TUNABLES").is_err() && saturate::malloc::tune();
    let backend = backend_name();
    let malloc = if tuned {
        "tuned"
    } else if std::env::var("GLIBC_TUNABLES").is_ok() {
        "GLIBC_TUNABLES"
    } else {
        "system"
    };
    let label = format!("{backend}, conv {lowering}, malloc {malloc}");
    // The member counts to time (`KS`, comma-separated; default 1 and 8).
    let ks: Vec<usize> = std::env::var("KS")
        .unwrap_or_else(|_| "1,8".into())
        .split(',')
        .map(|k| k.trim().parse().expect("KS: comma-separated member counts"))
        .collect();
    let mut rows = Vec::new();
    for model in models {
        eprintln!("{label} / {}:", model_name(model));
        let mut cells = Vec::new();
        let mut ratios = Vec::new();
        for &k in &ks {
            let s = arm(&format!("seq{k}"), &format!("sequential K={k}"), || {
                sequential(model, k, samples)
            });
            let g = arm(&format!("grp{k}"), &format!("grouped K={k}"), || {
                grouped(model, k, samples)
            });
            cells.push(cell(s));
            cells.push(cell(g));
            ratios.push(match (s, g) {
                (Some(s), Some(g)) => format!("{:.2}", s.as_secs_f64() / g.as_secs_f64()),
                _ => "-".into(),
            });
        }
        rows.push(format!(
            "| {label} | {} | {} | {} |",
            model_name(model),
            cells.join(" | "),
            ratios.join(" | ")
        ));
    }
    let heads: Vec<String> = ks
        .iter()
        .flat_map(|k| [format!("seq K={k} (ms)"), format!("grouped K={k} (ms)")])
        .collect();
    let ratio_heads: Vec<String> = ks.iter().map(|k| format!("seq/grouped K={k}")).collect();
    println!(
        "| backend | model | {} | {} |",
        heads.join(" | "),
        ratio_heads.join(" | ")
    );
    println!(
        "|---|---|{}",
        "---|".repeat(heads.len() + ratio_heads.len())
    );
    for row in rows {
        println!("{row}");
    }
}
