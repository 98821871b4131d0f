//! Momentum with dampening and Nesterov's variant, as burn's `MomentumConfig`.

use burn::config::Config;
use burn::serde::{Deserialize, Serialize};

use crate::hyper::HyperParam;

/// Momentum for [`GroupSgdConfig`](crate::GroupSgdConfig), as burn's `MomentumConfig`, with momentum and
/// dampening given per member:
///
/// `v = (1 - dampening) * g + momentum * v` (`v = g` on a member's first step), then the update
/// uses `v`, or `g + momentum * v` with Nesterov's variant (Sutskever et al. 2013, *On the
/// importance of initialization and momentum in deep learning*).
///
/// A member with `momentum = 0` and `dampening = 0` does plain SGD.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(crate = "burn::serde")]
pub struct GroupMomentumConfig {
    /// Momentum factor (default 0.9; converted to the float type as burn does).
    pub momentum: HyperParam,
    /// Dampening factor (default 0.1).
    pub dampening: HyperParam,
    /// Nesterov momentum (default false); shared by all members.
    pub nesterov: bool,
}

impl Config for GroupMomentumConfig {}

impl Default for GroupMomentumConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl GroupMomentumConfig {
    /// burn's defaults: momentum 0.9, dampening 0.1, no Nesterov.
    pub fn new() -> Self {
        Self {
            momentum: HyperParam::Shared(0.9),
            dampening: HyperParam::Shared(0.1),
            nesterov: false,
        }
    }

    /// Sets the momentum factor (one value, or one per member).
    pub fn with_momentum(mut self, momentum: impl Into<HyperParam>) -> Self {
        self.momentum = momentum.into();
        self
    }

    /// Sets the dampening factor (one value, or one per member).
    pub fn with_dampening(mut self, dampening: impl Into<HyperParam>) -> Self {
        self.dampening = dampening.into();
        self
    }

    /// Enables or disables Nesterov momentum for all members.
    pub fn with_nesterov(mut self, nesterov: bool) -> Self {
        self.nesterov = nesterov;
        self
    }
}
