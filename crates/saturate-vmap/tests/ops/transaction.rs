//! `TransactionOps::tr_execute`: unbatched tensors are read in one transaction; a batched tensor
//! fails like `into_data`.

use burn::tensor::ops::{BoolTensorOps, FloatTensorOps, IntTensorOps, TransactionOps};
use burn::tensor::{TensorData, TransactionPrimitive};

type Inner = crate::harness::I;
type Vm = crate::harness::V;

fn device(members: usize) -> saturate_vmap::VmapDevice<Inner> {
    saturate_vmap::VmapDevice::new(Default::default(), members)
}

#[test]
fn tr_execute_reads_unbatched_tensors() {
    // "tr_execute"
    let d = device(3);
    let f = TensorData::new(vec![1.0f32, -2.0, 3.5], [3]);
    let i = TensorData::new(vec![4i64, 5, -6, 7], [2, 2]);
    let b = TensorData::new(vec![true, false], [2]);
    let tr = TransactionPrimitive::<Vm>::new(
        vec![
            Vm::float_from_data(f.clone(), &d),
            Vm::float_from_data(f.clone(), &d),
        ],
        vec![],
        vec![Vm::int_from_data(i.clone(), &d)],
        vec![Vm::bool_from_data(b.clone(), &d)],
    );
    let out = burn::tensor::try_read_sync(Vm::tr_execute(tr))
        .unwrap()
        .unwrap();
    assert_eq!(out.read_floats.len(), 2);
    assert_eq!(out.read_floats[0].as_bytes(), f.as_bytes());
    assert_eq!(out.read_floats[1].as_bytes(), f.as_bytes());
    assert_eq!(out.read_ints[0].as_bytes(), i.as_bytes());
    assert_eq!(out.read_bools[0].as_bytes(), b.as_bytes());
    // The same as the inner backend's transaction.
    let dev = Default::default();
    let tr = TransactionPrimitive::<Inner>::new(
        vec![Inner::float_from_data(f.clone(), &dev)],
        vec![],
        vec![Inner::int_from_data(i.clone(), &dev)],
        vec![],
    );
    let want = burn::tensor::try_read_sync(Inner::tr_execute(tr))
        .unwrap()
        .unwrap();
    assert_eq!(
        want.read_floats[0].as_bytes(),
        out.read_floats[0].as_bytes()
    );
    assert_eq!(want.read_ints[0].as_bytes(), out.read_ints[0].as_bytes());
    crate::harness::record_covered("tr_execute");
}

#[test]
fn tr_execute_refuses_batched_tensors() {
    let d = device(3);
    for kind in 0..3 {
        let mut floats = vec![Vm::float_from_data(TensorData::new(vec![1.0f32], [1]), &d)];
        let mut ints = vec![];
        let mut bools = vec![];
        match kind {
            0 => floats.push(crate::harness::random_on_group(3, vec![2])),
            1 => ints.push(saturate_vmap::tensor::from_inner(
                Inner::int_from_data(
                    TensorData::new(vec![1i64, 2, 3], [3, 1]),
                    &Default::default(),
                ),
                true,
                3,
            )),
            _ => bools.push(saturate_vmap::tensor::from_inner(
                Inner::bool_from_data(
                    TensorData::new(vec![true, false, true], [3, 1]),
                    &Default::default(),
                ),
                true,
                3,
            )),
        }
        let tr = TransactionPrimitive::<Vm>::new(floats, vec![], ints, bools);
        let Err(err) = burn::tensor::try_read_sync(Vm::tr_execute(tr)).unwrap() else {
            panic!("tr_execute read a batched tensor");
        };
        assert!(
            format!("{err:?}").contains("cannot read a batched tensor"),
            "{err:?}"
        );
    }
}

#[test]
fn tensor_api_transaction() {
    // Through burn's Transaction API: unbatched reads work.
    use burn::tensor::{Tensor, Transaction};
    let d = device(2);
    let a = Tensor::<Vm, 1>::from_floats([1.0, 2.0], &d);
    let b = Tensor::<Vm, 1, burn::tensor::Int>::from_ints([3, 4], &d);
    let out = Transaction::default().register(a).register(b).execute();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
}
