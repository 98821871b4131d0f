//! The machinery the batching rules in `ops/` share, so that each per-trait file reads op by op.
//!
//! A batched tensor is physically `[K, ...logical]`; an unbatched one is the logical tensor,
//! shared by all K members. The helpers here translate logical axes, slices and index tensors
//! into physical ones, view a batched tensor as one row per member, and align the operands of
//! binary ops. The alignment primitives the rest of the crate uses as well (`front`,
//! `materialize`, `materialize_copy`, `align2`, `align_many`, `batched_shape`,
//! `check_members`) and the copy-free reshapes (`float_reshape`, `int_reshape`,
//! `bool_reshape`) live next to the tensor type in [`crate::tensor`].

use burn_backend::{Backend, BackendTypes, IntDType, Shape, Slice, TensorMetadata};

use crate::tensor::{
    align2, check_members, materialize, materialize_copy, FloatKind, Kind, VmapTensor,
};
// The batching rules reach the copy-free reshapes through this file, with the rest.
pub(crate) use crate::tensor::{bool_reshape, float_reshape, int_reshape};

/// The inner float primitive of `B`.
pub(crate) type FloatPrim<B> = <B as BackendTypes>::FloatTensorPrimitive;
/// The inner int primitive of `B`.
pub(crate) type IntPrim<B> = <B as BackendTypes>::IntTensorPrimitive;

/// The physical axes of logical `axes` (for `permute`, `flip`): when batched, the member
/// axis stays first and every logical axis moves one place right.
pub(crate) fn physical_axes(axes: &[usize], batched: bool) -> Vec<usize> {
    if batched {
        core::iter::once(0)
            .chain(axes.iter().map(|a| a + 1))
            .collect()
    } else {
        axes.to_vec()
    }
}

/// The physical slices of logical `slices`: when batched, a full slice of the member axis in
/// front.
pub(crate) fn physical_slices(slices: &[Slice], batched: bool) -> Vec<Slice> {
    let mut out = Vec::with_capacity(slices.len() + 1);
    if batched {
        out.push(Slice::full());
    }
    out.extend_from_slice(slices);
    out
}

/// A batched `[K, ...]` tensor as `[K, n]` (one row per member), for reductions over all
/// elements whose result is `[1]` per member.
pub(crate) fn one_row_per_member<B: Backend, K: Kind<B>>(inner: K::P, members: usize) -> K::P {
    let n = inner.shape().num_elements() / members.max(1);
    K::reshape(inner, Shape::new([members, n]))
}

/// Logical `shape` with the size of `dim` replaced by `size`.
pub(crate) fn with_dim_size(shape: Shape, dim: usize, size: usize) -> Shape {
    let mut shape = shape;
    shape[dim] = size;
    shape
}

/// How to expand a tensor of physical shape `physical` to the logical `shape`: the shape to
/// reshape it to first (when `shape` has more dims than the tensor, so that the member axis of a
/// batched tensor stays first instead of being aligned with a new leading dim), and the physical
/// target shape.
pub(crate) fn expand_plan(
    physical: Shape,
    batched: bool,
    members: usize,
    shape: &Shape,
) -> (Option<Shape>, Shape) {
    if !batched {
        return (None, shape.clone());
    }
    let logical_rank = physical.num_dims() - 1;
    let target = crate::tensor::batched_shape(members, shape);
    if shape.num_dims() > logical_rank {
        let mut view: Shape = core::iter::repeat_n(1usize, shape.num_dims() + 1).collect();
        view[0] = members;
        let offset = shape.num_dims() - logical_rank;
        for (i, d) in physical.iter().skip(1).enumerate() {
            view[1 + offset + i] = *d;
        }
        (Some(view), target)
    } else {
        (None, target)
    }
}

/// Batched 1-D indices `[K, n]` of a `select` along logical `dim` laid out as the index
/// tensor of the equivalent `gather`/`scatter`: `[K, s_0, .., n, .., s_{r-1}]`, where `shape`
/// is the logical shape of the selected (or added) values.
pub(crate) fn select_indices_as_gather<B: Backend>(
    indices: IntPrim<B>,
    members: usize,
    dim: usize,
    shape: &Shape,
) -> IntPrim<B> {
    let n = indices.shape()[1];
    let mut view: Shape = core::iter::repeat_n(1usize, shape.num_dims() + 1).collect();
    view[0] = members;
    view[dim + 1] = n;
    let mut target = crate::tensor::batched_shape(members, shape);
    target[dim + 1] = n;
    B::int_expand(int_reshape::<B>(indices, view), target)
}

