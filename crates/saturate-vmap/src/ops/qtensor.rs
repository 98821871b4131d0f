//! `QTensorOps`: quantization is not supported under vmap; every op panics naming itself.

#![allow(unused_variables)] // every op panics without reading its arguments

use burn_backend::ops::*;
use burn_backend::tensor::*;
use burn_backend::{Backend, ExecutionError, TensorData};
use burn_backend::{FloatDType, Shape, Slice};

use burn_backend::quantization::*;
use core::future::Future;

use crate::tensor::unsupported;
use crate::Vmap;

/// Why every quantized op panics under vmap.
const WHY: &str =
    "quantized tensors cannot carry a member axis; quantize each member after `Batched::member`";

impl<B: Backend> QTensorOps<Self> for Vmap<B> {
    fn q_from_data(data: TensorData, device: &Device<Self>) -> QuantizedTensor<Self> {
        unsupported("q_from_data", WHY)
    }

    fn quantize(
        tensor: FloatTensor<Self>,
        scheme: &QuantScheme,
        qparams: QuantizationParametersPrimitive<Self>,
    ) -> QuantizedTensor<Self> {
        unsupported("quantize", WHY)
    }

    // provided: quantize_dynamic
    fn dequantize(tensor: QuantizedTensor<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        unsupported("dequantize", WHY)
    }

    fn q_device(tensor: &QuantizedTensor<Self>) -> Device<Self> {
        unsupported("q_device", WHY)
    }

    fn q_to_device(tensor: QuantizedTensor<Self>, device: &Device<Self>) -> QuantizedTensor<Self> {
        unsupported("q_to_device", WHY)
    }

    fn q_reshape(tensor: QuantizedTensor<Self>, shape: Shape) -> QuantizedTensor<Self> {
        unsupported("q_reshape", WHY)
    }

    fn q_into_data(
        tensor: QuantizedTensor<Self>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        core::future::ready(Err(ExecutionError::WithContext {
            reason: "saturate-vmap: `q_into_data` is not supported under vmap: quantized tensors \
                     cannot carry a member axis"
                .into(),
        }))
    }

    // provided: q_detach
    // provided: q_set_require_grad
    // provided: q_is_require_grad
    fn q_expand(tensor: QuantizedTensor<Self>, shape: Shape) -> QuantizedTensor<Self> {
        unsupported("q_expand", WHY)
    }

    // provided: q_transpose
    fn q_swap_dims(
        tensor: QuantizedTensor<Self>,
        dim1: usize,
        dim2: usize,
    ) -> QuantizedTensor<Self> {
        unsupported("q_swap_dims", WHY)
    }

    fn q_permute(tensor: QuantizedTensor<Self>, axes: &[usize]) -> QuantizedTensor<Self> {
        unsupported("q_permute", WHY)
    }

    fn q_flip(tensor: QuantizedTensor<Self>, axes: &[usize]) -> QuantizedTensor<Self> {
        unsupported("q_flip", WHY)
    }

    fn q_select(
        tensor: QuantizedTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> QuantizedTensor<Self> {
        unsupported("q_select", WHY)
    }

    fn q_slice(tensor: QuantizedTensor<Self>, slices: &[Slice]) -> QuantizedTensor<Self> {
        unsupported("q_slice", WHY)
    }

    // provided: q_gather
    // provided: q_repeat_dim
    // provided: q_add
    // provided: q_add_scalar
    // provided: q_clamp_min
    // provided: q_clamp_max
    // provided: q_clamp
    // provided: q_sub
    // provided: q_sub_scalar
    // provided: q_mul
    // provided: q_mul_scalar
    // provided: q_div
    // provided: q_div_scalar
    // provided: q_matmul
    // provided: q_neg
    // provided: q_recip
    // provided: q_sum
    // provided: q_sum_dim
    // provided: q_prod
    // provided: q_prod_dim
    // provided: q_mean
    // provided: q_mean_dim
    // provided: q_cumsum
    // provided: q_cumprod
    // provided: q_cummin
    // provided: q_cummax
    // provided: q_exp
    // provided: q_log
    // provided: q_log1p
    // provided: q_powf
    // provided: q_powi
    // provided: q_powi_scalar
    // provided: q_powf_scalar
    // provided: q_sqrt
    // provided: q_abs
    // provided: q_cos
    // provided: q_sin
    // provided: q_tan
    // provided: q_cosh
    // provided: q_sinh
    // provided: q_tanh
    // provided: q_erf
    // provided: q_cat
    // provided: q_argmax
    // provided: q_argtopk
    // provided: q_topk
    // provided: q_argmin
    // provided: q_max
    // provided: q_max_dim
    // provided: q_max_dim_with_indices
    // provided: q_min
    // provided: q_min_dim
    // provided: q_min_dim_with_indices
    // provided: q_max_abs
    // provided: q_max_abs_dim
    // provided: q_any
    // provided: q_any_dim
    // provided: q_all
    // provided: q_all_dim
    // provided: q_sort
    // provided: q_sort_with_indices
    // provided: q_argsort
}
