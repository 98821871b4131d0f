//! Differential cases for `ActivationOps` (all provided ops, overridden by `Vmap`).

use crate::harness::{Tol, Val};

/// A unary activation.
macro_rules! act {
    ($name:literal, $f:ident) => {
        diff!($name, [F(vec![2, 3, 4])], Tol::Exact, |X, a| vec![Val::F(
            X::$f(a.f())
        )])
    };
}

/// An activation along a dim, for every dim of a [2, 3, 4] operand.
macro_rules! act_dim {
    ($name:literal, $f:ident) => {
        diff!($name, [F(vec![2, 3, 4])], Tol::Exact, |X, a| vec![Val::F(
            X::$f(a.f(), 0)
        )]);
        diff!($name, [F(vec![2, 3, 4])], Tol::Exact, |X, a| vec![Val::F(
            X::$f(a.f(), 1)
        )]);
        diff!($name, [F(vec![2, 3, 4])], Tol::Exact, |X, a| vec![Val::F(
            X::$f(a.f(), 2)
        )]);
    };
}

/// A backward op of two same-shape operands.
macro_rules! act_backward {
    ($name:literal, $f:ident, $x:ident) => {
        diff!(
            $name,
            [$x(vec![2, 3]), F(vec![2, 3])],
            Tol::Exact,
            |X, x, g| vec![Val::F(X::$f(x.f(), g.f()))]
        )
    };
}

#[test]
fn unary_activations() {
    act!("relu", relu);
    act!("gelu", gelu);
    act!("sigmoid", sigmoid);
    act!("log_sigmoid", log_sigmoid);
    diff!("leaky_relu", [F(vec![2, 3, 4])], Tol::Exact, |X, a| {
        vec![Val::F(X::leaky_relu(a.f(), 0.1f32.into()))]
    });
    diff!("hard_sigmoid", [F(vec![2, 3, 4])], Tol::Exact, |X, a| {
        vec![Val::F(X::hard_sigmoid(a.f(), 0.2f32.into(), 0.5f32.into()))]
    });
}

#[test]
fn softmax_family() {
    act_dim!("softmax", softmax);
    act_dim!("log_softmax", log_softmax);
    act_dim!("softmin", softmin);
}

#[test]
fn backward_activations() {
    act_backward!("relu_backward", relu_backward, F);
    act_backward!("gelu_backward", gelu_backward, F);
    diff!(
        "sigmoid_backward",
        [Frange(vec![2, 3], 0.0, 1.0), F(vec![2, 3])],
        Tol::Exact,
        |X, x, g| vec![Val::F(X::sigmoid_backward(x.f(), g.f()))]
    );
    act_backward!("log_sigmoid_backward", log_sigmoid_backward, F);
}

#[test]
fn prelu() {
    // One weight for every channel, as burn's `prelu` reshapes it: [1, C, 1].
    diff!(
        "prelu",
        [F(vec![2, 3, 4]), F(vec![1, 3, 1])],
        Tol::Exact,
        |X, a, w| vec![Val::F(X::prelu(a.f(), w.f()))]
    );
    // A single weight: [1, 1, 1].
    diff!(
        "prelu",
        [F(vec![2, 3, 4]), F(vec![1, 1, 1])],
        Tol::Exact,
        |X, a, w| vec![Val::F(X::prelu(a.f(), w.f()))]
    );
    // Rank 1 with one weight.
    diff!("prelu", [F(vec![5]), F(vec![1])], Tol::Exact, |X, a, w| {
        vec![Val::F(X::prelu(a.f(), w.f()))]
    });
}

// ---------------------------------------------------------------- autodiff gradients

use burn::tensor::activation as act;
use burn::tensor::backend::Backend as BackendT;
use burn::tensor::Tensor;

use super::float::{grad_check, Ai, Av};

