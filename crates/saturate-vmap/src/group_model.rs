//! [`GroupModel<M>`]: a [`Batched`] group as a burn [`Module`] whose record is one record per
//! member, so burn's recorders, burn-train's checkpointer and `Module::load_record` work on a
//! whole group.
//!
//! A group's own `M::into_record` would read every batched parameter with `into_data`, which
//! saturate refuses (the member axis is not part of the logical shape). [`GroupModel`] records
//! each member as the ordinary module it is ([`Batched::member`]): the saved item is a list of
//! K items of `M`'s record, and item k loads into a plain `M` on any backend.
//!
//! With the `burn-train` feature, [`GroupModel`] also implements burn-train's `TrainStep` and
//! `InferenceStep` for any module that implements them: its output is split into one output per
//! member (`MemberOutputs`, `SplitMembers`) for burn-train's metrics.

use core::fmt;
use core::ops::Deref;

use burn::module::{
    AutodiffModule, Devices, HasAutodiffModule, Module, ModuleMapper, ModuleVisitor,
};
use burn::record::{PrecisionSettings, Record};
use burn::tensor::backend::AutodiffBackend;

use crate::batched::{Batched, DeepCopy};
use crate::vmap_backend::VmapBackend;
use crate::VmapDevice;

/// A [`Batched`] group that is itself a burn [`Module`]: what burn-train's `Learner` trains and
/// checkpoints.
///
/// It dereferences to the [`Batched`] group (and through it to `M`, so `M`'s own `forward`
/// runs all K members). Its record, [`MemberRecords`], holds one record of `M` per member;
/// saved with any burn recorder it is a list whose item k is member k's record, which loads
/// into a plain `M` on the inner backend:
///
/// ```
/// use burn::backend::{Autodiff, NdArray};
/// use burn::module::Module;
/// use burn::nn::{Linear, LinearConfig};
/// use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
/// use saturate_vmap::{Batched, GroupModel, Vmap};
///
/// type B = Autodiff<Vmap<NdArray>>;
/// let group: Batched<Linear<B>> =
///     Batched::init(3, &Default::default(), |d| LinearConfig::new(4, 2).init(d))?;
/// let model = GroupModel::from(group);
///
/// let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
/// let bytes = recorder.record(model.clone().into_record(), ()).unwrap();
/// // Any K-member group of the same module takes the record back...
/// let restored = model.clone().load_record(recorder.load(bytes.clone(), &Default::default()).unwrap());
/// assert_eq!(restored.members(), 3);
/// // ...and member 2's record is an ordinary `Linear` record on NdArray.
/// let records: Vec<<Linear<NdArray> as Module<NdArray>>::Record> =
///     Recorder::<NdArray>::load(&recorder, bytes, &Default::default()).unwrap();
/// let plain = LinearConfig::new(4, 2).init::<NdArray>(&Default::default());
/// let member_2: Linear<NdArray> = plain.load_record(records.into_iter().nth(2).unwrap());
/// # Ok::<(), saturate_vmap::VmapError>(())
/// ```
///
/// burn-train's `Learner` needs the model type to be a `Module`, and its checkpointer saves
/// `Module::into_record`: that is why a group goes to burn-train as a `GroupModel`, not as a
/// `Batched`. `num_params` counts the parameters of one member (shapes are logical).
#[derive(Debug, Clone)]
pub struct GroupModel<M>(Batched<M>);

impl<M> GroupModel<M> {
    /// The group.
    pub fn batched(&self) -> &Batched<M> {
        &self.0
    }

    /// Consumes the model and returns the group (for saturate-optim's `GroupOptimizer::step`,
    /// `retain`, `extend`).
    pub fn into_batched(self) -> Batched<M> {
        self.0
    }
}

impl<M> From<Batched<M>> for GroupModel<M> {
    fn from(group: Batched<M>) -> Self {
        Self(group)
    }
}

impl<M> Deref for GroupModel<M> {
    type Target = Batched<M>;

    fn deref(&self) -> &Batched<M> {
        &self.0
    }
}

impl<M: fmt::Display> fmt::Display for GroupModel<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GroupModel of {} members: {}", self.0.members(), *self.0)
    }
}

/// Wraps a module that came out of a map over a group's parameters (a device move, an autodiff
/// conversion): every parameter still has the group's member axis.
fn regroup<B: VmapBackend, M: Module<B>>(module: M) -> GroupModel<M> {
    GroupModel(Batched::from_module(module).unwrap_or_else(|e| {
        panic!("saturate-vmap: a mapper changed the member count of a group's parameters: {e}")
    }))
}

