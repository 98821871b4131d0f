//! Differential cases for `FloatTensorOps` (every op, required and provided), plus random ops,
//! reads, and autodiff gradients through `Autodiff<Vmap<NdArray>>`.

use burn::tensor::ops::{FloatTensorOps, GridSampleOptions};
use burn::tensor::{
    BoolDType, DType, FloatDType, IndexingUpdateOp, IntDType, Slice, TensorData, TensorMetadata,
};

use crate::harness::{Tol, Val};

type Inner = crate::harness::I;
type Vm = crate::harness::V;

const BD: BoolDType = BoolDType::Native;
const ID: IntDType = IntDType::I64;
const FD: FloatDType = FloatDType::F32;

/// A unary float op on one operand of spec `$spec`.
macro_rules! un {
    ($name:literal, $f:ident, $spec:expr, $tol:expr) => {
        diff!($name, [$spec], $tol, |X, a| vec![Val::F(X::$f(a.f()))])
    };
}

/// A unary op whose inner kernel is not layout-invariant.
macro_rules! probe {
    ($name:literal, $f:ident, $spec:expr, $tol:expr) => {
        diff!($name, [$spec], $tol, |X, a| vec![Val::F(X::$f(a.f()))])
    };
}

/// A binary float op, with same-shape and broadcasting operands.
macro_rules! bin {
    ($name:literal, $f:ident, $l:ident, $r:ident) => {
        diff!(
            $name,
            [$l(vec![2, 3]), $r(vec![2, 3])],
            Tol::Exact,
            |X, a, b| vec![Val::F(X::$f(a.f(), b.f()))]
        );
        diff!(
            $name,
            [$l(vec![2, 3]), $r(vec![1, 3])],
            Tol::Exact,
            |X, a, b| vec![Val::F(X::$f(a.f(), b.f()))]
        );
    };
}

/// A float op with a scalar operand.
macro_rules! scal {
    ($name:literal, $f:ident, $spec:expr, $s:expr) => {
        diff!($name, [$spec], Tol::Exact, |X, a| vec![Val::F(X::$f(
            a.f(),
            ($s).into()
        ))])
    };
}

/// A comparison of two float tensors (rounded, so that some elements are equal).
macro_rules! cmp {
    ($name:literal, $f:ident) => {
        diff!(
            $name,
            [F(vec![2, 3]), F(vec![2, 3])],
            Tol::Exact,
            |X, a, b| {
                let (a, b) = (X::float_round(a.f()), X::float_round(b.f()));
                vec![Val::B(X::$f(a, b, BD))]
            }
        );
        diff!(
            $name,
            [F(vec![2, 3]), F(vec![1, 3])],
            Tol::Exact,
            |X, a, b| {
                let (a, b) = (X::float_round(a.f()), X::float_round(b.f()));
                vec![Val::B(X::$f(a, b, BD))]
            }
        );
    };
}

/// A comparison with a scalar.
macro_rules! cmp_elem {
    ($name:literal, $f:ident) => {
        diff!($name, [F(vec![2, 4])], Tol::Exact, |X, a| {
            let a = X::float_round(a.f());
            vec![Val::B(X::$f(a, 1.0f32.into(), BD))]
        })
    };
}

/// An op along a dim, for every dim of a [3, 4] operand.
macro_rules! along {
    ($name:literal, $f:ident, $tol:expr) => {
        diff!($name, [F(vec![3, 4])], $tol, |X, a| vec![Val::F(X::$f(
            a.f(),
            0
        ))]);
        diff!($name, [F(vec![3, 4])], $tol, |X, a| vec![Val::F(X::$f(
            a.f(),
            1
        ))]);
        diff!($name, [F(vec![2, 3, 4])], $tol, |X, a| vec![Val::F(X::$f(
            a.f(),
            1
        ))]);
    };
}

// ---------------------------------------------------------------- creation, device, reads

#[test]
fn creation_ops_are_unbatched() {
    diff!("float_from_data", [F(vec![2])], Tol::Exact, |X, a| {
        let d = X::float_device(&a.f());
        let data = TensorData::new(vec![1.0f32, 2.0, 3.0, -4.0, 5.0, 6.0], [2, 3]);
        vec![Val::F(X::float_from_data(data, &d))]
    });
    diff!("float_zeros", [F(vec![2])], Tol::Exact, |X, a| {
        let d = X::float_device(&a.f());
        vec![Val::F(X::float_zeros([2, 3].into(), &d, FD))]
    });
    diff!("float_ones", [F(vec![2])], Tol::Exact, |X, a| {
        let d = X::float_device(&a.f());
        vec![Val::F(X::float_ones([2, 3].into(), &d, FD))]
    });
    diff!("float_full", [F(vec![2])], Tol::Exact, |X, a| {
        let d = X::float_device(&a.f());
        vec![Val::F(X::float_full([2, 3].into(), 2.5f32.into(), &d, FD))]
    });
    // The device of a tensor and a move to it keep the tensor as it is.
    diff!("float_device", [F(vec![2, 3])], Tol::Exact, |X, a| {
        let a = a.f();
        let d = X::float_device(&a);
        vec![Val::F(X::float_to_device(a, &d))]
    });
    diff!("float_to_device", [F(vec![2, 3])], Tol::Exact, |X, a| {
        let a = a.f();
        let d = X::float_device(&a);
        vec![Val::F(X::float_to_device(a, &d))]
    });
    let device = saturate_vmap::VmapDevice::<Inner>::new(Default::default(), 3);
    for t in [
        Vm::float_zeros([2, 3].into(), &device, FD),
        Vm::float_ones([2, 3].into(), &device, FD),
        Vm::float_full([2, 3].into(), 1.0f32.into(), &device, FD),
        Vm::float_from_data(TensorData::new(vec![1.0f32; 6], [2, 3]), &device),
    ] {
        assert!(!t.is_batched());
        assert_eq!(t.members(), 3);
        assert_eq!(t.shape().to_vec(), vec![2, 3]);
    }
}

#[test]
fn float_empty_has_the_logical_shape() {
    // "float_empty": its values are unspecified, so only the shape is compared.
    let device = saturate_vmap::VmapDevice::<Inner>::new(Default::default(), 3);
    let t = Vm::float_empty([4, 5].into(), &device, FD);
    assert!(!t.is_batched());
    assert_eq!(t.members(), 3);
    assert_eq!(t.shape().to_vec(), vec![4, 5]);
    assert_eq!(t.dtype(), DType::F32);
    crate::harness::record_property_checked("float_empty");
}

