//! The NdArray fast paths of `src/ops/ndarray_fast.rs` (max pool with indices and its backward,
//! `relu_backward`, copy-free reshape) against plain NdArray, bit for bit, on inputs chosen to
//! hit their edge cases: ties (the first maximum wins), minus infinity and NaN (never win),
//! padding and dilation (the general loop) and overlapping windows (several outputs adding
//! into one input, in output order), zeros of both signs and NaN in `relu_backward`, reshapes
//! of permuted (non-contiguous) arrays, and both int element types of NdArray (indices as i64
//! and as i32).

use burn::backend::{Autodiff, NdArray};
use burn::tensor::backend::Backend;
use burn::tensor::module::{max_pool2d, max_pool2d_with_indices};
use burn::tensor::{Tensor, TensorData};
use saturate_vmap::{member_data, stack_members, Vmap, VmapDevice};

/// Member `m`'s input: small integers (many ties), with minus infinity and NaN sprinkled in.
fn input(shape: [usize; 4], m: usize) -> TensorData {
    let n: usize = shape.iter().product();
    let values: Vec<f32> = (0..n)
        .map(|i| match (i * 7 + m * 3) % 23 {
            0 => f32::NEG_INFINITY,
            5 => f32::NAN,
            r => ((r % 5) as f32) - 2.0,
        })
        .collect();
    TensorData::new(values, shape.to_vec())
}