/// The record of a [`GroupModel`]: member k's record of `M` at index k.
///
/// Its item is a `Vec` of `M`'s record items, the same item burn's `Vec<R>` record has, so a
/// saved group loads as `Vec<R>` (K ordinary records) on any backend. Loading it as a
/// `MemberRecords` builds each member on a one-member device: the member count comes from the
/// number of records, never from the device (burn-train restores checkpoints on the default
/// device, which has one member).
#[derive(Debug, Clone)]
pub struct MemberRecords<R>(pub Vec<R>);

impl<B: VmapBackend, R: Record<B>> Record<B> for MemberRecords<R> {
    type Item<S: PrecisionSettings> = Vec<R::Item<S>>;

    fn into_item<S: PrecisionSettings>(self) -> Self::Item<S> {
        self.0.into_iter().map(Record::into_item).collect()
    }

    fn from_item<S: PrecisionSettings>(item: Self::Item<S>, device: &B::Device) -> Self {
        let one_member = VmapDevice::new(device.inner.clone(), 1);
        Self(
            item.into_iter()
                .map(|item| R::from_item(item, &one_member))
                .collect(),
        )
    }
}

impl<B: VmapBackend, M: DeepCopy<B>> Module<B> for GroupModel<M> {
    type Record = MemberRecords<M::Record>;

    fn collect_devices(&self, devices: Devices<B>) -> Devices<B> {
        self.0.module().collect_devices(devices)
    }

    fn fork(self, device: &B::Device) -> Self {
        regroup(self.0.into_inner().fork(device))
    }

    fn to_device(self, device: &B::Device) -> Self {
        regroup(self.0.into_inner().to_device(device))
    }

    fn visit<V: ModuleVisitor<B>>(&self, visitor: &mut V) {
        self.0.module().visit(visitor)
    }

    fn map<Mp: ModuleMapper<B>>(self, mapper: &mut Mp) -> Self {
        regroup(self.0.into_inner().map(mapper))
    }

    /// Loads one member per record; the group then has as many members as the record has
    /// records. Member 0 of this group is the template of every member (parameter ids come
    /// from the record, as in burn).
    ///
    /// # Panics
    /// If the record is empty or its members differ in structure or shapes (a record of
    /// another model): `Module::load_record` cannot return an error. Check a record from an
    /// unknown source with [`Batched::stack`] on the loaded members first.
    fn load_record(self, record: Self::Record) -> Self {
        let template = self
            .0
            .member(0)
            .expect("saturate-vmap: a group has at least one member");
        let members = record
            .0
            .into_iter()
            .map(|record| template.clone().load_record(record))
            .collect();
        GroupModel(Batched::stack(members).unwrap_or_else(|e| {
            panic!("saturate-vmap: GroupModel::load_record: the record is not a group of this model: {e}")
        }))
    }

    fn into_record(self) -> Self::Record {
        MemberRecords(
            (0..self.0.members())
                .map(|k| {
                    self.0
                        .member(k)
                        .expect("saturate-vmap: k is below the member count")
                        .into_record()
                })
                .collect(),
        )
    }
}

impl<B, M> AutodiffModule<B> for GroupModel<M>
where
    B: AutodiffBackend + VmapBackend,
    B::InnerBackend: VmapBackend,
    M: AutodiffModule<B> + DeepCopy<B>,
    M::InnerModule: DeepCopy<B::InnerBackend>,
{
    type InnerModule = GroupModel<M::InnerModule>;

    fn valid(&self) -> Self::InnerModule {
        regroup(self.0.module().valid())
    }

    fn from_inner(module: Self::InnerModule) -> Self {
        regroup(M::from_inner(module.0.into_inner()))
    }
}

impl<B, M> HasAutodiffModule<B> for GroupModel<M>
where
    B: AutodiffBackend + VmapBackend,
    B::InnerBackend: VmapBackend,
    M: HasAutodiffModule<B> + DeepCopy<B::InnerBackend>,
    M::TrainModule: DeepCopy<B>,
{
    type TrainModule = GroupModel<M::TrainModule>;
}

#[cfg(feature = "burn-train")]
pub use self::train::{MemberItems, MemberOutputs, SplitMembers};

/// burn-train's steps for a group: the module's own `TrainStep` / `InferenceStep` run all K
/// members at once; their output is split into K per-member outputs when burn-train's metric
/// thread syncs it.
#[cfg(feature = "burn-train")]
mod train {
    use burn::tensor::{Int, Tensor, TensorPrimitive};
    use burn::train::metric::ItemLazy;
    use burn::train::{
        ClassificationOutput, InferenceStep, RegressionOutput, TrainOutput, TrainStep,
    };