#[test]
fn float_random_draws_per_member() {
    // "float_random": K independent draws with the logical shape.
    let t = crate::harness::random_on_group(3, vec![4, 5]);
    assert!(t.is_batched());
    assert_eq!(t.members(), 3);
    assert_eq!(t.shape().to_vec(), vec![4, 5]);
    let data = burn::tensor::try_read_sync(Inner::float_into_data(t.into_inner()))
        .unwrap()
        .unwrap();
    assert_eq!(data.shape.to_vec(), vec![3, 4, 5]);
    let m: Vec<TensorData> = (0..3)
        .map(|m| crate::harness::member_slice(&data, m))
        .collect();
    assert_ne!(m[0].as_bytes(), m[1].as_bytes());
    assert_ne!(m[1].as_bytes(), m[2].as_bytes());
    let values = data.as_slice::<f32>().unwrap();
    assert!(values.iter().all(|v| (0.0..1.0).contains(v)));
    // Random ops are batched even for a single member.
    let one = crate::harness::random_on_group(1, vec![2]);
    assert!(one.is_batched());
    assert_eq!(one.shape().to_vec(), vec![2]);
    // Normal draws too.
    let device = saturate_vmap::VmapDevice::<Inner>::new(Default::default(), 2);
    let n = Vm::float_random(
        [64].into(),
        burn::tensor::Distribution::Normal(0.0, 1.0),
        &device,
        FD,
    );
    let data = burn::tensor::try_read_sync(Inner::float_into_data(n.into_inner()))
        .unwrap()
        .unwrap();
    let (a, b) = (
        crate::harness::member_slice(&data, 0),
        crate::harness::member_slice(&data, 1),
    );
    assert_ne!(a.as_bytes(), b.as_bytes());
    crate::harness::record_property_checked("float_random");
}

#[test]
fn float_into_data_reads_unbatched_and_refuses_batched() {
    // "float_into_data"
    let device = saturate_vmap::VmapDevice::<Inner>::new(Default::default(), 3);
    let data = TensorData::new(vec![1.0f32, 2.0, 3.0], [3]);
    let t = Vm::float_from_data(data.clone(), &device);
    let read = burn::tensor::try_read_sync(Vm::float_into_data(t))
        .unwrap()
        .unwrap();
    assert_eq!(read.as_bytes(), data.as_bytes());
    let inner = burn::tensor::try_read_sync(Inner::float_into_data(Inner::float_from_data(
        data.clone(),
        &Default::default(),
    )))
    .unwrap()
    .unwrap();
    assert_eq!(read.as_bytes(), inner.as_bytes());
    assert_eq!(read.shape, inner.shape);
    crate::harness::record_covered("float_into_data");
    let b = crate::harness::random_on_group(3, vec![3]);
    let err = burn::tensor::try_read_sync(Vm::float_into_data(b))
        .unwrap()
        .unwrap_err();
    assert!(
        format!("{err:?}").contains("cannot read a batched tensor"),
        "{err:?}"
    );
}

#[test]
fn float_into_int_and_cast() {
    diff!(
        "float_into_int",
        [Frange(vec![2, 3], -5.0, 5.0)],
        Tol::Exact,
        |X, a| vec![Val::I(X::float_into_int(a.f(), ID))]
    );
    diff!("float_cast", [F(vec![2, 3])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_cast(a.f(), FloatDType::F64))]
    });
    diff!("float_cast", [F(vec![2, 3])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_cast(
            X::float_cast(a.f(), FloatDType::F64),
            FD,
        ))]
    });
}

// ---------------------------------------------------------------- elementwise

#[test]
fn binary_elementwise() {
    diff!(
        "float_add",
        [F(vec![2, 3]), F(vec![2, 3])],
        Tol::Exact,
        |X, a, b| vec![Val::F(X::float_add(a.f(), b.f()))]
    );
    // Broadcasting operands.
    diff!(
        "float_add",
        [F(vec![2, 3]), F(vec![1, 3])],
        Tol::Exact,
        |X, a, b| vec![Val::F(X::float_add(a.f(), b.f()))]
    );
    // Both operands broadcast (NdArray's add/sub/mul/div broadcast both ways).
    diff!(
        "float_mul",
        [F(vec![1, 3]), F(vec![2, 1])],
        Tol::Exact,
        |X, a, b| vec![Val::F(X::float_mul(a.f(), b.f()))]
    );
    diff!(
        "float_sub",
        [F(vec![1, 3]), F(vec![2, 1])],
        Tol::Exact,
        |X, a, b| vec![Val::F(X::float_sub(a.f(), b.f()))]
    );
    bin!("float_sub", float_sub, F, F);
    bin!("float_mul", float_mul, F, F);
    bin!("float_div", float_div, F, Fpos);
    // The inner backend broadcasts only the divisor.
    diff!(
        "float_remainder",
        [F(vec![2, 3]), Fpos(vec![2, 3])],
        Tol::Exact,
        |X, a, b| vec![Val::F(X::float_remainder(a.f(), b.f()))]
    );
    bin!("float_powf", float_powf, Fpos, F);
    bin!("float_atan2", float_atan2, F, F);
}

#[test]
fn scalar_elementwise() {
    scal!("float_add_scalar", float_add_scalar, F(vec![2, 3]), 1.5f32);
    scal!("float_sub_scalar", float_sub_scalar, F(vec![2, 3]), 1.5f32);
    scal!("float_mul_scalar", float_mul_scalar, F(vec![2, 3]), -2.5f32);
    scal!("float_div_scalar", float_div_scalar, F(vec![2, 3]), 3.0f32);
    scal!(
        "float_remainder_scalar",
        float_remainder_scalar,
        F(vec![2, 3]),
        0.7f32
    );
    scal!("float_clamp_min", float_clamp_min, F(vec![2, 3]), -0.5f32);
    scal!("float_clamp_max", float_clamp_max, F(vec![2, 3]), 0.5f32);
    diff!("float_clamp", [F(vec![2, 3])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_clamp(
            a.f(),
            (-0.5f32).into(),
            0.7f32.into(),
        ))]
    });
    scal!(
        "float_powi_scalar",
        float_powi_scalar,
        Fpos(vec![2, 3]),
        0i64
    );
    scal!(
        "float_powi_scalar",
        float_powi_scalar,
        Fpos(vec![2, 3]),
        1i64
    );
    scal!(
        "float_powi_scalar",
        float_powi_scalar,
        Fpos(vec![2, 3]),
        2i64
    );
    scal!(
        "float_powi_scalar",
        float_powi_scalar,
        Fpos(vec![2, 3]),
        3i64
    );
    scal!(
        "float_powi_scalar",
        float_powi_scalar,
        Fpos(vec![2, 3]),
        -1i64
    );
    scal!(
        "float_powi_scalar",
        float_powi_scalar,
        Fpos(vec![2, 3]),
        -2i64
    );
    scal!(
        "float_powi_scalar_impl",
        float_powi_scalar_impl,
        F(vec![2, 3]),
        3i64
    );
    scal!(
        "float_powf_scalar",
        float_powf_scalar,
        Fpos(vec![2, 3]),
        2.5f32
    );
    scal!(
        "float_powf_scalar",
        float_powf_scalar,
        Fpos(vec![2, 3]),
        2.0f32
    );
    scal!(
        "float_powf_scalar",
        float_powf_scalar,
        Fpos(vec![2, 3]),
        0.0f32
    );
    scal!(
        "float_powf_scalar_impl",
        float_powf_scalar_impl,
        Fpos(vec![2, 3]),
        1.5f32
    );
    diff!(
        "float_powi",
        [Fpos(vec![2, 3]), I(vec![2, 3], -2, 4)],
        Tol::Exact,
        |X, a, b| vec![Val::F(X::float_powi(a.f(), b.i()))]
    );
    diff!(
        "float_powi",
        [Fpos(vec![2, 3]), I(vec![1, 3], 0, 4)],
        Tol::Exact,
        |X, a, b| vec![Val::F(X::float_powi(a.f(), b.i()))]
    );
}

