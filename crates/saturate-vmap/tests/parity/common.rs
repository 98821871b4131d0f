//! The parity driver: K members trained as one `Batched` group on `Autodiff<Vmap<Inner>>`
//! with a per-member SGD step, vs the same K members trained one by one on `Autodiff<Inner>`
//! with burn-optim's unmodified SGD at the member's learning rate. `Inner` is the test
//! binary's backend (`crate::Inner`): NdArray in `main`, wgpu (CubeCL) in `cubecl`.

// The device is `Copy` on NdArray and only `Clone` on wgpu: these files serve both binaries.
#![allow(clippy::clone_on_copy)]

use burn::backend::Autodiff;
use burn::module::{AutodiffModule, Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::{GradientsParams, Optimizer, SgdConfig};
use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::backend::Backend;
use burn::tensor::ops::IntTensorOps;
use burn::tensor::{ElementConversion, Int, Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use saturate_vmap::tensor::from_inner;
use saturate_vmap::{member_data, member_values, per_member, stack_members, Batched, Vmap};
use saturate_vmap::{VmapBackend, VmapDevice};

/// The inner backend: the test binary's own.
pub type Inner = crate::Inner;
/// The group backend.
pub type G = Autodiff<Vmap<Inner>>;
/// The reference backend (one member at a time).
pub type R = Autodiff<Inner>;

/// Members per group in the parity tests.
pub const K: usize = 4;
/// Training steps per parity test.
pub const STEPS: usize = 10;
/// One learning rate per member, all different.
pub const LRS: [f64; 8] = [0.1, 0.03, 0.2, 0.05, 0.15, 0.07, 0.01, 0.12];
/// Parameter tolerance (f32): `|group - reference| <= ATOL + RTOL * |reference|`.
pub const ATOL: f64 = 1e-5;
/// See [`ATOL`].
pub const RTOL: f64 = 1e-4;

/// The inner device: the test binary's own.
pub fn inner_device() -> crate::InnerDevice {
    crate::inner_device()
}

/// The device of a K-member group.
pub fn group_device(members: usize) -> VmapDevice<Inner> {
    VmapDevice::new(inner_device(), members)
}

// ---------------------------------------------------------------------------------------------
// Per-member SGD.
// ---------------------------------------------------------------------------------------------

/// `p <- p - lr_k * g` for every float parameter with a gradient, `lr_k` a batched per-member
/// tensor of logical shape `[1]` (broadcast to the parameter's rank).
pub struct MemberSgd<'a> {
    grads: &'a mut GradientsParams,
    lr: Tensor<Vmap<Inner>, 1>,
    /// Parameters that got a gradient.
    pub updated: usize,
}

impl ModuleMapper<G> for MemberSgd<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<G, D>>) -> Param<Tensor<G, D>> {
        let (id, tensor, mapper) = param.consume();
        let tensor = match self.grads.remove::<Vmap<Inner>, D>(id) {
            Some(grad) => {
                self.updated += 1;
                let require_grad = tensor.is_require_grad();
                let lr: Tensor<Vmap<Inner>, D> = self.lr.clone().reshape([1; D]);
                let value = tensor.inner() - grad * lr;
                let tensor = Tensor::<G, D>::from_inner(value);
                if require_grad {
                    tensor.require_grad()
                } else {
                    tensor
                }
            }
            None => tensor,
        };
        Param::from_mapped_value(id, tensor, mapper)
    }
}

/// Replaces every random-initialised float parameter of a group (any member count) with
/// values drawn from a seeded generator: uniform in `[-a, a]`, `a` from the parameter's shape,
/// independently per member. Parameters whose values are all equal (constant
/// initialisers: norm gammas / betas, running stats) are kept.
///
/// burn draws initial weights from the inner backend's global generator, which tests running in
/// parallel share: without this, parity runs would start from different weights each time.
pub struct Reseed {
    rng: StdRng,
}

