//! Parity on any backend: the examples' MLP, CNN and patch transformer, K members trained as
//! one group vs each member trained alone on the same inner backend, every parameter compared
//! after the last step within `atol 1e-5, rtol 1e-4` (f32).
//!
//! The group trains on `Autodiff<Vmap<Inner>>` with saturate's SGD (one learning rate per
//! member); each member alone trains on `Autodiff<Inner>` with burn's own SGD at its learning
//! rate, from the group member's initial weights (copied with burn's recorder). All see the
//! same batches. It is saturate-vmap's parity suite for the three models, generic over the
//! inner backend so that it runs on CUDA: `Inner` is NdArray by default, burn-cuda with
//! `--features cuda`. scripts/gpu-check.sh builds it with `--features cuda,nvml` and runs it
//! on the GPU machine; tests/parity_check.rs runs its short mode on NdArray.
//!
//! Run: `cargo run --release --example parity_check [-- --short] [--model LIST] [--steps N]
//! [--csv PATH]`. It prints one row per (model, member) with the largest difference, writes
//! them to `--csv PATH`, and exits with status 1 if any parameter is out of tolerance.
//! `--model` picks some of `mlp,cnn,transformer` (default: all three), so that the models can
//! run in separate processes at once where each process compiles its own kernels (CubeCL on a
//! GPU); `--steps N` overrides the number of steps; `SATURATE_CONV_LOWERING=gemm|inner|host`
//! chooses how the group computes convolutions (`saturate::vmap::ConvLowering`; unset, the
//! inner backend's default). `--short` (or `SATURATE_SHORT=1`): K = 2, 2 steps, small models
//! and batches (seconds on a CPU); the default: K = 4, 10 steps,
//! the examples' default sizes (minutes on a 2-core CPU for the CNN, seconds on a GPU).
//!
//! The CNN is trained without its dropout layer (`Cnn::without_dropout`): dropout's random
//! masks are what a member trained alone could not reproduce (saturate-vmap's parity suite
//! checks dropout's per-member masks separately).

mod common;
mod models;

use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

use burn::backend::Autodiff;
use burn::module::{AutodiffModule, Module, ModuleVisitor, Param};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{GradientsParams, Optimizer};
use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::backend::{Backend, BackendTypes};
use burn::tensor::{Distribution, Int, Tensor, TensorData};
use common::backend::Inner;
use models::cnn::Cnn;
use models::mlp::Mlp;
use models::transformer::PatchTransformer;
use saturate::optim::GroupSgdConfig;
use saturate::prelude::*;
use saturate::vmap::{member_data, set_conv_lowering, ConvLowering, DeepCopy};

type Group = Autodiff<Vmap<Inner>>;
type Alone = Autodiff<Inner>;
type Device = <Inner as BackendTypes>::Device;

/// Tolerance per element (f32): `|group - alone| <= ATOL + RTOL * |alone|`, the parity
/// suite's.
const ATOL: f64 = 1e-5;
/// See [`ATOL`].
const RTOL: f64 = 1e-4;
/// One learning rate per member, all different.
const LRS: [f64; 8] = [0.1, 0.03, 0.2, 0.05, 0.15, 0.07, 0.01, 0.12];

/// The run's sizes.
#[derive(Debug, Clone, Copy)]
struct Plan {
    members: usize,
    steps: usize,
    batch: usize,
    mlp_hidden: usize,
    cnn_width: usize,
    d_model: usize,
}

impl Plan {
    fn new(short: bool) -> Self {
        if short {
            Plan {
                members: 2,
                steps: 2,
                batch: 8,
                mlp_hidden: 16,
                cnn_width: 2,
                d_model: 8,
            }
        } else {
            // The examples' default sizes (mnist_mlp's hidden width and fashion_mnist's
            // width are shared hyperparameters: the middle of their ranges).
            Plan {
                members: 4,
                steps: 10,
                batch: 64,
                mlp_hidden: 128,
                cnn_width: 16,
                d_model: 32,
            }
        }
    }
}