#[test]
fn unary_elementwise() {
    un!("float_neg", float_neg, F(vec![2, 3]), Tol::Exact);
    un!("float_recip", float_recip, Fpos(vec![2, 3]), Tol::Exact);
    // Exact whatever the inner `recip` (issue 8): a [K, ..] tensor whose members straddle
    // vector lanes differently from a member alone.
    probe!(
        "float_recip",
        float_recip,
        Frange(vec![3, 4], 0.5, 2.0),
        Tol::Exact
    );
    un!("float_exp", float_exp, F(vec![2, 3]), Tol::Exact);
    un!("float_log", float_log, Fpos(vec![2, 3]), Tol::Exact);
    un!("float_log1p", float_log1p, Fpos(vec![2, 3]), Tol::Exact);
    un!("float_sqrt", float_sqrt, Fpos(vec![2, 3]), Tol::Exact);
    un!("float_abs", float_abs, F(vec![2, 3]), Tol::Exact);
    un!("float_cos", float_cos, F(vec![2, 3]), Tol::Exact);
    un!("float_sin", float_sin, F(vec![2, 3]), Tol::Exact);
    un!(
        "float_tan",
        float_tan,
        Frange(vec![2, 3], -1.2, 1.2),
        Tol::Exact
    );
    un!("float_cosh", float_cosh, F(vec![2, 3]), Tol::Exact);
    un!("float_sinh", float_sinh, F(vec![2, 3]), Tol::Exact);
    un!("float_tanh", float_tanh, F(vec![2, 3]), Tol::Exact);
    un!(
        "float_acos",
        float_acos,
        Frange(vec![2, 3], -1.0, 1.0),
        Tol::Exact
    );
    un!(
        "float_acosh",
        float_acosh,
        Frange(vec![2, 3], 1.0, 3.0),
        Tol::Exact
    );
    un!(
        "float_asin",
        float_asin,
        Frange(vec![2, 3], -1.0, 1.0),
        Tol::Exact
    );
    un!("float_asinh", float_asinh, F(vec![2, 3]), Tol::Exact);
    un!("float_atan", float_atan, F(vec![2, 3]), Tol::Exact);
    un!(
        "float_atanh",
        float_atanh,
        Frange(vec![2, 3], -0.9, 0.9),
        Tol::Exact
    );
    un!(
        "float_round",
        float_round,
        Frange(vec![2, 3], -4.0, 4.0),
        Tol::Exact
    );
    un!("float_floor", float_floor, F(vec![2, 3]), Tol::Exact);
    un!("float_ceil", float_ceil, F(vec![2, 3]), Tol::Exact);
    un!("float_trunc", float_trunc, F(vec![2, 3]), Tol::Exact);
    un!("float_erf", float_erf, F(vec![2, 3]), Tol::Exact);
    un!("float_detach", float_detach, F(vec![2, 3]), Tol::Exact);
    diff!(
        "float_sign",
        [Frange(vec![3, 4], -2.0, 2.0)],
        Tol::Exact,
        |X, a| vec![Val::F(X::float_sign(X::float_round(a.f())))]
    );
    diff!(
        "float_set_require_grad",
        [F(vec![2, 3])],
        Tol::Exact,
        |X, a| vec![Val::F(X::float_set_require_grad(a.f(), true))]
    );
    diff!(
        "float_is_require_grad",
        [F(vec![2, 3])],
        Tol::Exact,
        |X, a| {
            let a = a.f();
            assert!(!X::float_is_require_grad(&a));
            vec![Val::F(a)]
        }
    );
    // NaN from the log of negative numbers, inf from division by a rounded zero.
    diff!("float_is_nan", [F(vec![3, 4])], Tol::Exact, |X, a| {
        vec![Val::B(X::float_is_nan(X::float_log(a.f()), BD))]
    });
    diff!("float_is_inf", [F(vec![3, 4])], Tol::Exact, |X, a| {
        let a = a.f();
        let d = X::float_device(&a);
        let ones = X::float_ones(a.shape(), &d, FD);
        vec![Val::B(X::float_is_inf(
            X::float_div(ones, X::float_round(a)),
            BD,
        ))]
    });
}

#[test]
fn comparisons() {
    cmp!("float_equal", float_equal);
    cmp!("float_not_equal", float_not_equal);
    cmp!("float_greater", float_greater);
    cmp!("float_greater_equal", float_greater_equal);
    cmp!("float_lower", float_lower);
    cmp!("float_lower_equal", float_lower_equal);
    cmp_elem!("float_equal_elem", float_equal_elem);
    cmp_elem!("float_not_equal_elem", float_not_equal_elem);
    cmp_elem!("float_greater_elem", float_greater_elem);
    cmp_elem!("float_greater_equal_elem", float_greater_equal_elem);
    cmp_elem!("float_lower_elem", float_lower_elem);
    cmp_elem!("float_lower_equal_elem", float_lower_equal_elem);
}

// ---------------------------------------------------------------- matmul and shape ops

#[test]
fn float_matmul() {
    let mm = [
        (vec![3, 4], vec![4, 5]),
        (vec![1, 4], vec![4, 1]),
        (vec![2, 3, 4], vec![2, 4, 5]),
        (vec![2, 3, 4], vec![1, 4, 5]),
        (vec![1, 3, 4], vec![2, 4, 5]),
    ];
    for (l, r) in mm {
        diff!(
            "float_matmul",
            [F(l.clone()), F(r.clone())],
            Tol::Abs(1e-6),
            |X, a, b| vec![Val::F(X::float_matmul(a.f(), b.f()))]
        );
    }
    // Rank 4 with broadcast batch dims on both sides.
    diff!(
        "float_matmul",
        [F(vec![2, 1, 3, 4]), F(vec![1, 2, 4, 2])],
        Tol::Abs(1e-6),
        |X, a, b| vec![Val::F(X::float_matmul(a.f(), b.f()))]
    );
    diff!(
        "float_matmul",
        [F(vec![2, 2, 3, 4]), F(vec![1, 1, 4, 2])],
        Tol::Abs(1e-6),
        |X, a, b| vec![Val::F(X::float_matmul(a.f(), b.f()))]
    );
    // The Linear layer case with a wide contraction.
    diff!(
        "float_matmul",
        [F(vec![5, 33]), F(vec![33, 7])],
        Tol::Abs(1e-5),
        |X, a, b| vec![Val::F(X::float_matmul(a.f(), b.f()))]
    );
}

