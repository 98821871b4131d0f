//! The one integration-test binary of saturate-optim (every binary that instantiates
//! `Autodiff<Vmap<NdArray>>` costs about a minute to link).

mod common;
mod errors;
mod group;
mod parity;
