//! Batching rules for average, adaptive-average and max pooling (forward and backward).

use super::*;
use crate::kernels::ndarray::{self as ndarray_fast, Pool2d};

fn split_members_from_batch_int<B: Backend>(p: IntPrim<B>, k: usize) -> IntPrim<B> {
    let mut d = shape_dims(&p);
    d[0] /= k;
    d.insert(0, k);
    reshape_int::<B>(p, d)
}

pub(super) fn avg_pool1d<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    kernel_size: usize,
    stride: usize,
    padding: usize,
    count_include_pad: bool,
    ceil_mode: bool,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch::<B>(x, |x| {
        B::avg_pool1d(
            x,
            kernel_size,
            stride,
            padding,
            count_include_pad,
            ceil_mode,
        )
    })
}

pub(super) fn avg_pool1d_backward<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    grad: FloatTensor<Vmap<B>>,
    kernel_size: usize,
    stride: usize,
    padding: usize,
    count_include_pad: bool,
    ceil_mode: bool,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch_pair::<B>("avg_pool1d_backward", x, grad, |x, g| {
        B::avg_pool1d_backward(
            x,
            g,
            kernel_size,
            stride,
            padding,
            count_include_pad,
            ceil_mode,
        )
    })
}

pub(super) fn avg_pool2d<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    kernel_size: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    count_include_pad: bool,
    ceil_mode: bool,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch::<B>(x, |x| {
        B::avg_pool2d(
            x,
            kernel_size,
            stride,
            padding,
            count_include_pad,
            ceil_mode,
        )
    })
}

pub(super) fn avg_pool2d_backward<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    grad: FloatTensor<Vmap<B>>,
    kernel_size: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    count_include_pad: bool,
    ceil_mode: bool,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch_pair::<B>("avg_pool2d_backward", x, grad, |x, g| {
        B::avg_pool2d_backward(
            x,
            g,
            kernel_size,
            stride,
            padding,
            count_include_pad,
            ceil_mode,
        )
    })
}

pub(super) fn adaptive_avg_pool2d<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    output_size: [usize; 2],
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch::<B>(x, |x| B::adaptive_avg_pool2d(x, output_size))
}

pub(super) fn adaptive_avg_pool2d_backward<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    grad: FloatTensor<Vmap<B>>,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch_pair::<B>("adaptive_avg_pool2d_backward", x, grad, |x, g| {
        B::adaptive_avg_pool2d_backward(x, g)
    })
}

pub(super) fn adaptive_avg_pool1d<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    output_size: usize,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch::<B>(x, |x| B::adaptive_avg_pool1d(x, output_size))
}

pub(super) fn adaptive_avg_pool1d_backward<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    grad: FloatTensor<Vmap<B>>,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch_pair::<B>("adaptive_avg_pool1d_backward", x, grad, |x, g| {
        B::adaptive_avg_pool1d_backward(x, g)
    })
}

pub(super) fn max_pool1d<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    kernel_size: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
    ceil_mode: bool,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch::<B>(x, |x| {
        B::max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode)
    })
}

pub(super) fn max_pool1d_with_indices<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    kernel_size: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
    ceil_mode: bool,
) -> MaxPool1dWithIndices<Vmap<B>> {
    let (k, batched) = (x.members, x.batched);
    let xi = if batched {
        merge_members_into_batch::<B>(x.inner)
    } else {
        x.inner
    };
    let r = B::max_pool1d_with_indices(xi, kernel_size, stride, padding, dilation, ceil_mode);
    if batched {
        MaxPool1dWithIndices::new(
            VmapTensor::batched(split_members_from_batch::<B>(r.output, k), k),
            VmapTensor::batched(split_members_from_batch_int::<B>(r.indices, k), k),
        )
    } else {
        MaxPool1dWithIndices::new(
            VmapTensor::unbatched(r.output, k),
            VmapTensor::unbatched(r.indices, k),
        )
    }
}

// The signature of burn's `ModuleOps::max_pool1d_with_indices_backward`.
#[allow(clippy::too_many_arguments)]
pub(super) fn max_pool1d_with_indices_backward<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    kernel_size: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
    ceil_mode: bool,
    output_grad: FloatTensor<Vmap<B>>,
    indices: IntTensor<Vmap<B>>,
) -> MaxPool1dBackward<Vmap<B>> {
    let op = "max_pool1d_with_indices_backward";
    let k = common_members(op, &[x.members, output_grad.members, indices.members]);
    if !x.batched && !output_grad.batched && !indices.batched {
        let r = B::max_pool1d_with_indices_backward(
            x.inner,
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
            output_grad.inner,
            indices.inner,
        );
        return MaxPool1dBackward::new(VmapTensor::unbatched(r.x_grad, k));
    }
    let r = B::max_pool1d_with_indices_backward(
        merge_members_into_batch::<B>(materialize::<B, FloatKind>(x)),
        kernel_size,
        stride,
        padding,
        dilation,
        ceil_mode,
        merge_members_into_batch::<B>(materialize::<B, FloatKind>(output_grad)),
        merge_members_into_batch_int::<B>(materialize::<B, IntKind>(indices)),
    );
    MaxPool1dBackward::new(VmapTensor::batched(
        split_members_from_batch::<B>(r.x_grad, k),
        k,
    ))
}

