//! The named datasets: where their files live and what they hold.

mod cifar10;
mod fashion_mnist;
mod idx_family;
mod kmnist;
mod mnist;

pub use cifar10::Cifar10;
pub use fashion_mnist::{FashionMnist, FULL_VAR};
pub use kmnist::Kmnist;
pub use mnist::Mnist;