fn bits(d: &TensorData) -> Vec<u32> {
    d.to_vec::<f32>()
        .expect("f32 data")
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

/// Output, indices (as floats) and input gradient of a max pool on a group of K members on
/// `Autodiff<Vmap<I>>`, and each member alone on `Autodiff<I>`: equal bit for bit.
// `got` is indexed [result][member]; the loop runs over members.
#[allow(clippy::needless_range_loop)]
fn check_pool<I: Backend>(
    shape: [usize; 4],
    k: usize,
    kernel: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
) {
    let device = VmapDevice::<I>::new(Default::default(), k);
    let members: Vec<Tensor<Vmap<I>, 4>> = (0..k)
        .map(|m| Tensor::from_data(input(shape, m), &device))
        .collect();
    let x =
        Tensor::<Autodiff<Vmap<I>>, 4>::from_inner(stack_members(members).unwrap()).require_grad();
    let (out, idx) = max_pool2d_with_indices(x.clone(), kernel, stride, padding, dilation, false);
    // An upstream gradient that differs per position, so that the order of the additions shows.
    let weights = |dims: [usize; 4]| {
        let n: usize = dims.iter().product();
        TensorData::new(
            (0..n)
                .map(|i| 1.0 + (i % 13) as f32 * 0.1)
                .collect::<Vec<f32>>(),
            dims.to_vec(),
        )
    };
    let w = weights(out.dims());
    // NaN outputs would poison the sum: keep only finite ones in the loss.
    let mask_nan = |t: Tensor<Autodiff<Vmap<I>>, 4>| {
        let finite = t
            .clone()
            .is_nan()
            .bool_not()
            .bool_and(t.clone().is_inf().bool_not());
        t.mask_fill(finite.bool_not(), 0.0)
    };
    let loss = (mask_nan(out.clone()) * Tensor::from_data(w.clone(), &device)).sum();
    let grads = loss.backward();
    let got = [
        member_data(out.inner()),
        member_data(idx.inner().float()),
        member_data(x.grad(&grads).unwrap()),
    ];
    for m in 0..k {
        let dev = Default::default();
        let x = Tensor::<Autodiff<I>, 4>::from_data(input(shape, m), &dev).require_grad();
        let (out, idx) =
            max_pool2d_with_indices(x.clone(), kernel, stride, padding, dilation, false);
        let finite = out
            .clone()
            .is_nan()
            .bool_not()
            .bool_and(out.clone().is_inf().bool_not());
        let masked = out.clone().mask_fill(finite.bool_not(), 0.0);
        let grads = (masked * Tensor::from_data(w.clone(), &dev))
            .sum()
            .backward();
        let want = [
            out.into_data(),
            idx.inner().float().into_data(),
            x.grad(&grads).unwrap().into_data(),
        ];
        for (i, what) in ["output", "indices", "input gradient"].iter().enumerate() {
            assert_eq!(
                bits(&got[i][m]),
                bits(&want[i]),
                "{what} of member {m}: kernel {kernel:?} stride {stride:?} padding {padding:?} \
                 dilation {dilation:?}"
            );
        }
    }
    // Without autodiff (inference), `max_pool2d` without indices: NdArray's own values.
    let members: Vec<Tensor<Vmap<I>, 4>> = (0..k)
        .map(|m| Tensor::from_data(input(shape, m), &device))
        .collect();
    let pooled = member_data(max_pool2d(
        stack_members(members).unwrap(),
        kernel,
        stride,
        padding,
        dilation,
        false,
    ));
    for (m, got) in pooled.iter().enumerate() {
        let x = Tensor::<I, 4>::from_data(input(shape, m), &Default::default());
        let want = max_pool2d(x, kernel, stride, padding, dilation, false).into_data();
        assert_eq!(
            bits(got),
            bits(&want),
            "inference output of member {m}: kernel {kernel:?} stride {stride:?} padding \
             {padding:?} dilation {dilation:?}"
        );
    }
}

#[test]
fn max_pool_matches_ndarray_bit_for_bit() {
    type I64 = NdArray<f32, i64>;
    // The contiguous-window loops (no padding, no dilation), disjoint and overlapping windows:
    // the unrolled 2x2 and 3x3 ones and the one for any kernel size.
    check_pool::<I64>([2, 3, 8, 9], 3, [2, 2], [2, 2], [0, 0], [1, 1]);
    check_pool::<I64>([2, 3, 8, 9], 3, [2, 2], [1, 1], [0, 0], [1, 1]);
    check_pool::<I64>([2, 3, 9, 8], 3, [3, 3], [2, 1], [0, 0], [1, 1]);
    check_pool::<I64>([2, 3, 8, 9], 3, [3, 2], [1, 1], [0, 0], [1, 1]);
    // The general loop: padding and dilation.
    check_pool::<I64>([2, 2, 7, 6], 2, [3, 3], [2, 1], [1, 1], [1, 1]);
    check_pool::<I64>([1, 2, 9, 8], 2, [2, 3], [1, 2], [1, 0], [2, 1]);
}

#[test]
fn max_pool_indices_keep_the_int_element_type() {
    check_pool::<NdArray<f32, i32>>([2, 3, 8, 9], 2, [2, 2], [2, 2], [0, 0], [1, 1]);
    check_pool::<NdArray<f32, i32>>([2, 2, 7, 6], 2, [3, 3], [2, 1], [1, 1], [1, 1]);
}

#[test]
fn relu_backward_matches_ndarray_bit_for_bit() {
    type I = NdArray<f32, i64>;
    let special = [
        0.0f32,
        -0.0,
        1.5,
        -1.5,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    let k = 3;
    let shape = [4usize, 7];
    let n: usize = shape.iter().product();
    let output = |m: usize| {
        TensorData::new(
            (0..n)
                .map(|i| special[(i + m) % special.len()])
                .collect::<Vec<f32>>(),
            shape.to_vec(),
        )
    };
    let grad = |m: usize| {
        TensorData::new(
            (0..n)
                .map(|i| special[(i * 3 + m + 1) % special.len()] + 0.25)
                .collect::<Vec<f32>>(),
            shape.to_vec(),
        )
    };
    let device = VmapDevice::<I>::new(Default::default(), k);
    let group = |f: &dyn Fn(usize) -> TensorData| -> Tensor<Vmap<I>, 2> {
        stack_members((0..k).map(|m| Tensor::from_data(f(m), &device)).collect()).unwrap()
    };
    use burn::tensor::ops::ActivationOps;
    let got = Tensor::<Vmap<I>, 2>::from_primitive(burn::tensor::TensorPrimitive::Float(
        <Vmap<I> as ActivationOps<Vmap<I>>>::relu_backward(
            group(&output).into_primitive().tensor(),
            group(&grad).into_primitive().tensor(),
        ),
    ));
    let got = member_data(got);
    for (m, got) in got.iter().enumerate() {
        let dev = Default::default();
        let want = <I as ActivationOps<I>>::relu_backward(
            Tensor::<I, 2>::from_data(output(m), &dev)
                .into_primitive()
                .tensor(),
            Tensor::<I, 2>::from_data(grad(m), &dev)
                .into_primitive()
                .tensor(),
        );
        let want = Tensor::<I, 2>::from_primitive(burn::tensor::TensorPrimitive::Float(want));
        assert_eq!(bits(got), bits(&want.into_data()), "member {m}");
    }
}

#[test]
fn reshape_of_permuted_members_keeps_values() {
    type I = NdArray<f32, i64>;
    let k = 2;
    let device = VmapDevice::<I>::new(Default::default(), k);
    let data = |m: usize| {
        TensorData::new(
            (0..24).map(|i| (i + 100 * m) as f32).collect::<Vec<f32>>(),
            vec![2, 3, 4],
        )
    };
    let x: Tensor<Vmap<I>, 3> = stack_members(
        (0..k)
            .map(|m| Tensor::from_data(data(m), &device))
            .collect(),
    )
    .unwrap();
    // Contiguous reshape (the copy-free path), then a permuted one (the backend's own).
    let flat = member_data(x.clone().reshape([6, 4]));
    let permuted = member_data(x.permute([2, 0, 1]).reshape([4, 6]));
    for m in 0..k {
        let alone = Tensor::<I, 3>::from_data(data(m), &Default::default());
        assert_eq!(
            flat[m],
            alone.clone().reshape([6, 4]).into_data(),
            "member {m}"
        );
        assert_eq!(
            permuted[m],
            alone.permute([2, 0, 1]).reshape([4, 6]).into_data(),
            "member {m}"
        );
    }
}

/// Values that make the order of a sum show in its rounding: magnitudes from 2^-10 to 2^10.
fn ragged(len: usize, seed: usize) -> Vec<f32> {
    (0..len)
        .map(|i| {
            let r = (i * 2654435761 + seed * 40503) % 4099;
            let sign = if r.is_multiple_of(3) { -1.0 } else { 1.0 };
            sign * (1.0 + (r % 97) as f32 / 97.0) * 2f32.powi((r % 21) as i32 - 10)
        })
        .collect()
}

/// The NdArray matrix-product kernel (`kernels/ndarray/matmul.rs`) against each member's
/// product on plain NdArray, bit for bit: both operands per member or one shared, operands
/// transposed (read through their strides), products small (on the calling thread) and large
/// (members in parallel), one member and three.
#[test]
fn matmul_matches_ndarray_bit_for_bit() {
    type I = NdArray<f32, i64>;
    let dev = Default::default();
    // (m, k, n): small (below 2^18 multiply-adds in all), large, and two above 2^22 that a
    // member alone splits into blocks over the threads (at K = 1 with two or more threads): of
    // rows (n <= m) and of columns (n > m), with a ragged last block.
    for (m, kk, n) in [
        (5, 7, 3),
        (64, 96, 80),
        (160, 130, 110),
        (200, 150, 150),
        (150, 160, 190),
    ] {
        for k in [1usize, 3] {
            for (lhs_batched, rhs_batched) in [(true, true), (false, true), (true, false)] {
                for transposed in [false, true] {
                    let device = VmapDevice::<I>::new(Default::default(), k);
                    // Member j's operands; transposed ones are stored [k, m] / [n, k] and
                    // swapped back, so the product reads them through their strides.
                    let lhs_data = |j: usize| {
                        let shape = if transposed { [kk, m] } else { [m, kk] };
                        TensorData::new(ragged(m * kk, j), shape.to_vec())
                    };
                    let rhs_data = |j: usize| {
                        let shape = if transposed { [n, kk] } else { [kk, n] };
                        TensorData::new(ragged(kk * n, 100 + j), shape.to_vec())
                    };
                    let orient = |t: Tensor<Vmap<I>, 2>| if transposed { t.transpose() } else { t };
                    let operand = |batched: bool, data: &dyn Fn(usize) -> TensorData| {
                        if batched {
                            stack_members(
                                (0..k)
                                    .map(|j| Tensor::from_data(data(j), &device))
                                    .collect(),
                            )
                            .unwrap()
                        } else {
                            Tensor::<Vmap<I>, 2>::from_data(data(0), &device)
                        }
                    };
                    let got = orient(operand(lhs_batched, &lhs_data))
                        .matmul(orient(operand(rhs_batched, &rhs_data)));
                    let got = member_data(got);
                    for (j, got) in got.iter().enumerate() {
                        let plain = |data: TensorData| {
                            let t = Tensor::<I, 2>::from_data(data, &dev);
                            if transposed {
                                t.transpose()
                            } else {
                                t
                            }
                        };
                        let want = plain(lhs_data(if lhs_batched { j } else { 0 }))
                            .matmul(plain(rhs_data(if rhs_batched { j } else { 0 })));
                        assert_eq!(
                            bits(got),
                            bits(&want.into_data()),
                            "[{m}, {kk}] @ [{kk}, {n}], K = {k}, batched {lhs_batched}/{rhs_batched}, \
                             transposed {transposed}, member {j}"
                        );
                    }
                }
            }
        }
    }
}

/// The bias gradient of `Linear` on Vmap (`kernels/ndarray/sum_rows.rs`: each member's rows
/// added in order) against each member's rows summed by plain NdArray's `sum_dim(0)`, bit for
/// bit: rows of rank 2 (which is NdArray's `linear_bias_backward`) and of rank 3 (Vmap
/// flattens them into one axis of rows; Burn's default sums one axis after the other, which
/// rounds differently), one output column (handed back to `sum_dim`), several, no rows, and
/// members summed in parallel (a large gradient), at K = 1 and 3.
#[test]
fn linear_bias_grad_matches_ndarray_bit_for_bit() {
    check_bias_grad([6, 1]);
    check_bias_grad([6, 5]);
    check_bias_grad([0, 4]);
    check_bias_grad([20_000, 5]);
    check_bias_grad([2, 3, 16]);
}

fn check_bias_grad<const D: usize>(shape: [usize; D]) {
    use burn::tensor::ops::ModuleOps;
    use burn::tensor::TensorPrimitive;
    type I = NdArray<f32, i64>;
    let dev = Default::default();
    let len: usize = shape.iter().product();
    let grad = |m: usize| TensorData::new(ragged(len, 7 + m), shape.to_vec());
    for k in [1usize, 3] {
        let device = VmapDevice::<I>::new(Default::default(), k);
        let group: Tensor<Vmap<I>, D> = stack_members(
            (0..k)
                .map(|m| Tensor::from_data(grad(m), &device))
                .collect(),
        )
        .unwrap();
        let got =
            <Vmap<I> as ModuleOps<Vmap<I>>>::linear_bias_backward(group.into_primitive().tensor());
        let got = member_data(Tensor::<Vmap<I>, 1>::from_primitive(
            TensorPrimitive::Float(got),
        ));
        for (m, got) in got.iter().enumerate() {
            let columns = shape[D - 1];
            let want = Tensor::<I, D>::from_data(grad(m), &dev)
                .reshape([len / columns.max(1), columns])
                .sum_dim(0)
                .reshape([columns]);
            if D == 2 {
                // Rows of rank 2: NdArray's own bias gradient is that sum.
                let plain = Tensor::<I, D>::from_data(grad(m), &dev);
                let own =
                    <I as ModuleOps<I>>::linear_bias_backward(plain.into_primitive().tensor());
                let own = Tensor::<I, 1>::from_primitive(TensorPrimitive::Float(own));
                assert_eq!(bits(&own.into_data()), bits(&want.clone().into_data()));
            }
            assert_eq!(
                bits(got),
                bits(&want.into_data()),
                "{shape:?}, K = {k}, member {m}"
            );
        }
    }
}
