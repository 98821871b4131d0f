//! `Batched<M>` and the member helpers: construction (init / stack), member access and
//! round-trips through burn's recorders, retain / extend, per-member running state, the
//! per-member value helpers, per-member dropout, and the typed errors for bad input.

use std::path::PathBuf;

use burn::backend::NdArray;
use burn::module::{Module, ModuleVisitor, Param};
use burn::nn::{
    BatchNorm, BatchNormConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig, Relu,
};
use burn::record::{BinFileRecorder, FullPrecisionSettings, NamedMpkFileRecorder};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use rand::rngs::StdRng;
use rand::SeedableRng;
use saturate_vmap::nn::DropoutConfig;
use saturate_vmap::{
    is_batched, member_data, member_tensor, member_values, per_member, stack_members, Batched,
    Vmap, VmapBackend, VmapDevice, VmapError,
};

use crate::parity::common::{
    group_device, group_params, inner_device, max_diff, uniform, Inner, Snap, G, R,
};

/// A small module with random parameters (linear weights and biases), constant-initialised
/// parameters (LayerNorm gamma = 1, beta = 0) and running state (BatchNorm).
#[derive(Module, Debug)]
pub struct Net<B: Backend> {
    first: Linear<B>,
    norm: LayerNorm<B>,
    bn: BatchNorm<B>,
    head: Linear<B>,
}

impl<B: Backend> Net<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            first: LinearConfig::new(5, 6).init(device),
            norm: LayerNormConfig::new(6).init(device),
            bn: BatchNormConfig::new(6).init(device),
            head: LinearConfig::new(6, 3).init(device),
        }
    }

    fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        let x = self.norm.forward(self.first.forward(x));
        self.head.forward(Relu::new().forward(x))
    }
}

fn snaps_equal(a: &[Snap], b: &[Snap]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.path == y.path && x.shape == y.shape && x.values == y.values)
}

fn input(seed: u64, shape: &[usize]) -> TensorData {
    uniform(&mut StdRng::seed_from_u64(seed), shape, -1.0, 1.0)
}

fn values(data: &TensorData) -> Vec<f32> {
    data.clone()
        .convert::<f32>()
        .to_vec::<f32>()
        .expect("f32 data")
}

/// Whether every float parameter of a module is batched.
struct AllBatched {
    path: Vec<String>,
    unbatched: Vec<String>,
    count: usize,
}

impl<B: VmapBackend> ModuleVisitor<B> for AllBatched {
    fn enter_module(&mut self, name: &str, _: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _: &str, _: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        self.count += 1;
        if !is_batched(&param.val()) {
            self.unbatched.push(self.path.join("."));
        }
    }
}