#[test]
fn float_cross() {
    diff!(
        "float_cross",
        [F(vec![2, 3]), F(vec![2, 3])],
        Tol::Abs(1e-6),
        |X, a, b| vec![Val::F(X::float_cross(a.f(), b.f(), 1))]
    );
    diff!(
        "float_cross",
        [F(vec![3, 2]), F(vec![3, 1])],
        Tol::Abs(1e-6),
        |X, a, b| vec![Val::F(X::float_cross(a.f(), b.f(), 0))]
    );
}

#[test]
fn layout_ops() {
    diff!("float_reshape", [F(vec![2, 3, 4])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_reshape(a.f(), [6, 4].into()))]
    });
    diff!("float_reshape", [F(vec![2, 3])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_reshape(
            X::float_swap_dims(a.f(), 0, 1),
            [6].into(),
        ))]
    });
    un!(
        "float_transpose",
        float_transpose,
        F(vec![2, 3, 4]),
        Tol::Exact
    );
    diff!("float_swap_dims", [F(vec![2, 3, 4])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_swap_dims(a.f(), 0, 2))]
    });
    diff!("float_permute", [F(vec![2, 3, 4])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_permute(a.f(), &[2, 0, 1]))]
    });
    diff!("float_flip", [F(vec![2, 3, 4])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_flip(a.f(), &[0, 2]))]
    });
    diff!("float_expand", [F(vec![3])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_expand(a.f(), [2, 3].into()))]
    });
    diff!("float_expand", [F(vec![2, 1, 3])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_expand(a.f(), [2, 4, 3].into()))]
    });
    diff!("float_expand", [F(vec![1, 3])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_expand(a.f(), [2, 4, 3].into()))]
    });
    diff!("float_repeat_dim", [F(vec![2, 3])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_repeat_dim(a.f(), 1, 3))]
    });
    diff!("float_repeat_dim", [F(vec![2, 3])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_repeat_dim(a.f(), 0, 2))]
    });
    diff!("float_unfold", [F(vec![3, 7])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_unfold(a.f(), 1, 3, 2))]
    });
    diff!("float_unfold", [F(vec![5, 2])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_unfold(a.f(), 0, 2, 1))]
    });
    diff!(
        "float_cat",
        [F(vec![2, 3]), F(vec![1, 3]), F(vec![2, 3])],
        Tol::Exact,
        |X, a, b, c| vec![Val::F(X::float_cat(vec![a.f(), b.f(), c.f()], 0))]
    );
    diff!(
        "float_cat",
        [F(vec![2, 3]), F(vec![2, 1])],
        Tol::Exact,
        |X, a, b| vec![Val::F(X::float_cat(vec![a.f(), b.f()], 1))]
    );
}

#[test]
fn slicing() {
    diff!("float_slice", [F(vec![4, 5])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_slice(
            a.f(),
            &[Slice::new(1, Some(3), 1), Slice::new(0, None, 2)],
        ))]
    });
    diff!("float_slice", [F(vec![4, 5, 2])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_slice(a.f(), &[Slice::new(0, None, -1)]))]
    });
    diff!(
        "float_slice_assign",
        [F(vec![4, 5]), F(vec![2, 2])],
        Tol::Exact,
        |X, a, b| {
            vec![Val::F(X::float_slice_assign(
                a.f(),
                &[Slice::new(1, Some(3), 1), Slice::new(0, Some(4), 2)],
                b.f(),
            ))]
        }
    );
    diff!(
        "float_slice_assign",
        [F(vec![4, 5]), F(vec![1, 5])],
        Tol::Exact,
        |X, a, b| {
            vec![Val::F(X::float_slice_assign(
                a.f(),
                &[Slice::new(2, Some(3), 1)],
                b.f(),
            ))]
        }
    );
}

// ---------------------------------------------------------------- index ops

#[test]
fn gather_scatter() {
    diff!(
        "float_gather",
        [F(vec![3, 4]), I(vec![3, 2], 0, 4)],
        Tol::Exact,
        |X, a, i| vec![Val::F(X::float_gather(1, a.f(), i.i()))]
    );
    diff!(
        "float_gather",
        [F(vec![3, 4]), I(vec![2, 4], 0, 3)],
        Tol::Exact,
        |X, a, i| vec![Val::F(X::float_gather(0, a.f(), i.i()))]
    );
    diff!(
        "float_scatter_add",
        [F(vec![3, 4]), I(vec![3, 2], 0, 4), F(vec![3, 2])],
        Tol::Exact,
        |X, a, i, v| vec![Val::F(X::float_scatter_add(1, a.f(), i.i(), v.f()))]
    );
    diff!(
        "float_scatter_add",
        [F(vec![3, 4]), I(vec![5, 4], 0, 3), F(vec![5, 4])],
        Tol::Exact,
        |X, a, i, v| vec![Val::F(X::float_scatter_add(0, a.f(), i.i(), v.f()))]
    );
}

#[test]
fn gather_nd_scatter_nd() {
    // Index tuples of length 1 and 2 into a [4, 3] tensor.
    diff!(
        "float_gather_nd",
        [F(vec![4, 3]), I(vec![5, 1], 0, 4)],
        Tol::Exact,
        |X, a, i| vec![Val::F(X::float_gather_nd(a.f(), i.i()))]
    );
    let pairs = TensorData::new(vec![0i64, 2, 3, 1, 1, 0, 3, 2], [2, 2, 2]);
    diff!(
        "float_gather_nd",
        [F(vec![4, 3]), Idata(pairs.clone())],
        Tol::Exact,
        |X, a, i| vec![Val::F(X::float_gather_nd(a.f(), i.i()))]
    );
    diff!(
        "float_scatter_nd",
        [F(vec![4, 3]), I(vec![5, 1], 0, 4), F(vec![5, 3])],
        Tol::Exact,
        |X, a, i, v| vec![Val::F(X::float_scatter_nd(
            a.f(),
            i.i(),
            v.f(),
            IndexingUpdateOp::Add
        ))]
    );
    let rows = TensorData::new(vec![2i64, 0, 3], [3, 1]);
    diff!(
        "float_scatter_nd",
        [F(vec![4, 3]), Idata(rows), F(vec![3, 3])],
        Tol::Exact,
        |X, a, i, v| vec![Val::F(X::float_scatter_nd(
            a.f(),
            i.i(),
            v.f(),
            IndexingUpdateOp::Assign
        ))]
    );
    diff!(
        "float_scatter_nd",
        [F(vec![4, 3]), Idata(pairs), F(vec![2, 2])],
        Tol::Exact,
        |X, a, i, v| vec![Val::F(X::float_scatter_nd(
            a.f(),
            i.i(),
            v.f(),
            IndexingUpdateOp::Max
        ))]
    );
}

