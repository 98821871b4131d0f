//! Differential cases for `IntTensorOps` (every required and provided op).

use burn::tensor::{BoolDType, FloatDType, IntDType, TensorMetadata};
use burn_backend::tensor::IndexingUpdateOp;
use burn_backend::{Distribution, Scalar, Slice};

use crate::harness::{member_slice, Tol, Val, I as Inner, V};
use burn::tensor::ops::IntTensorOps;
use saturate_vmap::VmapDevice;

const ID: IntDType = IntDType::I64;
const BD: BoolDType = BoolDType::Native;

fn s(v: i64) -> Scalar {
    Scalar::from(v)
}

#[test]
fn int_creation() {
    diff!(
        "int_from_data",
        [I(vec![2, 3], -5, 5)],
        Tol::Exact,
        |X, a| {
            let dev = X::int_device(&a.i());
            let data = burn::tensor::TensorData::new(vec![1i64, 2, 3, 4, 5, 6], [2, 3]);
            vec![Val::I(X::int_from_data(data, &dev))]
        }
    );
    diff!("int_empty", [I(vec![2, 3], -5, 5)], Tol::Exact, |X, a| {
        // Only the shape is defined: multiply the uninitialised values away.
        let dev = X::int_device(&a.i());
        let e = X::int_empty([2, 4].into(), &dev, ID);
        vec![Val::I(X::int_mul_scalar(e, s(0)))]
    });
    diff!("int_zeros", [I(vec![2, 3], -5, 5)], Tol::Exact, |X, a| {
        let dev = X::int_device(&a.i());
        vec![Val::I(X::int_zeros([2, 4].into(), &dev, ID))]
    });
    diff!("int_ones", [I(vec![2, 3], -5, 5)], Tol::Exact, |X, a| {
        let dev = X::int_device(&a.i());
        vec![Val::I(X::int_ones([2, 4].into(), &dev, ID))]
    });
    diff!("int_full", [I(vec![2, 3], -5, 5)], Tol::Exact, |X, a| {
        let dev = X::int_device(&a.i());
        vec![Val::I(X::int_full([3].into(), s(-7), &dev, ID))]
    });
    diff!("int_arange", [I(vec![2], -5, 5)], Tol::Exact, |X, a| {
        let dev = X::int_device(&a.i());
        vec![Val::I(X::int_arange(2..9, &dev, ID))]
    });
    diff!(
        "int_arange_step",
        [I(vec![2], -5, 5)],
        Tol::Exact,
        |X, a| {
            let dev = X::int_device(&a.i());
            vec![Val::I(X::int_arange_step(-3..10, 3, &dev, ID))]
        }
    );
    // Creation ops give unbatched tensors that then mix with batched ones.
    diff!("int_zeros", [I(vec![2, 3], -5, 5)], Tol::Exact, |X, a| {
        let a = a.i();
        let dev = X::int_device(&a);
        vec![Val::I(X::int_add(X::int_ones([2, 3].into(), &dev, ID), a))]
    });
}

#[test]
fn int_device_moves_and_data() {
    diff!("int_device", [I(vec![2, 3], -5, 5)], Tol::Exact, |X, a| {
        let a = a.i();
        let dev = X::int_device(&a);
        vec![Val::I(X::int_to_device(a, &dev))]
    });
    diff!(
        "int_to_device",
        [I(vec![2, 3], -5, 5)],
        Tol::Exact,
        |X, a| {
            let a = a.i();
            let dev = X::int_device(&a);
            vec![Val::I(X::int_to_device(a, &dev))]
        }
    );
    // Reading an unbatched tensor works; a batched one fails (see below).
    diff!(@only "int_into_data", [I(vec![2, 3], -5, 5)], Tol::Exact, Some(&[&[false]]), |X, a| {
        let a = a.i();
        let dev = X::int_device(&a);
        let data = burn::tensor::try_read_sync(X::int_into_data(a)).unwrap().unwrap();
        vec![Val::I(X::int_from_data(data, &dev))]
    });
}

