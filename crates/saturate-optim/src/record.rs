//! [`GroupOptimizerRecord`]: the state of a [`GroupOptimizer`](crate::GroupOptimizer) for burn's
//! record system.

use burn::module::ParamId;
use burn::record::{PrecisionSettings, Record};
use burn::serde::{Deserialize, Serialize};
use burn::tensor::backend::BackendTypes;
use burn::tensor::ops::FloatTensorOps;
use burn::tensor::TensorData;
use saturate_vmap::tensor::from_inner;
use saturate_vmap::{float_with_member_axis, VmapBackend};

use crate::base::MemberState;

/// The state of a group optimizer: for every parameter, its moments (with the member axis) and
/// each member's step count. Save and load it with any of burn's recorders:
///
/// ```
/// use burn::backend::{Autodiff, NdArray};
/// use burn::nn::{Linear, LinearConfig};
/// use burn::optim::GradientsParams;
/// use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
/// use burn::tensor::Tensor;
/// use saturate_optim::GroupAdamConfig;
/// use saturate_vmap::{Batched, Vmap};
///
/// type B = Autodiff<Vmap<NdArray>>;
/// # let group: Batched<Linear<B>> =
/// #     Batched::init(2, &Default::default(), |d| LinearConfig::new(3, 1).init(d)).unwrap();
/// # let x = Tensor::<B, 2>::ones([4, 3], &group.device());
/// # let grads = GradientsParams::from_grads(group.forward(x).mean().backward(), &*group);
/// let config = GroupAdamConfig::new().with_beta_1([0.9, 0.95]);
/// let mut optim = config.init(2).unwrap();
/// let group = optim.step([1e-3, 1e-2], group, grads).unwrap();
///
/// let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
/// let bytes = recorder.record(optim.to_record(), ()).unwrap();
/// let record = recorder.load(bytes, &group.device()).unwrap();
/// let restored = config.init::<B, Linear<B>>(2).unwrap().load_record(record).unwrap();
/// assert_eq!(restored.to_record().len(), 2); // weight and bias
/// ```
#[derive(Clone, Debug)]
pub struct GroupOptimizerRecord<B: VmapBackend> {
    members: usize,
    states: Vec<(ParamId, MemberState<B>)>,
}

impl<B: VmapBackend> GroupOptimizerRecord<B> {
    pub(crate) fn new(members: usize, states: Vec<(ParamId, MemberState<B>)>) -> Self {
        Self { members, states }
    }

    /// The number of members the state belongs to.
    pub fn members(&self) -> usize {
        self.members
    }

    /// The number of parameters with state.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Whether no parameter has state yet (no step was taken).
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    pub(crate) fn into_states(self) -> Vec<(ParamId, MemberState<B>)> {
        self.states
    }
}

/// The serialized form of a [`GroupOptimizerRecord`].
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(crate = "burn::serde")]
pub struct GroupOptimizerRecordItem {
    members: usize,
    states: Vec<MemberStateItem>,
}

/// The serialized state of one parameter: state tensors as `[K, ...shape]` data.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(crate = "burn::serde")]
struct MemberStateItem {
    id: String,
    steps: Vec<usize>,
    tensors: Vec<TensorData>,
}

impl<B: VmapBackend> Record<B> for GroupOptimizerRecord<B> {
    type Item<S: PrecisionSettings> = GroupOptimizerRecordItem;

    fn into_item<S: PrecisionSettings>(self) -> Self::Item<S> {
        let members = self.members;
        let states = self
            .states
            .into_iter()
            .map(|(id, state)| MemberStateItem {
                id: id.serialize(),
                steps: state.steps,
                tensors: state
                    .tensors
                    .into_iter()
                    .map(|t| {
                        let t = B::float_to_vmap(t);
                        let batched = t.is_batched();
                        let inner = float_with_member_axis::<B::Inner>(from_inner(
                            t.into_inner(),
                            batched,
                            members,
                        ));
                        burn::tensor::try_read_sync(B::Inner::float_into_data(inner))
                            .expect(
                                "saturate-optim: this backend cannot read tensors synchronously",
                            )
                            .expect("saturate-optim: reading optimizer state failed")
                            .convert::<S::FloatElem>()
                    })
                    .collect(),
            })
            .collect();
        GroupOptimizerRecordItem { members, states }
    }

    fn from_item<S: PrecisionSettings>(item: Self::Item<S>, device: &B::Device) -> Self {
        let states = item
            .states
            .into_iter()
            .map(|state| {
                let tensors = state
                    .tensors
                    .into_iter()
                    .map(|data| {
                        let members = data.shape[0];
                        let data = data.convert::<<B::Inner as BackendTypes>::FloatElem>();
                        let inner = B::Inner::float_from_data(data, &device.inner);
                        B::float_from_vmap(from_inner(inner, true, members))
                    })
                    .collect();
                (
                    ParamId::deserialize(&state.id),
                    MemberState {
                        steps: state.steps,
                        tensors,
                    },
                )
            })
            .collect();
        Self {
            members: item.members,
            states,
        }
    }
}
