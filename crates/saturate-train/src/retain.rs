//! Keeping a group's per-member state together when members leave.

use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;
use saturate_optim::{GroupOptimizer, UpdateRule};
use saturate_vmap::{Batched, DeepCopy, VmapBackend};

use crate::error::Result;
use crate::members::Members;

/// Per-member state of a group: everything that holds one entry per member must keep the
/// same members, in the same order, after [`GroupTrial::report`](crate::GroupTrial::report)
/// prunes some. Retain the model, the optimizer and every per-member value in ONE call, so
/// none is forgotten:
///
/// ```ignore
/// let keep = g.report(epoch, &accuracy)?;
/// (&mut model, &mut optim, &mut lr, &mut momentum).retain_members(&keep)?;
/// ```
///
/// Implemented for [`Batched`] models, [`GroupOptimizer`]s, [`Members`] and tuples (up to 8)
/// of mutable references to them. Tensors belong to the member count of the device they
/// were built on, shared ones (a batch, targets) included: after a retain, build them on the
/// model's new device (`model.device()`); mixing them with the smaller group panics with a
/// message naming both member counts. Per-member values ([`Members::to_tensor`]) are built
/// again from the retained [`Members`].
///
/// A forgotten one fails at the next step with a member-count error that names it.
pub trait Retain<B> {
    /// Keeps the members `keep` (indices into the current members, in the order given).
    ///
    /// # Errors
    /// A bad index (out of range, repeated, none at all).
    fn retain_members(&mut self, keep: &[usize]) -> Result<()>;
}

impl<B, M> Retain<B> for Batched<M>
where
    B: VmapBackend,
    M: DeepCopy<B> + Clone,
{
    fn retain_members(&mut self, keep: &[usize]) -> Result<()> {
        *self = self.clone().retain::<B>(keep)?;
        Ok(())
    }
}

impl<R, M, B> Retain<B> for GroupOptimizer<R, M, B>
where
    R: UpdateRule,
    M: AutodiffModule<B>,
    B: AutodiffBackend,
    B::InnerBackend: VmapBackend,
{
    fn retain_members(&mut self, keep: &[usize]) -> Result<()> {
        self.retain(keep)?;
        Ok(())
    }
}

impl<B, T: Clone> Retain<B> for Members<T> {
    fn retain_members(&mut self, keep: &[usize]) -> Result<()> {
        check(keep, self.len())?;
        self.retain(keep);
        Ok(())
    }
}

impl<B, T: Retain<B> + ?Sized> Retain<B> for &mut T {
    fn retain_members(&mut self, keep: &[usize]) -> Result<()> {
        (**self).retain_members(keep)
    }
}

fn check(keep: &[usize], members: usize) -> Result<()> {
    if keep.is_empty() {
        return Err(saturate_vmap::VmapError::NoMembers.into());
    }
    let mut seen = vec![false; members];
    for &index in keep {
        match seen.get_mut(index) {
            None => {
                return Err(saturate_vmap::VmapError::MemberOutOfRange { index, members }.into())
            }
            Some(true) => return Err(saturate_vmap::VmapError::DuplicateMember { index }.into()),
            Some(s) => *s = true,
        }
    }
    Ok(())
}

macro_rules! retain_tuple {
    ($($name:ident),+) => {
        impl<B, $($name: Retain<B>),+> Retain<B> for ($($name,)+) {
            #[allow(non_snake_case)]
            fn retain_members(&mut self, keep: &[usize]) -> Result<()> {
                let ($($name,)+) = self;
                $($name.retain_members(keep)?;)+
                Ok(())
            }
        }
    };
}

retain_tuple!(A);
retain_tuple!(A, C);
retain_tuple!(A, C, D);
retain_tuple!(A, C, D, E);
retain_tuple!(A, C, D, E, F);
retain_tuple!(A, C, D, E, F, G);
retain_tuple!(A, C, D, E, F, G, H);
retain_tuple!(A, C, D, E, F, G, H, I);
