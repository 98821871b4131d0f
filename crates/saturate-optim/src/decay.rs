//! L2 weight decay (added to the gradient), as burn's `WeightDecayConfig`.

use burn::config::Config;
use burn::serde::{Deserialize, Serialize};

use crate::hyper::HyperParam;

/// L2 weight decay: `grad += penalty * param` before the update (burn's `WeightDecayConfig`),
/// with one penalty per member. A member without weight decay has penalty 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(crate = "burn::serde")]
pub struct GroupWeightDecayConfig {
    /// L2 penalty (stored as `f32`, as in burn).
    pub penalty: HyperParam,
}

impl Config for GroupWeightDecayConfig {}

impl GroupWeightDecayConfig {
    /// Weight decay with the given penalty (one value, or one per member).
    pub fn new(penalty: impl Into<HyperParam>) -> Self {
        Self {
            penalty: penalty.into(),
        }
    }
}