/// Batched `[K, ..., m]` nd-indices with the member index prepended to each index tuple
/// (`[K, ..., m + 1]`), so that an nd gather/scatter on a `[K, ...]` tensor stays in each member.
pub(crate) fn with_member_index_column<B: Backend>(
    indices: IntPrim<B>,
    members: usize,
) -> IntPrim<B> {
    let shape = indices.shape();
    let rank = shape.num_dims();
    let device = B::int_device(&indices);
    let dtype: IntDType = indices.dtype().into();
    let ids = B::int_arange(0..members as i64, &device, dtype);
    let mut view: Shape = core::iter::repeat_n(1usize, rank).collect();
    view[0] = members;
    let mut target = shape.clone();
    target[rank - 1] = 1;
    let column = B::int_expand(int_reshape::<B>(ids, view), target);
    B::int_cat(vec![column, indices], rank - 1)
}

/// Aligns the operands of a binary elementwise op. Unlike [`align2`], when exactly one operand
/// is batched the other gets a real member axis of size K (not a size-1 one): the inner op then
/// sees exactly the shapes the per-member op would, plus the same leading K. Some inner ops do
/// not broadcast at all (NdArray's `remainder` zips equal shapes only) or only one way, so a
/// size-1 member axis is not safe for them.
pub(crate) fn align_binary<B: Backend, K: Kind<B>>(
    op: &str,
    lhs: VmapTensor<K::P>,
    rhs: VmapTensor<K::P>,
) -> (K::P, K::P, bool, usize) {
    let members = check_members(op, lhs.members, rhs.members);
    if lhs.batched == rhs.batched {
        return align2::<B, K, K>(op, lhs, rhs);
    }
    let lhs = materialize::<B, K>(lhs);
    let rhs = materialize::<B, K>(rhs);
    (lhs, rhs, true, members)
}

/// A broadcasting binary float op: an unbatched operand is aligned as `[1, ...]`.
pub(crate) fn float_broadcast_binary<B: Backend, O>(
    op: &str,
    lhs: VmapTensor<FloatPrim<B>>,
    rhs: VmapTensor<FloatPrim<B>>,
    f: impl FnOnce(FloatPrim<B>, FloatPrim<B>) -> O,
) -> VmapTensor<O> {
    let (l, r, batched, members) = align2::<B, FloatKind, FloatKind>(op, lhs, rhs);
    let (l, r) = expand_for_broadcast::<B>(l, r);
    VmapTensor::new(f(l, r), batched, members)
}

/// The shape operands of one rank broadcast to: the largest size per axis.
pub(crate) fn broadcast_shape(shapes: &[Shape]) -> Shape {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let dims: Vec<usize> = (0..rank)
        .map(|i| {
            shapes
                .iter()
                .map(|s| s.get(i).copied().unwrap_or(1))
                .max()
                .unwrap_or(1)
        })
        .collect();
    Shape::from(dims)
}

/// `p` expanded to `shape` (a view) where
/// [`broadcast_explicitly`](crate::lowering::broadcast_explicitly) asks for it and the shapes
/// differ; `p` itself otherwise.
pub(crate) fn expand_for<B: Backend, K: Kind<B>>(p: K::P, shape: &Shape) -> K::P {
    if p.shape() == *shape || !crate::lowering::broadcast_explicitly::<B>() {
        p
    } else {
        K::expand(p, shape.clone())
    }
}

/// `B::float_add` of two operands that broadcast, through [`expand_for_broadcast`].
/// The inner backend's matrix product, through the NdArray kernel where it applies (strided
/// operands read in place, rows split over rayon's threads; the same values).
pub(crate) fn inner_matmul<B: Backend>(l: FloatPrim<B>, r: FloatPrim<B>) -> FloatPrim<B> {
    crate::kernels::ndarray::matmul(l, r).unwrap_or_else(|(l, r)| B::float_matmul(l, r))
}

