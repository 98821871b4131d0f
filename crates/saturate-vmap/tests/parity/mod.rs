//! Module parity: K members trained as one Batched group vs K independent runs.

pub mod common;
mod edge;
mod extra;
mod isolation;
mod lifecycle;
mod models;
mod modules;
mod optim;
mod running;
mod seeds;