impl ModuleMapper<G> for Reseed {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<G, D>>) -> Param<Tensor<G, D>> {
        let (id, tensor, mapper) = param.consume();
        let require_grad = tensor.is_require_grad();
        let per = member_data(tensor.clone());
        let members = per.len();
        let vals: Vec<Vec<f32>> = per
            .iter()
            .map(|d| d.clone().convert::<f32>().to_vec::<f32>().expect("f32"))
            .collect();
        let all: Vec<f32> = vals.concat();
        if all.iter().all(|&v| v == all[0]) {
            return Param::from_mapped_value(id, tensor, mapper);
        }
        // A scale from the shape alone (so the result does not depend on the original draw):
        // about 1/sqrt(fan-in) for weights, 0.2 for vectors.
        let shape = per[0].shape.to_vec();
        let numel: usize = shape.iter().product();
        let a = if shape.len() < 2 {
            0.2
        } else {
            let largest = *shape.iter().max().expect("rank >= 2");
            1.0 / ((numel / largest).max(1) as f32).sqrt()
        };
        let fresh: Vec<f32> = (0..all.len())
            .map(|_| self.rng.random_range(-a..a))
            .collect();
        let mut shape = per[0].shape.to_vec();
        shape.insert(0, members);
        let inner = <Inner as burn::tensor::ops::FloatTensorOps<Inner>>::float_from_data(
            TensorData::new(fresh, shape),
            &inner_device(),
        );
        let prim = <G as VmapBackend>::float_from_vmap(from_inner(inner, true, members));
        let tensor = Tensor::<G, D>::from_primitive(burn::tensor::TensorPrimitive::Float(prim))
            .set_require_grad(require_grad);
        Param::from_mapped_value(id, tensor, mapper)
    }
}

/// [`Reseed`] applied to a module.
pub fn reseed<M: Module<G>>(module: M, seed: u64) -> M {
    module.map(&mut Reseed {
        rng: StdRng::seed_from_u64(seed ^ 0x5eed),
    })
}

/// One per-member SGD step of a group.
pub fn sgd_group<M: AutodiffModule<G>>(
    group: Batched<M>,
    mut grads: GradientsParams,
    lrs: &[f64],
) -> Batched<M> {
    let device = group.device();
    let lr = per_member::<Vmap<Inner>>(lrs, &device).expect("one lr per member");
    let mut sgd = MemberSgd {
        grads: &mut grads,
        lr,
        updated: 0,
    };
    let module = group.into_inner().map(&mut sgd);
    assert!(sgd.updated > 0, "sgd_group: no parameter had a gradient");
    Batched::from_module(module).expect("group after the SGD step")
}

// ---------------------------------------------------------------------------------------------
// Parameter snapshots and comparison.
// ---------------------------------------------------------------------------------------------

/// A float parameter: its path and data (f32 values + shape).
#[derive(Clone, Debug)]
pub struct Snap {
    pub path: String,
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

fn snap(path: &[String], data: TensorData) -> Snap {
    let data = data.convert::<f32>();
    Snap {
        path: path.join("."),
        shape: data.shape.to_vec(),
        values: data.to_vec::<f32>().expect("f32 data"),
    }
}

/// Every float parameter of every member of a group: `out[k]` lists member k's parameters.
struct GroupSnapper {
    path: Vec<String>,
    out: Vec<Vec<Snap>>,
}

impl<B: VmapBackend> ModuleVisitor<B> for GroupSnapper {
    fn enter_module(&mut self, name: &str, _: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _: &str, _: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let per = member_data(param.val());
        if self.out.is_empty() {
            self.out = vec![Vec::new(); per.len()];
        }
        assert_eq!(per.len(), self.out.len(), "member count of {:?}", self.path);
        for (k, data) in per.into_iter().enumerate() {
            self.out[k].push(snap(&self.path, data));
        }
    }
}

/// Every float parameter of an ordinary module.
struct Snapper {
    path: Vec<String>,
    out: Vec<Snap>,
}

impl<B: Backend> ModuleVisitor<B> for Snapper {
    fn enter_module(&mut self, name: &str, _: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _: &str, _: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let data = param.val().into_data();
        self.out.push(snap(&self.path, data));
    }
}

/// The float parameters of each member of a group (running state included).
pub fn group_params<B: VmapBackend, M: Module<B>>(module: &M) -> Vec<Vec<Snap>> {
    let mut v = GroupSnapper {
        path: Vec::new(),
        out: Vec::new(),
    };
    module.visit(&mut v);
    v.out
}

/// The float parameters of an ordinary module (running state included).
pub fn params<B: Backend, M: Module<B>>(module: &M) -> Vec<Snap> {
    let mut v = Snapper {
        path: Vec::new(),
        out: Vec::new(),
    };
    module.visit(&mut v);
    v.out
}

/// The largest `|a - b|` and whether every element is within `atol + rtol * |b|`.
pub fn max_diff(a: &[f32], b: &[f32], atol: f64, rtol: f64) -> (f64, bool) {
    assert_eq!(a.len(), b.len());
    let mut max = 0.0f64;
    let mut ok = true;
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (x as f64, y as f64);
        let d = (x - y).abs();
        if d.is_nan() || d > atol + rtol * y.abs() || x.is_nan() != y.is_nan() {
            ok = false;
        }
        if d > max || d.is_nan() {
            max = d;
        }
    }
    (max, ok)
}

