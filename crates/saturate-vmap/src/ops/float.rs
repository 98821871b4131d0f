//! Batching rules for `FloatTensorOps`.

#![allow(unused_variables, unused_imports)]

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, Distribution, ExecutionError, Scalar, TensorData, TensorMetadata};
use burn_backend::{BoolDType, FloatDType, IntDType, Shape, Slice};

use burn_backend::quantization::*;
use core::future::Future;

use crate::tensor::*;
use crate::{Vmap, VmapDevice};

impl<B: Backend> FloatTensorOps<Self> for Vmap<B> {
    fn float_from_data(data: TensorData, device: &Device<Self>) -> FloatTensor<Self> {
        VmapTensor::unbatched(B::float_from_data(data, &device.inner), device.members)
    }

    fn float_random(
        shape: Shape,
        distribution: Distribution,
        device: &Device<Self>,
        dtype: FloatDType,
    ) -> FloatTensor<Self> {
        // One independent draw per member: K different initialisations, K dropout masks.
        let physical = batched_shape(device.members, &shape);
        VmapTensor::batched(
            B::float_random(physical, distribution, &device.inner, dtype),
            device.members,
        )
    }

    // provided: float_zeros
    // provided: float_ones
    // provided: float_full
    fn float_into_data(
        tensor: FloatTensor<Self>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        let (inner, batched) = (tensor.inner, tensor.batched);
        async move {
            if batched {
                return Err(crate::tensor::batched_read_error("float_into_data"));
            }
            B::float_into_data(inner).await
        }
    }

    fn float_device(tensor: &FloatTensor<Self>) -> Device<Self> {
        VmapDevice::new(B::float_device(&tensor.inner), tensor.members)
    }

    fn float_to_device(tensor: FloatTensor<Self>, device: &Device<Self>) -> FloatTensor<Self> {
        check_members("float_to_device", tensor.members, device.members);
        tensor.map(|t| B::float_to_device(t, &device.inner))
    }

    fn float_into_int(tensor: FloatTensor<Self>, out_dtype: IntDType) -> IntTensor<Self> {
        todo!("vmap: float_into_int")
    }

    fn float_empty(shape: Shape, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        todo!("vmap: float_empty")
    }

    // provided: float_repeat_dim
    fn float_add(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        let (lhs, rhs, batched, members) = align2::<B, FloatKind, FloatKind>("float_add", lhs, rhs);
        VmapTensor::new(B::float_add(lhs, rhs), batched, members)
    }