#[test]
fn int_into_data_of_batched_tensor_fails() {
    let dev = Default::default();
    let inner = Inner::int_from_data(
        burn::tensor::TensorData::new(vec![1i64, 2, 3, 4], [2, 2]),
        &dev,
    );
    let t = saturate_vmap::tensor::from_inner(inner, true, 2);
    let err = burn::tensor::try_read_sync(V::int_into_data(t))
        .unwrap()
        .unwrap_err();
    assert!(format!("{err:?}").contains("int_into_data"), "{err:?}");
}

#[test]
fn int_random_members_differ() {
    let op = "int_random";
    let device = VmapDevice::<Inner>::new(Default::default(), 3);
    let t = V::int_random(
        [4, 5].into(),
        Distribution::Uniform(0.0, 1.0e6),
        &device,
        ID,
    );
    assert_eq!(t.shape().to_vec(), vec![4, 5], "{op}: logical shape");
    assert!(t.is_batched());
    assert_eq!(t.members(), 3);
    let data = burn::tensor::try_read_sync(Inner::int_into_data(t.into_inner()))
        .unwrap()
        .unwrap();
    assert_eq!(data.shape.to_vec(), vec![3, 4, 5]);
    let m: Vec<_> = (0..3).map(|k| member_slice(&data, k)).collect();
    assert_ne!(
        m[0].as_bytes(),
        m[1].as_bytes(),
        "{op}: members 0 and 1 equal"
    );
    assert_ne!(
        m[1].as_bytes(),
        m[2].as_bytes(),
        "{op}: members 1 and 2 equal"
    );
    crate::harness::record_property_checked(op);
}

#[test]
fn int_shape_ops() {
    diff!(
        "int_reshape",
        [I(vec![2, 3, 4], -5, 5)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_reshape(a.i(), [6, 4].into()))]
    );
    diff!(
        "int_reshape",
        [I(vec![2, 3], -5, 5)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_reshape(a.i(), [1, 6, 1].into()))]
    );
    diff!("int_slice", [I(vec![4, 5], -9, 9)], Tol::Exact, |X, a| {
        let slices = [Slice::new(1, Some(3), 1), Slice::new(0, None, 2)];
        vec![Val::I(X::int_slice(a.i(), &slices))]
    });
    diff!(
        "int_slice",
        [I(vec![4, 5, 2], -9, 9)],
        Tol::Exact,
        |X, a| {
            // Fewer slices than dims, negative start.
            let slices = [Slice::new(-2, None, 1)];
            vec![Val::I(X::int_slice(a.i(), &slices))]
        }
    );
    diff!(
        "int_slice_assign",
        [I(vec![4, 5], -9, 9), I(vec![2, 3], 10, 20)],
        Tol::Exact,
        |X, a, b| {
            let slices = [Slice::new(1, Some(3), 1), Slice::new(0, None, 2)];
            vec![Val::I(X::int_slice_assign(a.i(), &slices, b.i()))]
        }
    );
    diff!(
        "int_swap_dims",
        [I(vec![2, 3, 4], -5, 5)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_swap_dims(a.i(), 0, 2))]
    );
    diff!(
        "int_transpose",
        [I(vec![2, 3, 4], -5, 5)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_transpose(a.i()))]
    );
    diff!(
        "int_permute",
        [I(vec![2, 3, 4], -5, 5)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_permute(a.i(), &[2, 0, 1]))]
    );
    diff!(
        "int_flip",
        [I(vec![2, 3, 4], -5, 5)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_flip(a.i(), &[0, 2]))]
    );
    diff!(
        "int_expand",
        [I(vec![1, 3], -5, 5)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_expand(a.i(), [4, 3].into()))]
    );
    diff!("int_expand", [I(vec![3], -5, 5)], Tol::Exact, |X, a| {
        // More dims than the input: the member axis must stay in front.
        vec![Val::I(X::int_expand(a.i(), [2, 4, 3].into()))]
    });
    diff!(
        "int_repeat_dim",
        [I(vec![2, 3], -5, 5)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_repeat_dim(a.i(), 1, 3))]
    );
    diff!(
        "int_cat",
        [
            I(vec![2, 3], -5, 5),
            I(vec![2, 1], -5, 5),
            I(vec![2, 2], -5, 5)
        ],
        Tol::Exact,
        |X, a, b, c| vec![Val::I(X::int_cat(vec![a.i(), b.i(), c.i()], 1))]
    );
    diff!(
        "int_cat",
        [I(vec![2, 3], -5, 5), I(vec![1, 3], -5, 5)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_cat(vec![a.i(), b.i()], 0))]
    );
    diff!(
        "int_unfold",
        [I(vec![2, 7, 3], -5, 5)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_unfold(a.i(), 1, 3, 2))]
    );
    diff!(
        "int_into_float",
        [I(vec![2, 3], -50, 50)],
        Tol::Exact,
        |X, a| vec![Val::F(X::int_into_float(a.i(), FloatDType::F32))]
    );
    diff!(
        "int_cast",
        [I(vec![2, 3], -50, 50)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_cast(a.i(), IntDType::I32))]
    );
}

