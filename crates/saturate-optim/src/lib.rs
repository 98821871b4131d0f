//! Vectorized optimizers for saturate's [`Batched`](saturate_vmap::Batched) groups: SGD, Adam
//! and AdamW with **one hyperparameter value per member**.
//!
//! The configs mirror burn-optim 0.21's ([`GroupSgdConfig`], [`GroupAdamConfig`], [`GroupAdamWConfig`]: same
//! fields, same defaults, same update formulas), but every scalar hyperparameter is a
//! [`HyperParam`]: one value shared by all K members, or one value per member. A
//! [`GroupOptimizer`] updates every parameter of a group at once, keeps its state (velocity,
//! moments) with the member axis and counts steps per member. K members trained as one group
//! end up with the same parameters as the same K members trained one by one with unmodified
//! burn-optim.
//!
//! ```
//! use burn::backend::{Autodiff, NdArray};
//! use burn::nn::{Linear, LinearConfig};
//! use burn::optim::GradientsParams;
//! use burn::tensor::Tensor;
//! use saturate_optim::GroupAdamConfig;
//! use saturate_vmap::{Batched, Vmap};
//!
//! type B = Autodiff<Vmap<NdArray>>;
//! let group: Batched<Linear<B>> =
//!     Batched::init(3, &Default::default(), |device| LinearConfig::new(4, 2).init(device)).unwrap();
//! let mut optim = GroupAdamConfig::new()
//!     .with_beta_1([0.8, 0.9, 0.95]) // one β1 per member
//!     .init(group.members())
//!     .unwrap();
//!
//! let x = Tensor::<B, 2>::ones([5, 4], &group.device());
//! let loss = group.forward(x).powi_scalar(2).mean(); // one loss per member
//! let grads = GradientsParams::from_grads(loss.backward(), &*group);
//! let group = optim.step([1e-3, 1e-2, 1e-1], group, grads).unwrap(); // one lr per member
//! assert_eq!(group.members(), 3);
//! ```
//!
//! Learning-rate schedules: [`MemberSchedulers`] runs one burn `LrScheduler` per member and
//! gives K learning rates per step; with [`AnyLrSchedulerConfig`], members may even follow
//! schedules of different kinds.
//!
//! | type | what |
//! |---|---|
//! | [`GroupSgdConfig`], [`GroupAdamConfig`], [`GroupAdamWConfig`] | burn-optim's configs, every scalar a [`HyperParam`] |
//! | [`GroupOptimizer`] | the optimizer of a group: `step`, `retain`, `extend`, `to_record` / `load_record` |
//! | [`MemberSchedulers`] | K learning rates per step from K burn schedulers |
//! | [`OptimError`] | typed errors naming the field |

mod adam;
mod adamw;
mod base;
mod burn_optimizer;
mod decay;
mod error;
mod fused;
mod grad_clipping;
mod group;
mod hyper;
mod lr_scheduler;
mod members;
mod momentum;
mod record;
mod sgd;

pub use adam::{GroupAdam, GroupAdamConfig};
pub use adamw::{GroupAdamW, GroupAdamWConfig};
pub use base::{MemberState, UpdateRule};
pub use burn_optimizer::{GroupOptimizerAdaptor, MemberLearningRates};
pub use decay::GroupWeightDecayConfig;
pub use error::OptimError;
pub use grad_clipping::GroupGradientClippingConfig;
pub use group::GroupOptimizer;
pub use hyper::HyperParam;
pub use lr_scheduler::{
    AnyLrScheduler, AnyLrSchedulerConfig, AnyLrSchedulerRecord, MemberSchedulers, SchedulerConfig,
};
pub use momentum::GroupMomentumConfig;
pub use record::{GroupOptimizerRecord, GroupOptimizerRecordItem};
pub use sgd::{GroupSgd, GroupSgdConfig};
