//! Batching rules for `BoolTensorOps`.

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, ExecutionError, Scalar, TensorData, TensorMetadata};
use burn_backend::{BoolDType, FloatDType, IntDType, Shape, Slice};

use core::future::Future;

use super::base::*;
use crate::tensor::*;
use crate::{Vmap, VmapDevice};

macro_rules! binary {
    ($op:ident, $lhs:ident, $rhs:ident) => {{
        let (l, r, batched, members) = align_binary::<B, BoolKind>(stringify!($op), $lhs, $rhs);
        VmapTensor::new(B::$op(l, r), batched, members)
    }};
}

impl<B: Backend> BoolTensorOps<Self> for Vmap<B> {
    fn bool_empty(shape: Shape, device: &Device<Self>, dtype: BoolDType) -> BoolTensor<Self> {
        VmapTensor::unbatched(B::bool_empty(shape, &device.inner, dtype), device.members)
    }

    fn bool_zeros(shape: Shape, device: &Device<Self>, dtype: BoolDType) -> BoolTensor<Self> {
        VmapTensor::unbatched(B::bool_zeros(shape, &device.inner, dtype), device.members)
    }

    fn bool_ones(shape: Shape, device: &Device<Self>, dtype: BoolDType) -> BoolTensor<Self> {
        VmapTensor::unbatched(B::bool_ones(shape, &device.inner, dtype), device.members)
    }

    fn bool_into_data(
        tensor: BoolTensor<Self>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        let (inner, batched, members) = (tensor.inner, tensor.batched, tensor.members);
        async move {
            if batched && members != 1 {
                return Err(crate::tensor::batched_read_error("bool_into_data"));
            }
            let data = B::bool_into_data(inner).await?;
            Ok(crate::tensor::strip_single_member(data, batched))
        }
    }

    fn bool_from_data(data: TensorData, device: &Device<Self>) -> BoolTensor<Self> {
        VmapTensor::unbatched(B::bool_from_data(data, &device.inner), device.members)
    }

    fn bool_into_int(tensor: BoolTensor<Self>, out_dtype: IntDType) -> IntTensor<Self> {
        tensor.map(|t| B::bool_into_int(t, out_dtype))
    }

    fn bool_into_float(tensor: BoolTensor<Self>, out_dtype: FloatDType) -> FloatTensor<Self> {
        tensor.map(|t| B::bool_into_float(t, out_dtype))
    }

    fn bool_device(tensor: &BoolTensor<Self>) -> Device<Self> {
        VmapDevice::new(B::bool_device(&tensor.inner), tensor.members)
    }

    fn bool_to_device(tensor: BoolTensor<Self>, device: &Device<Self>) -> BoolTensor<Self> {
        check_members("bool_to_device", tensor.members, device.members);
        tensor.map(|t| B::bool_to_device(t, &device.inner))
    }

    fn bool_reshape(tensor: BoolTensor<Self>, shape: Shape) -> BoolTensor<Self> {
        if tensor.batched {
            let physical = batched_shape(tensor.members, &shape);
            tensor.map(|t| crate::ops::base::bool_reshape::<B>(t, physical))
        } else {
            tensor.map(|t| crate::ops::base::bool_reshape::<B>(t, shape))
        }
    }

    fn bool_slice(tensor: BoolTensor<Self>, slices: &[Slice]) -> BoolTensor<Self> {
        let slices = physical_slices(slices, tensor.batched);
        tensor.map(|t| B::bool_slice(t, &slices))
    }

    fn bool_slice_assign(
        tensor: BoolTensor<Self>,
        slices: &[Slice],
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        let members = check_members("bool_slice_assign", tensor.members, value.members);
        if !tensor.batched && !value.batched {
            return VmapTensor::unbatched(
                B::bool_slice_assign(tensor.inner, slices, value.inner),
                members,
            );
        }
        let slices = physical_slices(slices, true);
        let tensor = materialize_copy::<B, BoolKind>(tensor);
        let value = materialize::<B, BoolKind>(value);
        VmapTensor::batched(B::bool_slice_assign(tensor, &slices, value), members)
    }

