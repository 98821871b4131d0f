//! [`VmapDevice`]: the inner backend's device plus the group size.

use std::sync::Mutex;

use burn_backend::{Backend, DeviceId, DeviceOps};

/// The device of the [`Vmap`](crate::Vmap) backend: where the tensors live (`inner`) and how
/// many members the group has (`members`, K).
///
/// Random tensors created on this device get one independent slice per member; tensors made
/// from data, zeros, ones or a constant are shared by all members.
pub struct VmapDevice<B: Backend> {
    /// The inner backend's device.
    pub inner: B::Device,
    /// The number of members, K (at least 1).
    pub members: usize,
}

impl<B: Backend> VmapDevice<B> {
    /// A device for a group of `members` members on `inner`.
    ///
    /// # Panics
    /// If `members` is 0 (use [`Batched::init`](crate::Batched::init) for a typed error).
    pub fn new(inner: B::Device, members: usize) -> Self {
        assert!(
            members > 0,
            "saturate-vmap: a group needs at least one member"
        );
        Self { inner, members }
    }
}

impl<B: Backend> Clone for VmapDevice<B> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            members: self.members,
        }
    }
}

impl<B: Backend> PartialEq for VmapDevice<B> {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner && self.members == other.members
    }
}

impl<B: Backend> Eq for VmapDevice<B> {}

impl<B: Backend> core::fmt::Debug for VmapDevice<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("VmapDevice")
            .field("inner", &self.inner)
            .field("members", &self.members)
            .finish()
    }
}

impl<B: Backend> Default for VmapDevice<B> {
    /// The inner backend's default device with a single member.
    fn default() -> Self {
        Self {
            inner: B::Device::default(),
            members: 1,
        }
    }
}

/// `DeviceId`s cannot hold the member count, so `(inner id, members)` pairs are interned and
/// the id's index names the slot. The type id marks vmap devices.
static INTERNED: Mutex<Vec<(DeviceId, usize)>> = Mutex::new(Vec::new());
const VMAP_TYPE_ID: u16 = 0x7a70;

impl<B: Backend> burn_backend::Device for VmapDevice<B> {
    fn from_id(device_id: DeviceId) -> Self {
        let table = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
        match table.get(device_id.index_id as usize) {
            Some(&(inner, members)) if device_id.type_id == VMAP_TYPE_ID => Self {
                inner: B::Device::from_id(inner),
                members,
            },
            _ => Self {
                inner: B::Device::from_id(device_id),
                members: 1,
            },
        }
    }

    fn to_id(&self) -> DeviceId {
        crate::any_backend::register::<B>();
        let key = (self.inner.to_id(), self.members);
        let mut table = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
        let index = match table.iter().position(|entry| *entry == key) {
            Some(index) => index,
            None => {
                table.push(key);
                table.len() - 1
            }
        };
        DeviceId {
            type_id: VMAP_TYPE_ID,
            index_id: u16::try_from(index)
                .expect("saturate-vmap: more than 65536 distinct devices"),
        }
    }
}

impl<B: Backend> DeviceOps for VmapDevice<B> {}
