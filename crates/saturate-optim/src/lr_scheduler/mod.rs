//! Learning-rate schedules with one burn scheduler per member.

mod any;
mod base;
mod members;

pub use any::{AnyLrScheduler, AnyLrSchedulerConfig, AnyLrSchedulerRecord};
pub use base::SchedulerConfig;
pub use members::MemberSchedulers;