    fn bool_mask_where(
        tensor: BoolTensor<Self>,
        mask: BoolTensor<Self>,
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        let members = check_members("bool_mask_where", tensor.members, mask.members);
        let members = check_members("bool_mask_where", members, value.members);
        if !tensor.batched && !mask.batched && !value.batched {
            return VmapTensor::unbatched(
                B::bool_mask_where(tensor.inner, mask.inner, value.inner),
                members,
            );
        }
        let tensor = materialize_copy::<B, BoolKind>(tensor);
        let mask = materialize::<B, BoolKind>(mask);
        let value = materialize::<B, BoolKind>(value);
        VmapTensor::batched(B::bool_mask_where(tensor, mask, value), members)
    }

    fn bool_mask_fill(
        tensor: BoolTensor<Self>,
        mask: BoolTensor<Self>,
        value: Scalar,
    ) -> BoolTensor<Self> {
        let members = check_members("bool_mask_fill", tensor.members, mask.members);
        if !tensor.batched && !mask.batched {
            return VmapTensor::unbatched(
                B::bool_mask_fill(tensor.inner, mask.inner, value),
                members,
            );
        }
        let tensor = materialize_copy::<B, BoolKind>(tensor);
        let mask = materialize::<B, BoolKind>(mask);
        VmapTensor::batched(B::bool_mask_fill(tensor, mask, value), members)
    }

    fn bool_gather(
        dim: usize,
        tensor: BoolTensor<Self>,
        indices: IntTensor<Self>,
    ) -> BoolTensor<Self> {
        let members = check_members("bool_gather", tensor.members, indices.members);
        if !tensor.batched && !indices.batched {
            return VmapTensor::unbatched(
                B::bool_gather(dim, tensor.inner, indices.inner),
                members,
            );
        }
        let tensor = materialize::<B, BoolKind>(tensor);
        let indices = materialize::<B, IntKind>(indices);
        VmapTensor::batched(B::bool_gather(dim + 1, tensor, indices), members)
    }

    fn bool_scatter_or(
        dim: usize,
        tensor: BoolTensor<Self>,
        indices: IntTensor<Self>,
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        let members = check_members("bool_scatter_or", tensor.members, indices.members);
        let members = check_members("bool_scatter_or", members, value.members);
        if !tensor.batched && !indices.batched && !value.batched {
            return VmapTensor::unbatched(
                B::bool_scatter_or(dim, tensor.inner, indices.inner, value.inner),
                members,
            );
        }
        let tensor = materialize_copy::<B, BoolKind>(tensor);
        let indices = materialize::<B, IntKind>(indices);
        let value = materialize::<B, BoolKind>(value);
        VmapTensor::batched(B::bool_scatter_or(dim + 1, tensor, indices, value), members)
    }