/// One compared member: the largest difference over its parameters.
struct Row {
    model: &'static str,
    member: usize,
    lr: f64,
    parameters: usize,
    max_abs_diff: f64,
    worst: String,
    /// The largest change of a parameter of the member alone over training: a parity check
    /// of members that did not train would pass and mean nothing.
    max_change: f64,
    ok: bool,
}

/// Every float parameter of every member of a group (`out[k]`: member k's, in visit order).
struct GroupParams {
    path: Vec<String>,
    out: Vec<Vec<(String, TensorData)>>,
}

impl<B: VmapBackend> ModuleVisitor<B> for GroupParams {
    fn enter_module(&mut self, name: &str, _: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _: &str, _: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let per_member = member_data(param.val());
        self.out.resize(per_member.len(), Vec::new());
        for (k, data) in per_member.into_iter().enumerate() {
            self.out[k].push((self.path.join("."), data));
        }
    }
}

/// Every float parameter of an ordinary module, in visit order.
struct Params {
    path: Vec<String>,
    out: Vec<(String, TensorData)>,
}

impl<B: Backend> ModuleVisitor<B> for Params {
    fn enter_module(&mut self, name: &str, _: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _: &str, _: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        self.out
            .push((self.path.join("."), param.val().into_data()));
    }
}

/// Compares member `k`'s parameters with the same member trained alone.
fn compare(
    model: &'static str,
    member: usize,
    group: &[(String, TensorData)],
    alone: &[(String, TensorData)],
    initial: &[(String, TensorData)],
) -> Result<Row, Box<dyn Error>> {
    if group.len() != alone.len() {
        return Err(format!(
            "{model}: the group has {} parameters per member, the model alone {}",
            group.len(),
            alone.len()
        )
        .into());
    }
    let mut row = Row {
        model,
        member,
        lr: LRS[member],
        parameters: group.len(),
        max_abs_diff: 0.0,
        worst: String::new(),
        max_change: 0.0,
        ok: true,
    };
    for ((_, before), (_, after)) in initial.iter().zip(alone) {
        let before = before.clone().convert::<f32>().into_vec::<f32>()?;
        let after = after.clone().convert::<f32>().into_vec::<f32>()?;
        for (&x, &y) in before.iter().zip(&after) {
            row.max_change = row.max_change.max(f64::from((x - y).abs()));
        }
    }
    for ((path, g), (alone_path, a)) in group.iter().zip(alone) {
        if path != alone_path || g.shape != a.shape {
            return Err(format!(
                "{model}: parameter {path} {:?} of the group vs {alone_path} {:?} alone",
                g.shape, a.shape
            )
            .into());
        }
        let g = g.clone().convert::<f32>().into_vec::<f32>()?;
        let a = a.clone().convert::<f32>().into_vec::<f32>()?;
        for (&x, &y) in g.iter().zip(&a) {
            let (x, y) = (f64::from(x), f64::from(y));
            let diff = (x - y).abs();
            // NaN on either side fails, and counts as the largest difference.
            if diff.is_nan() || diff > ATOL + RTOL * y.abs() {
                row.ok = false;
            }
            if diff.is_nan() || diff > row.max_abs_diff {
                row.max_abs_diff = if diff.is_nan() { f64::INFINITY } else { diff };
                row.worst = path.clone();
            }
        }
    }
    Ok(row)
}

/// The same random batches for the group and for every member alone: images `[batch, 1, 28,
/// 28]` in [-1, 1] and 10-class targets, from the inner backend's seeded generator.
fn batches(plan: &Plan, device: &Device) -> Vec<(TensorData, TensorData)> {
    Inner::seed(device, 7);
    (0..plan.steps)
        .map(|_| {
            let images = Tensor::<Inner, 4>::random(
                [plan.batch, 1, 28, 28],
                Distribution::Uniform(-1.0, 1.0),
                device,
            );
            let targets =
                Tensor::<Inner, 1>::random([plan.batch], Distribution::Uniform(0.0, 10.0), device)
                    .floor()
                    .clamp(0.0, 9.0)
                    .int();
            (images.into_data(), targets.into_data())
        })
        .collect()
}

