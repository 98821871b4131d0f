//! Batching rules for `ActivationOps`.
//!
//! Every activation is delegated to the inner backend (its fused kernels are faster than
//! burn's default bodies run op by op through the decorator): unary activations keep the
//! batching of their input, ops that take a dim shift it past the member axis, and the
//! two-operand ops align an unbatched operand with a real member axis.

use burn_backend::ops::ActivationOps;
use burn_backend::tensor::FloatTensor;
use burn_backend::Backend;
use burn_backend::Scalar;

use super::base::{align_binary, FloatPrim};
use super::reciprocal;
use crate::tensor::{check_members, front, materialize, FloatKind, VmapTensor};
use crate::Vmap;

/// Two operands of the same logical shape, both with a real member axis when either has one
/// ([`align_binary`]).
fn pair<B: Backend>(
    op: &str,
    a: VmapTensor<FloatPrim<B>>,
    b: VmapTensor<FloatPrim<B>>,
    f: impl FnOnce(FloatPrim<B>, FloatPrim<B>) -> FloatPrim<B>,
) -> VmapTensor<FloatPrim<B>> {
    let (a, b, batched, members) = align_binary::<B, FloatKind>(op, a, b);
    VmapTensor::new(f(a, b), batched, members)
}

macro_rules! unary {
    ($($name:ident),* $(,)?) => {$(
        fn $name(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
            tensor.map(B::$name)
        }
    )*};
}

macro_rules! along_dim {
    ($($name:ident),* $(,)?) => {$(
        fn $name(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
            let dim = tensor.dim(dim);
            tensor.map(|t| B::$name(t, dim))
        }
    )*};
}

macro_rules! two {
    ($($name:ident($a:ident, $b:ident)),* $(,)?) => {$(
        fn $name($a: FloatTensor<Self>, $b: FloatTensor<Self>) -> FloatTensor<Self> {
            pair::<B>(stringify!($name), $a, $b, B::$name)
        }
    )*};
}

impl<B: Backend> ActivationOps<Self> for Vmap<B> {
    unary!(gelu, sigmoid, log_sigmoid);

    // One pass, in place when the input is not shared, on NdArray (`kernels/ndarray/relu.rs`); the
    // inner op elsewhere.
    fn relu(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        tensor.map(|t| crate::kernels::ndarray::relu(t).unwrap_or_else(B::relu))
    }

    along_dim!(softmax, log_softmax, softmin);

    two!(gelu_backward(x, grad), sigmoid_backward(output, grad));

    // One pass on NdArray (`kernels/ndarray/relu.rs`), the inner op elsewhere.
    fn relu_backward(output: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        pair::<B>("relu_backward", output, grad, |o, g| {
            crate::kernels::ndarray::relu_backward(o, g)
                .unwrap_or_else(|(o, g)| B::relu_backward(o, g))
        })
    }

    // Reaches the inner `float_recip` (see `ops::reciprocal`).
    fn log_sigmoid_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        pair::<B>(
            "log_sigmoid_backward",
            x,
            grad,
            reciprocal::log_sigmoid_backward::<B>,
        )
    }

    fn leaky_relu(tensor: FloatTensor<Self>, negative_slope: Scalar) -> FloatTensor<Self> {
        tensor.map(|t| B::leaky_relu(t, negative_slope))
    }

    fn hard_sigmoid(tensor: FloatTensor<Self>, alpha: Scalar, beta: Scalar) -> FloatTensor<Self> {
        tensor.map(|t| B::hard_sigmoid(t, alpha, beta))
    }

    fn prelu(tensor: FloatTensor<Self>, alpha: FloatTensor<Self>) -> FloatTensor<Self> {
        // `alpha` has the input's rank with size-1 dims where it broadcasts ([1, C, 1, ..]).
        // The input gives the output shape, so it gets a real member axis; alpha broadcasts
        // from [1, ..] or [K, ..].
        let members = check_members("prelu", tensor.members, alpha.members);
        if !tensor.batched && !alpha.batched {
            return VmapTensor::unbatched(B::prelu(tensor.inner, alpha.inner), members);
        }
        let out = B::prelu(
            materialize::<B, FloatKind>(tensor),
            front::<B, FloatKind>(alpha),
        );
        VmapTensor::batched(out, members)
    }
}
