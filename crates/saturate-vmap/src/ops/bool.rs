//! Batching rules for `BoolTensorOps`.

#![allow(unused_variables, unused_imports)]

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, Distribution, ExecutionError, Scalar, TensorData, TensorMetadata};
use burn_backend::{BoolDType, FloatDType, IntDType, Shape, Slice};

use burn_backend::quantization::*;
use core::future::Future;

use crate::Vmap;

impl<B: Backend> BoolTensorOps<Self> for Vmap<B> {
    fn bool_empty(shape: Shape, device: &Device<Self>, dtype: BoolDType) -> BoolTensor<Self> {
        todo!("vmap: bool_empty")
    }

    fn bool_zeros(shape: Shape, device: &Device<Self>, dtype: BoolDType) -> BoolTensor<Self> {
        todo!("vmap: bool_zeros")
    }

    fn bool_ones(shape: Shape, device: &Device<Self>, dtype: BoolDType) -> BoolTensor<Self> {
        todo!("vmap: bool_ones")
    }

    fn bool_into_data(
        tensor: BoolTensor<Self>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        let (inner, batched) = (tensor.inner, tensor.batched);
        async move {
            if batched {
                return Err(crate::tensor::batched_read_error("bool_into_data"));
            }
            B::bool_into_data(inner).await
        }
    }

    fn bool_from_data(data: TensorData, device: &Device<Self>) -> BoolTensor<Self> {
        todo!("vmap: bool_from_data")
    }

    fn bool_into_int(tensor: BoolTensor<Self>, out_dtype: IntDType) -> IntTensor<Self> {
        todo!("vmap: bool_into_int")
    }

    fn bool_into_float(tensor: BoolTensor<Self>, out_dtype: FloatDType) -> FloatTensor<Self> {
        todo!("vmap: bool_into_float")
    }

    fn bool_device(tensor: &BoolTensor<Self>) -> Device<Self> {
        todo!("vmap: bool_device")
    }

    fn bool_to_device(tensor: BoolTensor<Self>, device: &Device<Self>) -> BoolTensor<Self> {
        todo!("vmap: bool_to_device")
    }

    fn bool_reshape(tensor: BoolTensor<Self>, shape: Shape) -> BoolTensor<Self> {
        todo!("vmap: bool_reshape")
    }

    fn bool_slice(tensor: BoolTensor<Self>, slices: &[Slice]) -> BoolTensor<Self> {
        todo!("vmap: bool_slice")
    }

    fn bool_slice_assign(
        tensor: BoolTensor<Self>,
        slices: &[Slice],
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        todo!("vmap: bool_slice_assign")
    }

    fn bool_mask_where(
        tensor: BoolTensor<Self>,
        mask: BoolTensor<Self>,
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        todo!("vmap: bool_mask_where")
    }

    fn bool_mask_fill(
        tensor: BoolTensor<Self>,
        mask: BoolTensor<Self>,
        value: Scalar,
    ) -> BoolTensor<Self> {
        todo!("vmap: bool_mask_fill")
    }

    fn bool_gather(
        dim: usize,
        tensor: BoolTensor<Self>,
        indices: IntTensor<Self>,
    ) -> BoolTensor<Self> {
        todo!("vmap: bool_gather")
    }

    fn bool_scatter_or(
        dim: usize,
        tensor: BoolTensor<Self>,
        indices: IntTensor<Self>,
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        todo!("vmap: bool_scatter_or")
    }

    fn bool_select(
        tensor: BoolTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> BoolTensor<Self> {
        todo!("vmap: bool_select")
    }

    fn bool_select_or(
        tensor: BoolTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        todo!("vmap: bool_select_or")
    }

    // provided: bool_repeat_dim
    // provided: bool_cat
    fn bool_equal(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        todo!("vmap: bool_equal")
    }

    // provided: bool_not_equal
    fn bool_equal_elem(lhs: BoolTensor<Self>, rhs: Scalar) -> BoolTensor<Self> {
        todo!("vmap: bool_equal_elem")
    }

    // provided: bool_not_equal_elem
    fn bool_not(tensor: BoolTensor<Self>) -> BoolTensor<Self> {
        todo!("vmap: bool_not")
    }

    fn bool_and(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        todo!("vmap: bool_and")
    }

    fn bool_or(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        todo!("vmap: bool_or")
    }

    // provided: bool_xor
    // provided: bool_transpose
    fn bool_swap_dims(tensor: BoolTensor<Self>, dim1: usize, dim2: usize) -> BoolTensor<Self> {
        todo!("vmap: bool_swap_dims")
    }

    fn bool_permute(tensor: BoolTensor<Self>, axes: &[usize]) -> BoolTensor<Self> {
        todo!("vmap: bool_permute")
    }

    fn bool_flip(tensor: BoolTensor<Self>, axes: &[usize]) -> BoolTensor<Self> {
        todo!("vmap: bool_flip")
    }

    // provided: bool_any
    // provided: bool_any_dim
    // provided: bool_all
    // provided: bool_all_dim
    // provided: bool_argwhere
    fn bool_expand(tensor: BoolTensor<Self>, shape: Shape) -> BoolTensor<Self> {
        todo!("vmap: bool_expand")
    }

    fn bool_unfold(
        tensor: BoolTensor<Self>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> BoolTensor<Self> {
        todo!("vmap: bool_unfold")
    }
}