pub(crate) fn add_broadcast<B: Backend>(l: FloatPrim<B>, r: FloatPrim<B>) -> FloatPrim<B> {
    let (l, r) = expand_for_broadcast::<B>(l, r);
    B::float_add(l, r)
}

/// `B::float_mul` of two operands that broadcast, through [`expand_for_broadcast`].
pub(crate) fn mul_broadcast<B: Backend>(l: FloatPrim<B>, r: FloatPrim<B>) -> FloatPrim<B> {
    let (l, r) = expand_for_broadcast::<B>(l, r);
    B::float_mul(l, r)
}

/// Two float operands of one rank, each expanded to their broadcast shape where
/// [`broadcast_explicitly`](crate::lowering::broadcast_explicitly) asks for it (a view: no
/// copy); as they are otherwise, or when their shapes already agree.
pub(crate) fn expand_for_broadcast<B: Backend>(
    l: FloatPrim<B>,
    r: FloatPrim<B>,
) -> (FloatPrim<B>, FloatPrim<B>) {
    let (ls, rs) = (l.shape(), r.shape());
    if ls == rs || ls.len() != rs.len() || !crate::lowering::broadcast_explicitly::<B>() {
        return (l, r);
    }
    let common: Vec<usize> = ls.iter().zip(rs.iter()).map(|(&a, &b)| a.max(b)).collect();
    let common = Shape::from(common);
    let l = if ls == common {
        l
    } else {
        B::float_expand(l, common.clone())
    };
    let r = if rs == common {
        r
    } else {
        B::float_expand(r, common)
    };
    (l, r)
}

/// A binary float op whose inner kernel may broadcast only one way (or not at all, or write
/// into `lhs`): when exactly one operand is batched, the other gets a real member axis (`lhs`
/// a copy with its own storage), so both have the same member dim and the inner backend sees
/// the logical shapes it would see member by member.
pub(crate) fn float_same_shape_binary<B: Backend>(
    op: &str,
    lhs: VmapTensor<FloatPrim<B>>,
    rhs: VmapTensor<FloatPrim<B>>,
    f: impl FnOnce(FloatPrim<B>, FloatPrim<B>) -> FloatPrim<B>,
) -> VmapTensor<FloatPrim<B>> {
    let members = check_members(op, lhs.members, rhs.members);
    match (lhs.batched, rhs.batched) {
        (false, false) | (true, true) => {
            VmapTensor::new(f(lhs.inner, rhs.inner), lhs.batched, members)
        }
        (false, true) => {
            VmapTensor::batched(f(materialize_copy::<B, FloatKind>(lhs), rhs.inner), members)
        }
        (true, false) => {
            VmapTensor::batched(f(lhs.inner, materialize::<B, FloatKind>(rhs)), members)
        }
    }
}

/// A float reduction over all elements: `[1]` when unbatched (`all`), `[K, 1]` when batched
/// (`along` dim 1 of the one-row-per-member view).
pub(crate) fn float_reduce_all<B: Backend, O>(
    t: VmapTensor<FloatPrim<B>>,
    all: impl FnOnce(FloatPrim<B>) -> O,
    along: impl FnOnce(FloatPrim<B>, usize) -> O,
) -> VmapTensor<O> {
    if t.batched {
        let members = t.members;
        let rows = one_row_per_member::<B, FloatKind>(t.inner, members);
        VmapTensor::batched(along(rows, 1), members)
    } else {
        t.map(all)
    }
}

/// The same float tensor in a dense row-major layout, where the inner backend needs one (a
/// reshape to its own shape copies only non-contiguous views).
pub(crate) fn dense_layout<B: Backend>(t: FloatPrim<B>) -> FloatPrim<B> {
    let shape = t.shape();
    float_reshape::<B>(t, shape)
}

// Shape helpers on inner tensors, for the module ops (conv, pool, attention, ...).

/// The shape of an inner tensor as a `Vec` (to index and splice).
pub(crate) fn shape_dims<P: TensorMetadata>(p: &P) -> Vec<usize> {
    p.shape().to_vec()
}