#[test]
fn int_index_ops() {
    diff!(
        "int_gather",
        [I(vec![3, 4], -9, 9), I(vec![3, 5], 0, 4)],
        Tol::Exact,
        |X, a, i| vec![Val::I(X::int_gather(1, a.i(), i.i()))]
    );
    diff!(
        "int_gather",
        [I(vec![3, 4], -9, 9), I(vec![2, 4], 0, 3)],
        Tol::Exact,
        |X, a, i| vec![Val::I(X::int_gather(0, a.i(), i.i()))]
    );
    diff!(
        "int_scatter_add",
        [
            I(vec![3, 4], -9, 9),
            I(vec![3, 2], 0, 4),
            I(vec![3, 2], -9, 9)
        ],
        Tol::Exact,
        |X, a, i, v| vec![Val::I(X::int_scatter_add(1, a.i(), i.i(), v.i()))]
    );
    diff!(
        "int_scatter_add",
        [
            I(vec![3, 4], -9, 9),
            I(vec![2, 4], 0, 3),
            I(vec![2, 4], -9, 9)
        ],
        Tol::Exact,
        |X, a, i, v| vec![Val::I(X::int_scatter_add(0, a.i(), i.i(), v.i()))]
    );
    diff!(
        "int_select",
        [I(vec![3, 4], -9, 9), I(vec![5], 0, 4)],
        Tol::Exact,
        |X, a, i| vec![Val::I(X::int_select(a.i(), 1, i.i()))]
    );
    diff!(
        "int_select",
        [I(vec![3, 4, 2], -9, 9), I(vec![2], 0, 3)],
        Tol::Exact,
        |X, a, i| vec![Val::I(X::int_select(a.i(), 0, i.i()))]
    );
    diff!(
        "int_select_add",
        [I(vec![3, 4], -9, 9), I(vec![3], 0, 4), I(vec![3, 3], -9, 9)],
        Tol::Exact,
        |X, a, i, v| vec![Val::I(X::int_select_add(a.i(), 1, i.i(), v.i()))]
    );
    diff!(
        "int_select_add",
        [
            I(vec![3, 4, 2], -9, 9),
            I(vec![4], 0, 3),
            I(vec![4, 4, 2], -9, 9)
        ],
        Tol::Exact,
        |X, a, i, v| vec![Val::I(X::int_select_add(a.i(), 0, i.i(), v.i()))]
    );
    diff!(
        "int_mask_where",
        [I(vec![2, 3], -9, 9), B(vec![2, 3]), I(vec![2, 3], 10, 20)],
        Tol::Exact,
        |X, a, m, v| vec![Val::I(X::int_mask_where(a.i(), m.b(), v.i()))]
    );
    diff!(
        "int_mask_fill",
        [I(vec![2, 3], -9, 9), B(vec![2, 3])],
        Tol::Exact,
        |X, a, m| vec![Val::I(X::int_mask_fill(a.i(), m.b(), s(42)))]
    );
    diff!(
        "int_gather_nd",
        [I(vec![4, 3], -9, 9), I(vec![2, 1], 0, 4)],
        Tol::Exact,
        |X, a, i| vec![Val::I(X::int_gather_nd(a.i(), i.i()))]
    );
    diff!(
        "int_gather_nd",
        [I(vec![4, 3], -9, 9), I(vec![5, 2], 0, 3)],
        Tol::Exact,
        |X, a, i| vec![Val::I(X::int_gather_nd(a.i(), i.i()))]
    );
    diff!(
        "int_scatter_nd",
        [
            I(vec![4, 3], -9, 9),
            I(vec![2, 1], 0, 4),
            I(vec![2, 3], -9, 9)
        ],
        Tol::Exact,
        |X, a, i, v| vec![Val::I(X::int_scatter_nd(
            a.i(),
            i.i(),
            v.i(),
            IndexingUpdateOp::Add,
        ))]
    );
    diff!(
        "int_scatter_nd",
        [
            I(vec![4, 3], -9, 9),
            Idata(burn::tensor::TensorData::new(vec![3i64, 0, 1, 2], [2, 2])),
            I(vec![2], -9, 9)
        ],
        Tol::Exact,
        |X, a, i, v| vec![Val::I(X::int_scatter_nd(
            a.i(),
            i.i(),
            v.i(),
            IndexingUpdateOp::Assign,
        ))]
    );
}

