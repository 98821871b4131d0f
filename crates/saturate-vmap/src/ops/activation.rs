//! Batching rules for `ActivationOps`.

#![allow(unused_variables, unused_imports)]

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, Distribution, ExecutionError, Scalar, TensorData, TensorMetadata};
use burn_backend::{BoolDType, FloatDType, IntDType, Shape, Slice};

use burn_backend::quantization::*;
use core::future::Future;

use crate::Vmap;

impl<B: Backend> ActivationOps<Self> for Vmap<B> {
    // provided: leaky_relu
    // provided: relu
    // provided: relu_backward
    // provided: gelu
    // provided: prelu
    // provided: gelu_backward
    // provided: sigmoid
    // provided: sigmoid_backward
    // provided: hard_sigmoid
    // provided: log_sigmoid
    // provided: softmax
    // provided: log_softmax
    // provided: softmin
    // provided: log_sigmoid_backward
}
