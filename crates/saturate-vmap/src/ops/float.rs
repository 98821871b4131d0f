//! Batching rules for `FloatTensorOps`.

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, Distribution, ExecutionError, Scalar, TensorData, TensorMetadata};
use burn_backend::{BoolDType, FloatDType, IntDType, Shape, Slice};

use core::future::Future;

use super::base::*;
use super::reciprocal;
use crate::tensor::*;
use crate::{Vmap, VmapDevice};

macro_rules! unary {
    ($($name:ident),* $(,)?) => {$(
        fn $name(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
            tensor.map(B::$name)
        }
    )*};
}

macro_rules! scalar_op {
    ($($name:ident),* $(,)?) => {$(
        fn $name(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
            lhs.map(|t| B::$name(t, rhs))
        }
    )*};
}

// Arithmetic: with one operand a per-member scalar (`[K, 1, ..., 1]`), one tight pass per
// member on NdArray (`kernels/ndarray/member_scalar.rs`, the same values); the inner op
// otherwise.
macro_rules! binary_op {
    ($($name:ident),* $(,)?) => {$(
        fn $name(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
            float_broadcast_binary::<B, _>(stringify!($name), lhs, rhs, |l, r| {
                let op = crate::kernels::ndarray::Arith::from_name(stringify!($name))
                    .expect("an arithmetic op");
                crate::kernels::ndarray::member_scalar_binary(op, l, r)
                    .unwrap_or_else(|(l, r)| B::$name(l, r))
            })
        }
    )*};
}

macro_rules! compare_op {
    ($($name:ident),* $(,)?) => {$(
        fn $name(
            lhs: FloatTensor<Self>,
            rhs: FloatTensor<Self>,
            out_dtype: BoolDType,
        ) -> BoolTensor<Self> {
            float_broadcast_binary::<B, _>(stringify!($name), lhs, rhs, |l, r| B::$name(l, r, out_dtype))
        }
    )*};
}

