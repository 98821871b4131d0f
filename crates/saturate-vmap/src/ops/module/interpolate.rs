//! Batching rules for `interpolate` and its backward.

use super::*;

pub(super) fn interpolate<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    output_size: [usize; 2],
    options: InterpolateOptions,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch::<B>(x, |x| B::interpolate(x, output_size, options))
}

pub(super) fn interpolate_backward<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    grad: FloatTensor<Vmap<B>>,
    output_size: [usize; 2],
    options: InterpolateOptions,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch_pair::<B>("interpolate_backward", x, grad, |x, g| {
        B::interpolate_backward(x, g, output_size, options)
    })
}
