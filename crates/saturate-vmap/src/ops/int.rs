//! Batching rules for `IntTensorOps`.

#![allow(unused_variables, unused_imports)]

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, Distribution, ExecutionError, Scalar, TensorData, TensorMetadata};
use burn_backend::{BoolDType, FloatDType, IntDType, Shape, Slice};

use burn_backend::quantization::*;
use core::future::Future;

use crate::Vmap;

impl<B: Backend> IntTensorOps<Self> for Vmap<B> {
    fn int_empty(shape: Shape, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> {
        todo!("vmap: int_empty")
    }

    fn int_into_data(
        tensor: IntTensor<Self>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        let (inner, batched) = (tensor.inner, tensor.batched);
        async move {
            if batched {
                return Err(crate::tensor::batched_read_error("int_into_data"));
            }
            B::int_into_data(inner).await
        }
    }

    fn int_from_data(data: TensorData, device: &Device<Self>) -> IntTensor<Self> {
        todo!("vmap: int_from_data")
    }

    fn int_device(tensor: &IntTensor<Self>) -> Device<Self> {
        todo!("vmap: int_device")
    }

    fn int_to_device(tensor: IntTensor<Self>, device: &Device<Self>) -> IntTensor<Self> {
        todo!("vmap: int_to_device")
    }

    fn int_reshape(tensor: IntTensor<Self>, shape: Shape) -> IntTensor<Self> {
        todo!("vmap: int_reshape")
    }

    fn int_slice(tensor: IntTensor<Self>, slices: &[Slice]) -> IntTensor<Self> {
        todo!("vmap: int_slice")
    }

    fn int_slice_assign(
        tensor: IntTensor<Self>,
        slices: &[Slice],
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        todo!("vmap: int_slice_assign")
    }

    fn int_into_float(tensor: IntTensor<Self>, out_dtype: FloatDType) -> FloatTensor<Self> {
        todo!("vmap: int_into_float")
    }

    fn int_mask_where(
        tensor: IntTensor<Self>,
        mask: BoolTensor<Self>,
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        todo!("vmap: int_mask_where")
    }

    fn int_mask_fill(
        tensor: IntTensor<Self>,
        mask: BoolTensor<Self>,
        value: Scalar,
    ) -> IntTensor<Self> {
        todo!("vmap: int_mask_fill")
    }

    fn int_gather(
        dim: usize,
        tensor: IntTensor<Self>,
        indices: IntTensor<Self>,
    ) -> IntTensor<Self> {
        todo!("vmap: int_gather")
    }

    fn int_scatter_add(
        dim: usize,
        tensor: IntTensor<Self>,
        indices: IntTensor<Self>,
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        todo!("vmap: int_scatter_add")
    }

    // provided: int_scatter_nd
    // provided: int_gather_nd
    fn int_select(
        tensor: IntTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> IntTensor<Self> {
        todo!("vmap: int_select")
    }

    fn int_select_add(
        tensor: IntTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        todo!("vmap: int_select_add")
    }

    // provided: int_repeat_dim
    // provided: int_cat
    fn int_equal(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: int_equal")
    }

    // provided: int_not_equal
    fn int_equal_elem(lhs: IntTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> {
        todo!("vmap: int_equal_elem")
    }

    // provided: int_not_equal_elem
    fn int_greater(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: int_greater")
    }

    fn int_greater_elem(
        lhs: IntTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: int_greater_elem")
    }

    fn int_greater_equal(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: int_greater_equal")
    }

    fn int_greater_equal_elem(
        lhs: IntTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: int_greater_equal_elem")
    }

    fn int_lower(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: int_lower")
    }

    fn int_lower_elem(lhs: IntTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> {
        todo!("vmap: int_lower_elem")
    }

    fn int_lower_equal(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: int_lower_equal")
    }

    fn int_lower_equal_elem(
        lhs: IntTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: int_lower_equal_elem")
    }

    fn int_add(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: int_add")
    }

    fn int_add_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        todo!("vmap: int_add_scalar")
    }

    // provided: int_powi
    // provided: int_powi_scalar
    // provided: int_powi_scalar_impl
    // provided: int_clamp_min
    // provided: int_clamp_max
    // provided: int_clamp
    fn int_sub(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: int_sub")
    }

    fn int_sub_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        todo!("vmap: int_sub_scalar")
    }

    fn int_mul(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: int_mul")
    }

    fn int_mul_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        todo!("vmap: int_mul_scalar")
    }

    fn int_div(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: int_div")
    }

    fn int_div_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        todo!("vmap: int_div_scalar")
    }