/// Compares member `k`'s parameters to a reference's; returns one line per mismatching
/// parameter (path, max diff).
pub fn compare(what: &str, member: usize, got: &[Snap], want: &[Snap]) -> Vec<String> {
    let mut bad = Vec::new();
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: member {member}: parameter counts differ"
    );
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.path, w.path, "{what}: parameter order differs");
        if g.shape != w.shape {
            bad.push(format!(
                "{what}: member {member} `{}`: shape {:?} vs reference {:?}",
                g.path, g.shape, w.shape
            ));
            continue;
        }
        let (max, ok) = max_diff(&g.values, &w.values, ATOL, RTOL);
        record_worst(&g.path, &g.values, &w.values);
        if !ok {
            bad.push(format!(
                "{what}: member {member} `{}` {:?}: max |group - reference| = {max:e} (atol {ATOL:e}, rtol {RTOL:e})",
                g.path, g.shape
            ));
        }
    }
    bad
}

/// The largest `|a - b| / (ATOL + RTOL * |b|)`: at most 1 within tolerance.
pub fn tolerance_ratio(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let d = (x as f64 - y as f64).abs();
            if d.is_nan() {
                f64::INFINITY
            } else {
                d / (ATOL + RTOL * (y as f64).abs())
            }
        })
        .fold(0.0, f64::max)
}

/// The worst parameter difference [`compare`] saw in this test's thread. With
/// `SATURATE_PARITY_REPORT=FILE` set, it is appended to FILE as one CSV row (backend, test,
/// largest |group - reference|, that over the tolerance, the parameter) when the test's thread
/// ends: `scripts/parity-table.sh` builds the book's parity table from these rows.
#[derive(Default)]
struct Worst {
    max_abs: f64,
    ratio: f64,
    parameter: String,
}

impl Drop for Worst {
    fn drop(&mut self) {
        let Ok(path) = std::env::var("SATURATE_PARITY_REPORT") else {
            return;
        };
        if self.parameter.is_empty() {
            return;
        }
        let test = std::thread::current()
            .name()
            .unwrap_or("?")
            .trim_start_matches("parity::")
            .to_string();
        let backend = Inner::name(&inner_device());
        let row = format!(
            "{backend},{test},{:e},{:.4},{}\n",
            self.max_abs, self.ratio, self.parameter
        );
        use std::io::Write;
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = file.write_all(row.as_bytes());
        }
    }
}

thread_local! {
    static WORST: std::cell::RefCell<Worst> = std::cell::RefCell::new(Worst::default());
}

fn record_worst(parameter: &str, got: &[f32], want: &[f32]) {
    let max_abs = max_diff(got, want, 0.0, 0.0).0;
    let ratio = tolerance_ratio(got, want);
    WORST.with(|w| {
        // Fields, not a new `Worst`: replacing it would drop (and report) the old one.
        let mut w = w.borrow_mut();
        if w.parameter.is_empty() || ratio > w.ratio || ratio.is_nan() {
            w.ratio = ratio;
            w.parameter = parameter.to_string();
        }
        w.max_abs = w.max_abs.max(max_abs);
    });
}

