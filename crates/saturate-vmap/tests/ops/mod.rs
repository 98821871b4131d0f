//! Differential cases, one file per burn ops trait.

mod activation;
mod bool;
mod float;
mod int;
mod module;
mod transaction;
