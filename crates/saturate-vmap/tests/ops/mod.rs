//! Differential cases, one file per burn ops trait.

mod activation;
mod bool;
mod conv_gemm;
mod float;
mod int;
mod module;
mod ndarray_fast;
mod transaction;