/// The largest parameter change between two snapshots of one member.
pub fn max_change(before: &[Snap], after: &[Snap]) -> f64 {
    before
        .iter()
        .zip(after)
        .map(|(a, b)| max_diff(&a.values, &b.values, 0.0, 0.0).0)
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------------
// Moving weights between backends.
// ---------------------------------------------------------------------------------------------

/// Loads the weights of `from` (any backend) into `into` (any backend, same module type) by
/// recording `from` with burn's bytes recorder.
pub fn transfer<B1: Backend, B2: Backend, M1: Module<B1>, M2: Module<B2>>(
    from: M1,
    into: M2,
    device: &B2::Device,
) -> M2 {
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let bytes = Recorder::<B1>::record(&recorder, from.into_record(), ()).expect("record a member");
    let record = Recorder::<B2>::load(&recorder, bytes, device).expect("load a member");
    into.load_record(record)
}

// ---------------------------------------------------------------------------------------------
// Data feeds.
// ---------------------------------------------------------------------------------------------

/// One input of a step: shared by all members, or one per member.
#[derive(Clone, Debug)]
pub enum Slot {
    /// The same data for every member (an unbatched tensor in the group).
    Shared(TensorData),
    /// One piece of data per member (a batched tensor built with `stack_members`).
    PerMember(Vec<TensorData>),
}

impl Slot {
    /// Member `k`'s data.
    pub fn of(&self, k: usize) -> TensorData {
        match self {
            Slot::Shared(d) => d.clone(),
            Slot::PerMember(v) => v[k].clone(),
        }
    }
}

/// How a case gets its step's tensors, on the group or on one reference member.
pub trait Feed<B: Backend> {
    /// The device the model lives on.
    fn device(&self) -> B::Device;
    /// Float input `slot`.
    fn float<const D: usize>(&self, slot: usize) -> Tensor<B, D>;
    /// Int input `slot`.
    fn int<const D: usize>(&self, slot: usize) -> Tensor<B, D, Int>;
    /// A per-member hyperparameter (`values[k]` for member k) of logical shape `[1]`: built
    /// with `per_member` in the group, the member's own number alone in a reference run.
    fn hyper(&self, values: &[f64]) -> Tensor<B, 1>;
}

/// Member `member`'s data on an ordinary backend.
pub struct MemberFeed<'a, B: Backend> {
    pub slots: &'a [Slot],
    pub member: usize,
    pub device: B::Device,
}

impl<B: Backend> Feed<B> for MemberFeed<'_, B> {
    fn device(&self) -> B::Device {
        self.device.clone()
    }
    fn float<const D: usize>(&self, slot: usize) -> Tensor<B, D> {
        Tensor::from_data(self.slots[slot].of(self.member), &self.device)
    }
    fn int<const D: usize>(&self, slot: usize) -> Tensor<B, D, Int> {
        Tensor::from_data(self.slots[slot].of(self.member), &self.device)
    }
    fn hyper(&self, values: &[f64]) -> Tensor<B, 1> {
        let data = TensorData::new(vec![values[self.member] as f32], [1]);
        Tensor::from_data(data, &self.device)
    }
}

/// The whole group's data: shared slots are unbatched tensors, per-member slots batched (floats
/// through `stack_members`, ints wrapped with the member axis in front).
pub struct GroupFeed<'a, B: VmapBackend> {
    pub slots: &'a [Slot],
    pub device: B::Device,
}

impl<B: VmapBackend> Feed<B> for GroupFeed<'_, B> {
    fn device(&self) -> B::Device {
        self.device.clone()
    }
    fn float<const D: usize>(&self, slot: usize) -> Tensor<B, D> {
        match &self.slots[slot] {
            Slot::Shared(d) => Tensor::from_data(d.clone(), &self.device),
            Slot::PerMember(v) => {
                assert_eq!(v.len(), self.device.members);
                let one = VmapDevice::new(self.device.inner.clone(), 1);
                let parts = v
                    .iter()
                    .map(|d| Tensor::<B, D>::from_data(d.clone(), &one))
                    .collect();
                stack_members(parts).expect("stack per-member data")
            }
        }
    }
    fn int<const D: usize>(&self, slot: usize) -> Tensor<B, D, Int> {
        match &self.slots[slot] {
            Slot::Shared(d) => Tensor::from_data(d.clone(), &self.device),
            Slot::PerMember(v) => {
                // No int counterpart of `stack_members`: build the [K, ...] inner tensor and
                // wrap it as batched.
                assert_eq!(v.len(), self.device.members);
                let mut shape = v[0].shape.to_vec();
                shape.insert(0, v.len());
                let mut values: Vec<i64> = Vec::new();
                for d in v {
                    values.extend(
                        d.clone()
                            .convert::<i64>()
                            .to_vec::<i64>()
                            .expect("i64 data"),
                    );
                }
                let data = TensorData::new(values, shape)
                    .convert::<<B::Inner as burn::tensor::backend::BackendTypes>::IntElem>();
                let inner =
                    <B::Inner as IntTensorOps<B::Inner>>::int_from_data(data, &self.device.inner);
                let vmap = from_inner(inner, true, self.device.members);
                Tensor::from_primitive(B::int_from_vmap(vmap))
            }
        }
    }
    fn hyper(&self, values: &[f64]) -> Tensor<B, 1> {
        per_member::<B>(&values[..self.device.members], &self.device).expect("per-member value")
    }
}