/// Trains one model as a group and each member alone; one [`Row`] per member.
///
/// `init_group` / `init_alone` build the model on the group's and on the plain backend,
/// `forward_group` / `forward_alone` run it: the same code on two backends.
#[allow(clippy::too_many_arguments)]
fn parity<MG, MA>(
    model: &'static str,
    plan: &Plan,
    device: &Device,
    data: &[(TensorData, TensorData)],
    init_group: impl Fn(&VmapDevice<Inner>) -> MG,
    init_alone: impl Fn(&Device) -> MA,
    forward_group: impl Fn(&MG, Tensor<Group, 4>) -> Tensor<Group, 2>,
    forward_alone: impl Fn(&MA, Tensor<Alone, 4>) -> Tensor<Alone, 2>,
) -> Result<Vec<Row>, Box<dyn Error>>
where
    MG: AutodiffModule<Group> + DeepCopy<Group>,
    MA: AutodiffModule<Alone>,
{
    let lrs = Members::from(LRS[..plan.members].to_vec());
    let mut group: Batched<MG> = Batched::init(plan.members, device, init_group)?;
    // Each member alone starts from the group member's initial weights.
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let mut alone: Vec<MA> = (0..plan.members)
        .map(|k| -> Result<MA, Box<dyn Error>> {
            let member = group.member(k)?;
            let bytes = Recorder::<Group>::record(&recorder, member.into_record(), ())?;
            let record = Recorder::<Alone>::load(&recorder, bytes, device)?;
            Ok(init_alone(device).load_record(record))
        })
        .collect::<Result<_, _>>()?;

    let mut optim = GroupSgdConfig::new().init(plan.members)?;
    for (images, targets) in data {
        let group_device = group.device();
        let logits = forward_group(&group, Tensor::from_data(images.clone(), &group_device));
        let targets_group = Tensor::<Group, 1, Int>::from_data(targets.clone(), &group_device);
        let loss = CrossEntropyLossConfig::new()
            .init(&group_device)
            .forward(logits, targets_group);
        let grads = GradientsParams::from_grads(loss.backward(), &*group);
        group = optim.step(&lrs, group, grads)?;
    }
    let initial: Vec<Vec<(String, TensorData)>> = alone.iter().map(params::<Alone, MA>).collect();
    for (k, member) in alone.iter_mut().enumerate() {
        let mut optim = burn::optim::SgdConfig::new().init();
        let mut model = member.clone();
        for (images, targets) in data {
            let logits = forward_alone(&model, Tensor::from_data(images.clone(), device));
            let targets = Tensor::<Alone, 1, Int>::from_data(targets.clone(), device);
            let loss = CrossEntropyLossConfig::new()
                .init(device)
                .forward(logits, targets);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(LRS[k], model, grads);
        }
        *member = model;
    }

    let mut group_params = GroupParams {
        path: Vec::new(),
        out: Vec::new(),
    };
    group.visit(&mut group_params);
    alone
        .iter()
        .enumerate()
        .map(|(k, member)| {
            compare(
                model,
                k,
                &group_params.out[k],
                &params::<Alone, MA>(member),
                &initial[k],
            )
        })
        .collect()
}

