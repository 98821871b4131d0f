//! The CNN of `fashion_mnist`.

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;
use saturate::prelude::*;
use saturate::vmap::nn::{Dropout, DropoutConfig};

// ANCHOR: model
/// Two conv blocks and a classifier: an ordinary burn module, nothing in it knows about
/// members except the dropout layer, whose probability is one value per member.
#[derive(Module, Debug)]
pub struct Cnn<B: Backend> {
    conv1: Conv2d<B>,
    conv2: Conv2d<B>,
    pool: MaxPool2d,
    /// `None` in [`Cnn::without_dropout`].
    dropout: Option<Dropout<B>>,
    hidden: Linear<B>,
    out: Linear<B>,
    relu: Relu,
}

impl<B: VmapBackend> Cnn<B> {
    /// `width` channels in the first conv, twice that in the second; `dropout[k]` for member k.
    pub fn new(width: usize, dropout: &Members<f64>, device: &B::Device) -> Self {
        let dropout = DropoutConfig::new(dropout.to_vec())
            .init(device)
            .expect("one dropout probability per member, each in [0, 1)");
        Self {
            dropout: Some(dropout),
            ..Self::without_dropout(width, device)
        }
    }

    /// Sets the members' dropout probabilities (population-based training explores them);
    /// nothing without a dropout layer.
    pub fn set_dropout(&self, dropout: &Members<f64>) -> Result<(), VmapError> {
        match &self.dropout {
            Some(layer) => layer.set_probs(dropout.as_slice()),
            None => Ok(()),
        }
    }
}

impl<B: Backend> Cnn<B> {
    /// The same network without its dropout layer, on any backend (per-member dropout needs
    /// a group). `parity_check` trains it alone and as a group: dropout's random masks are
    /// what a member trained alone could not reproduce.
    pub fn without_dropout(width: usize, device: &B::Device) -> Self {
        let conv = |from, to| {
            Conv2dConfig::new([from, to], [3, 3])
                .with_padding(PaddingConfig2d::Same)
                .init(device)
        };
        Self {
            conv1: conv(1, width),
            conv2: conv(width, 2 * width),
            pool: MaxPool2dConfig::new([2, 2]).with_strides([2, 2]).init(),
            dropout: None,
            hidden: LinearConfig::new(2 * width * 7 * 7, 64).init(device),
            out: LinearConfig::new(64, 10).init(device),
            relu: Relu::new(),
        }
    }

    /// # Shapes
    /// - images: `[batch, 1, 28, 28]`
    /// - output: `[batch, 10]` (logits)
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self
            .pool
            .forward(self.relu.forward(self.conv1.forward(images)));
        let x = self.pool.forward(self.relu.forward(self.conv2.forward(x)));
        let x = x.flatten::<2>(1, 3);
        let x = match &self.dropout {
            Some(dropout) => dropout.forward(x),
            None => x,
        };
        self.out.forward(self.relu.forward(self.hidden.forward(x)))
    }
}
// ANCHOR_END: model
