//! Host kernels, one folder per backend whose buffers they read (`ndarray/`), and the
//! convolution geometry they take.
//!
//! Which backend gets which kernels is decided in [`lowering`](crate::lowering); nothing here
//! decides it. A kernel only checks that a tensor holds its backend's buffer (a downcast) and
//! hands back any other. Kernels import nothing from `ops/` or `lowering/`.

mod geometry;
pub(crate) mod ndarray;

pub(crate) use geometry::{out_len, Geometry};