/// Random f32 data uniform in `[lo, hi)`.
pub fn uniform(rng: &mut StdRng, shape: &[usize], lo: f32, hi: f32) -> TensorData {
    let n = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|_| rng.random_range(lo..hi)).collect();
    TensorData::new(v, shape.to_vec())
}

/// Random i64 data uniform in `[0, hi)`.
pub fn classes(rng: &mut StdRng, shape: &[usize], hi: i64) -> TensorData {
    let n = shape.iter().product();
    let v: Vec<i64> = (0..n).map(|_| rng.random_range(0..hi)).collect();
    TensorData::new(v, shape.to_vec())
}

// ---------------------------------------------------------------------------------------------
// The parity driver.
// ---------------------------------------------------------------------------------------------

/// A parity case: a model (any burn module type, generic over the backend), its data and loss.
pub trait Case {
    /// The model.
    type Model<B: Backend>: Module<B>;
    /// Builds the model (random init) on `device`.
    fn init<B: Backend>(&self, device: &B::Device) -> Self::Model<B>;
    /// One step's data (float slots may become per member).
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData>;
    /// The loss of one forward pass: logical shape `[1]` (per member in a group).
    fn loss<B: Backend, F: Feed<B>>(&self, model: &Self::Model<B>, feed: &F) -> Tensor<B, 1>;
    /// The learning rates are `LRS` times this (for cases that diverge at `LRS`).
    fn lr_scale(&self) -> f64 {
        1.0
    }
}

/// Whether the data batch is shared or per member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataMode {
    /// One batch shared by all members (unbatched input).
    Shared,
    /// One batch per member, every slot (batched input: floats built with `stack_members`,
    /// ints (targets, token ids) with the member axis in front).
    PerMember,
}

/// How the group is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    /// `Batched::init(K, ..)`; the references load `member(k)`'s weights.
    Init,
    /// K modules built on a one-member device, then `Batched::stack`; the references load each
    /// module's weights before stacking.
    Stack,
}

/// Options of a parity run.
#[derive(Clone, Copy, Debug)]
pub struct Opts {
    pub mode: DataMode,
    pub build: Build,
    /// Members (at most `LRS.len()`).
    pub members: usize,
}

impl Opts {
    pub fn new(mode: DataMode) -> Self {
        Self {
            mode,
            build: Build::Init,
            members: K,
        }
    }
}

/// One step's data for `members` members.
pub fn step_slots<C: Case>(
    case: &C,
    rng: &mut StdRng,
    mode: DataMode,
    members: usize,
) -> Vec<Slot> {
    match mode {
        DataMode::Shared => case.batch(rng).into_iter().map(Slot::Shared).collect(),
        DataMode::PerMember => {
            let batches: Vec<Vec<TensorData>> = (0..members).map(|_| case.batch(rng)).collect();
            (0..batches[0].len())
                .map(|i| Slot::PerMember(batches.iter().map(|b| b[i].clone()).collect()))
                .collect()
        }
    }
}

/// Trains K members of `case` as one group and one by one, and compares every parameter (and
/// every step's loss) within `ATOL`/`RTOL`.
pub fn parity<C: Case>(case: &C, seed: u64, mode: DataMode)
where
    C::Model<G>: AutodiffModule<G, InnerModule = C::Model<Vmap<Inner>>>,
    C::Model<R>: AutodiffModule<R, InnerModule = C::Model<Inner>>,
{
    parity_with(case, seed, Opts::new(mode))
}

