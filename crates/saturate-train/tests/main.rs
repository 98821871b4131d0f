//! The one integration-test binary of saturate-train (every binary that instantiates
//! `Autodiff<Vmap<NdArray>>` costs about a minute to link).

mod common;
mod heartbeats;
mod objective;
mod processes;
mod profile;
mod trainer;
