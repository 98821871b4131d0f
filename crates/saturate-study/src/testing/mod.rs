//! Conformance suites for your own [`Sampler`](crate::samplers::Sampler) and
//! [`Storage`](crate::storage::Storage) implementations, after Optuna's
//! `optuna/testing/pytest_samplers.py` and `pytest_storages.py`. saturate runs them on its
//! own samplers and storages.
//!
//! Each property is a public function that panics with its own name and what went wrong;
//! `run_sampler_suite` / `run_storage_suite` run them all. Call one property per test to
//! see which ones fail:
//!
//! ```
//! use saturate_study::prelude::*;
//! use saturate_study::testing::{samplers, storages};
//!
//! // In your tests: one #[test] per property, or the whole suite at once.
//! let make_sampler = |seed: u64| -> Box<dyn Sampler> { Box::new(RandomSamplerConfig::new().with_seed(seed).init()) };
//! samplers::values_stay_inside_their_distributions(&make_sampler);
//! samplers::same_seed_gives_the_same_sequence(&make_sampler);
//!
//! storages::run_storage_suite(|| Box::new(InMemoryStorage::new()));
//! ```
//!
//! The storage factory must return a fresh, empty storage on each call (for a file-based
//! one, a new file each time).

pub mod samplers;
pub mod storages;

pub use samplers::run_sampler_suite;
pub use storages::run_storage_suite;
