//! The batching rules of [`Vmap`](crate::Vmap), one file per burn ops trait (a folder for
//! `ModuleOps`), after burn-autodiff's layout; the machinery they share is in `base.rs`.

mod activation;
pub(crate) mod base;
mod bool;
pub(crate) mod conv_gemm;
pub(crate) mod conv_host;
mod float;
mod int;
mod module;
pub(crate) mod ndarray_fast;
mod qtensor;
mod reciprocal;
mod transaction;
