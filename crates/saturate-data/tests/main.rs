//! Integration tests of saturate-data, in one binary: readers on files the tests write
//! (raw and gzip), every error, the search order, the shipped subset, the batcher.

mod main {
    pub mod support;

    mod batcher;
    mod cifar10;
    mod errors;
    mod idx;
    mod search;
    mod subset;
}