    fn bool_select(
        tensor: BoolTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> BoolTensor<Self> {
        let members = check_members("bool_select", tensor.members, indices.members);
        if !indices.batched {
            let d = tensor.dim(dim);
            return tensor.map(|t| B::bool_select(t, d, indices.inner));
        }
        let n = indices.inner.shape()[1];
        let out_shape = with_dim_size(tensor.shape(), dim, n);
        let tensor = materialize::<B, BoolKind>(tensor);
        let indices = select_indices_as_gather::<B>(indices.inner, members, dim, &out_shape);
        VmapTensor::batched(B::bool_gather(dim + 1, tensor, indices), members)
    }

    fn bool_select_or(
        tensor: BoolTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        let members = check_members("bool_select_or", tensor.members, indices.members);
        let members = check_members("bool_select_or", members, value.members);
        if !tensor.batched && !indices.batched && !value.batched {
            return VmapTensor::unbatched(
                B::bool_select_or(tensor.inner, dim, indices.inner, value.inner),
                members,
            );
        }
        let value_shape = value.shape();
        let tensor = materialize_copy::<B, BoolKind>(tensor);
        let value = materialize::<B, BoolKind>(value);
        let out = if indices.batched {
            let indices = select_indices_as_gather::<B>(indices.inner, members, dim, &value_shape);
            B::bool_scatter_or(dim + 1, tensor, indices, value)
        } else {
            B::bool_select_or(tensor, dim + 1, indices.inner, value)
        };
        VmapTensor::batched(out, members)
    }

    fn bool_repeat_dim(tensor: BoolTensor<Self>, dim: usize, times: usize) -> BoolTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::bool_repeat_dim(t, d, times))
    }

    fn bool_cat(tensors: Vec<BoolTensor<Self>>, dim: usize) -> BoolTensor<Self> {
        let (inner, batched, members) = align_many::<B, BoolKind>("bool_cat", tensors);
        let d = dim + batched as usize;
        VmapTensor::new(B::bool_cat(inner, d), batched, members)
    }

    fn bool_equal(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        binary!(bool_equal, lhs, rhs)
    }

    fn bool_not_equal(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        binary!(bool_not_equal, lhs, rhs)
    }

    fn bool_equal_elem(lhs: BoolTensor<Self>, rhs: Scalar) -> BoolTensor<Self> {
        lhs.map(|t| B::bool_equal_elem(t, rhs))
    }

    fn bool_not_equal_elem(lhs: BoolTensor<Self>, rhs: Scalar) -> BoolTensor<Self> {
        lhs.map(|t| B::bool_not_equal_elem(t, rhs))
    }

    fn bool_not(tensor: BoolTensor<Self>) -> BoolTensor<Self> {
        tensor.map(B::bool_not)
    }

    fn bool_and(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        binary!(bool_and, lhs, rhs)
    }

    fn bool_or(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        binary!(bool_or, lhs, rhs)
    }

    fn bool_xor(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        binary!(bool_xor, lhs, rhs)
    }

    fn bool_transpose(tensor: BoolTensor<Self>) -> BoolTensor<Self> {
        let rank = tensor.rank();
        Self::bool_swap_dims(tensor, rank - 2, rank - 1)
    }

    fn bool_swap_dims(tensor: BoolTensor<Self>, dim1: usize, dim2: usize) -> BoolTensor<Self> {
        let (d1, d2) = (tensor.dim(dim1), tensor.dim(dim2));
        tensor.map(|t| B::bool_swap_dims(t, d1, d2))
    }

    fn bool_permute(tensor: BoolTensor<Self>, axes: &[usize]) -> BoolTensor<Self> {
        let axes = physical_axes(axes, tensor.batched);
        tensor.map(|t| B::bool_permute(t, &axes))
    }

    fn bool_flip(tensor: BoolTensor<Self>, axes: &[usize]) -> BoolTensor<Self> {
        let axes: Vec<usize> = axes.iter().map(|&a| tensor.dim(a)).collect();
        tensor.map(|t| B::bool_flip(t, &axes))
    }

    fn bool_any(tensor: BoolTensor<Self>) -> BoolTensor<Self> {
        if tensor.batched {
            let members = tensor.members;
            tensor.map(|t| B::bool_any_dim(one_row_per_member::<B, BoolKind>(t, members), 1))
        } else {
            tensor.map(B::bool_any)
        }
    }

    fn bool_any_dim(tensor: BoolTensor<Self>, dim: usize) -> BoolTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::bool_any_dim(t, d))
    }

    fn bool_all(tensor: BoolTensor<Self>) -> BoolTensor<Self> {
        if tensor.batched {
            let members = tensor.members;
            tensor.map(|t| B::bool_all_dim(one_row_per_member::<B, BoolKind>(t, members), 1))
        } else {
            tensor.map(B::bool_all)
        }
    }

    fn bool_all_dim(tensor: BoolTensor<Self>, dim: usize) -> BoolTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::bool_all_dim(t, d))
    }

    fn bool_argwhere(
        tensor: BoolTensor<Self>,
        out_dtype: IntDType,
    ) -> impl Future<Output = IntTensor<Self>> + 'static + Send {
        if tensor.batched {
            unsupported(
                "bool_argwhere",
                "its output shape depends on the data, which differs between members; \
                 read the mask per member (`saturate_vmap::member_data`) instead",
            );
        }
        let members = tensor.members;
        let inner = B::bool_argwhere(tensor.inner, out_dtype);
        async move { VmapTensor::unbatched(inner.await, members) }
    }

    fn bool_expand(tensor: BoolTensor<Self>, shape: Shape) -> BoolTensor<Self> {
        let (view, target) =
            expand_plan(tensor.inner.shape(), tensor.batched, tensor.members, &shape);
        tensor.map(|t| {
            let t = match view {
                Some(view) => crate::ops::base::bool_reshape::<B>(t, view),
                None => t,
            };
            B::bool_expand(t, target)
        })
    }

    fn bool_unfold(
        tensor: BoolTensor<Self>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> BoolTensor<Self> {
        let d = tensor.dim(dim);
        tensor.map(|t| B::bool_unfold(t, d, size, step))
    }
}
