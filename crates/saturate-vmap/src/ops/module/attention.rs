//! Batching rule for the fused `attention` op.

use super::*;

/// Expands a 4-d operand to `[bsz, heads, a, b]` per member and folds K into the batch axis.
fn attention_operand_in_batch<B: Backend, K: Kind<B>>(
    t: VmapTensor<K::P>,
    bsz: usize,
    heads: usize,
    k: usize,
    any_batched: bool,
) -> K::P {
    if !any_batched {
        return t.inner;
    }
    let p = materialize::<B, K>(t);
    let d = shape_dims(&p);
    let full = vec![k, bsz, heads, d[3], d[4]];
    let p = if d != full {
        K::expand(p, Shape::from(full))
    } else {
        p
    };
    K::reshape(p, Shape::from(vec![k * bsz, heads, d[3], d[4]]))
}

pub(super) fn attention<B: Backend>(
    query: FloatTensor<Vmap<B>>,
    key: FloatTensor<Vmap<B>>,
    value: FloatTensor<Vmap<B>>,
    mask: Option<BoolTensor<Vmap<B>>>,
    attn_bias: Option<FloatTensor<Vmap<B>>>,
    options: AttentionModuleOptions,
) -> FloatTensor<Vmap<B>> {
    let mut counts = vec![query.members, key.members, value.members];
    counts.extend(mask.iter().map(|m| m.members));
    counts.extend(attn_bias.iter().map(|b| b.members));
    let k = common_members("attention", &counts);
    let any = query.batched
        || key.batched
        || value.batched
        || mask.as_ref().is_some_and(|m| m.batched)
        || attn_bias.as_ref().is_some_and(|b| b.batched);
    if !any {
        return VmapTensor::unbatched(
            B::attention(
                query.inner,
                key.inner,
                value.inner,
                mask.map(|m| m.inner),
                attn_bias.map(|b| b.inner),
                options,
            ),
            k,
        );
    }
    // Every operand expanded to the full [batch, heads, ...] per member, K folded into batch.
    let mut bsz = 1;
    let mut heads = 1;
    let mut visit = |s: Shape| {
        bsz = bsz.max(s[0]);
        heads = heads.max(s[1]);
    };
    visit(query.shape());
    visit(key.shape());
    visit(value.shape());
    if let Some(m) = &mask {
        visit(m.shape());
    }
    if let Some(b) = &attn_bias {
        visit(b.shape());
    }
    let ff = |t: VmapTensor<FloatPrim<B>>| {
        attention_operand_in_batch::<B, FloatKind>(t, bsz, heads, k, true)
    };
    let out = B::attention(
        ff(query),
        ff(key),
        ff(value),
        mask.map(|m| attention_operand_in_batch::<B, BoolKind>(m, bsz, heads, k, true)),
        attn_bias.map(ff),
        options,
    );
    VmapTensor::batched(split_members_from_batch::<B>(out, k), k)
}