    fn int_remainder(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: int_remainder")
    }

    fn int_remainder_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        todo!("vmap: int_remainder_scalar")
    }

    fn int_matmul(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: int_matmul")
    }

    // provided: int_neg
    // provided: int_zeros
    // provided: int_ones
    // provided: int_full
    fn int_sum(tensor: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: int_sum")
    }

    fn int_sum_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        todo!("vmap: int_sum_dim")
    }

    fn int_prod(tensor: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: int_prod")
    }

    fn int_prod_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        todo!("vmap: int_prod_dim")
    }

    // provided: int_mean
    fn int_mean_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        todo!("vmap: int_mean_dim")
    }

    fn int_cumsum(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        todo!("vmap: int_cumsum")
    }

    fn int_cumprod(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        todo!("vmap: int_cumprod")
    }

    fn int_cummin(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        todo!("vmap: int_cummin")
    }

    fn int_cummax(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        todo!("vmap: int_cummax")
    }

    fn int_argmax(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        todo!("vmap: int_argmax")
    }

    fn int_argtopk(tensor: IntTensor<Self>, dim: usize, k: usize) -> IntTensor<Self> {
        todo!("vmap: int_argtopk")
    }

    // provided: int_topk
    fn int_argmin(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        todo!("vmap: int_argmin")
    }

    // provided: int_max
    // provided: int_max_dim
    // provided: int_max_dim_with_indices
    // provided: int_max_abs
    // provided: int_max_abs_dim
    // provided: int_min
    // provided: int_min_dim
    // provided: int_min_dim_with_indices
    fn int_abs(tensor: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: int_abs")
    }

    // provided: int_transpose
    fn int_swap_dims(tensor: IntTensor<Self>, dim1: usize, dim2: usize) -> IntTensor<Self> {
        todo!("vmap: int_swap_dims")
    }

    fn int_permute(tensor: IntTensor<Self>, axes: &[usize]) -> IntTensor<Self> {
        todo!("vmap: int_permute")
    }

    fn int_flip(tensor: IntTensor<Self>, axes: &[usize]) -> IntTensor<Self> {
        todo!("vmap: int_flip")
    }

    fn int_random(
        shape: Shape,
        distribution: Distribution,
        device: &Device<Self>,
        dtype: IntDType,
    ) -> IntTensor<Self> {
        todo!("vmap: int_random")
    }

    // provided: int_arange_step
    // provided: int_arange
    // provided: int_any
    // provided: int_any_dim
    // provided: int_all
    // provided: int_all_dim
    // provided: int_sign
    fn int_expand(tensor: IntTensor<Self>, shape: Shape) -> IntTensor<Self> {
        todo!("vmap: int_expand")
    }

    // provided: int_sort
    // provided: int_sort_with_indices
    // provided: int_argsort
    fn bitwise_and(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: bitwise_and")
    }

    fn bitwise_and_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        todo!("vmap: bitwise_and_scalar")
    }

    fn bitwise_or(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: bitwise_or")
    }

    fn bitwise_or_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        todo!("vmap: bitwise_or_scalar")
    }

    fn bitwise_xor(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: bitwise_xor")
    }

    fn bitwise_xor_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        todo!("vmap: bitwise_xor_scalar")
    }

    fn bitwise_not(tensor: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: bitwise_not")
    }

    fn bitwise_left_shift(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: bitwise_left_shift")
    }

    fn bitwise_left_shift_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        todo!("vmap: bitwise_left_shift_scalar")
    }

    fn bitwise_right_shift(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        todo!("vmap: bitwise_right_shift")
    }

    fn bitwise_right_shift_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        todo!("vmap: bitwise_right_shift_scalar")
    }

    fn int_cast(tensor: IntTensor<Self>, dtype: IntDType) -> IntTensor<Self> {
        todo!("vmap: int_cast")
    }

    fn int_unfold(
        tensor: IntTensor<Self>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> IntTensor<Self> {
        todo!("vmap: int_unfold")
    }
}