#[test]
fn int_comparisons() {
    diff!(
        "int_equal",
        [I(vec![2, 3], -2, 2), I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::int_equal(a.i(), b.i(), BD))]
    );
    diff!(
        "int_not_equal",
        [I(vec![2, 3], -2, 2), I(vec![1, 3], -2, 2)],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::int_not_equal(a.i(), b.i(), BD))]
    );
    diff!(
        "int_greater",
        [I(vec![2, 3], -2, 2), I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::int_greater(a.i(), b.i(), BD))]
    );
    diff!(
        "int_greater_equal",
        [I(vec![2, 3], -2, 2), I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::int_greater_equal(a.i(), b.i(), BD))]
    );
    diff!(
        "int_lower",
        [I(vec![2, 3], -2, 2), I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::int_lower(a.i(), b.i(), BD))]
    );
    diff!(
        "int_lower_equal",
        [I(vec![2, 3], -2, 2), I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::int_lower_equal(a.i(), b.i(), BD))]
    );
    diff!(
        "int_equal_elem",
        [I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a| vec![Val::B(X::int_equal_elem(a.i(), s(1), BD))]
    );
    diff!(
        "int_not_equal_elem",
        [I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a| vec![Val::B(X::int_not_equal_elem(a.i(), s(1), BD))]
    );
    diff!(
        "int_greater_elem",
        [I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a| vec![Val::B(X::int_greater_elem(a.i(), s(0), BD))]
    );
    diff!(
        "int_greater_equal_elem",
        [I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a| vec![Val::B(X::int_greater_equal_elem(a.i(), s(0), BD))]
    );
    diff!(
        "int_lower_elem",
        [I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a| vec![Val::B(X::int_lower_elem(a.i(), s(0), BD))]
    );
    diff!(
        "int_lower_equal_elem",
        [I(vec![2, 3], -2, 2)],
        Tol::Exact,
        |X, a| vec![Val::B(X::int_lower_equal_elem(a.i(), s(0), BD))]
    );
}

#[test]
fn int_arithmetic() {
    diff!(
        "int_add",
        [I(vec![2, 3], -9, 9), I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_add(a.i(), b.i()))]
    );
    diff!(
        "int_add",
        [I(vec![2, 3], -9, 9), I(vec![1, 3], -9, 9)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_add(a.i(), b.i()))]
    );
    diff!(
        "int_sub",
        [I(vec![2, 3], -9, 9), I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_sub(a.i(), b.i()))]
    );
    diff!(
        "int_mul",
        [I(vec![2, 3], -9, 9), I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_mul(a.i(), b.i()))]
    );
    diff!(
        "int_div",
        [I(vec![2, 3], -50, 50), I(vec![2, 3], 1, 7)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_div(a.i(), b.i()))]
    );
    diff!(
        "int_remainder",
        [I(vec![2, 3], -50, 50), I(vec![2, 3], 1, 7)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_remainder(a.i(), b.i()))]
    );
    diff!(
        "int_powi",
        [I(vec![2, 3], -4, 5), I(vec![2, 3], 0, 4)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_powi(a.i(), b.i()))]
    );
    diff!(
        "int_matmul",
        [I(vec![2, 3], -5, 5), I(vec![3, 4], -5, 5)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_matmul(a.i(), b.i()))]
    );
    diff!(
        "int_matmul",
        [I(vec![2, 2, 3], -5, 5), I(vec![2, 3, 4], -5, 5)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_matmul(a.i(), b.i()))]
    );
    diff!(
        "int_add_scalar",
        [I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_add_scalar(a.i(), s(3)))]
    );
    diff!(
        "int_sub_scalar",
        [I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_sub_scalar(a.i(), s(3)))]
    );
    diff!(
        "int_mul_scalar",
        [I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_mul_scalar(a.i(), s(-3)))]
    );
    diff!(
        "int_div_scalar",
        [I(vec![2, 3], -50, 50)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_div_scalar(a.i(), s(3)))]
    );
    diff!(
        "int_remainder_scalar",
        [I(vec![2, 3], -50, 50)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_remainder_scalar(a.i(), s(7)))]
    );
    diff!(
        "int_powi_scalar",
        [I(vec![2, 3], -5, 5)],
        Tol::Exact,
        |X, a| {
            let a = a.i();
            let zero = X::int_powi_scalar(a.clone(), s(0));
            let one = X::int_powi_scalar(a.clone(), s(1));
            let two = X::int_powi_scalar(a.clone(), s(2));
            let three = X::int_powi_scalar(a, s(3));
            vec![Val::I(zero), Val::I(one), Val::I(two), Val::I(three)]
        }
    );
    diff!(
        "int_powi_scalar_impl",
        [I(vec![2, 3], -5, 5)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_powi_scalar_impl(a.i(), s(3)))]
    );
    diff!("int_neg", [I(vec![2, 3], -9, 9)], Tol::Exact, |X, a| vec![
        Val::I(X::int_neg(a.i()))
    ]);
    diff!("int_abs", [I(vec![2, 3], -9, 9)], Tol::Exact, |X, a| vec![
        Val::I(X::int_abs(a.i()))
    ]);
    diff!("int_sign", [I(vec![2, 3], -2, 3)], Tol::Exact, |X, a| vec![
        Val::I(X::int_sign(a.i()))
    ]);
    diff!(
        "int_clamp_min",
        [I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_clamp_min(a.i(), s(-2)))]
    );
    diff!(
        "int_clamp_max",
        [I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_clamp_max(a.i(), s(2)))]
    );
    diff!(
        "int_clamp",
        [I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_clamp(a.i(), s(-2), s(3)))]
    );
}