#[test]
fn select_ops() {
    diff!(
        "float_select",
        [F(vec![3, 4]), I(vec![5], 0, 4)],
        Tol::Exact,
        |X, a, i| vec![Val::F(X::float_select(a.f(), 1, i.i()))]
    );
    diff!(
        "float_select",
        [F(vec![3, 4, 2]), I(vec![2], 0, 3)],
        Tol::Exact,
        |X, a, i| vec![Val::F(X::float_select(a.f(), 0, i.i()))]
    );
    diff!(
        "float_select_add",
        [F(vec![3, 4]), I(vec![5], 0, 4), F(vec![3, 5])],
        Tol::Exact,
        |X, a, i, v| vec![Val::F(X::float_select_add(a.f(), 1, i.i(), v.f()))]
    );
    diff!(
        "float_select_add",
        [F(vec![3, 4, 2]), I(vec![2], 0, 3), F(vec![2, 4, 2])],
        Tol::Exact,
        |X, a, i, v| vec![Val::F(X::float_select_add(a.f(), 0, i.i(), v.f()))]
    );
}

#[test]
fn mask_ops() {
    diff!(
        "float_mask_where",
        [F(vec![2, 3]), B(vec![2, 3]), F(vec![2, 3])],
        Tol::Exact,
        |X, a, m, v| vec![Val::F(X::float_mask_where(a.f(), m.b(), v.f()))]
    );
    diff!(
        "float_mask_where",
        [F(vec![2, 3]), B(vec![2, 3]), F(vec![1, 3])],
        Tol::Exact,
        |X, a, m, v| vec![Val::F(X::float_mask_where(a.f(), m.b(), v.f()))]
    );
    diff!(
        "float_mask_fill",
        [F(vec![2, 3]), B(vec![2, 3])],
        Tol::Exact,
        |X, a, m| vec![Val::F(X::float_mask_fill(a.f(), m.b(), 7.5f32.into()))]
    );
    diff!(
        "float_mask_fill",
        [F(vec![2, 3]), B(vec![1, 3])],
        Tol::Exact,
        |X, a, m| vec![Val::F(X::float_mask_fill(a.f(), m.b(), (-1.0f32).into()))]
    );
}

#[test]
fn grid_sample() {
    diff!(
        "float_grid_sample_2d",
        [F(vec![2, 3, 4, 5]), Frange(vec![2, 3, 2, 2], -1.0, 1.0)],
        Tol::Abs(1e-6),
        |X, a, g| vec![Val::F(X::float_grid_sample_2d(
            a.f(),
            g.f(),
            GridSampleOptions::default()
        ))]
    );
}

// ---------------------------------------------------------------- reductions

#[test]
fn reductions_over_all() {
    // Sum/mean/prod over all elements run per member as a reduction along one axis, whose
    // accumulation order may differ from the inner backend's whole-tensor reduction.
    un!("float_sum", float_sum, F(vec![3, 4]), Tol::Abs(1e-5));
    un!("float_mean", float_mean, F(vec![3, 4]), Tol::Abs(1e-6));
    un!(
        "float_prod",
        float_prod,
        Frange(vec![2, 3], 0.5, 1.5),
        Tol::Abs(1e-6)
    );
    un!("float_max", float_max, F(vec![3, 4]), Tol::Exact);
    un!("float_min", float_min, F(vec![3, 4]), Tol::Exact);
    un!("float_max_abs", float_max_abs, F(vec![3, 4]), Tol::Exact);
    diff!(
        "float_any",
        [Frange(vec![2, 3], -0.6, 0.6)],
        Tol::Exact,
        |X, a| vec![Val::B(X::float_any(X::float_round(a.f()), BD))]
    );
    diff!(
        "float_all",
        [Frange(vec![2, 3], -3.0, 3.0)],
        Tol::Exact,
        |X, a| vec![Val::B(X::float_all(X::float_round(a.f()), BD))]
    );
    diff!(
        "float_all",
        [Frange(vec![2, 3], 1.0, 3.0)],
        Tol::Exact,
        |X, a| vec![Val::B(X::float_all(a.f(), BD))]
    );
}

#[test]
fn reductions_along_dim() {
    along!("float_sum_dim", float_sum_dim, Tol::Abs(1e-6));
    along!("float_mean_dim", float_mean_dim, Tol::Abs(1e-6));
    along!("float_prod_dim", float_prod_dim, Tol::Abs(1e-6));
    along!("float_max_dim", float_max_dim, Tol::Exact);
    along!("float_min_dim", float_min_dim, Tol::Exact);
    along!("float_max_abs_dim", float_max_abs_dim, Tol::Exact);
    along!("float_cumsum", float_cumsum, Tol::Abs(1e-6));
    along!("float_cumprod", float_cumprod, Tol::Abs(1e-6));
    along!("float_cummin", float_cummin, Tol::Exact);
    along!("float_cummax", float_cummax, Tol::Exact);
    diff!(
        "float_any_dim",
        [Frange(vec![3, 4], -0.7, 0.7)],
        Tol::Exact,
        |X, a| vec![Val::B(X::float_any_dim(X::float_round(a.f()), 1, BD))]
    );
    diff!(
        "float_all_dim",
        [Frange(vec![3, 4], -4.0, 4.0)],
        Tol::Exact,
        |X, a| vec![Val::B(X::float_all_dim(X::float_round(a.f()), 0, BD))]
    );
    diff!(
        "float_max_dim_with_indices",
        [F(vec![3, 4])],
        Tol::Exact,
        |X, a| {
            let (v, i) = X::float_max_dim_with_indices(a.f(), 1, ID);
            vec![Val::F(v), Val::I(i)]
        }
    );
    diff!(
        "float_min_dim_with_indices",
        [F(vec![3, 4])],
        Tol::Exact,
        |X, a| {
            let (v, i) = X::float_min_dim_with_indices(a.f(), 0, ID);
            vec![Val::F(v), Val::I(i)]
        }
    );
    diff!("float_argmax", [F(vec![3, 4])], Tol::Exact, |X, a| {
        vec![Val::I(X::float_argmax(a.f(), 1, ID))]
    });
    diff!("float_argmin", [F(vec![3, 4])], Tol::Exact, |X, a| {
        vec![Val::I(X::float_argmin(a.f(), 0, ID))]
    });
}

#[test]
fn sorting() {
    diff!("float_sort", [F(vec![3, 5])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_sort(a.f(), 1, false))]
    });
    diff!("float_sort", [F(vec![3, 5])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_sort(a.f(), 0, true))]
    });
    diff!(
        "float_sort_with_indices",
        [F(vec![3, 5])],
        Tol::Exact,
        |X, a| {
            let (v, i) = X::float_sort_with_indices(a.f(), 1, true, ID);
            vec![Val::F(v), Val::I(i)]
        }
    );
    diff!("float_argsort", [F(vec![3, 5])], Tol::Exact, |X, a| {
        vec![Val::I(X::float_argsort(a.f(), 1, false, ID))]
    });
    diff!("float_argsort", [F(vec![4, 2])], Tol::Exact, |X, a| {
        vec![Val::I(X::float_argsort(a.f(), 0, true, ID))]
    });
    diff!("float_topk", [F(vec![3, 5])], Tol::Exact, |X, a| {
        vec![Val::F(X::float_topk(a.f(), 1, 2))]
    });
}