pub(super) fn max_pool2d<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    kernel_size: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    ceil_mode: bool,
) -> FloatTensor<Vmap<B>> {
    with_members_in_batch::<B>(x, |x| {
        // On NdArray the kernel of training without writing the indices: inference
        // (validation, without autodiff) then takes the same scan as training instead of
        // burn-ndarray's `max_pool2d`, which indexes the array element by element. The same
        // values (tested against NdArray's own).
        let x = if ceil_mode {
            x
        } else {
            let pool = Pool2d {
                kernel: kernel_size,
                stride,
                padding,
                dilation,
            };
            match ndarray_fast::max_pool2d::<FloatPrim<B>>(x, pool) {
                Ok(output) => return output,
                Err(x) => x,
            }
        };
        B::max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
    })
}

pub(super) fn max_pool2d_with_indices<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    kernel_size: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    ceil_mode: bool,
) -> MaxPool2dWithIndices<Vmap<B>> {
    let (k, batched) = (x.members, x.batched);
    let xi = if batched {
        merge_members_into_batch::<B>(x.inner)
    } else {
        x.inner
    };
    let r =
        inner_max_pool2d_with_indices::<B>(xi, kernel_size, stride, padding, dilation, ceil_mode);
    if batched {
        MaxPool2dWithIndices::new(
            VmapTensor::batched(split_members_from_batch::<B>(r.output, k), k),
            VmapTensor::batched(split_members_from_batch_int::<B>(r.indices, k), k),
        )
    } else {
        MaxPool2dWithIndices::new(
            VmapTensor::unbatched(r.output, k),
            VmapTensor::unbatched(r.indices, k),
        )
    }
}

/// The inner backend's `max_pool2d_with_indices`, on NdArray the equal fast path of
/// `ops::ndarray_fast` (`ceil_mode` off).
fn inner_max_pool2d_with_indices<B: Backend>(
    x: FloatPrim<B>,
    kernel: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    ceil_mode: bool,
) -> MaxPool2dWithIndices<B> {
    let x = if ceil_mode {
        x
    } else {
        let pool = Pool2d {
            kernel,
            stride,
            padding,
            dilation,
        };
        let int_dtype = <B::IntElem as burn_backend::Element>::dtype();
        match ndarray_fast::max_pool2d_with_indices::<FloatPrim<B>, IntPrim<B>>(x, pool, int_dtype)
        {
            Ok((output, indices)) => return MaxPool2dWithIndices::new(output, indices),
            Err(x) => x,
        }
    };
    B::max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil_mode)
}

/// The inner backend's `max_pool2d_with_indices_backward`, on NdArray the equal fast path of
/// `ops::ndarray_fast`.
#[allow(clippy::too_many_arguments)]
fn inner_max_pool2d_backward<B: Backend>(
    x: FloatPrim<B>,
    kernel: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    ceil_mode: bool,
    output_grad: FloatPrim<B>,
    indices: IntPrim<B>,
) -> MaxPool2dBackward<B> {
    let shape = shape_dims(&x);
    let (output_grad, indices) = match ndarray_fast::max_pool2d_backward::<FloatPrim<B>, IntPrim<B>>(
        &shape,
        output_grad,
        indices,
    ) {
        Ok(x_grad) => return MaxPool2dBackward::new(x_grad),
        Err(back) => back,
    };
    B::max_pool2d_with_indices_backward(
        x,
        kernel,
        stride,
        padding,
        dilation,
        ceil_mode,
        output_grad,
        indices,
    )
}

// The signature of burn's `ModuleOps::max_pool2d_with_indices_backward`.
#[allow(clippy::too_many_arguments)]
pub(super) fn max_pool2d_with_indices_backward<B: Backend>(
    x: FloatTensor<Vmap<B>>,
    kernel_size: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    ceil_mode: bool,
    output_grad: FloatTensor<Vmap<B>>,
    indices: IntTensor<Vmap<B>>,
) -> MaxPool2dBackward<Vmap<B>> {
    let op = "max_pool2d_with_indices_backward";
    let k = common_members(op, &[x.members, output_grad.members, indices.members]);
    if !x.batched && !output_grad.batched && !indices.batched {
        let r = inner_max_pool2d_backward::<B>(
            x.inner,
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
            output_grad.inner,
            indices.inner,
        );
        return MaxPool2dBackward::new(VmapTensor::unbatched(r.x_grad, k));
    }
    let r = inner_max_pool2d_backward::<B>(
        merge_members_into_batch::<B>(materialize::<B, FloatKind>(x)),
        kernel_size,
        stride,
        padding,
        dilation,
        ceil_mode,
        merge_members_into_batch::<B>(materialize::<B, FloatKind>(output_grad)),
        merge_members_into_batch_int::<B>(materialize::<B, IntKind>(indices)),
    );
    MaxPool2dBackward::new(VmapTensor::batched(
        split_members_from_batch::<B>(r.x_grad, k),
        k,
    ))
}