#[test]
fn int_mutual_broadcasting() {
    // `[2, 1]` against `[1, 3]`: neither operand covers the other.
    diff!(
        "int_add",
        [I(vec![2, 1], -9, 9), I(vec![1, 3], -9, 9)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_add(a.i(), b.i()))]
    );
    diff!(
        "int_lower",
        [I(vec![2, 1], -3, 3), I(vec![1, 3], -3, 3)],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::int_lower(a.i(), b.i(), BD))]
    );
    diff!(
        "int_mul",
        [I(vec![1, 3], -9, 9), I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::int_mul(a.i(), b.i()))]
    );
}

#[test]
fn int_bitwise() {
    diff!(
        "bitwise_and",
        [I(vec![2, 3], -64, 64), I(vec![2, 3], -64, 64)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::bitwise_and(a.i(), b.i()))]
    );
    diff!(
        "bitwise_or",
        [I(vec![2, 3], -64, 64), I(vec![2, 3], -64, 64)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::bitwise_or(a.i(), b.i()))]
    );
    diff!(
        "bitwise_xor",
        [I(vec![2, 3], -64, 64), I(vec![2, 3], -64, 64)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::bitwise_xor(a.i(), b.i()))]
    );
    diff!(
        "bitwise_left_shift",
        [I(vec![2, 3], 0, 64), I(vec![2, 3], 0, 8)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::bitwise_left_shift(a.i(), b.i()))]
    );
    diff!(
        "bitwise_right_shift",
        [I(vec![2, 3], 0, 1024), I(vec![2, 3], 0, 8)],
        Tol::Exact,
        |X, a, b| vec![Val::I(X::bitwise_right_shift(a.i(), b.i()))]
    );
    diff!(
        "bitwise_and_scalar",
        [I(vec![2, 3], -64, 64)],
        Tol::Exact,
        |X, a| vec![Val::I(X::bitwise_and_scalar(a.i(), s(0b1011)))]
    );
    diff!(
        "bitwise_or_scalar",
        [I(vec![2, 3], -64, 64)],
        Tol::Exact,
        |X, a| vec![Val::I(X::bitwise_or_scalar(a.i(), s(0b1011)))]
    );
    diff!(
        "bitwise_xor_scalar",
        [I(vec![2, 3], -64, 64)],
        Tol::Exact,
        |X, a| vec![Val::I(X::bitwise_xor_scalar(a.i(), s(0b1011)))]
    );
    diff!(
        "bitwise_not",
        [I(vec![2, 3], -64, 64)],
        Tol::Exact,
        |X, a| vec![Val::I(X::bitwise_not(a.i()))]
    );
    diff!(
        "bitwise_left_shift_scalar",
        [I(vec![2, 3], 0, 64)],
        Tol::Exact,
        |X, a| vec![Val::I(X::bitwise_left_shift_scalar(a.i(), s(3)))]
    );
    diff!(
        "bitwise_right_shift_scalar",
        [I(vec![2, 3], 0, 1024)],
        Tol::Exact,
        |X, a| vec![Val::I(X::bitwise_right_shift_scalar(a.i(), s(3)))]
    );
}

