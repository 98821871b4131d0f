//! The batching rules of [`Vmap`](crate::Vmap), one file per burn ops trait.

mod activation;
mod base;
mod bool;
pub(crate) mod conv_gemm;
mod float;
mod int;
mod module;
mod qtensor;
mod reciprocal;
mod transaction;
