//! Gradient isolation: a loss that depends on one member only gives exactly zero gradients to
//! the other members (and per-member loss weights scale each member's gradient alone).

use super::common::isolation;
use super::models::{CnnCase, MlpCase, TextCase};

#[test]
fn mlp_loss_of_member_1_only() {
    isolation(&MlpCase { regression: false }, 300, &[0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn cnn_loss_of_member_1_only() {
    isolation(&CnnCase, 301, &[0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn transformer_loss_of_member_1_only() {
    isolation(&TextCase { masked: true }, 302, &[0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn per_member_loss_weights() {
    isolation(&MlpCase { regression: true }, 303, &[0.5, 0.0, 2.0, 1.0]);
}
