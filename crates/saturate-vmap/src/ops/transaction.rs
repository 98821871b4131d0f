//! Batching rules for `TransactionOps`.

use core::future::Future;

use burn_backend::ops::{TransactionOps, TransactionPrimitive, TransactionPrimitiveData};
use burn_backend::{Backend, ExecutionError};

use crate::tensor::batched_read_error;
use crate::Vmap;

impl<B: Backend> TransactionOps<Self> for Vmap<B> {
    /// Reads unbatched tensors in one transaction of the inner backend. A batched tensor holds
    /// one value per member and cannot be read as one `TensorData`: the transaction fails with
    /// the same error as `into_data`.
    fn tr_execute(
        transaction: TransactionPrimitive<Self>,
    ) -> impl Future<Output = Result<TransactionPrimitiveData, ExecutionError>> + Send {
        let batched = transaction.read_floats.iter().any(|t| t.batched)
            || transaction.read_qfloats.iter().any(|t| t.batched)
            || transaction.read_ints.iter().any(|t| t.batched)
            || transaction.read_bools.iter().any(|t| t.batched);
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
                Some(inner) => B::tr_execute(inner).await,
                None => Err(batched_read_error("tr_execute")),
            }
        }
    }
}