    fn float_add_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        lhs.map(|t| B::float_add_scalar(t, rhs))
    }

    // provided: float_clamp_min
    // provided: float_clamp_max
    // provided: float_clamp
    fn float_sub(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_sub")
    }

    fn float_sub_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        todo!("vmap: float_sub_scalar")
    }

    fn float_mul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_mul")
    }

    fn float_mul_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        todo!("vmap: float_mul_scalar")
    }

    fn float_div(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_div")
    }

    fn float_div_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        todo!("vmap: float_div_scalar")
    }

    fn float_remainder(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_remainder")
    }

    fn float_remainder_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        todo!("vmap: float_remainder_scalar")
    }

    fn float_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_matmul")
    }

    fn float_cross(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        dim: usize,
    ) -> FloatTensor<Self> {
        todo!("vmap: float_cross")
    }

    // provided: float_neg
    fn float_recip(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_recip")
    }

    // provided: float_transpose
    fn float_swap_dims(tensor: FloatTensor<Self>, dim1: usize, dim2: usize) -> FloatTensor<Self> {
        todo!("vmap: float_swap_dims")
    }

    fn float_permute(tensor: FloatTensor<Self>, axes: &[usize]) -> FloatTensor<Self> {
        todo!("vmap: float_permute")
    }

    fn float_flip(tensor: FloatTensor<Self>, axes: &[usize]) -> FloatTensor<Self> {
        todo!("vmap: float_flip")
    }

    fn float_reshape(tensor: FloatTensor<Self>, shape: Shape) -> FloatTensor<Self> {
        if tensor.batched {
            let physical = batched_shape(tensor.members, &shape);
            tensor.map(|t| B::float_reshape(t, physical))
        } else {
            tensor.map(|t| B::float_reshape(t, shape))
        }
    }

    fn float_gather(
        dim: usize,
        tensor: FloatTensor<Self>,
        indices: IntTensor<Self>,
    ) -> FloatTensor<Self> {
        todo!("vmap: float_gather")
    }

    fn float_scatter_add(
        dim: usize,
        tensor: FloatTensor<Self>,
        indices: IntTensor<Self>,
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        todo!("vmap: float_scatter_add")
    }

    // provided: float_scatter_nd
    // provided: float_gather_nd
    fn float_select(
        tensor: FloatTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> FloatTensor<Self> {
        todo!("vmap: float_select")
    }

    fn float_select_add(
        tensor: FloatTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        todo!("vmap: float_select_add")
    }

    fn float_slice(tensor: FloatTensor<Self>, slices: &[Slice]) -> FloatTensor<Self> {
        todo!("vmap: float_slice")
    }

    fn float_slice_assign(
        tensor: FloatTensor<Self>,
        slices: &[Slice],
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        todo!("vmap: float_slice_assign")
    }

    fn float_mask_where(
        tensor: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        todo!("vmap: float_mask_where")
    }

    fn float_mask_fill(
        tensor: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        value: Scalar,
    ) -> FloatTensor<Self> {
        todo!("vmap: float_mask_fill")
    }

    fn float_equal(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: float_equal")
    }

    // provided: float_not_equal
    fn float_equal_elem(
        lhs: FloatTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: float_equal_elem")
    }

    // provided: float_not_equal_elem
    fn float_greater(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: float_greater")
    }

    fn float_greater_elem(
        lhs: FloatTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: float_greater_elem")
    }

    fn float_greater_equal(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: float_greater_equal")
    }

    fn float_greater_equal_elem(
        lhs: FloatTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: float_greater_equal_elem")
    }

    fn float_lower(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: float_lower")
    }

    fn float_lower_elem(
        lhs: FloatTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: float_lower_elem")
    }

    fn float_lower_equal(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: float_lower_equal")
    }

    fn float_lower_equal_elem(
        lhs: FloatTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        todo!("vmap: float_lower_equal_elem")
    }

    // provided: float_detach
    // provided: float_set_require_grad
    // provided: float_is_require_grad
    fn float_sum(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_sum")
    }

    fn float_sum_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_sum_dim(t, dim))
    }

    // provided: float_prod
    // provided: float_prod_dim
    // provided: float_mean
    fn float_mean_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        todo!("vmap: float_mean_dim")
    }

    fn float_cumsum(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        todo!("vmap: float_cumsum")
    }

    fn float_cumprod(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        todo!("vmap: float_cumprod")
    }

    fn float_cummin(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        todo!("vmap: float_cummin")
    }

    fn float_cummax(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        todo!("vmap: float_cummax")
    }

    fn float_cast(tensor: FloatTensor<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        todo!("vmap: float_cast")
    }

    fn float_exp(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_exp")
    }

    fn float_log(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_log")
    }

    fn float_log1p(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_log1p")
    }

    fn float_powf(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_powf")
    }

    // provided: float_powi
    // provided: float_powi_scalar
    // provided: float_powi_scalar_impl
    // provided: float_powf_scalar
    fn float_powf_scalar_impl(tensor: FloatTensor<Self>, value: Scalar) -> FloatTensor<Self> {
        todo!("vmap: float_powf_scalar_impl")
    }

    fn float_sqrt(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_sqrt")
    }

    fn float_abs(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_abs")
    }

    fn float_cos(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_cos")
    }

    fn float_sin(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_sin")
    }

    fn float_tan(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_tan")
    }

    fn float_cosh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_cosh")
    }

    fn float_sinh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_sinh")
    }

    fn float_tanh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_tanh")
    }

    fn float_acos(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_acos")
    }

    fn float_acosh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_acosh")
    }

    fn float_asin(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_asin")
    }

    fn float_asinh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_asinh")
    }

    fn float_atan(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_atan")
    }

    fn float_atanh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_atanh")
    }

    fn float_atan2(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_atan2")
    }

    fn float_round(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_round")
    }

    fn float_floor(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_floor")
    }

    fn float_ceil(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_ceil")
    }

    fn float_trunc(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_trunc")
    }

    fn float_erf(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        todo!("vmap: float_erf")
    }

    // provided: float_cat
    fn float_argmax(tensor: FloatTensor<Self>, dim: usize, out_dtype: IntDType) -> IntTensor<Self> {
        todo!("vmap: float_argmax")
    }

    fn float_argtopk(
        tensor: FloatTensor<Self>,
        dim: usize,
        k: usize,
        out_dtype: IntDType,
    ) -> IntTensor<Self> {
        todo!("vmap: float_argtopk")
    }

    // provided: float_topk
    fn float_argmin(tensor: FloatTensor<Self>, dim: usize, out_dtype: IntDType) -> IntTensor<Self> {
        todo!("vmap: float_argmin")
    }

    // provided: float_max
    // provided: float_max_dim
    // provided: float_max_dim_with_indices
    // provided: float_min
    // provided: float_min_dim
    // provided: float_min_dim_with_indices
    // provided: float_max_abs
    // provided: float_max_abs_dim
    // provided: float_any
    // provided: float_any_dim
    // provided: float_all
    // provided: float_all_dim
    // provided: float_sign
    fn float_expand(tensor: FloatTensor<Self>, shape: Shape) -> FloatTensor<Self> {
        todo!("vmap: float_expand")
    }

    // provided: float_sort
    // provided: float_sort_with_indices
    // provided: float_argsort
    // provided: float_grid_sample_2d
    fn float_unfold(
        tensor: FloatTensor<Self>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> FloatTensor<Self> {
        todo!("vmap: float_unfold")
    }

    // provided: float_is_nan
    // provided: float_is_inf
}
