//! The MLP of `mnist_mlp`.

use burn::module::Module;
use burn::nn::{Linear, LinearConfig, Relu};
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;

// ANCHOR: model
/// An ordinary burn MLP on flattened 28x28 images.
#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    hidden: Linear<B>,
    out: Linear<B>,
    relu: Relu,
}

impl<B: Backend> Mlp<B> {
    /// 784 inputs, `hidden` units, 10 classes.
    pub fn new(hidden: usize, device: &B::Device) -> Self {
        Self {
            hidden: LinearConfig::new(28 * 28, hidden).init(device),
            out: LinearConfig::new(hidden, 10).init(device),
            relu: Relu::new(),
        }
    }

    /// The device the model's weights are on.
    pub fn device(&self) -> B::Device {
        self.hidden.weight.val().device()
    }

    /// # Shapes
    /// - images: `[batch, 1, 28, 28]`
    /// - output: `[batch, 10]` (logits)
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = images.flatten::<2>(1, 3);
        self.out.forward(self.relu.forward(self.hidden.forward(x)))
    }
}
// ANCHOR_END: model
