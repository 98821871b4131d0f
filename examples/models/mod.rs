//! The examples' models, shared with the examples that measure them (`recommend_group_size`,
//! `parity_check`): an MLP (`mnist_mlp`), a CNN (`fashion_mnist`) and a patch transformer
//! (`patch_transformer`), all on 28x28 grey-scale images. Ordinary burn modules.

// Each example uses one or all of the models; the others are unused in it.
#![allow(dead_code)]

pub mod cnn;
pub mod mlp;
pub mod transformer;
