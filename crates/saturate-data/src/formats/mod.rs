//! File formats: how bytes become an [`ImageDataset`](crate::ImageDataset).

pub(crate) mod cifar10;
pub(crate) mod file;
pub(crate) mod idx;