fn unbatched_params<B: VmapBackend, M: Module<B>>(module: &M) -> (usize, Vec<String>) {
    let mut v = AllBatched {
        path: Vec::new(),
        unbatched: Vec::new(),
        count: 0,
    };
    module.visit(&mut v);
    (v.count, v.unbatched)
}

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("saturate-vmap-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

// ---------------------------------------------------------------------------------------------
// init
// ---------------------------------------------------------------------------------------------

#[test]
fn init_gives_k_different_members_and_batches_every_param() {
    let group: Batched<Net<G>> = Batched::init(4, &inner_device(), Net::new).unwrap();
    assert_eq!(group.members(), 4);
    let (count, unbatched) = unbatched_params(&*group);
    // first.weight, first.bias, norm.gamma, norm.beta, bn.{gamma, beta, running_mean,
    // running_var}, head.weight, head.bias
    assert_eq!(count, 10);
    assert!(unbatched.is_empty(), "unbatched after init: {unbatched:?}");

    let members = group_params(&*group);
    assert_eq!(members.len(), 4);
    for (j, p) in members[0].iter().enumerate() {
        let constant = p.path.starts_with("norm") || p.path.starts_with("bn");
        for (k, member) in members.iter().enumerate().skip(1) {
            let q = &member[j];
            assert_eq!(p.path, q.path);
            assert_eq!(p.shape, q.shape, "`{}`: logical shape", p.path);
            if constant {
                // Constant initialisers: same value, but one copy per member.
                assert_eq!(p.values, q.values, "`{}`: constant init differs", p.path);
            } else {
                assert_ne!(
                    p.values, q.values,
                    "`{}`: members 0 and {k} got the same random init",
                    p.path
                );
            }
        }
    }
    // LayerNorm gamma is ones, beta zeros, in every member.
    let gamma = members[2].iter().find(|p| p.path == "norm.gamma").unwrap();
    assert!(gamma.values.iter().all(|&v| v == 1.0));
    let beta = members[3].iter().find(|p| p.path == "norm.beta").unwrap();
    assert!(beta.values.iter().all(|&v| v == 0.0));
}

/// An error of the user's own constructor.
#[derive(Debug, PartialEq)]
enum BuildError {
    Vmap(VmapError),
    BadWidth(usize),
}

impl From<VmapError> for BuildError {
    fn from(e: VmapError) -> Self {
        BuildError::Vmap(e)
    }
}

fn fallible_net(width: usize, device: &VmapDevice<Inner>) -> Result<Linear<G>, BuildError> {
    if width == 0 {
        return Err(BuildError::BadWidth(width));
    }
    Ok(LinearConfig::new(4, width).init(device))
}

#[test]
fn try_init_builds_the_group_or_returns_the_constructor_error() {
    let group: Batched<Linear<G>> =
        Batched::try_init(3, &inner_device(), |d| fallible_net(2, d)).unwrap();
    assert_eq!(group.members(), 3);
    assert!(unbatched_params(&*group).1.is_empty());
    let err = Batched::<Linear<G>>::try_init(3, &inner_device(), |d| fallible_net(0, d));
    assert_eq!(err.unwrap_err(), BuildError::BadWidth(0));
    let err = Batched::<Linear<G>>::try_init(0, &inner_device(), |d| fallible_net(2, d));
    assert_eq!(err.unwrap_err(), BuildError::Vmap(VmapError::NoMembers));
}

#[test]
fn init_on_vmap_without_autodiff() {
    let group: Batched<Linear<Vmap<Inner>>> =
        Batched::init(3, &inner_device(), |d| LinearConfig::new(4, 2).init(d)).unwrap();
    let (count, unbatched) = unbatched_params(&*group);
    assert_eq!(count, 2);
    assert!(unbatched.is_empty(), "{unbatched:?}");
    let out = group.forward(Tensor::ones([5, 4], &group.device()));
    assert_eq!(out.dims(), [5, 2]);
    assert!(is_batched(&out));
    assert_eq!(member_data(out).len(), 3);
}

#[test]
fn init_with_zero_members_is_an_error() {
    let err = Batched::<Linear<G>>::init(0, &inner_device(), |d| LinearConfig::new(2, 2).init(d))
        .unwrap_err();
    assert_eq!(err, VmapError::NoMembers);
}

#[test]
fn members_device_and_deref() {
    let group: Batched<Net<G>> = Batched::init(3, &inner_device(), Net::new).unwrap();
    assert_eq!(group.members(), 3);
    let device = group.device();
    assert_eq!(device.members, 3);
    assert_eq!(device.inner, inner_device());
    assert_eq!(device, group_device(3));
    // Deref: the module's own forward runs all members.
    let x = Tensor::<G, 2>::from_data(input(1, &[7, 5]), &device);
    let y = group.forward(x.clone());
    assert_eq!(y.dims(), [7, 3]);
    let per = member_data(y);
    assert_eq!(per.len(), 3);
    assert_ne!(values(&per[0]), values(&per[1]));
    // module() and Deref are the same module.
    let z = group.module().forward(x);
    for (a, b) in per.iter().zip(member_data(z)) {
        assert_eq!(values(a), values(&b));
    }
}

// ---------------------------------------------------------------------------------------------
// stack
// ---------------------------------------------------------------------------------------------

#[test]
fn stack_from_unbatched_members() {
    let one = VmapDevice::new(inner_device(), 1);
    let modules: Vec<Net<G>> = (0..3).map(|_| Net::new(&one)).collect();
    // Random init on a one-member device gives one-member batched tensors.
    let want: Vec<Vec<Snap>> = modules.iter().map(|m| group_params(m).remove(0)).collect();
    let group = Batched::stack(modules).unwrap();
    assert_eq!(group.members(), 3);
    let (_, unbatched) = unbatched_params(&*group);
    assert!(unbatched.is_empty(), "{unbatched:?}");
    let got = group_params(&*group);
    for k in 0..3 {
        assert!(snaps_equal(&got[k], &want[k]), "member {k} differs");
        let member = group.member(k).unwrap();
        let (_, unbatched) = unbatched_params(&member);
        assert_eq!(unbatched.len(), 10, "member({k}) must be unbatched");
        assert!(snaps_equal(&group_params(&member).remove(0), &want[k]));
    }
    // The stacked group computes each member's own outputs.
    let x = input(2, &[4, 5]);
    let out = member_data(group.forward(Tensor::from_data(x.clone(), &group.device())));
    for (k, m) in (0..3).map(|k| (k, group.member(k).unwrap())) {
        let alone = m.forward(Tensor::from_data(
            x.clone(),
            &VmapDevice::new(inner_device(), 1),
        ));
        let alone = member_data(alone).remove(0);
        let (d, ok) = max_diff(&values(&out[k]), &values(&alone), 1e-6, 0.0);
        assert!(ok, "member {k}: group vs alone differ by {d:e}");
    }
}

#[test]
fn stack_on_vmap_without_autodiff() {
    let one = VmapDevice::<Inner>::new(inner_device(), 1);
    let modules: Vec<Linear<Vmap<Inner>>> =
        (0..2).map(|_| LinearConfig::new(3, 2).init(&one)).collect();
    let want: Vec<Vec<Snap>> = modules.iter().map(|m| group_params(m).remove(0)).collect();
    let group = Batched::stack(modules).unwrap();
    let got = group_params(&*group);
    assert!(snaps_equal(&got[0], &want[0]));
    assert!(snaps_equal(&got[1], &want[1]));
}

#[derive(Module, Debug)]
pub struct Two<B: Backend> {
    body: Linear<B>,
    hidden: Linear<B>,
}

#[test]
fn stack_with_different_shapes_names_the_parameter_and_both_shapes() {
    let one = VmapDevice::new(inner_device(), 1);
    let a = Two::<G> {
        body: LinearConfig::new(3, 4).init(&one),
        hidden: LinearConfig::new(4, 2).init(&one),
    };
    let b = Two::<G> {
        body: LinearConfig::new(3, 4).init(&one),
        hidden: LinearConfig::new(4, 5).init(&one),
    };
    let c = Two::<G> {
        body: LinearConfig::new(3, 4).init(&one),
        hidden: LinearConfig::new(4, 2).init(&one),
    };
    let err = Batched::stack(vec![a, c, b]).unwrap_err();
    match &err {
        VmapError::ShapeMismatch {
            path,
            member,
            expected,
            got,
        } => {
            assert_eq!(path, "hidden.weight");
            assert_eq!(*member, 2);
            assert_eq!(expected, &vec![4, 2]);
            assert_eq!(got, &vec![4, 5]);
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("hidden.weight"), "{msg}");
    assert!(msg.contains("[4, 2]") && msg.contains("[4, 5]"), "{msg}");
}

#[test]
fn stack_with_different_structure_or_no_members_is_an_error() {
    let one = VmapDevice::new(inner_device(), 1);
    let with_bias: Linear<G> = LinearConfig::new(3, 2).init(&one);
    let without: Linear<G> = LinearConfig::new(3, 2).with_bias(false).init(&one);
    let err = Batched::stack(vec![with_bias, without]).unwrap_err();
    assert!(
        matches!(
            err,
            VmapError::StructureMismatch {
                member: 1,
                expected: 2,
                got: 1
            }
        ),
        "{err:?}"
    );
    let err = Batched::<Linear<G>>::stack(Vec::new()).unwrap_err();
    assert_eq!(err, VmapError::NoMembers);
}

/// A lone module of a bigger group is not one member either (the check covers member 0).
#[test]
fn stack_rejects_a_single_module_of_a_bigger_group() {
    let three = VmapDevice::new(inner_device(), 3);
    let big: Linear<G> = LinearConfig::new(3, 2).init(&three);
    let err = Batched::stack(vec![big]).unwrap_err();
    assert!(
        matches!(
            err,
            VmapError::MemberCountMismatch {
                expected: 1,
                got: 3,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn stack_rejects_members_of_a_bigger_group() {
    let three = VmapDevice::new(inner_device(), 3);
    let one = VmapDevice::new(inner_device(), 1);
    let big: Linear<G> = LinearConfig::new(3, 2).init(&three);
    let small: Linear<G> = LinearConfig::new(3, 2).init(&one);
    let err = Batched::stack(vec![small, big]).unwrap_err();
    assert!(
        matches!(err, VmapError::MemberCountMismatch { .. }),
        "{err:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// member: an ordinary module, saved and loaded with burn's recorders
// ---------------------------------------------------------------------------------------------

#[test]
fn member_saved_with_a_recorder_loads_on_ndarray_with_identical_outputs() {
    let group: Batched<Net<G>> = Batched::init(4, &inner_device(), Net::new).unwrap();
    let x = input(3, &[6, 5]);
    let group_out = member_data(group.forward(Tensor::from_data(x.clone(), &group.device())));
    for k in [0usize, 2, 3] {
        let member: Net<G> = group.member(k).unwrap();
        let (_, unbatched) = unbatched_params(&member);
        assert_eq!(unbatched.len(), 10, "member({k}) must be unbatched");

        let bin = BinFileRecorder::<FullPrecisionSettings>::new();
        let path = temp_path(&format!("member-{k}"));
        member.clone().save_file(path.clone(), &bin).unwrap();
        let plain: Net<NdArray> = Net::new(&inner_device())
            .load_file(path, &bin, &inner_device())
            .unwrap();
        let plain_out = plain
            .forward(Tensor::from_data(x.clone(), &inner_device()))
            .into_data();
        assert_eq!(
            values(&plain_out),
            values(&group_out[k]),
            "member {k}: NdArray outputs differ from the group's"
        );

        // Same through the named MessagePack recorder, into an autodiff NdArray module.
        let mpk = NamedMpkFileRecorder::<FullPrecisionSettings>::new();
        let path = temp_path(&format!("member-{k}-mpk"));
        member.save_file(path.clone(), &mpk).unwrap();
        let plain: Net<R> = Net::new(&inner_device())
            .load_file(path, &mpk, &inner_device())
            .unwrap();
        let plain_out = plain
            .forward(Tensor::from_data(x.clone(), &inner_device()))
            .into_data();
        let (d, ok) = max_diff(&values(&plain_out), &values(&group_out[k]), 0.0, 0.0);
        assert!(ok, "member {k} (mpk, autodiff): outputs differ by {d:e}");
    }
}

#[test]
fn member_out_of_range_is_an_error() {
    let group: Batched<Linear<G>> =
        Batched::init(3, &inner_device(), |d| LinearConfig::new(2, 2).init(d)).unwrap();
    let err = group.member(3).unwrap_err();
    assert_eq!(
        err,
        VmapError::MemberOutOfRange {
            index: 3,
            members: 3
        }
    );
}

// ---------------------------------------------------------------------------------------------
// retain / extend
// ---------------------------------------------------------------------------------------------

#[test]
fn retain_keeps_the_members_in_order() {
    let group: Batched<Net<G>> = Batched::init(4, &inner_device(), Net::new).unwrap();
    let before = group_params(&*group);
    let kept = group.clone().retain(&[3, 1]).unwrap();
    assert_eq!(kept.members(), 2);
    assert_eq!(kept.device().members, 2);
    let after = group_params(&*kept);
    assert_eq!(after.len(), 2);
    assert!(snaps_equal(&after[0], &before[3]));
    assert!(snaps_equal(&after[1], &before[1]));
    // The retained group still trains / computes: outputs of the kept members are unchanged.
    let x = input(4, &[3, 5]);
    let all = member_data(group.forward(Tensor::from_data(x.clone(), &group.device())));
    let two = member_data(kept.forward(Tensor::from_data(x, &kept.device())));
    assert_eq!(values(&two[0]), values(&all[3]));
    assert_eq!(values(&two[1]), values(&all[1]));
}

#[test]
fn retain_errors() {
    let group: Batched<Linear<G>> =
        Batched::init(3, &inner_device(), |d| LinearConfig::new(2, 2).init(d)).unwrap();
    assert_eq!(
        group.clone().retain(&[0, 2, 0]).unwrap_err(),
        VmapError::DuplicateMember { index: 0 }
    );
    assert_eq!(
        group.clone().retain(&[1, 5]).unwrap_err(),
        VmapError::MemberOutOfRange {
            index: 5,
            members: 3
        }
    );
    assert_eq!(group.retain(&[]).unwrap_err(), VmapError::NoMembers);
}

/// `select` with repetition: each slot is a copy of its source member's parameters and
/// BatchNorm running statistics; a copy and its source, fed the same input afterwards, give
/// the same outputs and the same new statistics, bit for bit.
#[test]
fn select_copies_members_with_their_running_statistics() {
    let group = trained_batch_norm_group();
    let stats = |g: &Batched<BatchNorm<G>>| -> Vec<(Vec<f32>, Vec<f32>)> {
        member_data(g.running_mean.value_sync())
            .iter()
            .map(values)
            .zip(member_data(g.running_var.value_sync()).iter().map(values))
            .collect()
    };
    let before = stats(&group);
    let sources = [2, 0, 2, 2];
    let copied = group.clone().select(&sources).unwrap();
    assert_eq!(copied.members(), 4);
    let after = stats(&copied);
    for (slot, &source) in sources.iter().enumerate() {
        assert_eq!(
            after[slot], before[source],
            "slot {slot} <- member {source}"
        );
    }
    // One more training forward, the same input for a copy and its source: the same output
    // and the same updated statistics.
    let one = VmapDevice::new(inner_device(), 1);
    let x = |k: usize| Tensor::<G, 3>::from_data(input(60 + k as u64, &[6, 4, 5]), &one);
    let out = member_data(
        copied.forward(stack_members(sources.iter().map(|&s| x(s)).collect()).unwrap()),
    );
    let reference = member_data(group.forward(stack_members((0..3).map(x).collect()).unwrap()));
    let (after, reference_stats) = (stats(&copied), stats(&group));
    for (slot, &source) in sources.iter().enumerate() {
        assert_eq!(values(&out[slot]), values(&reference[source]));
        assert_eq!(after[slot], reference_stats[source]);
    }
    // The net of parameters too: a Net group's copies equal their sources.
    let net: Batched<Net<G>> = Batched::init(3, &inner_device(), Net::new).unwrap();
    let params = group_params(&*net);
    let copied = net.select(&[1, 1, 0]).unwrap();
    let got = group_params(&*copied);
    for (slot, source) in [1, 1, 0].into_iter().enumerate() {
        assert!(snaps_equal(&got[slot], &params[source]));
    }
}

#[test]
fn select_errors() {
    let group: Batched<Linear<G>> =
        Batched::init(3, &inner_device(), |d| LinearConfig::new(2, 2).init(d)).unwrap();
    assert_eq!(
        group.clone().select(&[1, 3]).unwrap_err(),
        VmapError::MemberOutOfRange {
            index: 3,
            members: 3
        }
    );
    assert_eq!(group.select(&[]).unwrap_err(), VmapError::NoMembers);
}

#[test]
fn extend_appends_members() {
    let a: Batched<Net<G>> = Batched::init(2, &inner_device(), Net::new).unwrap();
    let b: Batched<Net<G>> = Batched::init(3, &inner_device(), Net::new).unwrap();
    let (pa, pb) = (group_params(&*a), group_params(&*b));
    let ab = a.extend(b).unwrap();
    assert_eq!(ab.members(), 5);
    assert_eq!(ab.device().members, 5);
    let got = group_params(&*ab);
    for k in 0..2 {
        assert!(snaps_equal(&got[k], &pa[k]), "member {k}");
    }
    for k in 0..3 {
        assert!(snaps_equal(&got[2 + k], &pb[k]), "member {}", 2 + k);
    }
    let out = ab.forward(Tensor::from_data(input(5, &[2, 5]), &ab.device()));
    assert_eq!(member_data(out).len(), 5);
}

#[test]
fn extend_with_a_different_module_is_an_error() {
    let a: Batched<Linear<G>> =
        Batched::init(2, &inner_device(), |d| LinearConfig::new(3, 2).init(d)).unwrap();
    let b: Batched<Linear<G>> =
        Batched::init(2, &inner_device(), |d| LinearConfig::new(3, 4).init(d)).unwrap();
    match a.clone().extend(b).unwrap_err() {
        VmapError::ShapeMismatch {
            path,
            expected,
            got,
            ..
        } => {
            assert_eq!(path, "weight");
            assert_eq!(expected, vec![3, 2]);
            assert_eq!(got, vec![3, 4]);
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    let c: Batched<Linear<G>> = Batched::init(2, &inner_device(), |d| {
        LinearConfig::new(3, 2).with_bias(false).init(d)
    })
    .unwrap();
    assert!(matches!(
        a.extend(c).unwrap_err(),
        VmapError::StructureMismatch { .. }
    ));
}

// ---------------------------------------------------------------------------------------------
// BatchNorm running state is per member
// ---------------------------------------------------------------------------------------------

#[test]
fn batch_norm_running_stats_are_per_member() {
    let group: Batched<BatchNorm<G>> =
        Batched::init(3, &inner_device(), |d| BatchNormConfig::new(4).init(d)).unwrap();
    let one = VmapDevice::new(inner_device(), 1);
    let data: Vec<TensorData> = (0..3).map(|k| input(10 + k, &[6, 4, 5])).collect();
    let x = stack_members(
        data.iter()
            .map(|d| Tensor::<G, 3>::from_data(d.clone(), &one))
            .collect(),
    )
    .unwrap();
    // Two train-mode forwards (autodiff is on).
    let _ = group.forward(x.clone());
    let y = group.forward(x);
    let out = member_data(y);
    let mean = member_data(group.running_mean.value_sync());
    let var = member_data(group.running_var.value_sync());
    assert_ne!(values(&mean[0]), values(&mean[1]));
    assert_ne!(values(&var[1]), values(&var[2]));
    for k in 0..3 {
        let alone: BatchNorm<R> = BatchNormConfig::new(4).init(&inner_device());
        let xk = Tensor::<R, 3>::from_data(data[k].clone(), &inner_device());
        let _ = alone.forward(xk.clone());
        let yk = alone.forward(xk).into_data();
        for (what, got, want) in [
            (
                "running_mean",
                &mean[k],
                alone.running_mean.value_sync().into_data(),
            ),
            (
                "running_var",
                &var[k],
                alone.running_var.value_sync().into_data(),
            ),
            ("output", &out[k], yk),
        ] {
            let (d, ok) = max_diff(&values(got), &values(&want), 1e-6, 1e-5);
            assert!(
                ok,
                "member {k} {what}: differs from an independent run by {d:e}"
            );
        }
    }
    // member(k) carries member k's running state.
    let m1 = group.member(1).unwrap();
    assert_eq!(
        values(&m1.running_mean.value_sync().into_data()),
        values(&mean[1])
    );
}

// ---------------------------------------------------------------------------------------------
// Per-member values
// ---------------------------------------------------------------------------------------------

#[test]
fn per_member_and_member_values() {
    let device = group_device(4);
    let t = per_member::<G>(&[1.0, 2.5, -3.0, 4.0], &device).unwrap();
    assert_eq!(t.dims(), [1]);
    assert!(is_batched(&t));
    assert_eq!(member_values(t.clone()).unwrap(), vec![1.0, 2.5, -3.0, 4.0]);
    // Used in arithmetic with an unbatched tensor: broadcast per member.
    let x = Tensor::<G, 2>::ones([2, 3], &device);
    let y = x * t.reshape([1, 1]);
    let per = member_data(y);
    for (k, want) in [1.0f32, 2.5, -3.0, 4.0].iter().enumerate() {
        assert_eq!(per[k].shape.to_vec(), vec![2, 3]);
        assert!(values(&per[k]).iter().all(|v| v == want), "member {k}");
    }
    // Also on the plain Vmap backend.
    let t = per_member::<Vmap<Inner>>(&[0.5, 0.25], &group_device(2)).unwrap();
    assert_eq!(member_values(t).unwrap(), vec![0.5, 0.25]);
}

#[test]
fn per_member_with_the_wrong_count_is_an_error() {
    let err = per_member::<G>(&[1.0, 2.0, 3.0], &group_device(4)).unwrap_err();
    assert!(
        matches!(
            err,
            VmapError::MemberCountMismatch {
                expected: 4,
                got: 3,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn member_values_needs_one_value_per_member() {
    let t = Tensor::<G, 1>::from_data(TensorData::from([1.0f32, 2.0]), &group_device(2));
    let err = member_values(t).unwrap_err();
    assert!(
        matches!(&err, VmapError::NotPerMemberScalar { shape, .. } if shape == &vec![2]),
        "{err:?}"
    );
    // An unbatched [1] tensor gives K copies.
    let t = Tensor::<G, 1>::from_data(TensorData::from([7.0f32]), &group_device(3));
    assert!(!is_batched(&t));
    assert_eq!(member_values(t).unwrap(), vec![7.0; 3]);
}

#[test]
fn stack_members_member_data_and_member_tensor() {
    let one = VmapDevice::new(inner_device(), 1);
    let data: Vec<TensorData> = (0..3).map(|k| input(20 + k, &[2, 3])).collect();
    let t = stack_members(
        data.iter()
            .map(|d| Tensor::<G, 2>::from_data(d.clone(), &one))
            .collect(),
    )
    .unwrap();
    assert_eq!(t.dims(), [2, 3]);
    assert!(is_batched(&t));
    assert_eq!(t.device().members, 3);
    let per = member_data(t.clone());
    assert_eq!(per.len(), 3);
    for k in 0..3 {
        assert_eq!(per[k].shape.to_vec(), vec![2, 3]);
        assert_eq!(values(&per[k]), values(&data[k]), "member {k}");
        let m = member_tensor(t.clone(), k).unwrap();
        assert!(!is_batched(&m));
        assert_eq!(m.dims(), [2, 3]);
        assert_eq!(
            values(&m.into_data()),
            values(&data[k]),
            "member_tensor({k})"
        );
    }
    assert_eq!(
        member_tensor(t.clone(), 3).unwrap_err(),
        VmapError::MemberOutOfRange {
            index: 3,
            members: 3
        }
    );
    // member_data of an unbatched tensor: K copies.
    let u = Tensor::<G, 2>::from_data(data[0].clone(), &group_device(3));
    let per = member_data(u);
    assert_eq!(per.len(), 3);
    assert!(per.iter().all(|d| values(d) == values(&data[0])));
}

#[test]
fn stack_members_errors() {
    let one = VmapDevice::new(inner_device(), 1);
    assert_eq!(
        stack_members::<G, 2>(Vec::new()).unwrap_err(),
        VmapError::NoMembers
    );
    let a = Tensor::<G, 2>::zeros([2, 3], &one);
    let b = Tensor::<G, 2>::zeros([3, 2], &one);
    match stack_members(vec![a.clone(), b]).unwrap_err() {
        VmapError::ShapeMismatch {
            member,
            expected,
            got,
            ..
        } => {
            assert_eq!(member, 1);
            assert_eq!(expected, vec![2, 3]);
            assert_eq!(got, vec![3, 2]);
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    // A member that is itself a batched tensor of several members.
    let three = per_member::<G>(&[1.0, 2.0, 3.0], &group_device(3))
        .unwrap()
        .reshape([1, 1]);
    let c = Tensor::<G, 2>::zeros([1, 1], &one);
    assert!(matches!(
        stack_members(vec![c, three]).unwrap_err(),
        VmapError::MemberCountMismatch { .. }
    ));
}

#[test]
fn reading_a_batched_tensor_with_into_data_fails_loudly() {
    let t = per_member::<G>(&[1.0, 2.0], &group_device(2)).unwrap();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.into_data()))
        .expect_err("into_data of a batched tensor must fail");
    let msg = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(msg.contains("member_data"), "message: {msg}");
}

#[test]
fn mixing_groups_of_different_sizes_panics_with_the_member_counts() {
    let a = per_member::<G>(&[1.0, 2.0, 3.0, 4.0], &group_device(4)).unwrap();
    let b = per_member::<G>(&[1.0, 2.0, 3.0], &group_device(3)).unwrap();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| member_data(a + b)))
        .expect_err("adding tensors of a 4- and a 3-member group must fail");
    let msg = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(msg.contains('4') && msg.contains('3'), "message: {msg}");
}

// ---------------------------------------------------------------------------------------------
// Taking a member or retaining members of a clone must not change the group: burn shares a
// `RunningState` between clones of a module (BatchNorm running stats, per-member dropout
// probabilities), so a mapper applied to a clone writes into the original's cell.
// ---------------------------------------------------------------------------------------------

fn trained_batch_norm_group() -> Batched<BatchNorm<G>> {
    let group: Batched<BatchNorm<G>> =
        Batched::init(3, &inner_device(), |d| BatchNormConfig::new(4).init(d)).unwrap();
    let one = VmapDevice::new(inner_device(), 1);
    let x = stack_members(
        (0..3)
            .map(|k| Tensor::<G, 3>::from_data(input(40 + k, &[6, 4, 5]), &one))
            .collect(),
    )
    .unwrap();
    let _ = group.forward(x);
    group
}

#[test]
fn member_leaves_the_group_running_state_untouched() {
    let group = trained_batch_norm_group();
    let before: Vec<Vec<f32>> = member_data(group.running_mean.value_sync())
        .iter()
        .map(values)
        .collect();
    assert_eq!(before.len(), 3);
    let m1 = group.member(1).unwrap();
    assert_eq!(values(&m1.running_mean.value_sync().into_data()), before[1]);
    let after: Vec<Vec<f32>> = member_data(group.running_mean.value_sync())
        .iter()
        .map(values)
        .collect();
    assert_eq!(
        after, before,
        "group.member(1) changed the group's running mean"
    );
    // Training the taken member further does not leak into the group.
    let _ = m1.forward(Tensor::<G, 3>::from_data(
        input(50, &[6, 4, 5]),
        &VmapDevice::new(inner_device(), 1),
    ));
    let after: Vec<Vec<f32>> = member_data(group.running_mean.value_sync())
        .iter()
        .map(values)
        .collect();
    assert_eq!(
        after, before,
        "a forward of member(1) changed the group's running mean"
    );
}

#[test]
fn retain_of_a_clone_leaves_the_original_group_untouched() {
    let group = trained_batch_norm_group();
    let before: Vec<Vec<f32>> = member_data(group.running_var.value_sync())
        .iter()
        .map(values)
        .collect();
    let kept = group.clone().retain(&[2]).unwrap();
    assert_eq!(
        member_data(kept.running_var.value_sync())
            .iter()
            .map(values)
            .collect::<Vec<_>>(),
        vec![before[2].clone()]
    );
    let after: Vec<Vec<f32>> = member_data(group.running_var.value_sync())
        .iter()
        .map(values)
        .collect();
    assert_eq!(
        after, before,
        "retain on a clone changed the original group"
    );
}

/// A module built on a one-member device is an ordinary module: burn's recorders can save it.
#[test]
fn a_module_built_on_a_one_member_device_can_be_recorded() {
    let one = VmapDevice::new(inner_device(), 1);
    let module: Linear<G> = LinearConfig::new(3, 2).init(&one);
    // burn initialises parameters lazily and a clone of an uninitialised parameter draws its
    // own values: read the weights first.
    let want = group_params(&module).remove(0);
    let bin = BinFileRecorder::<FullPrecisionSettings>::new();
    let path = temp_path("one-member-device");
    let saved = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        module.clone().save_file(path.clone(), &bin)
    }));
    assert!(
        matches!(saved, Ok(Ok(()))),
        "saving a module built on a one-member device failed"
    );
    let plain: Linear<NdArray> = LinearConfig::new(3, 2)
        .init(&inner_device())
        .load_file(path, &bin, &inner_device())
        .unwrap();
    let got = crate::parity::common::params(&plain);
    assert!(snaps_equal(&got, &want));
}

/// BatchNorm keeps its last update pending (burn's `RunningState::update`) until the next
/// `value_sync`: `extend` must carry it over, like `member` and `retain` do.
#[test]
fn extend_keeps_the_latest_running_state() {
    let group = trained_batch_norm_group(); // one train-mode forward: one pending update
    let before: Vec<Vec<f32>> = member_data(group.running_mean.value_sync())
        .iter()
        .map(values)
        .collect();
    assert!(before.iter().any(|m| m.iter().any(|&v| v != 0.0)));
    let fresh: Batched<BatchNorm<G>> =
        Batched::init(1, &inner_device(), |d| BatchNormConfig::new(4).init(d)).unwrap();
    let group = trained_batch_norm_group();
    let all = group.extend(fresh).unwrap();
    let after: Vec<Vec<f32>> = member_data(all.running_mean.value_sync())
        .iter()
        .map(values)
        .collect();
    assert_eq!(after.len(), 4);
    assert_eq!(
        &after[..3],
        &before[..],
        "extend dropped the last running-mean update of the existing members"
    );
    assert_eq!(after[3], vec![0.0; 4]);
}

/// Same for `stack`: each member's latest running state is kept.
#[test]
fn stack_keeps_the_latest_running_state() {
    let one = VmapDevice::new(inner_device(), 1);
    let modules: Vec<BatchNorm<G>> = (0..2)
        .map(|k| {
            let bn = BatchNormConfig::new(4).init(&one);
            let _ = bn.forward(Tensor::<G, 3>::from_data(input(70 + k, &[6, 4, 5]), &one));
            bn
        })
        .collect();
    // The expected state from the same forward on plain NdArray (reading the modules would
    // sync them).
    let want: Vec<Vec<f32>> = (0..2)
        .map(|k| {
            let bn: BatchNorm<R> = BatchNormConfig::new(4).init(&inner_device());
            let _ = bn.forward(Tensor::<R, 3>::from_data(
                input(70 + k, &[6, 4, 5]),
                &inner_device(),
            ));
            values(&bn.running_mean.value_sync().into_data())
        })
        .collect();
    assert!(want[0].iter().any(|&v| v != 0.0));
    let group = Batched::stack(modules).unwrap();
    let got: Vec<Vec<f32>> = member_data(group.running_mean.value_sync())
        .iter()
        .map(values)
        .collect();
    for k in 0..2 {
        let (d, ok) = max_diff(&got[k], &want[k], 1e-6, 1e-5);
        assert!(
            ok,
            "stack dropped member {k}'s last running-mean update (diff {d:e})"
        );
    }
}

/// `member`, `retain` and `extend` on a group of the plain `Vmap` backend (no autodiff), with
/// running state (per-member dropout probabilities).
#[test]
fn member_retain_extend_without_autodiff() {
    type V = Vmap<Inner>;
    let init = |probs: Vec<f64>| {
        let k = probs.len();
        Batched::init(k, &inner_device(), |d| {
            DropoutConfig::new(probs.clone()).init::<V>(d).unwrap()
        })
        .unwrap()
    };
    let group = init(vec![0.1, 0.2, 0.3]);
    let close = |got: Vec<f64>, want: &[f64]| {
        got.len() == want.len() && got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6)
    };
    let m = group.member(2).unwrap();
    assert!(close(member_values(m.probs()).unwrap(), &[0.3]));
    let kept = group.clone().retain(&[2, 0]).unwrap();
    assert!(close(member_values(kept.probs()).unwrap(), &[0.3, 0.1]));
    // The original is untouched by the clone's retain.
    assert!(close(
        member_values(group.probs()).unwrap(),
        &[0.1, 0.2, 0.3]
    ));
    let all = kept.extend(init(vec![0.5, 0.6])).unwrap();
    assert_eq!(all.members(), 4);
    assert!(close(
        member_values(all.probs()).unwrap(),
        &[0.3, 0.1, 0.5, 0.6]
    ));
}

/// Feeding a group data made on a device of another member count fails loudly, naming both
/// member counts (ops cannot return errors; the typed errors are for the helpers).
#[test]
fn forward_with_data_of_another_group_size_panics() {
    let group: Batched<Linear<G>> =
        Batched::init(4, &inner_device(), |d| LinearConfig::new(3, 2).init(d)).unwrap();
    let x = Tensor::<G, 2>::ones([5, 3], &group_device(3));
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        member_data(group.forward(x))
    }))
    .expect_err("a 4-member group fed 3-member data must fail");
    let msg = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        msg.contains("4") && msg.contains("3") && msg.contains("member"),
        "message: {msg}"
    );
}

/// burn's `Transaction` (several reads in one go): unbatched tensors and one-member batched
/// tensors read normally; a batched tensor of several members is refused with an error that
/// points to the per-member readers.
#[test]
fn transactions_read_shared_tensors_and_refuse_batched_ones() {
    use burn::tensor::{Int, Transaction};

    let device = group_device(3);
    let a = Tensor::<G, 2>::from_data(input(80, &[2, 3]), &device);
    let b = Tensor::<G, 1, Int>::from_data(TensorData::from([1i64, 2, 3]), &device);
    let data = Transaction::default()
        .register(a.clone())
        .register(b)
        .execute();
    assert_eq!(values(&data[0]), values(&input(80, &[2, 3])));
    assert_eq!(
        data[1].clone().convert::<i64>().to_vec::<i64>().unwrap(),
        vec![1, 2, 3]
    );

    let one = per_member::<G>(&[2.5], &group_device(1)).unwrap();
    let data = Transaction::default().register(one).execute();
    assert_eq!(values(&data[0]), vec![2.5]);

    let batched = per_member::<G>(&[1.0, 2.0, 3.0], &device).unwrap();
    let err = Transaction::default()
        .register(a)
        .register(batched)
        .try_execute()
        .expect_err("a batched tensor of 3 members cannot be read");
    assert!(err.to_string().contains("member_data"), "{err}");
}

/// `from_module` on a module whose parts belong to groups of different sizes is a typed error
/// naming the offending parameter; a consistent module is accepted and fully batched.
#[test]
fn from_module_checks_member_counts() {
    let a = Two::<G> {
        body: LinearConfig::new(3, 4).init(&group_device(3)),
        hidden: LinearConfig::new(4, 2).init(&group_device(2)),
    };
    match Batched::from_module(a).unwrap_err() {
        VmapError::MemberCountMismatch {
            what,
            expected,
            got,
        } => {
            assert!(what.contains("hidden.weight"), "{what}");
            assert_eq!((expected, got), (3, 2));
        }
        other => panic!("expected MemberCountMismatch, got {other:?}"),
    }
    let b = Two::<G> {
        body: LinearConfig::new(3, 4).init(&group_device(3)),
        hidden: LinearConfig::new(4, 2).init(&group_device(3)),
    };
    let group = Batched::from_module(b).unwrap();
    assert_eq!(group.members(), 3);
    assert_eq!(group.device().members, 3);
    let (count, unbatched) = unbatched_params(&*group);
    assert_eq!(count, 4);
    assert!(unbatched.is_empty(), "{unbatched:?}");
    // A member lives on a one-member device.
    let m = group.member(0).unwrap();
    assert!(
        m.devices().iter().all(|d| d.members == 1),
        "{:?}",
        m.devices()
    );
}

#[derive(Module, Debug)]
pub struct DropNet<B: Backend> {
    linear: Linear<B>,
    dropout: saturate_vmap::nn::Dropout<B>,
}

/// A model with per-member dropout: in training each member drops with its own probability
/// (a member with p = 0 computes exactly the plain linear layer); after `valid()` (no autodiff)
/// dropout is the identity for every member.
#[test]
fn per_member_dropout_inside_a_model() {
    use burn::module::AutodiffModule;

    let probs = vec![0.0, 0.5, 0.9];
    let group: Batched<DropNet<G>> = Batched::init(3, &inner_device(), |d| DropNet {
        linear: LinearConfig::new(50, 400).init(d),
        dropout: DropoutConfig::new(probs.clone()).init::<G>(d).unwrap(),
    })
    .unwrap();
    let x = input(90, &[20, 50]);
    let device = group.device();
    let plain = member_data(
        group
            .linear
            .forward(Tensor::<G, 2>::from_data(x.clone(), &device)),
    );
    let train = member_data(
        group.dropout.forward(
            group
                .linear
                .forward(Tensor::<G, 2>::from_data(x.clone(), &device)),
        ),
    );
    assert_eq!(
        values(&train[0]),
        values(&plain[0]),
        "p = 0 must keep everything"
    );
    for (k, &p) in probs.iter().enumerate().skip(1) {
        let (t, q) = (values(&train[k]), values(&plain[k]));
        let kept = t.iter().filter(|&&v| v != 0.0).count() as f64 / t.len() as f64;
        assert!(
            (kept - (1.0 - p)).abs() < 0.02,
            "member {k}: keep rate {kept}"
        );
        for (a, b) in t.iter().zip(&q) {
            assert!(
                *a == 0.0 || (a - b / (1.0 - p as f32)).abs() < 1e-4,
                "member {k}"
            );
        }
    }
    let valid = group.valid();
    let vdevice = VmapDevice::new(inner_device(), 3);
    let plain = member_data(
        valid
            .linear
            .forward(Tensor::<Vmap<Inner>, 2>::from_data(x.clone(), &vdevice)),
    );
    let eval = member_data(
        valid.dropout.forward(
            valid
                .linear
                .forward(Tensor::<Vmap<Inner>, 2>::from_data(x, &vdevice)),
        ),
    );
    for k in 0..3 {
        assert_eq!(
            values(&eval[k]),
            values(&plain[k]),
            "member {k}: inference must not drop"
        );
    }
}

#[derive(Module, Debug)]
pub struct Deep<B: Backend> {
    layers: Vec<Linear<B>>,
    norm: Option<LayerNorm<B>>,
}

/// Parameter paths in errors go through `Vec` and `Option` containers (`layers.1.weight`).
#[test]
fn shape_errors_name_paths_inside_containers() {
    let one = VmapDevice::new(inner_device(), 1);
    let make = |hidden: usize| Deep::<G> {
        layers: vec![
            LinearConfig::new(3, 4).init(&one),
            LinearConfig::new(4, hidden).init(&one),
        ],
        norm: Some(LayerNormConfig::new(hidden).init(&one)),
    };
    match Batched::stack(vec![make(5), make(6)]).unwrap_err() {
        VmapError::ShapeMismatch {
            path,
            expected,
            got,
            ..
        } => {
            assert_eq!(path, "layers.1.weight");
            assert_eq!((expected, got), (vec![4, 5], vec![4, 6]));
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    // Same structure: the Vec and Option contents are stacked member by member.
    let a = make(5);
    let b = make(5);
    let want = [group_params(&a).remove(0), group_params(&b).remove(0)];
    let group = Batched::stack(vec![a, b]).unwrap();
    let got = group_params(&*group);
    assert!(snaps_equal(&got[0], &want[0]) && snaps_equal(&got[1], &want[1]));
    assert!(
        got[0].iter().any(|p| p.path == "norm.gamma"),
        "{:?}",
        got[0].iter().map(|p| &p.path).collect::<Vec<_>>()
    );
}

/// The "save the best member" flow with running state: after training, member k saved with a
/// recorder and loaded on plain NdArray gives, in inference mode, the outputs of member k of
/// the group's `valid()` model (BatchNorm uses member k's running statistics).
#[test]
fn saved_member_with_running_state_matches_the_group_in_inference() {
    use burn::module::AutodiffModule;

    let group: Batched<BatchNorm<G>> =
        Batched::init(3, &inner_device(), |d| BatchNormConfig::new(4).init(d)).unwrap();
    let one = VmapDevice::new(inner_device(), 1);
    for step in 0..3u64 {
        let x = stack_members(
            (0..3)
                .map(|k| {
                    let mut d = input(100 + 10 * step + k, &[6, 4, 5]);
                    // members see data of different scales: different statistics
                    let v: Vec<f32> = values(&d)
                        .iter()
                        .map(|v| v * (k as f32 + 1.0) + k as f32)
                        .collect();
                    d = TensorData::new(v, [6, 4, 5]);
                    Tensor::<G, 3>::from_data(d, &one)
                })
                .collect(),
        )
        .unwrap();
        let _ = group.forward(x);
    }
    let x = input(200, &[5, 4, 3]);
    let valid = group.valid();
    let eval = member_data(valid.forward(Tensor::<Vmap<Inner>, 3>::from_data(
        x.clone(),
        &VmapDevice::new(inner_device(), 3),
    )));
    assert_ne!(values(&eval[0]), values(&eval[1]));
    for (k, eval_k) in eval.iter().enumerate() {
        let bin = BinFileRecorder::<FullPrecisionSettings>::new();
        let path = temp_path(&format!("bn-member-{k}"));
        group
            .member(k)
            .unwrap()
            .save_file(path.clone(), &bin)
            .unwrap();
        let plain: BatchNorm<NdArray> = BatchNormConfig::new(4)
            .init(&inner_device())
            .load_file(path, &bin, &inner_device())
            .unwrap();
        let out = plain
            .forward(Tensor::<NdArray, 3>::from_data(x.clone(), &inner_device()))
            .into_data();
        let (d, ok) = max_diff(&values(&out), &values(eval_k), 1e-6, 1e-5);
        assert!(
            ok,
            "member {k}: saved member vs group inference differ by {d:e}"
        );
    }
}
