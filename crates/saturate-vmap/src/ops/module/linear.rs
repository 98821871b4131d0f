//! Batching rules for `linear` and `embedding` (forward and backward).

use super::*;

/// An unbatched inner tensor with the logical shape of `t` (member 0 when batched). For inner
/// ops that only read an operand's shape.
fn shape_carrier<B: Backend>(t: VmapTensor<FloatPrim<B>>) -> FloatPrim<B> {
    if !t.batched {
        return t.inner;
    }
    let d = shape_dims(&t.inner);
    let mut slices: Vec<Slice> = d.iter().map(|&n| Slice::from(0..n)).collect();
    slices[0] = Slice::from(0..1);
    let p = B::float_slice(t.inner, &slices);
    reshape_float::<B>(p, d[1..].to_vec())
}

/// A linear operand as `[K', M, d]` (K' = K when batched, 1 when shared; M the product of the
/// logical leading dims), with those leading dims. Free when the tensor is contiguous.
fn member_rows<B: Backend>(t: VmapTensor<FloatPrim<B>>) -> (FloatPrim<B>, Vec<usize>) {
    let batched = t.batched;
    let d = shape_dims(&t.inner);
    let logical = &d[batched as usize..];
    let last = *logical.last().unwrap_or(&1);
    let lead = logical[..logical.len().saturating_sub(1)].to_vec();
    let rows: usize = lead.iter().product();
    let kk = if batched { d[0] } else { 1 };
    (reshape_float::<B>(t.inner, vec![kk, rows, last]), lead)
}

/// Indices `[K, ...]` into K tables of `rows` rows each, offset by `k * rows` so that they index
/// the flattened `[K*rows, ...]` table.
fn offset_indices<B: Backend>(indices: IntPrim<B>, k: usize, rows: usize) -> IntPrim<B> {
    let d = shape_dims(&indices);
    let device = B::int_device(&indices);
    let dtype = indices.dtype();
    let offsets = B::int_arange(0..k as i64, &device, dtype.into());
    let offsets = B::int_mul_scalar(offsets, (rows as i64).into());
    let mut od = vec![1usize; d.len()];
    od[0] = k;
    let offsets = reshape_int::<B>(offsets, od);
    B::int_add(indices, offsets)
}

pub(super) fn embedding<B: Backend>(
    weights: FloatTensor<Vmap<B>>,
    indices: IntTensor<Vmap<B>>,
) -> FloatTensor<Vmap<B>> {
    let k = check_members("embedding", weights.members, indices.members);
    match (weights.batched, indices.batched) {
        (false, false) => VmapTensor::unbatched(B::embedding(weights.inner, indices.inner), k),
        (false, true) => {
            let out = B::embedding(
                weights.inner,
                merge_members_into_batch_int::<B>(indices.inner),
            );
            VmapTensor::batched(split_members_from_batch::<B>(out, k), k)
        }
        (true, false) => {
            // [K, V, D] selected along V.
            let id = shape_dims(&indices.inner);
            let wd = shape_dims(&weights.inner);
            let flat = reshape_int::<B>(indices.inner, vec![id.iter().product()]);
            let out = B::float_select(weights.inner, 1, flat);
            VmapTensor::batched(
                reshape_float::<B>(out, concat_dims(&[&[k], &id, &[wd[2]]])),
                k,
            )
        }
        (true, true) => {
            // Offsets k*V into the [K*V, D] table.
            let wd = shape_dims(&weights.inner);
            let id = shape_dims(&indices.inner);
            let idx = offset_indices::<B>(indices.inner, k, wd[1]);
            let idx = reshape_int::<B>(idx, concat_dims(&[&[k * id[1]], &id[2..]]));
            let out = B::embedding(merge_members_into_batch::<B>(weights.inner), idx);
            VmapTensor::batched(split_members_from_batch::<B>(out, k), k)
        }
    }
}

pub(super) fn embedding_backward<B: Backend>(
    weights: FloatTensor<Vmap<B>>,
    output_grad: FloatTensor<Vmap<B>>,
    indices: IntTensor<Vmap<B>>,
) -> FloatTensor<Vmap<B>> {
    let k = common_members(
        "embedding_backward",
        &[weights.members, output_grad.members, indices.members],
    );
    let [v, d] = weights.shape().dims::<2>();
    match (output_grad.batched, indices.batched) {
        (false, false) => VmapTensor::unbatched(
            B::embedding_backward(
                shape_carrier::<B>(weights),
                output_grad.inner,
                indices.inner,
            ),
            k,
        ),
        (true, false) => {
            // select_add along V of a [K, V, D] zero table.
            let id = shape_dims(&indices.inner);
            let n: usize = id.iter().product();
            let idx = reshape_int::<B>(indices.inner, vec![n]);
            let device = B::float_device(&output_grad.inner);
            let dtype = output_grad.inner.dtype();
            let grad = reshape_float::<B>(output_grad.inner, vec![k, n, d]);
            let zeros = B::float_zeros(Shape::from(vec![k, v, d]), &device, dtype.into());
            VmapTensor::batched(B::float_select_add(zeros, 1, idx, grad), k)
        }
        (_, true) => {
            let id = shape_dims(&indices.inner);
            let n: usize = id[1..].iter().product();
            let idx = offset_indices::<B>(indices.inner, k, v);
            let idx = reshape_int::<B>(idx, vec![k * n]);
            let grad = materialize::<B, FloatKind>(output_grad);
            let device = B::float_device(&grad);
            let dtype = grad.dtype();
            let grad = reshape_float::<B>(grad, vec![k * n, d]);
            let zeros = B::float_zeros(Shape::from(vec![k * v, d]), &device, dtype.into());
            let out = B::float_select_add(zeros, 0, idx, grad);
            VmapTensor::batched(reshape_float::<B>(out, vec![k, v, d]), k)
        }
    }
}

