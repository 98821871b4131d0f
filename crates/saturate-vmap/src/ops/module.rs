//! Batching rules for `ModuleOps`.

#![allow(unused_variables, unused_imports)]

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, Distribution, ExecutionError, Scalar, TensorData, TensorMetadata};
use burn_backend::{BoolDType, FloatDType, IntDType, Shape, Slice};

use burn_backend::quantization::*;
use core::future::Future;

use crate::Vmap;

impl<B: Backend> ModuleOps<Self> for Vmap<B> {
    // provided: embedding
    // provided: embedding_backward
    // provided: linear
    // provided: linear_x_backward
    // provided: linear_weight_backward
    // provided: linear_bias_backward
    // provided: conv1d
    // provided: conv1d_x_backward
    // provided: conv1d_weight_backward
    // provided: conv1d_bias_backward
    fn conv2d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        todo!("vmap: conv2d")
    }

    // provided: conv2d_x_backward
    // provided: conv2d_weight_backward
    // provided: conv2d_bias_backward
    fn deform_conv2d(
        x: FloatTensor<Self>,
        offset: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        mask: Option<FloatTensor<Self>>,
        bias: Option<FloatTensor<Self>>,
        options: DeformConvOptions<2>,
    ) -> FloatTensor<Self> {
        todo!("vmap: deform_conv2d")
    }

    fn deform_conv2d_backward(
        x: FloatTensor<Self>,
        offset: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        mask: Option<FloatTensor<Self>>,
        bias: Option<FloatTensor<Self>>,
        output_grad: FloatTensor<Self>,
        options: DeformConvOptions<2>,
    ) -> DeformConv2dBackward<Self> {
        todo!("vmap: deform_conv2d_backward")
    }

    fn conv3d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvOptions<3>,
    ) -> FloatTensor<Self> {
        todo!("vmap: conv3d")
    }

    // provided: conv3d_x_backward
    // provided: conv3d_weight_backward
    // provided: conv3d_bias_backward
    // provided: conv_transpose1d
    // provided: conv_transpose1d_x_backward
    // provided: conv_transpose1d_weight_backward
    // provided: conv_transpose1d_bias_backward
    fn conv_transpose2d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvTransposeOptions<2>,
    ) -> FloatTensor<Self> {
        todo!("vmap: conv_transpose2d")
    }

    // provided: conv_transpose2d_x_backward
    // provided: conv_transpose2d_weight_backward
    // provided: conv_transpose2d_bias_backward
    fn conv_transpose3d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvTransposeOptions<3>,
    ) -> FloatTensor<Self> {
        todo!("vmap: conv_transpose3d")
    }

    // provided: conv_transpose3d_x_backward
    // provided: conv_transpose3d_weight_backward
    // provided: conv_transpose3d_bias_backward
    // provided: unfold4d
    // provided: avg_pool1d
    // provided: avg_pool1d_backward
    fn avg_pool2d(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        count_include_pad: bool,
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        todo!("vmap: avg_pool2d")
    }

    fn avg_pool2d_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        count_include_pad: bool,
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        todo!("vmap: avg_pool2d_backward")
    }

    fn adaptive_avg_pool2d(x: FloatTensor<Self>, output_size: [usize; 2]) -> FloatTensor<Self> {
        todo!("vmap: adaptive_avg_pool2d")
    }

    fn adaptive_avg_pool2d_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        todo!("vmap: adaptive_avg_pool2d_backward")
    }

    // provided: adaptive_avg_pool1d
    // provided: adaptive_avg_pool1d_backward
    // provided: max_pool1d
    // provided: max_pool1d_with_indices
    // provided: max_pool1d_with_indices_backward
    fn max_pool2d(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        todo!("vmap: max_pool2d")
    }

    fn max_pool2d_with_indices(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
    ) -> MaxPool2dWithIndices<Self> {
        todo!("vmap: max_pool2d_with_indices")
    }

    fn max_pool2d_with_indices_backward(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
        output_grad: FloatTensor<Self>,
        indices: IntTensor<Self>,
    ) -> MaxPool2dBackward<Self> {
        todo!("vmap: max_pool2d_with_indices_backward")
    }

    fn interpolate(
        x: FloatTensor<Self>,
        output_size: [usize; 2],
        options: InterpolateOptions,
    ) -> FloatTensor<Self> {
        todo!("vmap: interpolate")
    }

    fn interpolate_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        output_size: [usize; 2],
        options: InterpolateOptions,
    ) -> FloatTensor<Self> {
        todo!("vmap: interpolate_backward")
    }

    fn attention(
        query: FloatTensor<Self>,
        key: FloatTensor<Self>,
        value: FloatTensor<Self>,
        mask: Option<BoolTensor<Self>>,
        attn_bias: Option<FloatTensor<Self>>,
        options: AttentionModuleOptions,
    ) -> FloatTensor<Self> {
        todo!("vmap: attention")
    }

    // provided: layer_norm
    // provided: ctc_loss
    // provided: has_ctc_loss_backward
    // provided: ctc_loss_backward
    fn rfft(
        signal: FloatTensor<Self>,
        dim: usize,
        n: Option<usize>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        todo!("vmap: rfft")
    }

    fn irfft(
        spectrum_re: FloatTensor<Self>,
        spectrum_im: FloatTensor<Self>,
        dim: usize,
        n: Option<usize>,
    ) -> FloatTensor<Self> {
        todo!("vmap: irfft")
    }

    // provided: conv_options_stride_zero
    // provided: conv_options_dilation_zero
    // provided: conv_options_groups_zero
    // provided: conv_transpose_options_stride_zero
    // provided: conv_transpose_options_dilation_zero
    // provided: conv_transpose_options_groups_zero
    // provided: deform_conv_options_stride_zero
    // provided: deform_conv_options_dilation_zero
    // provided: deform_conv_options_weights_groups_zero
    // provided: deform_conv_options_offset_groups_zero
    // provided: unfold_options_stride_zero
    // provided: unfold_options_dilation_zero
}
