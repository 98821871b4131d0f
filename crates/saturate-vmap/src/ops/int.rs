//! Batching rules for `IntTensorOps`.

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, Distribution, ExecutionError, Scalar, TensorData};
use burn_backend::{BoolDType, FloatDType, IntDType, Shape, Slice, TensorMetadata};

use core::future::Future;
use core::ops::Range;

use super::base::*;
use crate::tensor::*;
use crate::{Vmap, VmapDevice};

macro_rules! cmp {
    ($op:ident, $lhs:ident, $rhs:ident, $dt:ident) => {{
        let (l, r, batched, members) = align_binary::<B, IntKind>(stringify!($op), $lhs, $rhs);
        VmapTensor::new(B::$op(l, r, $dt), batched, members)
    }};
}

macro_rules! binary {
    ($op:ident, $lhs:ident, $rhs:ident) => {{
        let (l, r, batched, members) = align_binary::<B, IntKind>(stringify!($op), $lhs, $rhs);
        VmapTensor::new(B::$op(l, r), batched, members)
    }};
}

impl<B: Backend> IntTensorOps<Self> for Vmap<B> {
    fn int_empty(shape: Shape, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> {
        VmapTensor::unbatched(B::int_empty(shape, &device.inner, dtype), device.members)
    }

    fn int_into_data(
        tensor: IntTensor<Self>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        let (inner, batched, members) = (tensor.inner, tensor.batched, tensor.members);
        async move {
            if batched && members != 1 {
                return Err(crate::tensor::batched_read_error("int_into_data"));
            }
            let data = B::int_into_data(inner).await?;
            Ok(crate::tensor::strip_single_member(data, batched))
        }
    }

    fn int_from_data(data: TensorData, device: &Device<Self>) -> IntTensor<Self> {
        VmapTensor::unbatched(B::int_from_data(data, &device.inner), device.members)
    }

    fn int_device(tensor: &IntTensor<Self>) -> Device<Self> {
        VmapDevice::new(B::int_device(&tensor.inner), tensor.members)
    }

    fn int_to_device(tensor: IntTensor<Self>, device: &Device<Self>) -> IntTensor<Self> {
        check_members("int_to_device", tensor.members, device.members);
        tensor.map(|t| B::int_to_device(t, &device.inner))
    }

    fn int_reshape(tensor: IntTensor<Self>, shape: Shape) -> IntTensor<Self> {
        if tensor.batched {
            let physical = batched_shape(tensor.members, &shape);
            tensor.map(|t| crate::ops::base::int_reshape::<B>(t, physical))
        } else {
            tensor.map(|t| crate::ops::base::int_reshape::<B>(t, shape))
        }
    }

    fn int_slice(tensor: IntTensor<Self>, slices: &[Slice]) -> IntTensor<Self> {
        let slices = physical_slices(slices, tensor.batched);
        tensor.map(|t| B::int_slice(t, &slices))
    }

    fn int_slice_assign(
        tensor: IntTensor<Self>,
        slices: &[Slice],
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        let members = check_members("int_slice_assign", tensor.members, value.members);
        if !tensor.batched && !value.batched {
            return VmapTensor::unbatched(
                B::int_slice_assign(tensor.inner, slices, value.inner),
                members,
            );
        }
        let slices = physical_slices(slices, true);
        let tensor = materialize_copy::<B, IntKind>(tensor);
        let value = materialize::<B, IntKind>(value);
        VmapTensor::batched(B::int_slice_assign(tensor, &slices, value), members)
    }

    fn int_into_float(tensor: IntTensor<Self>, out_dtype: FloatDType) -> FloatTensor<Self> {
        tensor.map(|t| B::int_into_float(t, out_dtype))
    }

    fn int_mask_where(
        tensor: IntTensor<Self>,
        mask: BoolTensor<Self>,
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        let members = check_members("int_mask_where", tensor.members, mask.members);
        let members = check_members("int_mask_where", members, value.members);
        if !tensor.batched && !mask.batched && !value.batched {
            return VmapTensor::unbatched(
                B::int_mask_where(tensor.inner, mask.inner, value.inner),
                members,
            );
        }
        let tensor = materialize_copy::<B, IntKind>(tensor);
        let mask = materialize::<B, BoolKind>(mask);
        let value = materialize::<B, IntKind>(value);
        VmapTensor::batched(B::int_mask_where(tensor, mask, value), members)
    }

    fn int_mask_fill(
        tensor: IntTensor<Self>,
        mask: BoolTensor<Self>,
        value: Scalar,
    ) -> IntTensor<Self> {
        let members = check_members("int_mask_fill", tensor.members, mask.members);
        if !tensor.batched && !mask.batched {
            return VmapTensor::unbatched(
                B::int_mask_fill(tensor.inner, mask.inner, value),
                members,
            );
        }
        let tensor = materialize_copy::<B, IntKind>(tensor);
        let mask = materialize::<B, BoolKind>(mask);
        VmapTensor::batched(B::int_mask_fill(tensor, mask, value), members)
    }

    fn int_gather(
        dim: usize,
        tensor: IntTensor<Self>,
        indices: IntTensor<Self>,
    ) -> IntTensor<Self> {
        let members = check_members("int_gather", tensor.members, indices.members);
        if !tensor.batched && !indices.batched {
            return VmapTensor::unbatched(B::int_gather(dim, tensor.inner, indices.inner), members);
        }
        let tensor = materialize::<B, IntKind>(tensor);
        let indices = materialize::<B, IntKind>(indices);
        VmapTensor::batched(B::int_gather(dim + 1, tensor, indices), members)
    }

    fn int_scatter_add(
        dim: usize,
        tensor: IntTensor<Self>,
        indices: IntTensor<Self>,
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        let members = check_members("int_scatter_add", tensor.members, indices.members);
        let members = check_members("int_scatter_add", members, value.members);
        if !tensor.batched && !indices.batched && !value.batched {
            return VmapTensor::unbatched(
                B::int_scatter_add(dim, tensor.inner, indices.inner, value.inner),
                members,
            );
        }
        let tensor = materialize_copy::<B, IntKind>(tensor);
        let indices = materialize::<B, IntKind>(indices);
        let value = materialize::<B, IntKind>(value);
        VmapTensor::batched(B::int_scatter_add(dim + 1, tensor, indices, value), members)
    }

    fn int_scatter_nd(
        data: IntTensor<Self>,
        indices: IntTensor<Self>,
        values: IntTensor<Self>,
        reduction: IndexingUpdateOp,
    ) -> IntTensor<Self> {
        let members = check_members("int_scatter_nd", data.members, indices.members);
        let members = check_members("int_scatter_nd", members, values.members);
        if !data.batched && !indices.batched && !values.batched {
            return VmapTensor::unbatched(
                B::int_scatter_nd(data.inner, indices.inner, values.inner, reduction),
                members,
            );
        }
        let data = materialize_copy::<B, IntKind>(data);
        let indices = with_member_index_column::<B>(materialize::<B, IntKind>(indices), members);
        let values = materialize::<B, IntKind>(values);
        VmapTensor::batched(B::int_scatter_nd(data, indices, values, reduction), members)
    }

    fn int_gather_nd(data: IntTensor<Self>, indices: IntTensor<Self>) -> IntTensor<Self> {
        let members = check_members("int_gather_nd", data.members, indices.members);
        if !data.batched && !indices.batched {
            return VmapTensor::unbatched(B::int_gather_nd(data.inner, indices.inner), members);
        }
        let data = materialize::<B, IntKind>(data);
        let indices = with_member_index_column::<B>(materialize::<B, IntKind>(indices), members);
        VmapTensor::batched(B::int_gather_nd(data, indices), members)
    }

    fn int_select(
        tensor: IntTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> IntTensor<Self> {
        let members = check_members("int_select", tensor.members, indices.members);
        if !indices.batched {
            let d = tensor.dim(dim);
            return tensor.map(|t| B::int_select(t, d, indices.inner));
        }
        let n = indices.inner.shape()[1];
        let out_shape = with_dim_size(tensor.shape(), dim, n);
        let tensor = materialize::<B, IntKind>(tensor);
        let indices = select_indices_as_gather::<B>(indices.inner, members, dim, &out_shape);
        VmapTensor::batched(B::int_gather(dim + 1, tensor, indices), members)
    }

    fn int_select_add(
        tensor: IntTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        let members = check_members("int_select_add", tensor.members, indices.members);
        let members = check_members("int_select_add", members, value.members);
        if !tensor.batched && !indices.batched && !value.batched {
            return VmapTensor::unbatched(
                B::int_select_add(tensor.inner, dim, indices.inner, value.inner),
                members,
            );
        }
        let value_shape = value.shape();
        let tensor = materialize_copy::<B, IntKind>(tensor);
        let value = materialize::<B, IntKind>(value);
        let out = if indices.batched {
            let indices = select_indices_as_gather::<B>(indices.inner, members, dim, &value_shape);
            B::int_scatter_add(dim + 1, tensor, indices, value)
        } else {
            B::int_select_add(tensor, dim + 1, indices.inner, value)
        };
        VmapTensor::batched(out, members)
    }

    fn int_repeat_dim(tensor: IntTensor<Self>, dim: usize, times: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_repeat_dim(t, d, times))
    }

    fn int_cat(tensors: Vec<IntTensor<Self>>, dim: usize) -> IntTensor<Self> {
        let (inner, batched, members) = align_many::<B, IntKind>("int_cat", tensors);
        let d = dim + batched as usize;
        VmapTensor::new(B::int_cat(inner, d), batched, members)
    }

    fn int_equal(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        cmp!(int_equal, lhs, rhs, out_dtype)
    }

    fn int_not_equal(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        cmp!(int_not_equal, lhs, rhs, out_dtype)
    }

    fn int_equal_elem(lhs: IntTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> {
        lhs.map(|t| B::int_equal_elem(t, rhs, out_dtype))
    }

    fn int_not_equal_elem(
        lhs: IntTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        lhs.map(|t| B::int_not_equal_elem(t, rhs, out_dtype))
    }

    fn int_greater(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        cmp!(int_greater, lhs, rhs, out_dtype)
    }

    fn int_greater_elem(
        lhs: IntTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        lhs.map(|t| B::int_greater_elem(t, rhs, out_dtype))
    }

    fn int_greater_equal(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        cmp!(int_greater_equal, lhs, rhs, out_dtype)
    }

    fn int_greater_equal_elem(
        lhs: IntTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        lhs.map(|t| B::int_greater_equal_elem(t, rhs, out_dtype))
    }

    fn int_lower(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        cmp!(int_lower, lhs, rhs, out_dtype)
    }

    fn int_lower_elem(lhs: IntTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> {
        lhs.map(|t| B::int_lower_elem(t, rhs, out_dtype))
    }

    fn int_lower_equal(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        cmp!(int_lower_equal, lhs, rhs, out_dtype)
    }

    fn int_lower_equal_elem(
        lhs: IntTensor<Self>,
        rhs: Scalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        lhs.map(|t| B::int_lower_equal_elem(t, rhs, out_dtype))
    }

    fn int_add(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(int_add, lhs, rhs)
    }

    fn int_add_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::int_add_scalar(t, rhs))
    }

    fn int_powi(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(int_powi, lhs, rhs)
    }

    fn int_powi_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::int_powi_scalar(t, rhs))
    }

    fn int_powi_scalar_impl(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::int_powi_scalar_impl(t, rhs))
    }

    fn int_clamp_min(tensor: IntTensor<Self>, min: Scalar) -> IntTensor<Self> {
        tensor.map(|t| B::int_clamp_min(t, min))
    }

    fn int_clamp_max(tensor: IntTensor<Self>, max: Scalar) -> IntTensor<Self> {
        tensor.map(|t| B::int_clamp_max(t, max))
    }

    fn int_clamp(tensor: IntTensor<Self>, min: Scalar, max: Scalar) -> IntTensor<Self> {
        tensor.map(|t| B::int_clamp(t, min, max))
    }

    fn int_sub(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(int_sub, lhs, rhs)
    }

    fn int_sub_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::int_sub_scalar(t, rhs))
    }

    fn int_mul(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(int_mul, lhs, rhs)
    }

    fn int_mul_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::int_mul_scalar(t, rhs))
    }

    fn int_div(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(int_div, lhs, rhs)
    }

    fn int_div_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::int_div_scalar(t, rhs))
    }

    fn int_remainder(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(int_remainder, lhs, rhs)
    }

    fn int_remainder_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::int_remainder_scalar(t, rhs))
    }

    fn int_matmul(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        // An unbatched operand gets a size-1 member axis, which matmul broadcasts as a batch dim.
        let (l, r, batched, members) = align2::<B, IntKind, IntKind>("int_matmul", lhs, rhs);
        VmapTensor::new(B::int_matmul(l, r), batched, members)
    }

    fn int_neg(tensor: IntTensor<Self>) -> IntTensor<Self> {
        tensor.map(B::int_neg)
    }

    fn int_zeros(shape: Shape, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> {
        VmapTensor::unbatched(B::int_zeros(shape, &device.inner, dtype), device.members)
    }

    fn int_ones(shape: Shape, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> {
        VmapTensor::unbatched(B::int_ones(shape, &device.inner, dtype), device.members)
    }

    fn int_full(
        shape: Shape,
        fill_value: Scalar,
        device: &Device<Self>,
        dtype: IntDType,
    ) -> IntTensor<Self> {
        VmapTensor::unbatched(
            B::int_full(shape, fill_value, &device.inner, dtype),
            device.members,
        )
    }

    fn int_sum(tensor: IntTensor<Self>) -> IntTensor<Self> {
        if tensor.batched {
            let members = tensor.members;
            tensor.map(|t| B::int_sum_dim(one_row_per_member::<B, IntKind>(t, members), 1))
        } else {
            tensor.map(B::int_sum)
        }
    }

    fn int_sum_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_sum_dim(t, d))
    }

    fn int_prod(tensor: IntTensor<Self>) -> IntTensor<Self> {
        if tensor.batched {
            let members = tensor.members;
            tensor.map(|t| B::int_prod_dim(one_row_per_member::<B, IntKind>(t, members), 1))
        } else {
            tensor.map(B::int_prod)
        }
    }

    fn int_prod_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_prod_dim(t, d))
    }

    fn int_mean(tensor: IntTensor<Self>) -> IntTensor<Self> {
        if tensor.batched {
            let members = tensor.members;
            tensor.map(|t| B::int_mean_dim(one_row_per_member::<B, IntKind>(t, members), 1))
        } else {
            tensor.map(B::int_mean)
        }
    }

    fn int_mean_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_mean_dim(t, d))
    }

    fn int_cumsum(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_cumsum(t, d))
    }

    fn int_cumprod(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_cumprod(t, d))
    }

    fn int_cummin(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_cummin(t, d))
    }

    fn int_cummax(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_cummax(t, d))
    }

    fn int_argmax(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_argmax(t, d))
    }

    fn int_argtopk(tensor: IntTensor<Self>, dim: usize, k: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_argtopk(t, d, k))
    }

    fn int_topk(tensor: IntTensor<Self>, dim: usize, k: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_topk(t, d, k))
    }

    fn int_argmin(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_argmin(t, d))
    }

    fn int_max(tensor: IntTensor<Self>) -> IntTensor<Self> {
        if tensor.batched {
            let members = tensor.members;
            tensor.map(|t| B::int_max_dim(one_row_per_member::<B, IntKind>(t, members), 1))
        } else {
            tensor.map(B::int_max)
        }
    }

    fn int_max_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_max_dim(t, d))
    }

    fn int_max_dim_with_indices(
        tensor: IntTensor<Self>,
        dim: usize,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        let (d, batched, members) = (tensor.dim(dim), tensor.batched, tensor.members);
        let (values, indices) = B::int_max_dim_with_indices(tensor.inner, d);
        (
            VmapTensor::new(values, batched, members),
            VmapTensor::new(indices, batched, members),
        )
    }

    fn int_max_abs(tensor: IntTensor<Self>) -> IntTensor<Self> {
        if tensor.batched {
            let members = tensor.members;
            tensor.map(|t| B::int_max_abs_dim(one_row_per_member::<B, IntKind>(t, members), 1))
        } else {
            tensor.map(B::int_max_abs)
        }
    }

    fn int_max_abs_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_max_abs_dim(t, d))
    }

    fn int_min(tensor: IntTensor<Self>) -> IntTensor<Self> {
        if tensor.batched {
            let members = tensor.members;
            tensor.map(|t| B::int_min_dim(one_row_per_member::<B, IntKind>(t, members), 1))
        } else {
            tensor.map(B::int_min)
        }
    }

    fn int_min_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_min_dim(t, d))
    }

    fn int_min_dim_with_indices(
        tensor: IntTensor<Self>,
        dim: usize,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        let (d, batched, members) = (tensor.dim(dim), tensor.batched, tensor.members);
        let (values, indices) = B::int_min_dim_with_indices(tensor.inner, d);
        (
            VmapTensor::new(values, batched, members),
            VmapTensor::new(indices, batched, members),
        )
    }

    fn int_abs(tensor: IntTensor<Self>) -> IntTensor<Self> {
        tensor.map(B::int_abs)
    }

    fn int_transpose(tensor: IntTensor<Self>) -> IntTensor<Self> {
        let rank = tensor.rank();
        Self::int_swap_dims(tensor, rank - 2, rank - 1)
    }

    fn int_swap_dims(tensor: IntTensor<Self>, dim1: usize, dim2: usize) -> IntTensor<Self> {
        let (d1, d2) = (tensor.dim(dim1), tensor.dim(dim2));
        tensor.map(|t| B::int_swap_dims(t, d1, d2))
    }

    fn int_permute(tensor: IntTensor<Self>, axes: &[usize]) -> IntTensor<Self> {
        let axes = physical_axes(axes, tensor.batched);
        tensor.map(|t| B::int_permute(t, &axes))
    }

    fn int_flip(tensor: IntTensor<Self>, axes: &[usize]) -> IntTensor<Self> {
        let axes: Vec<usize> = axes.iter().map(|&a| tensor.dim(a)).collect();
        tensor.map(|t| B::int_flip(t, &axes))
    }

    fn int_random(
        shape: Shape,
        distribution: Distribution,
        device: &Device<Self>,
        dtype: IntDType,
    ) -> IntTensor<Self> {
        // One independent draw per member.
        let physical = batched_shape(device.members, &shape);
        VmapTensor::batched(
            B::int_random(physical, distribution, &device.inner, dtype),
            device.members,
        )
    }

    fn int_arange_step(
        range: Range<i64>,
        step: usize,
        device: &Device<Self>,
        dtype: IntDType,
    ) -> IntTensor<Self> {
        VmapTensor::unbatched(
            B::int_arange_step(range, step, &device.inner, dtype),
            device.members,
        )
    }

    fn int_arange(range: Range<i64>, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> {
        VmapTensor::unbatched(B::int_arange(range, &device.inner, dtype), device.members)
    }

    fn int_any(tensor: IntTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> {
        if tensor.batched {
            let members = tensor.members;
            tensor
                .map(|t| B::int_any_dim(one_row_per_member::<B, IntKind>(t, members), 1, out_dtype))
        } else {
            tensor.map(|t| B::int_any(t, out_dtype))
        }
    }

    fn int_any_dim(tensor: IntTensor<Self>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_any_dim(t, d, out_dtype))
    }

    fn int_all(tensor: IntTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> {
        if tensor.batched {
            let members = tensor.members;
            tensor
                .map(|t| B::int_all_dim(one_row_per_member::<B, IntKind>(t, members), 1, out_dtype))
        } else {
            tensor.map(|t| B::int_all(t, out_dtype))
        }
    }

    fn int_all_dim(tensor: IntTensor<Self>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_all_dim(t, d, out_dtype))
    }

    fn int_sign(tensor: IntTensor<Self>) -> IntTensor<Self> {
        tensor.map(B::int_sign)
    }

    fn int_expand(tensor: IntTensor<Self>, shape: Shape) -> IntTensor<Self> {
        let (view, target) =
            expand_plan(tensor.inner.shape(), tensor.batched, tensor.members, &shape);
        tensor.map(|t| {
            let t = match view {
                Some(view) => crate::ops::base::int_reshape::<B>(t, view),
                None => t,
            };
            B::int_expand(t, target)
        })
    }

    fn int_sort(tensor: IntTensor<Self>, dim: usize, descending: bool) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_sort(t, d, descending))
    }

    fn int_sort_with_indices(
        tensor: IntTensor<Self>,
        dim: usize,
        descending: bool,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        let (d, batched, members) = (tensor.dim(dim), tensor.batched, tensor.members);
        let (values, indices) = B::int_sort_with_indices(tensor.inner, d, descending);
        (
            VmapTensor::new(values, batched, members),
            VmapTensor::new(indices, batched, members),
        )
    }

    fn int_argsort(tensor: IntTensor<Self>, dim: usize, descending: bool) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_argsort(t, d, descending))
    }

    fn bitwise_and(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(bitwise_and, lhs, rhs)
    }

    fn bitwise_and_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::bitwise_and_scalar(t, rhs))
    }

    fn bitwise_or(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(bitwise_or, lhs, rhs)
    }

    fn bitwise_or_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::bitwise_or_scalar(t, rhs))
    }

    fn bitwise_xor(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(bitwise_xor, lhs, rhs)
    }

    fn bitwise_xor_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::bitwise_xor_scalar(t, rhs))
    }

    fn bitwise_not(tensor: IntTensor<Self>) -> IntTensor<Self> {
        tensor.map(B::bitwise_not)
    }

    fn bitwise_left_shift(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(bitwise_left_shift, lhs, rhs)
    }

    fn bitwise_left_shift_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::bitwise_left_shift_scalar(t, rhs))
    }

    fn bitwise_right_shift(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!(bitwise_right_shift, lhs, rhs)
    }

    fn bitwise_right_shift_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        lhs.map(|t| B::bitwise_right_shift_scalar(t, rhs))
    }

    fn int_cast(tensor: IntTensor<Self>, dtype: IntDType) -> IntTensor<Self> {
        tensor.map(|t| B::int_cast(t, dtype))
    }

    fn int_unfold(
        tensor: IntTensor<Self>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> IntTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::int_unfold(t, d, size, step))
    }
}
