//! Differential cases for `BoolTensorOps` (every required and provided op).

use burn::tensor::ops::{BoolTensorOps, IntTensorOps};
use burn::tensor::{BoolDType, FloatDType, IntDType, TensorData, TensorMetadata};
use burn_backend::{Scalar, Slice};

use crate::harness::{Tol, Val, I as Inner, V};

const ID: IntDType = IntDType::I64;
const BD: BoolDType = BoolDType::Native;

#[test]
fn bool_creation() {
    diff!("bool_from_data", [B(vec![2, 3])], Tol::Exact, |X, a| {
        let dev = X::bool_device(&a.b());
        let data = TensorData::new(vec![true, false, false, true], [2, 2]);
        vec![Val::B(X::bool_from_data(data, &dev))]
    });
    diff!("bool_zeros", [B(vec![2, 3])], Tol::Exact, |X, a| {
        let dev = X::bool_device(&a.b());
        vec![Val::B(X::bool_zeros([2, 4].into(), &dev, BD))]
    });
    diff!("bool_ones", [B(vec![2, 3])], Tol::Exact, |X, a| {
        let dev = X::bool_device(&a.b());
        vec![Val::B(X::bool_ones([2, 4].into(), &dev, BD))]
    });
    diff!("bool_empty", [B(vec![2, 3])], Tol::Exact, |X, a| {
        // Only the shape is defined: `and` the uninitialised values with false.
        let dev = X::bool_device(&a.b());
        let e = X::bool_empty([2, 4].into(), &dev, BD);
        let z = X::bool_zeros([2, 4].into(), &dev, BD);
        vec![Val::B(X::bool_and(e, z))]
    });
    // An unbatched constant mixed with a batched operand.
    diff!("bool_ones", [B(vec![2, 3])], Tol::Exact, |X, a| {
        let a = a.b();
        let dev = X::bool_device(&a);
        vec![Val::B(X::bool_and(
            X::bool_ones([2, 3].into(), &dev, BD),
            a,
        ))]
    });
}

#[test]
fn bool_device_moves_and_data() {
    diff!("bool_device", [B(vec![2, 3])], Tol::Exact, |X, a| {
        let a = a.b();
        let dev = X::bool_device(&a);
        vec![Val::B(X::bool_to_device(a, &dev))]
    });
    diff!("bool_to_device", [B(vec![2, 3])], Tol::Exact, |X, a| {
        let a = a.b();
        let dev = X::bool_device(&a);
        vec![Val::B(X::bool_to_device(a, &dev))]
    });
    diff!(@only "bool_into_data", [B(vec![2, 3])], Tol::Exact, Some(&[&[false]]), |X, a| {
        let a = a.b();
        let dev = X::bool_device(&a);
        let data = burn::tensor::try_read_sync(X::bool_into_data(a)).unwrap().unwrap();
        vec![Val::B(X::bool_from_data(data, &dev))]
    });
}

#[test]
fn bool_into_data_of_batched_tensor_fails() {
    let dev = Default::default();
    let inner = Inner::bool_from_data(TensorData::new(vec![true, false], [2, 1]), &dev);
    let t = saturate_vmap::tensor::from_inner(inner, true, 2);
    let err = burn::tensor::try_read_sync(V::bool_into_data(t))
        .unwrap()
        .unwrap_err();
    assert!(format!("{err:?}").contains("bool_into_data"), "{err:?}");
}

#[test]
fn bool_conversions() {
    diff!("bool_into_int", [B(vec![2, 3])], Tol::Exact, |X, a| vec![
        Val::I(X::bool_into_int(a.b(), ID))
    ]);
    diff!("bool_into_float", [B(vec![2, 3])], Tol::Exact, |X, a| vec![
        Val::F(X::bool_into_float(a.b(), FloatDType::F32))
    ]);
}

#[test]
fn bool_shape_ops() {
    diff!("bool_reshape", [B(vec![2, 3, 4])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_reshape(a.b(), [4, 6].into()))
    ]);
    diff!("bool_slice", [B(vec![4, 5])], Tol::Exact, |X, a| {
        let slices = [Slice::new(1, Some(3), 1), Slice::new(0, None, 2)];
        vec![Val::B(X::bool_slice(a.b(), &slices))]
    });
    diff!(
        "bool_slice_assign",
        [B(vec![4, 5]), B(vec![2, 3])],
        Tol::Exact,
        |X, a, b| {
            let slices = [Slice::new(1, Some(3), 1), Slice::new(0, None, 2)];
            vec![Val::B(X::bool_slice_assign(a.b(), &slices, b.b()))]
        }
    );
    diff!(
        "bool_swap_dims",
        [B(vec![2, 3, 4])],
        Tol::Exact,
        |X, a| vec![Val::B(X::bool_swap_dims(a.b(), 0, 1))]
    );
    diff!(
        "bool_transpose",
        [B(vec![2, 3, 4])],
        Tol::Exact,
        |X, a| vec![Val::B(X::bool_transpose(a.b()))]
    );
    diff!("bool_permute", [B(vec![2, 3, 4])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_permute(a.b(), &[1, 2, 0]))
    ]);
    diff!("bool_flip", [B(vec![2, 3, 4])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_flip(a.b(), &[1]))
    ]);
    diff!("bool_expand", [B(vec![1, 3])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_expand(a.b(), [4, 3].into()))
    ]);
    diff!("bool_expand", [B(vec![3])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_expand(a.b(), [2, 2, 3].into()))
    ]);
    diff!("bool_unfold", [B(vec![2, 7])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_unfold(a.b(), 1, 3, 2))
    ]);
    diff!("bool_repeat_dim", [B(vec![2, 3])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_repeat_dim(a.b(), 0, 3))
    ]);
    diff!(
        "bool_cat",
        [B(vec![2, 3]), B(vec![2, 1]), B(vec![2, 2])],
        Tol::Exact,
        |X, a, b, c| vec![Val::B(X::bool_cat(vec![a.b(), b.b(), c.b()], 1))]
    );
}