/// The float parameters of an ordinary module.
fn params<B: Backend, M: Module<B>>(module: &M) -> Vec<(String, TensorData)> {
    let mut params = Params {
        path: Vec::new(),
        out: Vec::new(),
    };
    module.visit(&mut params);
    params.out
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut short = std::env::var_os("SATURATE_SHORT").is_some_and(|v| v == "1");
    let mut csv_path: Option<PathBuf> = None;
    let mut steps: Option<usize> = None;
    let mut models = vec![
        "mlp".to_string(),
        "cnn".to_string(),
        "transformer".to_string(),
    ];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--short" => short = true,
            "--csv" => csv_path = Some(args.next().ok_or("--csv needs a path")?.into()),
            "--steps" => {
                let n = args.next().ok_or("--steps needs a number")?;
                steps = Some(
                    n.parse()
                        .map_err(|_| format!("--steps {n}: not a number"))?,
                );
            }
            "--model" => {
                let list = args
                    .next()
                    .ok_or("--model needs a list: mlp,cnn,transformer")?;
                models = list.split(',').map(str::to_string).collect();
                if let Some(bad) = models
                    .iter()
                    .find(|m| !["mlp", "cnn", "transformer"].contains(&m.as_str()))
                {
                    return Err(
                        format!("unknown model {bad}: --model takes mlp,cnn,transformer").into(),
                    );
                }
            }
            other => {
                return Err(format!(
                    "unknown argument {other}: [--short] [--model mlp,cnn,transformer] [--steps N] \
                     [--csv PATH]"
                )
                .into())
            }
        }
    }
    let mut plan = Plan::new(short);
    if let Some(n) = steps {
        plan.steps = n;
    }
    if let Ok(name) = std::env::var("SATURATE_CONV_LOWERING") {
        let lowering: ConvLowering = name
            .parse()
            .map_err(|e| format!("SATURATE_CONV_LOWERING: {e}"))?;
        set_conv_lowering::<Inner>(lowering);
    }
    let device = Device::default();
    println!(
        "parity on {}: K = {}, {} SGD steps of {} images, atol {ATOL:e}, rtol {RTOL:e}, the \
         group's convolutions as {:?}",
        std::any::type_name::<Inner>(),
        plan.members,
        plan.steps,
        plan.batch,
        saturate::vmap::conv_lowering::<Inner>()
    );
    let data = batches(&plan, &device);
    let (hidden, width, d_model) = (plan.mlp_hidden, plan.cnn_width, plan.d_model);
    let mut rows = Vec::new();
    let wants = |name: &str| models.iter().any(|m| m == name);
    if wants("mlp") {
        rows.extend(parity(
            "mlp",
            &plan,
            &device,
            &data,
            |d| Mlp::new(hidden, d),
            |d| Mlp::new(hidden, d),
            |m, x| m.forward(x),
            |m, x| m.forward(x),
        )?);
    }
    if wants("cnn") {
        rows.extend(parity(
            "cnn",
            &plan,
            &device,
            &data,
            |d| Cnn::without_dropout(width, d),
            |d| Cnn::without_dropout(width, d),
            |m, x| m.forward(x),
            |m, x| m.forward(x),
        )?);
    }
    if wants("transformer") {
        rows.extend(parity(
            "transformer",
            &plan,
            &device,
            &data,
            |d| PatchTransformer::new(d_model, d),
            |d| PatchTransformer::new(d_model, d),
            |m, x| m.forward(x),
            |m, x| m.forward(x),
        )?);
    }

    let mut csv =
        String::from("model,member,lr,parameters,max_abs_diff,worst_parameter,max_change,ok\n");
    println!(
        "| model | member | lr | parameters | max abs diff | worst parameter | max change in \
         training | ok |"
    );
    println!("|---|---:|---:|---:|---:|---|---:|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {:.3e} | {} | {:.3e} | {} |",
            r.model, r.member, r.lr, r.parameters, r.max_abs_diff, r.worst, r.max_change, r.ok
        );
        writeln!(
            csv,
            "{},{},{},{},{:e},{},{:e},{}",
            r.model, r.member, r.lr, r.parameters, r.max_abs_diff, r.worst, r.max_change, r.ok
        )?;
    }
    if let Some(path) = csv_path {
        std::fs::write(&path, csv)?;
        println!("wrote {}", path.display());
    }
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| !r.ok)
        .map(|r| format!("{} member {}", r.model, r.member))
        .collect();
    if failed.is_empty() {
        println!(
            "parity: ok ({} members of {} models)",
            rows.len(),
            models.len()
        );
        Ok(())
    } else {
        eprintln!("parity: FAILED for {}", failed.join(", "));
        std::process::exit(1);
    }
}
