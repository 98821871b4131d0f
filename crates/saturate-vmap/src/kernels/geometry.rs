//! The geometry of a convolution, as the lowerings and the convolution kernels take it.

/// Stride, padding, dilation (one per spatial axis) and group count of a convolution. For a
/// transposed convolution: those of the convolution it transposes.
#[derive(Clone, Debug)]
pub(crate) struct Geometry {
    pub stride: Vec<usize>,
    pub padding: Vec<usize>,
    pub dilation: Vec<usize>,
    pub groups: usize,
}

/// The output length of a convolution along one axis.
pub(crate) fn out_len(
    len: usize,
    kernel: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
) -> usize {
    (len + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1
}
