//! Batching rules for the CTC loss and its backward.

use super::*;

/// `[K, T, N, C]` (materialized) -> `[T, K*N, C]`.
fn ctc_fold_log_probs<B: Backend>(log_probs: VmapTensor<FloatPrim<B>>) -> FloatPrim<B> {
    let p = materialize::<B, FloatKind>(log_probs);
    let d = shape_dims(&p);
    let p = permute_float::<B>(p, &[1, 0, 2, 3]);
    reshape_float::<B>(p, vec![d[1], d[0] * d[2], d[3]])
}

pub(super) fn ctc_loss<B: Backend>(
    log_probs: FloatTensor<Vmap<B>>,
    targets: IntTensor<Vmap<B>>,
    input_lengths: IntTensor<Vmap<B>>,
    target_lengths: IntTensor<Vmap<B>>,
    blank: usize,
) -> FloatTensor<Vmap<B>> {
    let k = common_members(
        "ctc_loss",
        &[
            log_probs.members,
            targets.members,
            input_lengths.members,
            target_lengths.members,
        ],
    );
    let any =
        log_probs.batched || targets.batched || input_lengths.batched || target_lengths.batched;
    if !any {
        return VmapTensor::unbatched(
            B::ctc_loss(
                log_probs.inner,
                targets.inner,
                input_lengths.inner,
                target_lengths.inner,
                blank,
            ),
            k,
        );
    }
    let out = B::ctc_loss(
        ctc_fold_log_probs::<B>(log_probs),
        merge_members_into_batch_int::<B>(materialize::<B, IntKind>(targets)),
        merge_members_into_batch_int::<B>(materialize::<B, IntKind>(input_lengths)),
        merge_members_into_batch_int::<B>(materialize::<B, IntKind>(target_lengths)),
        blank,
    );
    VmapTensor::batched(split_members_from_batch::<B>(out, k), k)
}

pub(super) fn ctc_loss_backward<B: Backend>(
    log_probs: FloatTensor<Vmap<B>>,
    targets: IntTensor<Vmap<B>>,
    input_lengths: IntTensor<Vmap<B>>,
    target_lengths: IntTensor<Vmap<B>>,
    grad_loss: FloatTensor<Vmap<B>>,
    blank: usize,
) -> FloatTensor<Vmap<B>> {
    let k = common_members(
        "ctc_loss_backward",
        &[
            log_probs.members,
            targets.members,
            input_lengths.members,
            target_lengths.members,
            grad_loss.members,
        ],
    );
    let any = log_probs.batched
        || targets.batched
        || input_lengths.batched
        || target_lengths.batched
        || grad_loss.batched;
    if !any {
        return VmapTensor::unbatched(
            B::ctc_loss_backward(
                log_probs.inner,
                targets.inner,
                input_lengths.inner,
                target_lengths.inner,
                grad_loss.inner,
                blank,
            ),
            k,
        );
    }
    let out = B::ctc_loss_backward(
        ctc_fold_log_probs::<B>(log_probs),
        merge_members_into_batch_int::<B>(materialize::<B, IntKind>(targets)),
        merge_members_into_batch_int::<B>(materialize::<B, IntKind>(input_lengths)),
        merge_members_into_batch_int::<B>(materialize::<B, IntKind>(target_lengths)),
        merge_members_into_batch::<B>(materialize::<B, FloatKind>(grad_loss)),
        blank,
    );
    // [T, K*N, C] -> [K, T, N, C]
    let d = shape_dims(&out);
    let out = reshape_float::<B>(out, vec![d[0], k, d[1] / k, d[2]]);
    VmapTensor::batched(permute_float::<B>(out, &[1, 0, 2, 3]), k)
}