/// [`parity`] with options.
pub fn parity_with<C: Case>(case: &C, seed: u64, opts: Opts)
where
    C::Model<G>: AutodiffModule<G, InnerModule = C::Model<Vmap<Inner>>>,
    C::Model<R>: AutodiffModule<R, InnerModule = C::Model<Inner>>,
{
    let members = opts.members;
    assert!((1..=LRS.len()).contains(&members));
    let device = inner_device();
    type Start<C> = (Batched<<C as Case>::Model<G>>, Vec<<C as Case>::Model<R>>);
    let (mut group, mut refs): Start<C> = match opts.build {
        Build::Init => {
            let group = Batched::init(members, &device, |d| reseed(case.init::<G>(d), seed))
                .expect("init the group");
            // The same members, one by one, from the group's own initial weights.
            let refs = (0..members)
                .map(|k| {
                    let member = group.member(k).expect("member k");
                    transfer::<G, R, _, _>(member, case.init::<R>(&device), &device)
                })
                .collect();
            (group, refs)
        }
        Build::Stack => {
            let one = VmapDevice::new(device.clone(), 1);
            let modules: Vec<C::Model<G>> = (0..members)
                .map(|k| reseed(case.init::<G>(&one), seed + 7919 * k as u64))
                .collect();
            // Each reference loads its module's weights, recorded before stacking (a module
            // built on a one-member device holds one-member batched tensors).
            let refs = modules
                .iter()
                .map(|m| transfer::<G, R, _, _>(m.clone(), case.init::<R>(&device), &device))
                .collect();
            (Batched::stack(modules).expect("stack the members"), refs)
        }
    };
    assert_eq!(group.members(), members);

    let initial = group_params(&*group);
    assert_eq!(initial.len(), members);
    let mut bad = Vec::new();
    for (k, r) in refs.iter().enumerate() {
        bad.extend(compare("initial weights", k, &initial[k], &params(r)));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Members start from different random weights (else the test could not tell them apart).
    if members > 1 {
        assert!(
            max_change(&initial[0], &initial[1]) > 1e-3,
            "members 0 and 1 have the same initial weights"
        );
    }

    let mut optims: Vec<_> = (0..members)
        .map(|_| SgdConfig::new().init::<R, C::Model<R>>())
        .collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let gdevice = group.device();
    let lrs: Vec<f64> = LRS[..members]
        .iter()
        .map(|lr| lr * case.lr_scale())
        .collect();
    for step in 0..STEPS {
        let slots = step_slots(case, &mut rng, opts.mode, members);

        let feed = GroupFeed::<G> {
            slots: &slots,
            device: gdevice.clone(),
        };
        let loss = case.loss(&*group, &feed);
        assert_eq!(loss.dims(), [1], "a group loss is logically [1] per member");
        let group_losses = member_values(loss.clone()).expect("per-member losses");
        let grads = GradientsParams::from_grads(loss.backward(), &*group);
        group = sgd_group(group, grads, &lrs);

        for k in 0..members {
            let feed = MemberFeed::<R> {
                slots: &slots,
                member: k,
                device: device.clone(),
            };
            let model = refs.remove(k);
            let loss = case.loss(&model, &feed);
            let value: f64 = loss.clone().into_scalar().elem();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            let model = optims[k].step(lrs[k], model, grads);
            refs.insert(k, model);
            let g = group_losses[k];
            assert!(
                value.is_finite() && (g - value).abs() <= ATOL + RTOL * value.abs(),
                "step {step}: member {k}: group loss {g} vs reference loss {value}"
            );
        }
    }

    let fin = group_params(&*group);
    let mut bad = Vec::new();
    for (k, r) in refs.iter().enumerate() {
        bad.extend(compare(
            &format!("after {STEPS} steps"),
            k,
            &fin[k],
            &params(r),
        ));
    }
    assert!(bad.is_empty(), "parity failures:\n{}", bad.join("\n"));

    // Inference (no autodiff): the trained group's `valid()` on `Vmap<NdArray>` vs each
    // reference's `valid()` on NdArray, on one more batch (BatchNorm uses its running stats,
    // dropout is off).
    let slots = step_slots(case, &mut rng, opts.mode, members);
    let eval = case.loss(
        &group.valid(),
        &GroupFeed::<Vmap<Inner>> {
            slots: &slots,
            device: gdevice.clone(),
        },
    );
    let eval = member_values(eval).expect("per-member eval losses");
    for (k, r) in refs.iter().enumerate() {
        let want: f64 = case
            .loss(
                &r.valid(),
                &MemberFeed::<Inner> {
                    slots: &slots,
                    member: k,
                    device: device.clone(),
                },
            )
            .into_scalar()
            .elem();
        assert!(
            want.is_finite() && (eval[k] - want).abs() <= ATOL + RTOL * want.abs(),
            "inference: member {k}: group loss {} vs reference loss {want}",
            eval[k]
        );
    }

    for k in 0..members {
        let change = max_change(&initial[k], &fin[k]);
        assert!(
            change > 1e-6,
            "member {k}: training changed no parameter (max change {change:e})"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Gradient isolation.
// ---------------------------------------------------------------------------------------------

/// The gradient of every float parameter, per member (`None` where a parameter got none).
struct GroupGrads<'a> {
    grads: &'a <G as burn::tensor::backend::AutodiffBackend>::Gradients,
    path: Vec<String>,
    out: Vec<(String, Option<Vec<TensorData>>)>,
    /// Whether each gradient was batched.
    batched: Vec<bool>,
}

impl ModuleVisitor<G> for GroupGrads<'_> {
    fn enter_module(&mut self, name: &str, _: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _: &str, _: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<G, D>>) {
        let grad = param.val().grad(self.grads);
        self.batched.push(
            grad.as_ref()
                .map(saturate_vmap::is_batched)
                .unwrap_or(false),
        );
        self.out.push((self.path.join("."), grad.map(member_data)));
    }
}

/// The gradient of every float parameter of a reference module.
struct RefGrads<'a> {
    grads: &'a <R as burn::tensor::backend::AutodiffBackend>::Gradients,
    path: Vec<String>,
    out: Vec<(String, Option<TensorData>)>,
}

impl ModuleVisitor<R> for RefGrads<'_> {
    fn enter_module(&mut self, name: &str, _: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _: &str, _: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<R, D>>) {
        let grad = param.val().grad(self.grads).map(|g| g.into_data());
        self.out.push((self.path.join("."), grad));
    }
}