    use super::GroupModel;
    use crate::member::take_member;
    use crate::tensor::{FloatKind, IntKind};
    use crate::vmap_backend::VmapBackend;

    /// An output of a step on a group that can be split into one output per member: the
    /// output types of burn-train's learners whose tensors hold every member's values.
    ///
    /// Implemented for burn-train's [`ClassificationOutput`] and [`RegressionOutput`] on a
    /// [`VmapBackend`]: member k's output holds member k's loss and outputs, on the inner
    /// backend; targets shared by all members are given to each.
    pub trait SplitMembers {
        /// The output of one member.
        type Member: ItemLazy;

        /// One output per member, in member order.
        fn split_members(self) -> Vec<Self::Member>;
    }

    /// Member `k` of a float tensor, as a tensor of the inner backend.
    fn float_member<B: VmapBackend, const D: usize>(
        tensor: &Tensor<B, D>,
        k: usize,
    ) -> Tensor<B::Inner, D> {
        let v = B::float_to_vmap(tensor.clone().into_primitive().tensor());
        let one = take_member::<B::Inner, FloatKind>(v, k);
        Tensor::from_primitive(TensorPrimitive::Float(one.inner))
    }

    /// Member `k` of an int tensor, as a tensor of the inner backend.
    fn int_member<B: VmapBackend, const D: usize>(
        tensor: &Tensor<B, D, Int>,
        k: usize,
    ) -> Tensor<B::Inner, D, Int> {
        let v = B::int_to_vmap(tensor.clone().into_primitive());
        Tensor::from_primitive(take_member::<B::Inner, IntKind>(v, k).inner)
    }

    fn members_of<B: VmapBackend>(loss: &Tensor<B, 1>) -> usize {
        B::float_to_vmap(loss.clone().into_primitive().tensor()).members
    }

    impl<B: VmapBackend> SplitMembers for ClassificationOutput<B> {
        type Member = ClassificationOutput<B::Inner>;

        fn split_members(self) -> Vec<Self::Member> {
            (0..members_of(&self.loss))
                .map(|k| {
                    ClassificationOutput::new(
                        float_member(&self.loss, k),
                        float_member(&self.output, k),
                        int_member(&self.targets, k),
                    )
                })
                .collect()
        }
    }

    impl<B: VmapBackend> SplitMembers for RegressionOutput<B> {
        type Member = RegressionOutput<B::Inner>;

        fn split_members(self) -> Vec<Self::Member> {
            (0..members_of(&self.loss))
                .map(|k| {
                    RegressionOutput::new(
                        float_member(&self.loss, k),
                        float_member(&self.output, k),
                        float_member(&self.targets, k),
                    )
                })
                .collect()
        }
    }

    /// The output of a [`GroupModel`]'s step: the module's own output (every member at once),
    /// split into K outputs when burn-train's metric thread syncs it.
    pub struct MemberOutputs<O>(pub O);

    /// What burn-train's metrics receive from a [`GroupModel`]: member k's synced output at
    /// index k. saturate-train's per-member metrics adapt it (its `PerMember` metric).
    #[derive(Debug, Clone)]
    pub struct MemberItems<T>(pub Vec<T>);

    impl<O: SplitMembers + Send> ItemLazy for MemberOutputs<O> {
        type ItemSync = MemberItems<<O::Member as ItemLazy>::ItemSync>;

        fn sync(self) -> Self::ItemSync {
            MemberItems(
                self.0
                    .split_members()
                    .into_iter()
                    .map(ItemLazy::sync)
                    .collect(),
            )
        }
    }

    /// The module's own `TrainStep` on all K members: one forward, one backward (a batched
    /// loss gives each member the gradient of its own loss), one optimizer step.
    impl<M> TrainStep for GroupModel<M>
    where
        M: TrainStep,
        M::Output: SplitMembers,
    {
        type Input = M::Input;
        type Output = MemberOutputs<M::Output>;

        fn step(&self, item: Self::Input) -> TrainOutput<Self::Output> {
            let TrainOutput { grads, item } = self.0.module().step(item);
            TrainOutput {
                grads,
                item: MemberOutputs(item),
            }
        }
    }

    /// The module's own `InferenceStep` on all K members.
    impl<M> InferenceStep for GroupModel<M>
    where
        M: InferenceStep,
        M::Output: SplitMembers,
    {
        type Input = M::Input;
        type Output = MemberOutputs<M::Output>;

        fn step(&self, item: Self::Input) -> Self::Output {
            MemberOutputs(self.0.module().step(item))
        }
    }
}