macro_rules! compare_elem_op {
    ($($name:ident),* $(,)?) => {$(
        fn $name(lhs: FloatTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> {
            lhs.map(|t| B::$name(t, rhs, out_dtype))
        }
    )*};
}

macro_rules! dim_op {
    ($($name:ident),* $(,)?) => {$(
        fn $name(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
            let dim = tensor.dim(dim);
            tensor.map(|t| B::$name(t, dim))
        }
    )*};
}

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
        let inner = crate::lowering::random_float::<B>(&physical, distribution, device, dtype)
            .unwrap_or_else(|| B::float_random(physical, distribution, &device.inner, dtype));
        VmapTensor::batched(inner, device.members)
    }

    fn float_zeros(shape: Shape, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        VmapTensor::unbatched(B::float_zeros(shape, &device.inner, dtype), device.members)
    }

    fn float_ones(shape: Shape, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        VmapTensor::unbatched(B::float_ones(shape, &device.inner, dtype), device.members)
    }

    fn float_full(
        shape: Shape,
        fill_value: Scalar,
        device: &Device<Self>,
        dtype: FloatDType,
    ) -> FloatTensor<Self> {
        VmapTensor::unbatched(
            B::float_full(shape, fill_value, &device.inner, dtype),
            device.members,
        )
    }

    fn float_into_data(
        tensor: FloatTensor<Self>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        let (inner, batched, members) = (tensor.inner, tensor.batched, tensor.members);
        async move {
            if batched && members != 1 {
                return Err(crate::tensor::batched_read_error("float_into_data"));
            }
            let data = B::float_into_data(inner).await?;
            Ok(crate::tensor::strip_single_member(data, batched))
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
        tensor.map(|t| B::float_into_int(t, out_dtype))
    }

    fn float_empty(shape: Shape, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        VmapTensor::unbatched(B::float_empty(shape, &device.inner, dtype), device.members)
    }

    fn float_repeat_dim(tensor: FloatTensor<Self>, dim: usize, times: usize) -> FloatTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_repeat_dim(t, dim, times))
    }

    scalar_op!(
        float_add_scalar,
        float_sub_scalar,
        float_mul_scalar,
        float_div_scalar,
        float_remainder_scalar,
        float_clamp_min,
        float_clamp_max,
        float_powi_scalar_impl,
        float_powf_scalar_impl,
    );

    // These reach the inner `float_recip` (see `ops::reciprocal`).
    fn float_powi_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        lhs.map(|t| reciprocal::powi_scalar::<B>(t, rhs))
    }

    fn float_powf_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        lhs.map(|t| reciprocal::powf_scalar::<B>(t, rhs))
    }

    fn float_recip(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        tensor.map(reciprocal::recip::<B>)
    }

    fn float_clamp(tensor: FloatTensor<Self>, min: Scalar, max: Scalar) -> FloatTensor<Self> {
        tensor.map(|t| B::float_clamp(t, min, max))
    }

    binary_op!(float_add, float_sub, float_mul, float_div);

    fn float_remainder(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        float_same_shape_binary::<B>("float_remainder", lhs, rhs, B::float_remainder)
    }

    fn float_powf(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        float_same_shape_binary::<B>("float_powf", lhs, rhs, B::float_powf)
    }

    fn float_atan2(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        float_same_shape_binary::<B>("float_atan2", lhs, rhs, B::float_atan2)
    }

    fn float_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        let members = check_members("float_matmul", lhs.members, rhs.members);
        match (lhs.batched, rhs.batched) {
            (false, false) => VmapTensor::unbatched(
                crate::ops::base::inner_matmul::<B>(lhs.inner, rhs.inner),
                members,
            ),
            (true, true) => VmapTensor::batched(
                crate::ops::base::inner_matmul::<B>(lhs.inner, rhs.inner),
                members,
            ),
            (false, true) => {
                // Shared lhs, per-member rhs: the lhs gets a size-1 member axis and the inner
                // batched matmul broadcasts it (no copy; one product per member, contiguous).
                let l = front::<B, FloatKind>(lhs);
                VmapTensor::batched(crate::ops::base::inner_matmul::<B>(l, rhs.inner), members)
            }
            (true, false) => {
                let rs = rhs.inner.shape();
                let rank = rs.num_dims();
                if rs[..rank - 2].iter().all(|&d| d == 1) {
                    // Batched input times shared weights: fold the member axis into the rows.
                    let ls = lhs.inner.shape(); // [K, .., n, k]
                    let (k, m) = (rs[rank - 2], rs[rank - 1]);
                    let rows = ls.num_elements() / k.max(1);
                    let x =
                        crate::ops::base::float_reshape::<B>(lhs.inner, Shape::from(vec![rows, k]));
                    let w =
                        crate::ops::base::float_reshape::<B>(rhs.inner, Shape::from(vec![k, m]));
                    let out = crate::ops::base::inner_matmul::<B>(x, w);
                    let mut s = ls.to_vec();
                    s[rank] = m;
                    VmapTensor::batched(
                        crate::ops::base::float_reshape::<B>(out, Shape::from(s)),
                        members,
                    )
                } else {
                    let r = front::<B, FloatKind>(rhs);
                    VmapTensor::batched(crate::ops::base::inner_matmul::<B>(lhs.inner, r), members)
                }
            }
        }
    }

    fn float_cross(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        dim: usize,
    ) -> FloatTensor<Self> {
        let members = check_members("float_cross", lhs.members, rhs.members);
        if !lhs.batched && !rhs.batched {
            return VmapTensor::unbatched(B::float_cross(lhs.inner, rhs.inner, dim), members);
        }
        let out = B::float_cross(
            materialize::<B, FloatKind>(lhs),
            materialize::<B, FloatKind>(rhs),
            dim + 1,
        );
        VmapTensor::batched(out, members)
    }

    unary!(
        float_neg,
        float_transpose,
        float_exp,
        float_log,
        float_log1p,
        float_sqrt,
        float_abs,
        float_cos,
        float_sin,
        float_tan,
        float_cosh,
        float_sinh,
        float_tanh,
        float_acos,
        float_acosh,
        float_asin,
        float_asinh,
        float_atan,
        float_atanh,
        float_round,
        float_floor,
        float_ceil,
        float_trunc,
        float_erf,
        float_sign,
        float_detach,
    );

    fn float_swap_dims(tensor: FloatTensor<Self>, dim1: usize, dim2: usize) -> FloatTensor<Self> {
        let (dim1, dim2) = (tensor.dim(dim1), tensor.dim(dim2));
        tensor.map(|t| B::float_swap_dims(t, dim1, dim2))
    }

    fn float_permute(tensor: FloatTensor<Self>, axes: &[usize]) -> FloatTensor<Self> {
        let axes = physical_axes(axes, tensor.batched);
        tensor.map(|t| B::float_permute(t, &axes))
    }

    fn float_flip(tensor: FloatTensor<Self>, axes: &[usize]) -> FloatTensor<Self> {
        let b = tensor.batched as usize;
        let axes: Vec<usize> = axes.iter().map(|a| a + b).collect();
        tensor.map(|t| B::float_flip(t, &axes))
    }

    fn float_reshape(tensor: FloatTensor<Self>, shape: Shape) -> FloatTensor<Self> {
        if tensor.batched {
            let physical = batched_shape(tensor.members, &shape);
            tensor.map(|t| crate::ops::base::float_reshape::<B>(t, physical))
        } else {
            tensor.map(|t| crate::ops::base::float_reshape::<B>(t, shape))
        }
    }

    fn float_gather(
        dim: usize,
        tensor: FloatTensor<Self>,
        indices: IntTensor<Self>,
    ) -> FloatTensor<Self> {
        let members = check_members("float_gather", tensor.members, indices.members);
        if !tensor.batched && !indices.batched {
            return VmapTensor::unbatched(
                B::float_gather(dim, tensor.inner, indices.inner),
                members,
            );
        }
        let out = B::float_gather(
            dim + 1,
            materialize::<B, FloatKind>(tensor),
            materialize::<B, IntKind>(indices),
        );
        VmapTensor::batched(out, members)
    }

    fn float_scatter_add(
        dim: usize,
        tensor: FloatTensor<Self>,
        indices: IntTensor<Self>,
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let members = check_members("float_scatter_add", tensor.members, indices.members);
        let members = check_members("float_scatter_add", members, value.members);
        if !tensor.batched && !indices.batched && !value.batched {
            let out = B::float_scatter_add(dim, tensor.inner, indices.inner, value.inner);
            return VmapTensor::unbatched(out, members);
        }
        let out = B::float_scatter_add(
            dim + 1,
            materialize_copy::<B, FloatKind>(tensor),
            materialize::<B, IntKind>(indices),
            materialize::<B, FloatKind>(value),
        );
        VmapTensor::batched(out, members)
    }

    fn float_scatter_nd(
        data: FloatTensor<Self>,
        indices: IntTensor<Self>,
        values: FloatTensor<Self>,
        reduction: IndexingUpdateOp,
    ) -> FloatTensor<Self> {
        let members = check_members("float_scatter_nd", data.members, indices.members);
        let members = check_members("float_scatter_nd", members, values.members);
        if !data.batched && !indices.batched && !values.batched {
            let out = B::float_scatter_nd(data.inner, indices.inner, values.inner, reduction);
            return VmapTensor::unbatched(out, members);
        }
        // Every member scatters into its own slice: the member index becomes the first
        // coordinate of every index tuple.
        let data = dense_layout::<B>(materialize_copy::<B, FloatKind>(data));
        let indices = with_member_index_column::<B>(materialize::<B, IntKind>(indices), members);
        let values = dense_layout::<B>(materialize::<B, FloatKind>(values));
        VmapTensor::batched(
            B::float_scatter_nd(data, indices, values, reduction),
            members,
        )
    }

    fn float_gather_nd(data: FloatTensor<Self>, indices: IntTensor<Self>) -> FloatTensor<Self> {
        let members = check_members("float_gather_nd", data.members, indices.members);
        match (data.batched, indices.batched) {
            (false, false) => {
                VmapTensor::unbatched(B::float_gather_nd(data.inner, indices.inner), members)
            }
            // Shared data, per-member indices: the leading index axis is the member axis.
            (false, true) => {
                let shape = indices.inner.shape();
                let indices = crate::ops::base::int_reshape::<B>(indices.inner, shape);
                VmapTensor::batched(B::float_gather_nd(data.inner, indices), members)
            }
            (true, _) => {
                let indices =
                    with_member_index_column::<B>(materialize::<B, IntKind>(indices), members);
                VmapTensor::batched(
                    B::float_gather_nd(dense_layout::<B>(data.inner), indices),
                    members,
                )
            }
        }
    }

    fn float_select(
        tensor: FloatTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> FloatTensor<Self> {
        let members = check_members("float_select", tensor.members, indices.members);
        if !indices.batched {
            let pdim = tensor.dim(dim);
            return tensor.map(|t| B::float_select(t, pdim, indices.inner));
        }
        // Per-member indices: a gather with the indices broadcast over the other dims.
        let n = indices.inner.shape()[1];
        let out_shape = with_dim_size(tensor.shape(), dim, n);
        let t = materialize::<B, FloatKind>(tensor);
        let idx = select_indices_as_gather::<B>(indices.inner, members, dim, &out_shape);
        VmapTensor::batched(B::float_gather(dim + 1, t, idx), members)
    }

    fn float_select_add(
        tensor: FloatTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let members = check_members("float_select_add", tensor.members, indices.members);
        let members = check_members("float_select_add", members, value.members);
        if !indices.batched {
            if !tensor.batched && !value.batched {
                let out = B::float_select_add(tensor.inner, dim, indices.inner, value.inner);
                return VmapTensor::unbatched(out, members);
            }
            let out = B::float_select_add(
                materialize_copy::<B, FloatKind>(tensor),
                dim + 1,
                indices.inner,
                materialize::<B, FloatKind>(value),
            );
            return VmapTensor::batched(out, members);
        }
        // Per-member indices: a scatter-add with the indices broadcast over the other dims.
        let idx = select_indices_as_gather::<B>(indices.inner, members, dim, &value.shape());
        let v = materialize::<B, FloatKind>(value);
        let out = B::float_scatter_add(dim + 1, materialize_copy::<B, FloatKind>(tensor), idx, v);
        VmapTensor::batched(out, members)
    }

    fn float_slice(tensor: FloatTensor<Self>, slices: &[Slice]) -> FloatTensor<Self> {
        let slices = physical_slices(slices, tensor.batched);
        tensor.map(|t| B::float_slice(t, &slices))
    }

    fn float_slice_assign(
        tensor: FloatTensor<Self>,
        slices: &[Slice],
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let members = check_members("float_slice_assign", tensor.members, value.members);
        if !tensor.batched && !value.batched {
            let out = B::float_slice_assign(tensor.inner, slices, value.inner);
            return VmapTensor::unbatched(out, members);
        }
        let slices = physical_slices(slices, true);
        let out = B::float_slice_assign(
            materialize_copy::<B, FloatKind>(tensor),
            &slices,
            materialize::<B, FloatKind>(value),
        );
        VmapTensor::batched(out, members)
    }

    fn float_mask_where(
        tensor: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let members = check_members("float_mask_where", tensor.members, mask.members);
        let members = check_members("float_mask_where", members, value.members);
        if !tensor.batched && !mask.batched && !value.batched {
            let out = B::float_mask_where(tensor.inner, mask.inner, value.inner);
            return VmapTensor::unbatched(out, members);
        }
        // The mask gives the output shape (NdArray broadcasts tensor and value to it; CubeCL's
        // kernel takes the shape of `tensor` as the output's, so there both are expanded).
        let (tensor, mask, value) = (
            front::<B, FloatKind>(tensor),
            materialize::<B, BoolKind>(mask),
            front::<B, FloatKind>(value),
        );
        let shape = broadcast_shape(&[tensor.shape(), mask.shape(), value.shape()]);
        let out = B::float_mask_where(
            expand_for::<B, FloatKind>(tensor, &shape),
            expand_for::<B, BoolKind>(mask, &shape),
            expand_for::<B, FloatKind>(value, &shape),
        );
        VmapTensor::batched(out, members)
    }

    fn float_mask_fill(
        tensor: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        value: Scalar,
    ) -> FloatTensor<Self> {
        let members = check_members("float_mask_fill", tensor.members, mask.members);
        match (tensor.batched, mask.batched) {
            (false, false) => {
                VmapTensor::unbatched(B::float_mask_fill(tensor.inner, mask.inner, value), members)
            }
            (true, _) => {
                let mask = front::<B, BoolKind>(mask);
                VmapTensor::batched(B::float_mask_fill(tensor.inner, mask, value), members)
            }
            (false, true) => {
                let t = materialize_copy::<B, FloatKind>(tensor);
                VmapTensor::batched(B::float_mask_fill(t, mask.inner, value), members)
            }
        }
    }

    compare_op!(
        float_equal,
        float_not_equal,
        float_greater,
        float_greater_equal,
        float_lower,
        float_lower_equal,
    );

    compare_elem_op!(
        float_equal_elem,
        float_not_equal_elem,
        float_greater_elem,
        float_greater_equal_elem,
        float_lower_elem,
        float_lower_equal_elem,
    );

    fn float_set_require_grad(tensor: FloatTensor<Self>, require_grad: bool) -> FloatTensor<Self> {
        tensor.map(|t| B::float_set_require_grad(t, require_grad))
    }

    fn float_is_require_grad(tensor: &FloatTensor<Self>) -> bool {
        B::float_is_require_grad(&tensor.inner)
    }

    fn float_sum(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        float_reduce_all::<B, _>(tensor, B::float_sum, B::float_sum_dim)
    }

    fn float_prod(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        float_reduce_all::<B, _>(tensor, B::float_prod, B::float_prod_dim)
    }

    fn float_mean(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        float_reduce_all::<B, _>(tensor, B::float_mean, B::float_mean_dim)
    }

    fn float_max(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        float_reduce_all::<B, _>(tensor, B::float_max, B::float_max_dim)
    }

    fn float_min(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        float_reduce_all::<B, _>(tensor, B::float_min, B::float_min_dim)
    }

    fn float_max_abs(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        float_reduce_all::<B, _>(tensor, B::float_max_abs, B::float_max_abs_dim)
    }

    fn float_any(tensor: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> {
        float_reduce_all::<B, _>(
            tensor,
            |t| B::float_any(t, out_dtype),
            |t, d| B::float_any_dim(t, d, out_dtype),
        )
    }

    fn float_all(tensor: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> {
        float_reduce_all::<B, _>(
            tensor,
            |t| B::float_all(t, out_dtype),
            |t, d| B::float_all_dim(t, d, out_dtype),
        )
    }

    dim_op!(
        float_sum_dim,
        float_prod_dim,
        float_mean_dim,
        float_cumsum,
        float_cumprod,
        float_cummin,
        float_cummax,
        float_max_dim,
        float_min_dim,
        float_max_abs_dim,
    );

    fn float_any_dim(
        tensor: FloatTensor<Self>,
        dim: usize,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_any_dim(t, dim, out_dtype))
    }

    fn float_all_dim(
        tensor: FloatTensor<Self>,
        dim: usize,
        out_dtype: BoolDType,
    ) -> BoolTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_all_dim(t, dim, out_dtype))
    }

    fn float_max_dim_with_indices(
        tensor: FloatTensor<Self>,
        dim: usize,
        indices_dtype: IntDType,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (pdim, batched, members) = (tensor.dim(dim), tensor.batched, tensor.members);
        let (v, i) = B::float_max_dim_with_indices(tensor.inner, pdim, indices_dtype);
        (
            VmapTensor::new(v, batched, members),
            VmapTensor::new(i, batched, members),
        )
    }

    fn float_min_dim_with_indices(
        tensor: FloatTensor<Self>,
        dim: usize,
        indices_dtype: IntDType,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (pdim, batched, members) = (tensor.dim(dim), tensor.batched, tensor.members);
        let (v, i) = B::float_min_dim_with_indices(tensor.inner, pdim, indices_dtype);
        (
            VmapTensor::new(v, batched, members),
            VmapTensor::new(i, batched, members),
        )
    }

    fn float_cast(tensor: FloatTensor<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        tensor.map(|t| B::float_cast(t, dtype))
    }

    fn float_powi(lhs: FloatTensor<Self>, rhs: IntTensor<Self>) -> FloatTensor<Self> {
        // Same-shape operands, as in `float_same_shape_binary`.
        let members = check_members("float_powi", lhs.members, rhs.members);
        if lhs.batched == rhs.batched {
            return VmapTensor::new(B::float_powi(lhs.inner, rhs.inner), lhs.batched, members);
        }
        VmapTensor::batched(
            B::float_powi(
                materialize::<B, FloatKind>(lhs),
                materialize::<B, IntKind>(rhs),
            ),
            members,
        )
    }

    fn float_cat(tensors: Vec<FloatTensor<Self>>, dim: usize) -> FloatTensor<Self> {
        let (inner, batched, members) = align_many::<B, FloatKind>("float_cat", tensors);
        VmapTensor::new(
            B::float_cat(inner, dim + batched as usize),
            batched,
            members,
        )
    }

    fn float_argmax(tensor: FloatTensor<Self>, dim: usize, out_dtype: IntDType) -> IntTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_argmax(t, dim, out_dtype))
    }

    fn float_argmin(tensor: FloatTensor<Self>, dim: usize, out_dtype: IntDType) -> IntTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_argmin(t, dim, out_dtype))
    }

    fn float_argtopk(
        tensor: FloatTensor<Self>,
        dim: usize,
        k: usize,
        out_dtype: IntDType,
    ) -> IntTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_argtopk(t, dim, k, out_dtype))
    }

    fn float_topk(tensor: FloatTensor<Self>, dim: usize, k: usize) -> FloatTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_topk(t, dim, k))
    }

    fn float_expand(tensor: FloatTensor<Self>, shape: Shape) -> FloatTensor<Self> {
        let (view, target) =
            expand_plan(tensor.inner.shape(), tensor.batched, tensor.members, &shape);
        tensor.map(|t| {
            let t = match view {
                Some(view) => crate::ops::base::float_reshape::<B>(t, view),
                None => t,
            };
            B::float_expand(t, target)
        })
    }

    fn float_sort(tensor: FloatTensor<Self>, dim: usize, descending: bool) -> FloatTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_sort(t, dim, descending))
    }

    fn float_sort_with_indices(
        tensor: FloatTensor<Self>,
        dim: usize,
        descending: bool,
        indices_dtype: IntDType,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (pdim, batched, members) = (tensor.dim(dim), tensor.batched, tensor.members);
        let (v, i) = B::float_sort_with_indices(tensor.inner, pdim, descending, indices_dtype);
        (
            VmapTensor::new(v, batched, members),
            VmapTensor::new(i, batched, members),
        )
    }

    fn float_argsort(
        tensor: FloatTensor<Self>,
        dim: usize,
        descending: bool,
        out_dtype: IntDType,
    ) -> IntTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_argsort(t, dim, descending, out_dtype))
    }

    fn float_grid_sample_2d(
        tensor: FloatTensor<Self>,
        grid: FloatTensor<Self>,
        options: GridSampleOptions,
    ) -> FloatTensor<Self> {
        let members = check_members("float_grid_sample_2d", tensor.members, grid.members);
        if !tensor.batched && !grid.batched {
            let out = B::float_grid_sample_2d(tensor.inner, grid.inner, options);
            return VmapTensor::unbatched(out, members);
        }
        // Fold the member axis into the batch axis: [K, N, ..] -> [K*N, ..].
        let fold = |t: FloatPrim<B>| {
            let s = t.shape();
            let mut f = vec![s[0] * s[1]];
            f.extend(s.iter().skip(2).copied());
            crate::ops::base::float_reshape::<B>(t, Shape::from(f))
        };
        let t = fold(materialize::<B, FloatKind>(tensor));
        let g = fold(materialize::<B, FloatKind>(grid));
        let out = B::float_grid_sample_2d(t, g, options);
        let s = out.shape();
        let mut u = vec![members, s[0] / members];
        u.extend(s.iter().skip(1).copied());
        VmapTensor::batched(
            crate::ops::base::float_reshape::<B>(out, Shape::from(u)),
            members,
        )
    }

    fn float_unfold(
        tensor: FloatTensor<Self>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> FloatTensor<Self> {
        let dim = tensor.dim(dim);
        tensor.map(|t| B::float_unfold(t, dim, size, step))
    }

    fn float_is_nan(tensor: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> {
        tensor.map(|t| B::float_is_nan(t, out_dtype))
    }

    fn float_is_inf(tensor: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> {
        tensor.map(|t| B::float_is_inf(t, out_dtype))
    }
}
