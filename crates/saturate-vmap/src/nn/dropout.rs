//! Dropout whose probability is one value per member.

use burn::module::{Module, RunningState};
use burn::tensor::backend::Backend;
use burn::tensor::{Distribution, Tensor};

use crate::any_backend::values_per_member;
use crate::error::VmapError;

/// Configuration of a [`Dropout`] layer with one probability per member.
#[derive(Debug, Clone, PartialEq)]
pub struct DropoutConfig {
    /// The probability of zeroing an element, one per member, each in `[0, 1)`.
    pub probs: Vec<f64>,
}

impl DropoutConfig {
    /// A configuration with probability `probs[k]` for member k.
    pub fn new(probs: Vec<f64>) -> Self {
        Self { probs }
    }

    /// Builds the layer on `device`: a group device (one probability per member) or a plain
    /// backend's device (one probability: a plain backend is one member, e.g. a member
    /// loaded for inference), so a module holding this layer stays an ordinary
    /// `B: Backend` module.
    ///
    /// # Errors
    /// [`VmapError::MemberCountMismatch`] if there is not one probability per member;
    /// [`VmapError::InvalidValue`] for a probability outside `[0, 1)`.
    pub fn init<B: Backend>(&self, device: &B::Device) -> Result<Dropout<B>, VmapError> {
        for (member, &p) in self.probs.iter().enumerate() {
            if !(0.0..1.0).contains(&p) {
                return Err(VmapError::InvalidValue {
                    what: "dropout probability".into(),
                    member,
                    value: p,
                    reason: "must be in [0, 1)".into(),
                });
            }
        }
        let probs = values_per_member::<B>(&self.probs, device)?;
        Ok(Dropout {
            probs: RunningState::new(probs),
        })
    }
}

/// Dropout (Srivastava et al., "Dropout: A Simple Way to Prevent Neural Networks from
/// Overfitting", JMLR 2014) with an independent mask and a probability per member.
///
/// Like burn's `Dropout`, it only acts when autodiff is enabled (training); elements are kept
/// with probability `1 - p_k` and scaled by `1 / (1 - p_k)`. The probabilities are module
/// state (not trained) and follow `Batched::retain` / `extend` / `member`.
#[derive(Module, Debug)]
pub struct Dropout<B: Backend> {
    probs: RunningState<Tensor<B, 1>>,
}

impl<B: Backend> Dropout<B> {
    /// Applies dropout to `input`.
    ///
    /// # Shapes
    /// - input: `[..., any]` (any rank `D`)
    /// - output: same as input
    pub fn forward<const D: usize>(&self, input: Tensor<B, D>) -> Tensor<B, D> {
        if !B::ad_enabled(&input.device()) {
            return input;
        }
        let probs: Tensor<B, D> = self.probs.value().reshape([1; D]);
        let uniform = input.random_like(Distribution::Default);
        let keep = uniform.greater_equal(probs.clone()).float();
        input * keep / (probs.neg() + 1.0)
    }

    /// The per-member probabilities as a batched tensor of logical shape `[1]`.
    pub fn probs(&self) -> Tensor<B, 1> {
        self.probs.value()
    }
}

impl<B: Backend> Dropout<B> {
    /// Sets member k's probability to `probs[k]` (e.g. after population-based training
    /// explored it); the layer keeps its device and member count.
    ///
    /// # Errors
    /// As [`DropoutConfig::init`]: not one probability per member, or one outside `[0, 1)`.
    pub fn set_probs(&self, probs: &[f64]) -> Result<(), VmapError> {
        let device = self.probs.value().device();
        let Dropout { probs: fresh } = DropoutConfig::new(probs.to_vec()).init::<B>(&device)?;
        self.probs.update(fresh.value());
        // `update` leaves the value pending on this thread; `forward` reads `value()`.
        let _ = self.probs.value_sync();
        Ok(())
    }
}
