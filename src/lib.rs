//! # saturate
//!
//! Train K configurations of a small Burn network that differ only in shape-preserving
//! hyperparameters (learning rate, momentum, weight decay, dropout, ...) as **one** batched
//! model, and drive the search with a native-Rust, Optuna-style study.
//!
//! - [`vmap`]: the `Vmap<B>` backend decorator and `Batched<M>` (a member axis for any
//!   unmodified Burn module, exact per-member gradients);
//! - [`optim`]: SGD / Adam / AdamW with one hyperparameter value per member;
//! - [`data`]: dataset readers (IDX, CIFAR-10) as burn `Dataset`s, a shipped
//!   Fashion-MNIST subset, and an image `Batcher`;
//! - [`study`]: studies, samplers, pruners and storages (a journal file Optuna reads);
//! - [`train`]: the group runner: a study drives groups of K trials trained as one model;
//! - [`profile`]: wall time, CPU time, peak memory and GPU busy fraction / energy of a
//!   run; `recommend_group_size` picks K from a few measured steps.
//!
//! ## Features
//!
//! | feature   | what it does                                              | default |
//! |-----------|-----------------------------------------------------------|---------|
//! | `ndarray` | burn's NdArray CPU backend (exact: without its `simd`)    | yes     |
//! | `ndarray-simd` | NdArray's SIMD layer (approximate `recip`; see the book's FAQ) | no |
//! | `wgpu`    | burn's wgpu backend with fusion (Vulkan, Metal, DX12)    | no      |
//! | `cuda`    | burn-cuda with fusion (CUDA loaded at run time; builds without a GPU) | no |
//! | `autotune` | burn's kernel autotuning for `wgpu` and `cuda`           | no      |
//! | `tch`     | burn-tch (LibTorch; needs `LIBTORCH` at build time)       | no      |
//! | `nvml`    | GPU telemetry in [`profile`] (NVML loaded at run time)    | no      |

mod error;

pub use error::{Error, Result};
pub use saturate_data as data;
pub use saturate_malloc as malloc;
pub use saturate_optim as optim;
pub use saturate_profile as profile;
pub use saturate_study as study;
pub use saturate_train as train;
pub use saturate_vmap as vmap;

/// The names a program needs: `use saturate::prelude::*;`.
///
/// Errors of every crate convert into [`crate::Error`] with `?`; objectives return
/// [`ObjectiveError`](saturate_study::study::ObjectiveError), which any error converts into.
pub mod prelude {
    pub use saturate_optim::{
        GroupAdamConfig, GroupAdamWConfig, GroupGradientClippingConfig, GroupMomentumConfig,
        GroupOptimizer, GroupSgdConfig, GroupWeightDecayConfig, HyperParam, OptimError,
    };
    pub use saturate_study::prelude::{
        delete_study, Choice, CmaEsSamplerConfig, DefaultStudy, FixedParams, FrozenTrial,
        GpSamplerConfig, GridSamplerConfig, HyperbandPrunerConfig, InMemoryStorage, JournalStorage,
        MedianPruner, MedianPrunerConfig, NopPruner, ObjectiveError, OptunaDefaults, ParamValue,
        PatientPrunerConfig, PercentilePrunerConfig, Pruner, QmcSamplerConfig, RandomSamplerConfig,
        Sampler, Storage, Study, StudyConfig, StudyDirection, StudyError,
        SuccessiveHalvingPrunerConfig, ThresholdPrunerConfig, TpeSamplerConfig, Trial, TrialPruned,
        TrialState, WilcoxonPrunerConfig,
    };
    pub use saturate_train::{
        run, run_trainer, GroupBackend, GroupTask, GroupTrainer, GroupTrial, MemberHyper,
        MemberScope, Members, PbtConfig, Retain, RunConfig, RunSummary, SharedScope, TimeoutPolicy,
        TrainError, TrainerConfig,
    };
    pub use saturate_vmap::{
        member_data, member_values, per_member, values_per_member, Batched, GroupModel, Vmap,
        VmapBackend, VmapDevice, VmapError,
    };
}