/// `"float_argtopk"`: NdArray has no argtopk ("not implemented for ndarray"): the rule
/// delegates to the inner backend (dim shifted past the member axis), so its own panic comes
/// through, and no differential case can run on NdArray.
#[test]
#[should_panic(expected = "not implemented")]
fn float_argtopk_delegates_to_the_inner_backend() {
    let t = crate::harness::random_on_group(3, vec![3, 5]);
    let _ = Vm::float_argtopk(t, 1, 2, ID);
}

// ---------------------------------------------------------------- autodiff gradients

use burn::tensor::backend::Backend as BackendT;
use burn::tensor::{Tensor, TensorPrimitive};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `Autodiff<Vmap<NdArray>>`, the backend under test for gradients.
pub(crate) type Av = burn::backend::Autodiff<Vm>;
/// `Autodiff<NdArray>`, the per-member reference.
pub(crate) type Ai = burn::backend::Autodiff<Inner>;

fn read_inner(
    t: <Inner as burn::tensor::backend::BackendTypes>::FloatTensorPrimitive,
) -> TensorData {
    burn::tensor::try_read_sync(Inner::float_into_data(t))
        .unwrap()
        .unwrap()
}

/// Fixed weights of `shape` (the same for every member) so that the loss `sum(out * w)` sends
/// a different gradient to every output element.
fn weights(shape: &[usize]) -> TensorData {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7 + 3) % 11) as f32 / 5.0 - 1.0)
        .collect();
    TensorData::new(v, shape.to_vec())
}

/// Gradients of `sum(op(operands) * w)` with respect to every operand, on
/// `Autodiff<Vmap<NdArray>>` for every batched/unbatched combination of the operands and
/// K in {1, 3}, against `Autodiff<NdArray>` run member by member. An unbatched operand's
/// gradient holds one value per member (each member's loss depends on it separately).
pub(crate) fn grad_check<const D: usize, const E: usize>(
    name: &str,
    shapes: &[Vec<usize>],
    range: (f32, f32),
    vm: fn(Vec<Tensor<Av, D>>) -> Tensor<Av, E>,
    inner: fn(Vec<Tensor<Ai, D>>) -> Tensor<Ai, E>,
) {
    let n = shapes.len();
    let dev = Default::default();
    for members in [1usize, 3] {
        for mask in 0..(1u32 << n) {
            let flags: Vec<bool> = (0..n).map(|j| mask & (1 << j) != 0).collect();
            let mut rng = StdRng::seed_from_u64(0x9ad ^ mask as u64 ^ ((members as u64) << 8));
            let datas: Vec<TensorData> = shapes
                .iter()
                .zip(&flags)
                .map(|(s, &b)| {
                    let mut shape = s.clone();
                    if b {
                        shape.insert(0, members);
                    }
                    let len: usize = shape.iter().product();
                    let v: Vec<f32> = (0..len)
                        .map(|_| rng.random_range(range.0..range.1))
                        .collect();
                    TensorData::new(v, shape)
                })
                .collect();
            let vdev = saturate_vmap::VmapDevice::<Inner>::new(dev, members);
            let xs: Vec<Tensor<Av, D>> = datas
                .iter()
                .zip(&flags)
                .map(|(d, &b)| {
                    let p = saturate_vmap::tensor::from_inner(
                        Inner::float_from_data(d.clone(), &dev),
                        b,
                        members,
                    );
                    Tensor::<Av, D>::from_inner(Tensor::<Vm, D>::from_primitive(
                        TensorPrimitive::Float(p),
                    ))
                    .require_grad()
                })
                .collect();
            let out = vm(xs.clone());
            let w = Tensor::<Av, E>::from_data(weights(&out.dims()), &vdev);
            let grads = (out * w).sum().backward();
            let got: Vec<(bool, TensorData)> = xs
                .iter()
                .map(|x| {
                    let g = x
                        .grad(&grads)
                        .unwrap_or_else(|| panic!("{name}: no gradient for an operand"));
                    let p = g.into_primitive().tensor();
                    (p.is_batched(), read_inner(p.into_inner()))
                })
                .collect();
            for m in 0..members {
                let ys: Vec<Tensor<Ai, D>> = datas
                    .iter()
                    .zip(&flags)
                    .map(|(d, &b)| {
                        let d = if b {
                            crate::harness::member_slice(d, m)
                        } else {
                            d.clone()
                        };
                        Tensor::<Ai, D>::from_data(d, &dev).require_grad()
                    })
                    .collect();
                let out = inner(ys.clone());
                let w = Tensor::<Ai, E>::from_data(weights(&out.dims()), &dev);
                let grads = (out * w).sum().backward();
                for (j, (y, (batched, g))) in ys.iter().zip(&got).enumerate() {
                    let want = y.grad(&grads).unwrap().into_data();
                    let g = if *batched {
                        crate::harness::member_slice(g, m)
                    } else {
                        g.clone()
                    };
                    let ctx = format!(
                        "{name}: gradient of operand {j}, K={members}, batched {flags:?}, member {m}"
                    );
                    assert_eq!(g.shape, want.shape, "{ctx}: shape");
                    let (a, b) = (
                        g.as_slice::<f32>().unwrap(),
                        want.as_slice::<f32>().unwrap(),
                    );
                    for (i, (x, y)) in a.iter().zip(b).enumerate() {
                        // Backward passes sum over broadcast axes and batch dims, possibly in
                        // another order than the reference, and NdArray's SIMD kernels (e.g. an
                        // approximate reciprocal) cover a [K, ..] tensor's elements in other
                        // chunks than a member's (its `_mm_rcp_ps`-class reciprocal has a
                        // relative error up to ~4e-4, and autodiff's div backward uses it).
                        let ok =
                            (x - y).abs() <= 1e-5 + 1e-3 * y.abs() || (x.is_nan() && y.is_nan());
                        assert!(ok, "{ctx}: element {i}: got {x}, want {y}");
                    }
                }
            }
        }
    }
}

/// A gradient case: `grad!("name", D => E, [shapes], (lo, hi), |Bk, xs| body)` where `xs` is
/// a `Vec<Tensor<Bk, D>>` and `body` a `Tensor<Bk, E>`.
macro_rules! grad {
    ($name:literal, $d:literal => $e:literal, [$($shape:expr),* $(,)?], $range:expr, |$bk:ident, $xs:ident| $body:expr) => {{
        #[allow(unused_mut, non_snake_case)]
        fn op<$bk: BackendT>(mut $xs: Vec<Tensor<$bk, $d>>) -> Tensor<$bk, $e> {
            $body
        }
        grad_check::<$d, $e>($name, &[$($shape),*], $range, op::<Av>, op::<Ai>);
    }};
}

const R: (f32, f32) = (-2.0, 2.0);
const RPOS: (f32, f32) = (0.2, 2.0);

