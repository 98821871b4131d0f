//! Batching rules for `rfft` and `irfft`.

use super::*;

pub(super) fn rfft<B: Backend>(
    signal: FloatTensor<Vmap<B>>,
    dim: usize,
    n: Option<usize>,
) -> (FloatTensor<Vmap<B>>, FloatTensor<Vmap<B>>) {
    let (k, batched) = (signal.members, signal.batched);
    let d = signal.dim(dim);
    let (re, im) = B::rfft(signal.inner, d, n);
    (
        VmapTensor::new(re, batched, k),
        VmapTensor::new(im, batched, k),
    )
}

pub(super) fn irfft<B: Backend>(
    spectrum_re: FloatTensor<Vmap<B>>,
    spectrum_im: FloatTensor<Vmap<B>>,
    dim: usize,
    n: Option<usize>,
) -> FloatTensor<Vmap<B>> {
    let k = check_members("irfft", spectrum_re.members, spectrum_im.members);
    if !spectrum_re.batched && !spectrum_im.batched {
        return VmapTensor::unbatched(B::irfft(spectrum_re.inner, spectrum_im.inner, dim, n), k);
    }
    let re = materialize::<B, FloatKind>(spectrum_re);
    let im = materialize::<B, FloatKind>(spectrum_im);
    VmapTensor::batched(B::irfft(re, im, dim + 1, n), k)
}