#[test]
fn int_reductions() {
    diff!("int_sum", [I(vec![2, 3], -9, 9)], Tol::Exact, |X, a| vec![
        Val::I(X::int_sum(a.i()))
    ]);
    diff!(
        "int_sum_dim",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_sum_dim(a.i(), 1))]
    );
    diff!("int_prod", [I(vec![2, 3], -3, 4)], Tol::Exact, |X, a| vec![
        Val::I(X::int_prod(a.i()))
    ]);
    diff!(
        "int_prod_dim",
        [I(vec![2, 3, 4], -3, 4)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_prod_dim(a.i(), 2))]
    );
    diff!(
        "int_mean",
        [I(vec![2, 3], -9, 20)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_mean(a.i()))]
    );
    diff!(
        "int_mean_dim",
        [I(vec![2, 3, 4], -9, 20)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_mean_dim(a.i(), 0))]
    );
    diff!("int_max", [I(vec![2, 3], -9, 9)], Tol::Exact, |X, a| vec![
        Val::I(X::int_max(a.i()))
    ]);
    diff!("int_min", [I(vec![2, 3], -9, 9)], Tol::Exact, |X, a| vec![
        Val::I(X::int_min(a.i()))
    ]);
    diff!(
        "int_max_abs",
        [I(vec![2, 3], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_max_abs(a.i()))]
    );
    diff!(
        "int_max_dim",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_max_dim(a.i(), 1))]
    );
    diff!(
        "int_min_dim",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_min_dim(a.i(), 2))]
    );
    diff!(
        "int_max_abs_dim",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_max_abs_dim(a.i(), 0))]
    );
    diff!(
        "int_max_dim_with_indices",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| {
            let (v, i) = X::int_max_dim_with_indices(a.i(), 1);
            vec![Val::I(v), Val::I(i)]
        }
    );
    diff!(
        "int_min_dim_with_indices",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| {
            let (v, i) = X::int_min_dim_with_indices(a.i(), 2);
            vec![Val::I(v), Val::I(i)]
        }
    );
    diff!(
        "int_argmax",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_argmax(a.i(), 1))]
    );
    diff!(
        "int_argmin",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_argmin(a.i(), 0))]
    );
    diff!("int_any", [I(vec![2, 3], 0, 2)], Tol::Exact, |X, a| vec![
        Val::B(X::int_any(a.i(), BD))
    ]);
    diff!(
        "int_any_dim",
        [I(vec![2, 3], 0, 2)],
        Tol::Exact,
        |X, a| vec![Val::B(X::int_any_dim(a.i(), 1, BD))]
    );
    diff!("int_all", [I(vec![2, 2], 0, 3)], Tol::Exact, |X, a| vec![
        Val::B(X::int_all(a.i(), BD))
    ]);
    diff!(
        "int_all_dim",
        [I(vec![2, 3], 0, 3)],
        Tol::Exact,
        |X, a| vec![Val::B(X::int_all_dim(a.i(), 0, BD))]
    );
}