#[test]
fn grad_elementwise() {
    grad!("float_add", 2 => 2, [vec![2, 3], vec![1, 3]], R, |Bk, x| {
        let b = x.pop().unwrap();
        x.pop().unwrap() + b
    });
    grad!("float_sub", 2 => 2, [vec![2, 3], vec![2, 3]], R, |Bk, x| {
        let b = x.pop().unwrap();
        x.pop().unwrap() - b
    });
    grad!("float_mul", 2 => 2, [vec![2, 3], vec![2, 1]], R, |Bk, x| {
        let b = x.pop().unwrap();
        x.pop().unwrap() * b
    });
    grad!("float_div", 2 => 2, [vec![2, 3], vec![2, 3]], RPOS, |Bk, x| {
        let b = x.pop().unwrap();
        x.pop().unwrap() / b
    });
    grad!("float_powf", 2 => 2, [vec![2, 3], vec![2, 3]], RPOS, |Bk, x| {
        let b = x.pop().unwrap();
        x.pop().unwrap().powf(b)
    });
    grad!("float_atan2", 2 => 2, [vec![2, 3], vec![2, 3]], RPOS, |Bk, x| {
        let b = x.pop().unwrap();
        x.pop().unwrap().atan2(b)
    });
    grad!("float_exp", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).exp());
    grad!("float_log", 2 => 2, [vec![2, 3]], RPOS, |Bk, x| x.remove(0).log());
    grad!("float_sqrt", 2 => 2, [vec![2, 3]], RPOS, |Bk, x| x.remove(0).sqrt());
    grad!("float_tanh", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).tanh());
    grad!("float_sin", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).sin().cos());
    grad!("float_abs", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).abs());
    grad!("float_recip", 2 => 2, [vec![2, 3]], RPOS, |Bk, x| x.remove(0).recip());
    grad!("float_erf", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).erf());
    grad!("float_powf_scalar", 2 => 2, [vec![2, 3]], RPOS, |Bk, x| x.remove(0).powf_scalar(2.5));
    grad!("float_powi_scalar", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).powi_scalar(3));
    grad!("float_clamp", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).clamp(-0.5, 0.8));
    grad!("float_neg", 2 => 2, [vec![2, 3]], R, |Bk, x| -x.remove(0));
    grad!("float_mul_scalar", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).mul_scalar(3.0).add_scalar(1.0));
}

#[test]
fn grad_matmul() {
    // Every batched/unbatched combination: the Linear case (x @ W), the folded case, batched.
    grad!("float_matmul", 2 => 2, [vec![4, 3], vec![3, 5]], R, |Bk, x| {
        let b = x.pop().unwrap();
        x.pop().unwrap().matmul(b)
    });
    grad!("float_matmul", 3 => 3, [vec![2, 4, 3], vec![1, 3, 5]], R, |Bk, x| {
        let b = x.pop().unwrap();
        x.pop().unwrap().matmul(b)
    });
    grad!("float_matmul", 3 => 3, [vec![1, 4, 3], vec![2, 3, 5]], R, |Bk, x| {
        let b = x.pop().unwrap();
        x.pop().unwrap().matmul(b)
    });
    // A two-layer chain, as in an MLP.
    grad!("float_matmul", 2 => 2, [vec![4, 3], vec![3, 5], vec![5, 2]], R, |Bk, x| {
        let c = x.pop().unwrap();
        let b = x.pop().unwrap();
        x.pop().unwrap().matmul(b).tanh().matmul(c)
    });
    grad!("float_cross", 2 => 2, [vec![2, 3], vec![2, 3]], R, |Bk, x| {
        let b = x.pop().unwrap();
        x.pop().unwrap().cross(b, 1)
    });
}

#[test]
fn grad_reductions() {
    grad!("float_sum", 2 => 1, [vec![2, 3]], R, |Bk, x| x.remove(0).exp().sum());
    grad!("float_mean", 2 => 1, [vec![2, 3]], R, |Bk, x| x.remove(0).exp().mean());
    grad!("float_prod", 2 => 1, [vec![2, 3]], RPOS, |Bk, x| x.remove(0).prod());
    grad!("float_sum_dim", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).exp().sum_dim(1));
    grad!("float_mean_dim", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).exp().mean_dim(0));
    grad!("float_prod_dim", 2 => 2, [vec![2, 3]], RPOS, |Bk, x| x.remove(0).prod_dim(1));
    grad!("float_max_dim", 2 => 2, [vec![3, 4]], R, |Bk, x| x.remove(0).max_dim(1));
    grad!("float_min_dim", 2 => 2, [vec![3, 4]], R, |Bk, x| x.remove(0).min_dim(0));
    grad!("float_max", 2 => 1, [vec![3, 4]], R, |Bk, x| x.remove(0).max());
    grad!("float_min", 2 => 1, [vec![3, 4]], R, |Bk, x| x.remove(0).min());
    grad!("float_max_abs", 2 => 1, [vec![3, 4]], R, |Bk, x| x.remove(0).max_abs());
    grad!("float_cumsum", 2 => 2, [vec![3, 4]], R, |Bk, x| x.remove(0).cumsum(1));
    grad!("float_cumprod", 2 => 2, [vec![3, 4]], RPOS, |Bk, x| x.remove(0).cumprod(0));
    grad!("float_cummax", 2 => 2, [vec![3, 4]], R, |Bk, x| x.remove(0).cummax(1));
    grad!("float_sort", 2 => 2, [vec![3, 4]], R, |Bk, x| x.remove(0).sort(1));
}

#[test]
fn grad_shape_and_index_ops() {
    use burn::tensor::{Bool, Int};
    grad!("float_reshape", 2 => 2, [vec![2, 6]], R, |Bk, x| x.remove(0).reshape([3, 4]).exp());
    grad!("float_swap_dims", 3 => 3, [vec![2, 3, 4]], R, |Bk, x| x.remove(0).swap_dims(0, 2).exp());
    grad!("float_permute", 3 => 3, [vec![2, 3, 4]], R, |Bk, x| x.remove(0).permute([1, 2, 0]).exp());
    grad!("float_flip", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).flip([1]).exp());
    grad!("float_expand", 2 => 2, [vec![1, 3]], R, |Bk, x| x.remove(0).expand([4, 3]).exp());
    grad!("float_repeat_dim", 2 => 2, [vec![2, 3]], R, |Bk, x| x.remove(0).repeat_dim(0, 2).exp());
    grad!("float_cat", 2 => 2, [vec![2, 3], vec![1, 3]], R, |Bk, x| {
        let b = x.pop().unwrap();
        Tensor::cat(vec![x.pop().unwrap(), b], 0).exp()
    });
    grad!("float_slice", 2 => 2, [vec![4, 5]], R, |Bk, x| x.remove(0).slice([1..3, 0..4]).exp());
    grad!("float_slice_assign", 2 => 2, [vec![4, 5], vec![2, 2]], R, |Bk, x| {
        let v = x.pop().unwrap();
        x.pop().unwrap().slice_assign([1..3, 2..4], v).exp()
    });
    grad!("float_gather", 2 => 2, [vec![3, 4]], R, |Bk, x| {
        let a = x.remove(0);
        let idx = Tensor::<Bk, 2, Int>::from_data(
            TensorData::new(vec![0i64, 3, 3, 1, 2, 2], [3, 2]),
            &a.device(),
        );
        a.gather(1, idx).exp()
    });
    grad!("float_scatter_add", 2 => 2, [vec![3, 4], vec![3, 2]], R, |Bk, x| {
        let v = x.pop().unwrap();
        let a = x.pop().unwrap();
        let idx = Tensor::<Bk, 2, Int>::from_data(
            TensorData::new(vec![0i64, 3, 3, 3, 2, 1], [3, 2]),
            &a.device(),
        );
        a.scatter(1, idx, v, IndexingUpdateOp::Add).exp()
    });
    grad!("float_select", 2 => 2, [vec![3, 4]], R, |Bk, x| {
        let a = x.remove(0);
        let idx = Tensor::<Bk, 1, Int>::from_data(TensorData::new(vec![2i64, 0, 2], [3]), &a.device());
        a.select(1, idx).exp()
    });
    grad!("float_select_add", 2 => 2, [vec![3, 4], vec![3, 3]], R, |Bk, x| {
        let v = x.pop().unwrap();
        let a = x.pop().unwrap();
        let idx = Tensor::<Bk, 1, Int>::from_data(TensorData::new(vec![2i64, 0, 2], [3]), &a.device());
        a.select_assign(1, idx, v, IndexingUpdateOp::Add).exp()
    });
    grad!("float_mask_where", 2 => 2, [vec![2, 3], vec![2, 3]], R, |Bk, x| {
        let v = x.pop().unwrap();
        let a = x.pop().unwrap();
        let m = Tensor::<Bk, 2, Bool>::from_data(
            TensorData::new(vec![true, false, true, false, false, true], [2, 3]),
            &a.device(),
        );
        a.mask_where(m, v).exp()
    });
    grad!("float_mask_fill", 2 => 2, [vec![2, 3]], R, |Bk, x| {
        let a = x.remove(0);
        let m = a.clone().lower_elem(0.0);
        a.mask_fill(m, 0.5).exp()
    });
    grad!("float_unfold", 2 => 3, [vec![2, 5]], R, |Bk, x| x.remove(0).unfold(1, 2, 1).exp());
}

