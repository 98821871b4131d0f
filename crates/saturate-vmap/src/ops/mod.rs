//! The batching rules of [`Vmap`](crate::Vmap), one file per burn ops trait (a folder for
//! `ModuleOps`), after burn-autodiff's layout; the machinery they share is in `base.rs`.

mod activation;
pub(crate) mod base;
mod bool;
mod float;
mod int;
mod module;
mod qtensor;
mod reciprocal;
mod transaction;
