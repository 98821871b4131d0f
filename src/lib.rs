//! # saturate
//!
//! Train K configurations of a small Burn network that differ only in shape-preserving
//! hyperparameters (learning rate, momentum, weight decay, dropout, ...) as **one** batched
//! model, and drive the search with a native-Rust, Optuna-style study.
//!
//! - [`vmap`]: the `Vmap<B>` backend decorator and `Batched<M>` (a member axis for any
//!   unmodified Burn module, exact per-member gradients);
//! - [`optim`]: SGD / Adam / AdamW with one hyperparameter value per member;
//! - [`study`]: studies, samplers, pruners and storages (a journal file Optuna reads).
//!
//! ## Features
//!
//! | feature   | what it does                                              | default |
//! |-----------|-----------------------------------------------------------|---------|
//! | `ndarray` | burn's NdArray CPU backend                                | yes     |
//! | `cuda`    | burn-cuda (CUDA loaded at run time; builds without a GPU) | no      |
//! | `tch`     | burn-tch (LibTorch; needs `LIBTORCH` at build time)       | no      |

pub use saturate_optim as optim;
pub use saturate_study as study;
pub use saturate_vmap as vmap;

/// The names most programs need.
pub mod prelude {
    pub use saturate_vmap::{
        member_data, member_values, per_member, Batched, Vmap, VmapBackend, VmapDevice, VmapError,
    };
}