/// `float_reshape` to `dims`.
pub(crate) fn reshape_float<B: Backend>(p: FloatPrim<B>, dims: Vec<usize>) -> FloatPrim<B> {
    float_reshape::<B>(p, Shape::from(dims))
}

/// `int_reshape` to `dims`.
pub(crate) fn reshape_int<B: Backend>(p: IntPrim<B>, dims: Vec<usize>) -> IntPrim<B> {
    int_reshape::<B>(p, Shape::from(dims))
}

/// `float_permute` by `axes`.
pub(crate) fn permute_float<B: Backend>(p: FloatPrim<B>, axes: &[usize]) -> FloatPrim<B> {
    B::float_permute(p, axes)
}

/// The number of elements of `dims`.
pub(crate) fn dims_product(dims: &[usize]) -> usize {
    dims.iter().product()
}

/// Concatenates dimension lists.
pub(crate) fn concat_dims(parts: &[&[usize]]) -> Vec<usize> {
    parts.iter().flat_map(|p| p.iter().copied()).collect()
}

/// Slices every axis of `p` to `0..target[i]` when the shapes differ.
pub(crate) fn crop_to<B: Backend>(p: FloatPrim<B>, target: &[usize]) -> FloatPrim<B> {
    if shape_dims(&p) == target {
        return p;
    }
    let slices: Vec<Slice> = target.iter().map(|&t| Slice::from(0..t)).collect();
    B::float_slice(p, &slices)
}

/// `[K, N, ...] -> [K*N, ...]`.
pub(crate) fn merge_members_into_batch<B: Backend>(p: FloatPrim<B>) -> FloatPrim<B> {
    let mut d = shape_dims(&p);
    let k = d.remove(0);
    d[0] *= k;
    reshape_float::<B>(p, d)
}

pub(crate) fn merge_members_into_batch_int<B: Backend>(p: IntPrim<B>) -> IntPrim<B> {
    let mut d = shape_dims(&p);
    let k = d.remove(0);
    d[0] *= k;
    reshape_int::<B>(p, d)
}

/// `[K*N, ...] -> [K, N, ...]`.
pub(crate) fn split_members_from_batch<B: Backend>(p: FloatPrim<B>, k: usize) -> FloatPrim<B> {
    let mut d = shape_dims(&p);
    d[0] /= k;
    d.insert(0, k);
    reshape_float::<B>(p, d)
}

/// The members of all operands (checked equal).
pub(crate) fn common_members(op: &str, counts: &[usize]) -> usize {
    counts
        .iter()
        .copied()
        .reduce(|a, b| check_members(op, a, b))
        .unwrap_or(1)
}

/// Runs a one-operand op with K folded into the batch axis.
pub(crate) fn with_members_in_batch<B: Backend>(
    x: VmapTensor<FloatPrim<B>>,
    f: impl FnOnce(FloatPrim<B>) -> FloatPrim<B>,
) -> VmapTensor<FloatPrim<B>> {
    if x.batched {
        let k = x.members;
        VmapTensor::batched(
            split_members_from_batch::<B>(f(merge_members_into_batch::<B>(x.inner)), k),
            k,
        )
    } else {
        x.map(f)
    }
}

/// Runs a two-operand op (e.g. `x` and a gradient) with K folded into the batch axis; both are
/// materialized when either is batched.
pub(crate) fn with_members_in_batch_pair<B: Backend>(
    op: &str,
    x: VmapTensor<FloatPrim<B>>,
    y: VmapTensor<FloatPrim<B>>,
    f: impl FnOnce(FloatPrim<B>, FloatPrim<B>) -> FloatPrim<B>,
) -> VmapTensor<FloatPrim<B>> {
    let k = check_members(op, x.members, y.members);
    if !x.batched && !y.batched {
        return VmapTensor::unbatched(f(x.inner, y.inner), k);
    }
    let x = merge_members_into_batch::<B>(materialize::<B, FloatKind>(x));
    let y = merge_members_into_batch::<B>(materialize::<B, FloatKind>(y));
    VmapTensor::batched(split_members_from_batch::<B>(f(x, y), k), k)
}
