//! Dataset readers for saturate, as burn [`Dataset`](burn::data::dataset::Dataset)s, and
//! a burn [`Batcher`](burn::data::dataloader::batcher::Batcher) for them: use burn's
//! `DataLoaderBuilder` to iterate.
//!
//! | dataset | type | files | shipped |
//! |---|---|---|---|
//! | Fashion-MNIST | [`FashionMnist`] | IDX, raw or `.gz` | first 8,192 train + 2,048 test images |
//! | MNIST | [`Mnist`] | IDX, raw or `.gz` | no |
//! | KMNIST | [`Kmnist`] | IDX, raw or `.gz` | no |
//! | CIFAR-10 | [`Cifar10`] | binary version (`data_batch_N.bin`) | no |
//!
//! Every reader returns an [`ImageDataset`] of [`ImageItem`]s; [`ImageBatcher`] turns
//! items into an [`ImageBatch`] (`[batch, channels, height, width]` `f32` images and
//! `[batch]` integer targets) on any backend, and counts the batches it builds
//! ([`BatchCounter`]): a group of K members trained as one model shares one input
//! pipeline, one batch per step.
//!
//! Files are found by a [`DataSearch`]: an explicit directory, or in order
//! `$SATURATE_DATA/<dataset>`, `./data/<dataset>`, and a distribution package's directory
//! (Debian's `dataset-fashion-mnist`). A missing or corrupt file is a [`DataError`] that
//! lists every place searched and how to get the data.
//!
//! ```
//! use burn::data::dataset::Dataset;
//! use saturate_data::{DataError, FashionMnist, Mnist, Split};
//!
//! let test = FashionMnist::subset_test(); // zero setup: embedded in the crate
//! assert_eq!((test.len(), test.classes()), (2048, 10));
//!
//! match Mnist::from_dir("/no/such/dir", Split::Train) {
//!     Err(error @ DataError::NotFound { .. }) => println!("{error}"),
//!     other => panic!("{other:?}"),
//! }
//! ```
//!
//! ## Features
//!
//! None: the crate needs only burn's `dataset` feature (burn-dataset without its optional
//! sqlite, image and download dependencies) and flate2.

mod batcher;
mod dataset;
mod datasets;
mod error;
mod formats;
mod item;
mod search;

pub use batcher::{BatchCounter, ImageBatch, ImageBatcher};
pub use dataset::{ImageDataset, Split};
pub use datasets::{Cifar10, FashionMnist, Kmnist, Mnist, FULL_VAR};
pub use error::DataError;
pub use item::{ImageItem, ImageShape};
pub use search::{DataSearch, DATA_DIR_VAR, LOCAL_DATA_DIR};