#[test]
fn bool_index_ops() {
    diff!(
        "bool_mask_where",
        [B(vec![2, 3]), B(vec![2, 3]), B(vec![2, 3])],
        Tol::Exact,
        |X, a, m, v| vec![Val::B(X::bool_mask_where(a.b(), m.b(), v.b()))]
    );
    diff!(
        "bool_mask_fill",
        [B(vec![2, 3]), B(vec![2, 3])],
        Tol::Exact,
        |X, a, m| vec![Val::B(X::bool_mask_fill(a.b(), m.b(), Scalar::from(true)))]
    );
    diff!(
        "bool_gather",
        [B(vec![3, 4]), I(vec![3, 5], 0, 4)],
        Tol::Exact,
        |X, a, i| vec![Val::B(X::bool_gather(1, a.b(), i.i()))]
    );
    diff!(
        "bool_scatter_or",
        [B(vec![3, 4]), I(vec![3, 2], 0, 4), B(vec![3, 2])],
        Tol::Exact,
        |X, a, i, v| vec![Val::B(X::bool_scatter_or(1, a.b(), i.i(), v.b()))]
    );
    diff!(
        "bool_select",
        [B(vec![3, 4]), I(vec![5], 0, 4)],
        Tol::Exact,
        |X, a, i| vec![Val::B(X::bool_select(a.b(), 1, i.i()))]
    );
    diff!(
        "bool_select_or",
        [B(vec![3, 4]), I(vec![3], 0, 3), B(vec![3, 4])],
        Tol::Exact,
        |X, a, i, v| vec![Val::B(X::bool_select_or(a.b(), 0, i.i(), v.b()))]
    );
}

#[test]
fn bool_logic() {
    diff!(
        "bool_equal",
        [B(vec![2, 3]), B(vec![2, 3])],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::bool_equal(a.b(), b.b()))]
    );
    diff!(
        "bool_not_equal",
        [B(vec![2, 3]), B(vec![2, 3])],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::bool_not_equal(a.b(), b.b()))]
    );
    diff!(
        "bool_and",
        [B(vec![2, 3]), B(vec![2, 3])],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::bool_and(a.b(), b.b()))]
    );
    diff!(
        "bool_or",
        [B(vec![2, 3]), B(vec![1, 3])],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::bool_or(a.b(), b.b()))]
    );
    diff!(
        "bool_xor",
        [B(vec![2, 3]), B(vec![2, 3])],
        Tol::Exact,
        |X, a, b| vec![Val::B(X::bool_xor(a.b(), b.b()))]
    );
    diff!("bool_not", [B(vec![2, 3])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_not(a.b()))
    ]);
    diff!("bool_equal_elem", [B(vec![2, 3])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_equal_elem(a.b(), Scalar::from(true)))
    ]);
    diff!(
        "bool_not_equal_elem",
        [B(vec![2, 3])],
        Tol::Exact,
        |X, a| vec![Val::B(X::bool_not_equal_elem(a.b(), Scalar::from(true)))]
    );
}

#[test]
fn bool_reductions() {
    diff!("bool_any", [B(vec![2, 2])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_any(a.b()))
    ]);
    diff!("bool_all", [B(vec![1, 2])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_all(a.b()))
    ]);
    diff!("bool_any_dim", [B(vec![2, 2, 3])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_any_dim(a.b(), 1))
    ]);
    diff!("bool_all_dim", [B(vec![2, 2, 3])], Tol::Exact, |X, a| vec![
        Val::B(X::bool_all_dim(a.b(), 2))
    ]);
}

#[test]
fn bool_argwhere_unbatched() {
    diff!(@only "bool_argwhere", [B(vec![3, 4])], Tol::Exact, Some(&[&[false]]), |X, a| {
        let out = burn::tensor::try_read_sync(X::bool_argwhere(a.b(), ID)).unwrap();
        vec![Val::I(out)]
    });
}

#[test]
#[should_panic(expected = "not supported under vmap")]
fn bool_argwhere_batched_is_unsupported() {
    // `bool_argwhere`: its output shape depends on each member's data.
    let dev = Default::default();
    let inner = Inner::bool_from_data(TensorData::new(vec![true, false], [2, 1]), &dev);
    let t = saturate_vmap::tensor::from_inner(inner, true, 2);
    let _ = burn::tensor::try_read_sync(V::bool_argwhere(t, ID));
}

#[test]
fn bool_select_with_batched_indices_stays_per_member() {
    let dev = Default::default();
    let t = Inner::bool_from_data(TensorData::new(vec![true, false, false], [3]), &dev);
    let idx = Inner::int_from_data(TensorData::new(vec![0i64, 1, 0, 2], [2, 2]), &dev);
    let t = saturate_vmap::tensor::from_inner(t, false, 2);
    let idx = saturate_vmap::tensor::from_inner(idx, true, 2);
    let out = V::bool_select(t, 0, idx);
    assert!(out.is_batched());
    assert_eq!(out.shape().to_vec(), vec![2]);
    let data = burn::tensor::try_read_sync(Inner::bool_into_data(out.into_inner()))
        .unwrap()
        .unwrap();
    assert_eq!(
        data.to_vec::<bool>().unwrap(),
        vec![true, false, true, false]
    );
}
