//! `GroupModel<M>`: a group as a burn `Module` whose record holds one record per member (what
//! burn-train's `Learner` trains and its checkpointer saves).

use burn::backend::NdArray;
use burn::module::{AutodiffModule, Module, ModuleVisitor, Param, ParamId};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, Relu};
use burn::record::{BinBytesRecorder, FullPrecisionSettings, NamedMpkFileRecorder, Recorder};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use saturate_vmap::{member_data, Batched, GroupModel, MemberRecords, Vmap};

use crate::parity::common::{group_device, group_params, inner_device, Inner, Snap, G};

/// Random linear layers and running state (BatchNorm's statistics, recorded but unused by
/// `forward`).
#[derive(Module, Debug)]
pub struct Small<B: Backend> {
    first: Linear<B>,
    bn: BatchNorm<B>,
    head: Linear<B>,
}

impl<B: Backend> Small<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            first: LinearConfig::new(5, 6).init(device),
            bn: BatchNormConfig::new(6).init(device),
            head: LinearConfig::new(6, 3).init(device),
        }
    }

    fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.head
            .forward(Relu::new().forward(self.first.forward(x)))
    }
}

fn group(members: usize) -> GroupModel<Small<G>> {
    Batched::init(members, &inner_device(), Small::new)
        .unwrap()
        .into()
}

fn same(a: &[Vec<Snap>], b: &[Vec<Snap>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| p.path == q.path && p.shape == q.shape && p.values == q.values)
        })
}

fn ids<B: Backend, M: Module<B>>(module: &M) -> Vec<ParamId> {
    struct Ids(Vec<ParamId>);
    impl<B: Backend> ModuleVisitor<B> for Ids {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            self.0.push(param.id);
        }
    }
    let mut v = Ids(Vec::new());
    module.visit(&mut v);
    v.0
}

/// Deterministic input `[6, 5]`.
fn input() -> TensorData {
    let values: Vec<f32> = (0..30).map(|i| ((i * 7 % 11) as f32 - 5.0) / 4.0).collect();
    TensorData::new(values, [6, 5])
}

#[test]
fn record_round_trip_gives_back_the_same_members() {
    let saved = group(3);
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let record = saved.clone().into_record();
    assert_eq!(record.0.len(), 3, "one record per member");
    let bytes = recorder.record(record, ()).unwrap();

    // A fresh group (other random values, other ids) takes the saved members back.
    let fresh = group(3);
    assert!(!same(
        &group_params(fresh.module()),
        &group_params(saved.module())
    ));
    let loaded: MemberRecords<_> = recorder.load(bytes.clone(), &Default::default()).unwrap();
    let restored = fresh.load_record(loaded);
    assert_eq!(restored.members(), 3);
    assert!(
        same(
            &group_params(restored.module()),
            &group_params(saved.module())
        ),
        "the restored group's members differ from the saved ones"
    );
    assert_eq!(ids::<G, _>(&restored), ids::<G, _>(&saved), "parameter ids");

    // The member count comes from the record, not from the template.
    let loaded: MemberRecords<_> = recorder.load(bytes, &Default::default()).unwrap();
    let resized = group(2).load_record(loaded);
    assert_eq!(resized.members(), 3);
    assert!(same(
        &group_params(resized.module()),
        &group_params(saved.module())
    ));
}

#[test]
fn member_k_of_the_saved_record_is_a_plain_module_on_ndarray() {
    let model = group(4);
    let recorder = NamedMpkFileRecorder::<FullPrecisionSettings>::new();
    let dir =
        std::env::temp_dir().join(format!("saturate-vmap-group-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("group");
    model.clone().save_file(path.clone(), &recorder).unwrap();

    // The file is K ordinary records: no saturate type is needed to read it.
    let records: Vec<<Small<NdArray> as Module<NdArray>>::Record> =
        Recorder::<NdArray>::load(&recorder, path, &inner_device()).unwrap();
    assert_eq!(records.len(), 4);
    let x = input();
    for (k, record) in records.into_iter().enumerate() {
        let plain = Small::<NdArray>::new(&inner_device()).load_record(record);
        let plain_out = plain
            .forward(Tensor::from_data(x.clone(), &inner_device()))
            .into_data();
        let member: Small<G> = model.member(k).unwrap();
        let member_out =
            member_data(member.forward(Tensor::from_data(x.clone(), &group_device(1))));
        assert_eq!(
            plain_out.to_vec::<f32>().unwrap(),
            member_out[0].to_vec::<f32>().unwrap(),
            "member {k}: the plain module and Batched::member({k}) compute different outputs"
        );
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_group_is_a_module_of_both_backends_with_k_members() {
    let model = group(4);
    let before = group_params(model.module());
    let valid: GroupModel<Small<Vmap<Inner>>> = model.valid();
    assert_eq!(valid.members(), 4);
    assert!(same(&group_params(valid.module()), &before));
    let back = GroupModel::<Small<G>>::from_inner(valid);
    assert!(same(&group_params(back.module()), &before));

    // burn-train forks the model onto the device of its parameters.
    let device = model.devices()[0].clone();
    assert_eq!(device.members, 4);
    let forked = model.clone().fork(&device);
    assert_eq!(forked.members(), 4);
    assert!(same(&group_params(forked.module()), &before));

    // Logical shapes: one member's parameter count.
    let one = Small::<NdArray>::new(&inner_device());
    assert_eq!(model.num_params(), one.num_params());
    assert!(model.to_string().starts_with("GroupModel of 4 members"));
}

#[test]
#[should_panic(expected = "the record is not a group of this model")]
fn an_empty_record_is_refused_with_the_reason() {
    let _ = group(2).load_record(MemberRecords(Vec::new()));
}