#[test]
fn int_cumulative_and_sorting() {
    diff!(
        "int_cumsum",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_cumsum(a.i(), 1))]
    );
    diff!(
        "int_cumprod",
        [I(vec![2, 3, 4], -3, 4)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_cumprod(a.i(), 2))]
    );
    diff!(
        "int_cummin",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_cummin(a.i(), 0))]
    );
    diff!(
        "int_cummax",
        [I(vec![2, 3, 4], -9, 9)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_cummax(a.i(), 1))]
    );
    // Wide ranges: no ties, so sort orders (and indices) are unique.
    diff!(
        "int_sort",
        [I(vec![2, 3, 5], -1_000_000, 1_000_000)],
        Tol::Exact,
        |X, a| {
            let a = a.i();
            vec![
                Val::I(X::int_sort(a.clone(), 2, false)),
                Val::I(X::int_sort(a, 0, true)),
            ]
        }
    );
    diff!(
        "int_sort_with_indices",
        [I(vec![2, 3, 5], -1_000_000, 1_000_000)],
        Tol::Exact,
        |X, a| {
            let (v, i) = X::int_sort_with_indices(a.i(), 1, true);
            vec![Val::I(v), Val::I(i)]
        }
    );
    diff!(
        "int_argsort",
        [I(vec![2, 3, 5], -1_000_000, 1_000_000)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_argsort(a.i(), 2, false))]
    );
    diff!(
        "int_topk",
        [I(vec![2, 3, 5], -1_000_000, 1_000_000)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_topk(a.i(), 2, 2))]
    );
}

/// NdArray (the reference backend) does not implement `int_argtopk`: the rule forwards to the
/// inner backend with the member axis shifted, so the inner backend's own panic shows through.
#[test]
#[should_panic(expected = "argtopk not implemented for ndarray")]
fn int_argtopk_forwards_to_inner() {
    diff!(
        "int_argtopk",
        [I(vec![2, 3, 5], -1_000_000, 1_000_000)],
        Tol::Exact,
        |X, a| vec![Val::I(X::int_argtopk(a.i(), 2, 2))]
    );
}

