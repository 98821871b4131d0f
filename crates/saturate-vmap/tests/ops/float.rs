use crate::harness::{Tol, Val};

#[test]
fn float_add() {
    diff!(
        "float_add",
        [F(vec![2, 3]), F(vec![2, 3])],
        Tol::Exact,
        |X, a, b| { vec![Val::F(X::float_add(a.f(), b.f()))] }
    );
    // Broadcasting operands.
    diff!(
        "float_add",
        [F(vec![2, 3]), F(vec![1, 3])],
        Tol::Exact,
        |X, a, b| { vec![Val::F(X::float_add(a.f(), b.f()))] }
    );
}

#[test]
fn float_sum_dim() {
    diff!(
        "float_sum_dim",
        [F(vec![2, 3, 4])],
        Tol::Abs(1e-6),
        |X, a| { vec![Val::F(X::float_sum_dim(a.f(), 1))] }
    );
}

#[test]
fn float_reshape() {
    diff!("float_reshape", [F(vec![2, 3, 4])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_reshape(a.f(), [6, 4].into()))]
    });
}
