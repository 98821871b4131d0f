//! The vision transformer of `patch_transformer`.

use burn::module::Module;
use burn::nn::transformer::{
    TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput,
};
use burn::nn::{Embedding, EmbeddingConfig, Linear, LinearConfig};
use burn::tensor::backend::Backend;
use burn::tensor::{Int, Tensor};

/// Patches per side, pixels per patch side: 4 x 4 patches of 7 x 7 pixels.
const GRID: usize = 4;
const PATCH: usize = 7;

// ANCHOR: model
/// A vision transformer for 28x28 grey-scale images: an ordinary burn module.
#[derive(Module, Debug)]
pub struct PatchTransformer<B: Backend> {
    embed: Linear<B>,
    position: Embedding<B>,
    encoder: TransformerEncoder<B>,
    head: Linear<B>,
}

impl<B: Backend> PatchTransformer<B> {
    /// Embedding size `d_model`, 2 layers of 4 heads, no dropout.
    pub fn new(d_model: usize, device: &B::Device) -> Self {
        Self {
            embed: LinearConfig::new(PATCH * PATCH, d_model).init(device),
            position: EmbeddingConfig::new(GRID * GRID, d_model).init(device),
            encoder: TransformerEncoderConfig::new(d_model, 2 * d_model, 4, 2)
                .with_dropout(0.0)
                .init(device),
            head: LinearConfig::new(d_model, 10).init(device),
        }
    }

    /// The device the model's weights are on.
    pub fn device(&self) -> B::Device {
        self.head.weight.val().device()
    }

    /// # Shapes
    /// - images: `[batch, 1, 28, 28]`
    /// - output: `[batch, 10]` (logits)
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let batch = images.dims()[0];
        let patches = images
            .reshape([batch, GRID, PATCH, GRID, PATCH])
            .swap_dims(2, 3)
            .reshape([batch, GRID * GRID, PATCH * PATCH]);
        let positions =
            Tensor::<B, 1, Int>::arange(0..(GRID * GRID) as i64, &patches.device()).unsqueeze();
        let x = self.embed.forward(patches) + self.position.forward(positions);
        let x = self.encoder.forward(TransformerEncoderInput::new(x));
        self.head.forward(x.mean_dim(1).squeeze_dim(1))
    }
}
// ANCHOR_END: model