/// The group's per-member loss is multiplied by per-member `weights` (a batched `[1]` tensor
/// from `per_member`) before `backward`: a member with weight 0 must get exactly zero
/// gradients, every other member exactly `weight * (its independent gradient)` within
/// `ATOL`/`RTOL`.
pub fn isolation<C: Case>(case: &C, seed: u64, weights: &[f64])
where
    C::Model<G>: AutodiffModule<G>,
    C::Model<R>: AutodiffModule<R>,
{
    assert_eq!(weights.len(), K);
    let device = inner_device();
    let group: Batched<C::Model<G>> =
        Batched::init(K, &device, |d| reseed(case.init::<G>(d), seed)).expect("init the group");
    let gdevice = group.device();
    let mut rng = StdRng::seed_from_u64(seed);
    let slots: Vec<Slot> = case.batch(&mut rng).into_iter().map(Slot::Shared).collect();

    let loss = case.loss(
        &*group,
        &GroupFeed::<G> {
            slots: &slots,
            device: gdevice.clone(),
        },
    );
    let w = per_member::<G>(weights, &gdevice).expect("weights");
    let grads = (loss * w).backward();
    let mut gv = GroupGrads {
        grads: &grads,
        path: Vec::new(),
        out: Vec::new(),
        batched: Vec::new(),
    };
    group.visit(&mut gv);
    assert!(!gv.out.is_empty());

    let mut bad = Vec::new();
    for (k, &weight) in weights.iter().enumerate() {
        let reference = transfer::<G, R, _, _>(
            group.member(k).expect("member k"),
            case.init::<R>(&device),
            &device,
        );
        let loss = case.loss(
            &reference,
            &MemberFeed::<R> {
                slots: &slots,
                member: k,
                device: device.clone(),
            },
        );
        let rgrads = loss.backward();
        let mut rv = RefGrads {
            grads: &rgrads,
            path: Vec::new(),
            out: Vec::new(),
        };
        reference.visit(&mut rv);
        assert_eq!(rv.out.len(), gv.out.len());
        let mut nonzero = false;
        for ((path, g), (rpath, r)) in gv.out.iter().zip(&rv.out) {
            assert_eq!(path, rpath);
            let (Some(g), Some(r)) = (g, r) else {
                // Running state (BatchNorm) has no gradient in either.
                assert_eq!(
                    g.is_some(),
                    r.is_some(),
                    "`{path}`: gradient present in one of group / reference only"
                );
                continue;
            };
            let got: Vec<f32> = g[k].clone().convert::<f32>().to_vec().expect("f32");
            if weight == 0.0 {
                let max = got.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                if max != 0.0 || got.iter().any(|v| v.is_nan()) {
                    bad.push(format!(
                        "member {k} (weight 0) `{path}`: gradient not exactly zero (max |g| = {max:e})"
                    ));
                }
                continue;
            }
            let want: Vec<f32> = r
                .clone()
                .convert::<f32>()
                .to_vec::<f32>()
                .expect("f32")
                .into_iter()
                .map(|v| (v as f64 * weight) as f32)
                .collect();
            nonzero |= want.iter().any(|v| *v != 0.0);
            let (max, ok) = max_diff(&got, &want, ATOL, RTOL);
            if !ok {
                bad.push(format!(
                    "member {k} (weight {weight}) `{path}`: gradient differs from weight * independent gradient by {max:e}"
                ));
            }
        }
        if weight != 0.0 {
            assert!(nonzero, "member {k}: all reference gradients are zero");
        }
    }
    assert!(bad.is_empty(), "gradient isolation:\n{}", bad.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Shared (unbatched) weights with per-member data.
// ---------------------------------------------------------------------------------------------

/// The model of `case` with weights SHARED by all members (loaded from data, so unbatched, like
/// a frozen pretrained layer), fed one batch per member: each member's loss equals its own run
/// with the same weights, and each parameter gradient is either per member (batched: member k
/// = member k's gradient) or the sum over members (unbatched).
pub fn shared_parity<C: Case>(case: &C, seed: u64)
where
    C::Model<G>: AutodiffModule<G>,
    C::Model<R>: AutodiffModule<R>,
{
    let device = inner_device();
    let gdevice = group_device(K);
    let plain: C::Model<Inner> = case.init::<Inner>(&device);
    // burn initialises lazily, and a clone of an uninitialised parameter draws its own values.
    let _ = params(&plain);
    let shared: C::Model<G> =
        transfer::<Inner, G, _, _>(plain.clone(), case.init::<G>(&gdevice), &gdevice);
    let reference: C::Model<R> =
        transfer::<Inner, R, _, _>(plain, case.init::<R>(&device), &device);
    let mut rng = StdRng::seed_from_u64(seed);
    let slots = step_slots(case, &mut rng, DataMode::PerMember, K);

    let loss = case.loss(
        &shared,
        &GroupFeed::<G> {
            slots: &slots,
            device: gdevice.clone(),
        },
    );
    let losses = member_values(loss.clone()).expect("per-member losses");
    let grads = loss.backward();
    let mut gv = GroupGrads {
        grads: &grads,
        path: Vec::new(),
        out: Vec::new(),
        batched: Vec::new(),
    };
    shared.visit(&mut gv);

    let mut want: Vec<Vec<Option<Vec<f32>>>> = Vec::new();
    for (k, loss_k) in losses.iter().enumerate() {
        let loss = case.loss(
            &reference,
            &MemberFeed::<R> {
                slots: &slots,
                member: k,
                device: device.clone(),
            },
        );
        let value: f64 = loss.clone().into_scalar().elem();
        assert!(
            (loss_k - value).abs() <= ATOL + RTOL * value.abs(),
            "shared weights: member {k}: group loss {loss_k} vs reference {value}"
        );
        let rgrads = loss.backward();
        let mut rv = RefGrads {
            grads: &rgrads,
            path: Vec::new(),
            out: Vec::new(),
        };
        reference.visit(&mut rv);
        want.push(
            rv.out
                .into_iter()
                .map(|(_, g)| g.map(|g| g.convert::<f32>().to_vec::<f32>().expect("f32")))
                .collect(),
        );
    }
    let mut bad = Vec::new();
    let mut checked = 0;
    for (j, ((path, g), batched)) in gv.out.iter().zip(&gv.batched).enumerate() {
        let Some(g) = g else {
            assert!(
                want.iter().all(|w| w[j].is_none()),
                "`{path}`: no gradient in the group"
            );
            continue;
        };
        checked += 1;
        let per: Vec<&Vec<f32>> = want
            .iter()
            .map(|w| w[j].as_ref().expect("reference gradient"))
            .collect();
        if *batched {
            for (k, want_k) in per.iter().enumerate() {
                let got: Vec<f32> = g[k].clone().convert::<f32>().to_vec().expect("f32");
                let (d, ok) = max_diff(&got, want_k, ATOL, RTOL);
                if !ok {
                    bad.push(format!(
                        "`{path}` (batched gradient), member {k}: differs by {d:e}"
                    ));
                }
            }
        } else {
            let sum: Vec<f32> = (0..per[0].len())
                .map(|i| per.iter().map(|w| w[i]).sum())
                .collect();
            let got: Vec<f32> = g[0].clone().convert::<f32>().to_vec().expect("f32");
            let (d, ok) = max_diff(&got, &sum, ATOL, RTOL);
            if !ok {
                bad.push(format!(
                    "`{path}` (shared gradient): differs from the sum over members by {d:e}"
                ));
            }
        }
    }
    assert!(checked > 0, "no parameter got a gradient");
    assert!(bad.is_empty(), "shared weights:\n{}", bad.join("\n"));
}