#[test]
fn int_select_with_batched_indices_stays_per_member() {
    // Member m selects a different column of the same unbatched tensor.
    let dev = Default::default();
    let t = Inner::int_from_data(
        burn::tensor::TensorData::new(vec![0i64, 1, 2, 10, 11, 12], [2, 3]),
        &dev,
    );
    let idx = Inner::int_from_data(
        burn::tensor::TensorData::new(vec![2i64, 0, 1], [3, 1]),
        &dev,
    );
    let t = saturate_vmap::tensor::from_inner(t, false, 3);
    let idx = saturate_vmap::tensor::from_inner(idx, true, 3);
    let out = V::int_select(t, 1, idx);
    assert!(out.is_batched());
    assert_eq!(out.shape().to_vec(), vec![2, 1]);
    let data = burn::tensor::try_read_sync(Inner::int_into_data(out.into_inner()))
        .unwrap()
        .unwrap();
    assert_eq!(data.to_vec::<i64>().unwrap(), vec![2, 12, 0, 10, 1, 11]);
}

// ---------------------------------------------------------------- autodiff through int ops

// Int and bool ops carry no gradient themselves; these cases check that gradients stay exact
// per member when int/bool results (batched or not) steer differentiable float ops.
use super::float::{grad_check, Ai, Av};
use burn::tensor::backend::Backend as BackendT;
use burn::tensor::{Int, Tensor};

macro_rules! grad_case {
    ($name:literal, $d:literal => $e:literal, [$($shape:expr),* $(,)?], $range:expr, |$bk:ident, $xs:ident| $body:expr) => {{
        #[allow(unused_mut, non_snake_case)]
        fn op<$bk: BackendT>(mut $xs: Vec<Tensor<$bk, $d>>) -> Tensor<$bk, $e> {
            $body
        }
        grad_check::<$d, $e>($name, &[$($shape),*], $range, op::<Av>, op::<Ai>);
    }};
}

#[test]
fn grad_through_int_ops() {
    // Batched indices (argmax of a batched input) turned into floats.
    grad_case!("int_into_float", 2 => 2, [vec![2, 3]], (-2.0, 2.0), |Bk, x| {
        let x = x.remove(0);
        let idx = x.clone().argmax(1);
        x * idx.add_scalar(1).float()
    });
    // Unbatched indices from arange/flip select columns of a (maybe batched) input.
    grad_case!("int_arange", 2 => 2, [vec![2, 4]], (-2.0, 2.0), |Bk, x| {
        let x = x.remove(0);
        let idx = Tensor::<Bk, 1, Int>::arange(0..3, &x.device()).flip([0]);
        x.select(1, idx)
    });
    // Batched indices rewritten by int ops (add, remainder, cat), then gathered:
    // the gather backward scatters into per-member zeros.
    grad_case!("int_remainder_scalar", 2 => 2, [vec![3, 4]], (-2.0, 2.0), |Bk, x| {
        let x = x.remove(0);
        let a = x.clone().argsort(1).add_scalar(1).remainder_scalar(4);
        let b = x.clone().argmin(1);
        let idx = Tensor::cat(vec![a, b], 1);
        x.gather(1, idx)
    });
    // Bool masks combined by bool ops steer mask_where / multiply.
    grad_case!("bool_into_float", 2 => 2, [vec![2, 3]], (-2.0, 2.0), |Bk, x| {
        let x = x.remove(0);
        let m = x.clone().lower_elem(0.5).bool_not();
        x * m.float()
    });
    grad_case!("bool_and", 2 => 2, [vec![2, 3], vec![2, 3]], (-2.0, 2.0), |Bk, x| {
        let y = x.pop().unwrap();
        let x = x.pop().unwrap();
        let m = x
            .clone()
            .greater_elem(-1.0)
            .bool_and(y.clone().lower_elem(1.0))
            .bool_xor(x.clone().greater(y.clone()));
        x.mask_where(m, y)
    });
}