pub(super) fn linear<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    weight: FloatTensor<Vmap<B>>,
    bias: Option<FloatTensor<Vmap<B>>>,
) -> FloatTensor<Vmap<B>> {
    let mut counts = vec![x.members, weight.members];
    if let Some(b) = &bias {
        counts.push(b.members);
    }
    let k = common_members("linear", &counts);
    let any_batched = x.batched || weight.batched || bias.as_ref().is_some_and(|b| b.batched);
    if !any_batched {
        let out = B::linear(x.inner, weight.inner, bias.map(|b| b.inner));
        return VmapTensor::unbatched(out, k);
    }
    if !weight.batched && !bias.as_ref().is_some_and(|b| b.batched) {
        // Shared weights: the members are just more rows, [K*M, in] @ [in, out].
        let physical = shape_dims(&x.inner);
        let rows = reshape_float::<B>(
            x.inner,
            vec![
                dims_product(&physical[..physical.len() - 1]),
                physical[physical.len() - 1],
            ],
        );
        let out = B::linear(rows, weight.inner, bias.map(|b| b.inner));
        let out_dim = shape_dims(&out)[1];
        let shape = concat_dims(&[&physical[..physical.len() - 1], &[out_dim]]);
        return VmapTensor::batched(reshape_float::<B>(out, shape), k);
    }
    // Every member's product in one broadcasting batched matmul: [Kx, M, in] @ [Kw, in, out]
    // with Kx, Kw in {1, K}. A shared operand is broadcast without a copy, and the result
    // is contiguous.
    let (xr, lead) = member_rows::<B>(x);
    let out = crate::ops::base::inner_matmul::<B>(xr, front::<B, FloatKind>(weight));
    let out = match bias {
        Some(b) => {
            let b = front::<B, FloatKind>(b); // [Kb, out]
            let d = shape_dims(&b);
            add_broadcast::<B>(out, reshape_float::<B>(b, vec![d[0], 1, d[1]]))
        }
        None => out,
    };
    let d = shape_dims(&out);
    VmapTensor::batched(
        reshape_float::<B>(out, concat_dims(&[&[d[0]], &lead, &[d[2]]])),
        k,
    )
}

pub(super) fn linear_x_backward<B: Backend>(
    weight: FloatTensor<Vmap<B>>,
    output_grad: FloatTensor<Vmap<B>>,
) -> FloatTensor<Vmap<B>> {
    let k = check_members("linear_x_backward", weight.members, output_grad.members);
    if !weight.batched && !output_grad.batched {
        let out = B::linear_x_backward(weight.inner, output_grad.inner);
        return VmapTensor::unbatched(out, k);
    }
    if !weight.batched {
        // Shared weights: the members are just more rows.
        let physical = shape_dims(&output_grad.inner);
        let last = physical.len() - 1;
        let rows = reshape_float::<B>(
            output_grad.inner,
            vec![dims_product(&physical[..last]), physical[last]],
        );
        let out = B::linear_x_backward(weight.inner, rows);
        let shape = concat_dims(&[&physical[..last], &[shape_dims(&out)[1]]]);
        return VmapTensor::batched(reshape_float::<B>(out, shape), k);
    }
    // grad [Kg, M, out] @ weight^T [Kw, out, in].
    let (gr, lead) = member_rows::<B>(output_grad);
    let wt = B::float_swap_dims(front::<B, FloatKind>(weight), 1, 2);
    let out = crate::ops::base::inner_matmul::<B>(gr, wt);
    let d = shape_dims(&out);
    VmapTensor::batched(
        reshape_float::<B>(out, concat_dims(&[&[d[0]], &lead, &[d[2]]])),
        k,
    )
}

pub(super) fn linear_weight_backward<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    output_grad: FloatTensor<Vmap<B>>,
) -> FloatTensor<Vmap<B>> {
    let k = check_members("linear_weight_backward", x.members, output_grad.members);
    if !x.batched && !output_grad.batched {
        let out = B::linear_weight_backward(x.inner, output_grad.inner);
        return VmapTensor::unbatched(out, k);
    }
    // x^T [Kx, in, M] @ grad [Kg, M, out]: the sum over the rows M is the matmul's own.
    let (xr, _) = member_rows::<B>(x);
    let (gr, _) = member_rows::<B>(output_grad);
    let out = crate::ops::base::inner_matmul::<B>(B::float_swap_dims(xr, 1, 2), gr);
    VmapTensor::batched(out, k)
}

pub(super) fn linear_bias_backward<B: Backend>(
    output_grad: FloatTensor<Vmap<B>>,
) -> FloatTensor<Vmap<B>> {
    if !output_grad.batched {
        return output_grad.map(B::linear_bias_backward);
    }
    let k = output_grad.members;
    let (gr, _) = member_rows::<B>(output_grad); // [K, M, out]
    let d = shape_dims(&gr);
    let summed = crate::kernels::ndarray::sum_rows(gr)
        .unwrap_or_else(|gr| reshape_float::<B>(B::float_sum_dim(gr, 1), vec![k, d[2]]));
    VmapTensor::batched(summed, k)
}
