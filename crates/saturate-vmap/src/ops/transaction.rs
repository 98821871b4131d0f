//! Batching rules for `TransactionOps`.

#![allow(unused_variables, unused_imports)]

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, Distribution, ExecutionError, Scalar, TensorData, TensorMetadata};
use burn_backend::{BoolDType, FloatDType, IntDType, Shape, Slice};

use burn_backend::quantization::*;
use core::future::Future;

use crate::Vmap;

impl<B: Backend> TransactionOps<Self> for Vmap<B> {
    // provided: tr_execute
}
