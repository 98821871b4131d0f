//! Layers whose hyperparameters are per member.

mod dropout;

pub use dropout::{Dropout, DropoutConfig};
