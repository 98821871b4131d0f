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