#[test]
#[should_panic(expected = "groups of 2 and 3 members")]
fn mixing_groups_panics() {
    let a = crate::harness::random_on_group(2, vec![2, 3]);
    let b = crate::harness::random_on_group(3, vec![3, 4]);
    let _ = Vm::float_matmul(a, b);
}

/// The Linear-layer forms of `float_matmul` (an unbatched input against batched weights laid
/// side by side, and a batched input folded against shared weights) agree with a batched
/// matmul of materialized operands, for a contraction wide enough to use blocked GEMM.
#[test]
fn float_matmul_linear_forms_match_batched_matmul() {
    let k = 4;
    let dev = Default::default();
    let mut rng = StdRng::seed_from_u64(42);
    let mut data = |shape: Vec<usize>| {
        let n: usize = shape.iter().product();
        let v: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        TensorData::new(v, shape)
    };
    let x = data(vec![16, 70]);
    let w = data(vec![k, 70, 9]);
    let wrap = |d: &TensorData, batched| {
        saturate_vmap::tensor::from_inner(Inner::float_from_data(d.clone(), &dev), batched, k)
    };
    let out = Vm::float_matmul(wrap(&x, false), wrap(&w, true));
    assert!(out.is_batched());
    assert_eq!(out.shape().to_vec(), vec![16, 9]);
    let got = read_inner(out.into_inner());
    for m in 0..k {
        let want = read_inner(Inner::float_matmul(
            Inner::float_from_data(x.clone(), &dev),
            Inner::float_from_data(crate::harness::member_slice(&w, m), &dev),
        ));
        let g = crate::harness::member_slice(&got, m);
        for (a, b) in g
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .zip(want.as_slice::<f32>().unwrap())
        {
            assert!((a - b).abs() <= 1e-5, "member {m}: {a} vs {b}");
        }
    }
    // Batched input, shared weights.
    let xb = data(vec![k, 16, 70]);
    let ws = data(vec![70, 9]);
    let out = Vm::float_matmul(wrap(&xb, true), wrap(&ws, false));
    let got = read_inner(out.into_inner());
    for m in 0..k {
        let want = read_inner(Inner::float_matmul(
            Inner::float_from_data(crate::harness::member_slice(&xb, m), &dev),
            Inner::float_from_data(ws.clone(), &dev),
        ));
        let g = crate::harness::member_slice(&got, m);
        for (a, b) in g
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .zip(want.as_slice::<f32>().unwrap())
        {
            assert!((a - b).abs() <= 1e-5, "member {m}: {a} vs {b}");
        }
    }
}

/// Bernoulli and default draws through `Vmap<NdArray>` (NdArray's fast path, a counter-based
/// generator seeded from NdArray's own): per member, only 0 and 1 at the asked rate, or values
/// in `[0, 1)` with mean 1/2 (each within 5 standard deviations of 50,000 draws), members
/// different from each other and from the next call; p = 0 and p = 1 exact.
#[test]
fn float_random_bernoulli_and_default_draws() {
    let (k, n) = (4usize, 50_000usize);
    let device = saturate_vmap::VmapDevice::<Inner>::new(Default::default(), k);
    let draw = |distribution| -> Vec<Vec<f32>> {
        let t = Vm::float_random([n].into(), distribution, &device, FD);
        let data = burn::tensor::try_read_sync(Inner::float_into_data(t.into_inner()))
            .unwrap()
            .unwrap();
        assert_eq!(data.shape.to_vec(), vec![k, n]);
        data.to_vec::<f32>()
            .unwrap()
            .chunks(n)
            .map(<[f32]>::to_vec)
            .collect()
    };
    let mean = |v: &[f32]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
    let p = 0.3;
    let masks = draw(burn::tensor::Distribution::Bernoulli(p));
    let sigma = (p * (1.0 - p) / n as f64).sqrt();
    for (m, mask) in masks.iter().enumerate() {
        assert!(
            mask.iter().all(|&v| v == 0.0 || v == 1.0),
            "member {m}: not 0/1"
        );
        let rate = mean(mask);
        assert!(
            (rate - p).abs() < 5.0 * sigma,
            "member {m}: rate {rate}, want {p}"
        );
    }
    assert_ne!(masks[0], masks[1]);
    assert_ne!(masks[2], masks[3]);
    assert_ne!(masks, draw(burn::tensor::Distribution::Bernoulli(p)));
    for (p, want) in [(0.0, 0.0), (1.0, 1.0)] {
        let all = draw(burn::tensor::Distribution::Bernoulli(p));
        assert!(all.iter().flatten().all(|&v| v == want), "Bernoulli({p})");
    }
    let uniform = draw(burn::tensor::Distribution::Default);
    let sigma = (1.0 / 12.0 / n as f64).sqrt();
    for (m, u) in uniform.iter().enumerate() {
        assert!(
            u.iter().all(|v| (0.0..1.0).contains(v)),
            "member {m}: outside [0, 1)"
        );
        let mu = mean(u);
        assert!((mu - 0.5).abs() < 5.0 * sigma, "member {m}: mean {mu}");
    }
    assert_ne!(uniform[0], uniform[1]);
}
