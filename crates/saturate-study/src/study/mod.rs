//! Studies: the trait, the default implementation and the view samplers and pruners get.

mod base;
#[allow(clippy::module_inception)]
mod study;
mod view;

pub(crate) use base::dominates;
pub use base::{Callback, FixedParams, ObjectiveError, ObjectiveValues, Study};
pub(crate) use study::StudyCore;
pub use study::{delete_study, DefaultStudy, StudyConfig};
pub use view::StudyView;