/// A gradient case, as in `float.rs`: `grad!("name", D => E, [shapes], |Bk, xs| body)`.
macro_rules! grad {
    ($name:literal, $d:literal => $e:literal, [$($shape:expr),* $(,)?], |$bk:ident, $xs:ident| $body:expr) => {{
        #[allow(unused_mut, non_snake_case)]
        fn op<$bk: BackendT>(mut $xs: Vec<Tensor<$bk, $d>>) -> Tensor<$bk, $e> {
            $body
        }
        grad_check::<$d, $e>($name, &[$($shape),*], (-2.0, 2.0), op::<Av>, op::<Ai>);
    }};
}

#[test]
fn activation_gradients() {
    grad!("relu", 2 => 2, [vec![3, 4]], |Bk, x| act::relu(x.remove(0)));
    grad!("leaky_relu", 2 => 2, [vec![3, 4]], |Bk, x| act::leaky_relu(x.remove(0), 0.1));
    grad!("gelu", 2 => 2, [vec![3, 4]], |Bk, x| act::gelu(x.remove(0)));
    grad!("sigmoid", 2 => 2, [vec![3, 4]], |Bk, x| act::sigmoid(x.remove(0)));
    grad!("log_sigmoid", 2 => 2, [vec![3, 4]], |Bk, x| act::log_sigmoid(x.remove(0)));
    grad!("hard_sigmoid", 2 => 2, [vec![3, 4]], |Bk, x| act::hard_sigmoid(x.remove(0), 0.3, 0.5));
    grad!("softmax", 2 => 2, [vec![3, 4]], |Bk, x| act::softmax(x.remove(0), 1));
    grad!("softmax", 3 => 3, [vec![2, 3, 4]], |Bk, x| act::softmax(x.remove(0), 0));
    grad!("log_softmax", 2 => 2, [vec![3, 4]], |Bk, x| act::log_softmax(x.remove(0), 1));
    grad!("softmin", 2 => 2, [vec![3, 4]], |Bk, x| act::softmin(x.remove(0), 0));
    grad!("tanh", 2 => 2, [vec![3, 4]], |Bk, x| act::tanh(x.remove(0)));
    // prelu with one weight per channel: the weight's gradient is per member.
    grad!("prelu", 1 => 3, [vec![3]], |Bk, x| {
        let w = x.remove(0);
        let input = Tensor::<Bk, 3>::from_data(
            burn::tensor::TensorData::new(
                (0..24).map(|i| (i as f32 - 11.5) / 6.0).collect::<Vec<_>>(),
                [2, 3, 4],
            ),
            &w.device(),
        );
        act::prelu(input, w)
    });
}

/// NdArray's fast `relu` (one pass; in place when the array is not shared) against
/// burn-ndarray's own, bit for bit on negative values, both zeros, NaN and the infinities,
/// for an input nobody else holds and for one that is shared, which must stay unchanged.
#[test]
fn relu_fast_path_is_ndarrays_relu_on_special_values() {
    use burn::tensor::ops::{ActivationOps, FloatTensorOps};
    use burn::tensor::TensorData;
    type I = crate::harness::I;
    type V = crate::harness::V;

    let values = vec![
        -1.5f32,
        -0.0,
        0.0,
        2.5,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -1e-30,
        1e-30,
        -f32::MIN_POSITIVE / 2.0,
        3.0,
        -7.0,
    ];
    let data = TensorData::new(values.clone(), [3, 4]);
    let bits = |t: <I as burn::tensor::backend::BackendTypes>::FloatTensorPrimitive| -> Vec<u32> {
        burn::tensor::try_read_sync(I::float_into_data(t))
            .unwrap()
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
            .into_iter()
            .map(f32::to_bits)
            .collect()
    };
    let want = bits(I::relu(I::float_from_data(
        data.clone(),
        &Default::default(),
    )));
    let device = saturate_vmap::VmapDevice::<I>::new(Default::default(), 2);
    let alone = V::relu(V::float_from_data(data.clone(), &device));
    assert_eq!(bits(alone.into_inner()), want, "unshared input");
    let x = V::float_from_data(data.clone(), &device);
    let kept = x.clone();
    assert_eq!(bits(V::relu(x).into_inner()), want, "shared input");
    let original: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
    assert_eq!(
        bits(kept.into_inner()),
        original,
        "the shared input was changed"
    );
}
