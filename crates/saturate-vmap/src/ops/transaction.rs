//! Batching rules for `TransactionOps`.

use core::future::Future;

use burn_backend::ops::{TransactionOps, TransactionPrimitive, TransactionPrimitiveData};
use burn_backend::{Backend, ExecutionError, TensorData};

use crate::tensor::{batched_read_error, strip_single_member};
use crate::Vmap;

impl<B: Backend> TransactionOps<Self> for Vmap<B> {
    /// Reads unbatched tensors (and batched tensors of a one-member group, without their member
    /// axis) in one transaction of the inner backend. A batched tensor of several members holds
    /// one value per member and cannot be read as one `TensorData`: the transaction fails with
    /// the same error as `into_data`.
    fn tr_execute(
        transaction: TransactionPrimitive<Self>,
    ) -> impl Future<Output = Result<TransactionPrimitiveData, ExecutionError>> + Send {
        let several = |batched: bool, members: usize| batched && members != 1;
        let batched = transaction
            .read_floats
            .iter()
            .any(|t| several(t.batched, t.members))
            || transaction.read_qfloats.iter().any(|t| t.batched)
            || transaction
                .read_ints
                .iter()
                .any(|t| several(t.batched, t.members))
            || transaction
                .read_bools
                .iter()
                .any(|t| several(t.batched, t.members));
        let stripped: Vec<bool> = transaction.read_floats.iter().map(|t| t.batched).collect();
        let stripped_ints: Vec<bool> = transaction.read_ints.iter().map(|t| t.batched).collect();
        let stripped_bools: Vec<bool> = transaction.read_bools.iter().map(|t| t.batched).collect();
        let inner = (!batched).then(|| {
            TransactionPrimitive::<B>::new(
                transaction
                    .read_floats
                    .into_iter()
                    .map(|t| t.inner)
                    .collect(),
                transaction
                    .read_qfloats
                    .into_iter()
                    .map(|t| t.inner)
                    .collect(),
                transaction.read_ints.into_iter().map(|t| t.inner).collect(),
                transaction
                    .read_bools
                    .into_iter()
                    .map(|t| t.inner)
                    .collect(),
            )
        });
        async move {
            match inner {
                Some(inner) => {
                    let mut data = B::tr_execute(inner).await?;
                    let strip = |datas: Vec<TensorData>, flags: &[bool]| {
                        datas
                            .into_iter()
                            .zip(flags)
                            .map(|(d, &b)| strip_single_member(d, b))
                            .collect()
                    };
                    data.read_floats = strip(data.read_floats, &stripped);
                    data.read_ints = strip(data.read_ints, &stripped_ints);
                    data.read_bools = strip(data.read_bools, &stripped_bools);
                    Ok(data)
                }
                None => Err(batched_read_error("tr_execute")),
            }
        }
    }
}
