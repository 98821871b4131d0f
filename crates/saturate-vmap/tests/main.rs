//! The one integration-test binary of saturate-vmap (every binary that instantiates
//! `Autodiff<Vmap<NdArray>>` costs about a minute to link).

#[macro_use]
pub mod harness;
mod batched;
mod coverage;
mod lane;
mod ops;
mod parity;
