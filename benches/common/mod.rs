//! Models and the training step shared by saturate's benchmarks.
#![allow(dead_code)]

use burn::module::{AutodiffModule, Module, ModuleMapper, Param};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::optim::GradientsParams;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, Int, Tensor};

#[path = "../../examples/models/transformer.rs"]
mod transformer;
pub use transformer::PatchTransformer;

/// The benchmark models.
#[derive(Clone, Copy, Debug)]
pub enum Model {
    /// MLP 8-16-4, batch 64.
    Mlp8,
    /// MLP 784-128-10, batch 128.
    Mlp784,
    /// SmallCNN(16) on 28x28 images, batch 128.
    Cnn,
    /// The examples' patch transformer (d_model 32, 2 layers of 4 heads) on 28x28 images,
    /// batch 128.
    Transformer,
}

impl Model {
    /// The batch size: `SATURATE_BATCH=N` when set (scripts/bench-conv-memory.sh), else the
    /// model's default.
    pub fn batch(self) -> usize {
        if let Some(n) = std::env::var("SATURATE_BATCH")
            .ok()
            .and_then(|n| n.parse().ok())
        {
            return n;
        }
        match self {
            Model::Mlp8 => 64,
            Model::Mlp784 | Model::Cnn | Model::Transformer => 128,
        }
    }
    pub fn classes(self) -> usize {
        match self {
            Model::Mlp8 => 4,
            _ => 10,
        }
    }
}

/// A two-layer perceptron.
#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    hidden: Linear<B>,
    out: Linear<B>,
    relu: Relu,
}

impl<B: Backend> Mlp<B> {
    pub fn new(input: usize, hidden: usize, out: usize, device: &B::Device) -> Self {
        Self {
            hidden: LinearConfig::new(input, hidden).init(device),
            out: LinearConfig::new(hidden, out).init(device),
            relu: Relu::new(),
        }
    }
    pub fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.out.forward(self.relu.forward(self.hidden.forward(x)))
    }
}

/// conv3x3 1->16, relu, maxpool2, conv3x3 16->32, relu, maxpool2, dropout 0.3, linear 1568->10.
#[derive(Module, Debug)]
pub struct SmallCnn<B: Backend> {
    conv1: Conv2d<B>,
    conv2: Conv2d<B>,
    pool: MaxPool2d,
    dropout: Dropout,
    fc: Linear<B>,
    relu: Relu,
}

impl<B: Backend> SmallCnn<B> {
    pub fn new(device: &B::Device) -> Self {
        let conv = |i, o| {
            Conv2dConfig::new([i, o], [3, 3])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(device)
        };
        Self {
            conv1: conv(1, 16),
            conv2: conv(16, 32),
            pool: MaxPool2dConfig::new([2, 2]).with_strides([2, 2]).init(),
            dropout: DropoutConfig::new(0.3).init(),
            fc: LinearConfig::new(32 * 7 * 7, 10).init(device),
            relu: Relu::new(),
        }
    }
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self.pool.forward(self.relu.forward(self.conv1.forward(x)));
        let x = self.pool.forward(self.relu.forward(self.conv2.forward(x)));
        let x = self.dropout.forward(x);
        let [n, c, h, w] = x.dims();
        self.fc.forward(x.reshape([n, c * h * w]))
    }
}

/// Either model, so one training step serves all.
#[derive(Module, Debug)]
#[allow(clippy::large_enum_variant)] // built once per benchmark; boxing would change the module tree
pub enum Net<B: Backend> {
    Mlp(Mlp<B>),
    Cnn(SmallCnn<B>),
    Transformer(PatchTransformer<B>),
}

impl<B: Backend> Net<B> {
    pub fn new(model: Model, device: &B::Device) -> Self {
        match model {
            Model::Mlp8 => Net::Mlp(Mlp::new(8, 16, 4, device)),
            Model::Mlp784 => Net::Mlp(Mlp::new(784, 128, 10, device)),
            Model::Cnn => Net::Cnn(SmallCnn::new(device)),
            Model::Transformer => Net::Transformer(PatchTransformer::new(32, device)),
        }
    }

    /// Logits for a flat input batch `[n, features]` (images are 1x28x28).
    pub fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        match self {
            Net::Mlp(m) => m.forward(x),
            Net::Cnn(m) => {
                let n = x.dims()[0];
                m.forward(x.reshape([n, 1, 28, 28]))
            }
            Net::Transformer(m) => {
                let n = x.dims()[0];
                m.forward(x.reshape([n, 1, 28, 28]))
            }
        }
    }
}

/// A fixed batch: inputs `[n, features]` and integer targets.
pub fn batch<B: Backend>(model: Model, device: &B::Device) -> (Tensor<B, 2>, Tensor<B, 1, Int>) {
    let features = match model {
        Model::Mlp8 => 8,
        _ => 784,
    };
    let n = model.batch();
    let x = Tensor::random([n, features], Distribution::Normal(0.0, 1.0), device);
    let y = Tensor::<B, 1, Int>::random(
        [n],
        Distribution::Uniform(0.0, model.classes() as f64),
        device,
    );
    (x, y)
}

/// Plain SGD on every float parameter: `p <- p - lr * g`, where `lr` is one number or a
/// per-member tensor of logical shape `[1]`.
pub struct SgdStep<'a, B: AutodiffBackend> {
    pub grads: &'a mut GradientsParams,
    pub lr: Lr<B::InnerBackend>,
}

/// A learning rate: shared or one per member.
pub enum Lr<B: Backend> {
    Scalar(f64),
    PerMember(Tensor<B, 1>),
}

impl<B: AutodiffBackend> ModuleMapper<B> for SgdStep<'_, B> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let (id, tensor, mapper) = param.consume();
        let Some(grad) = self.grads.remove::<B::InnerBackend, D>(id) else {
            return Param::from_mapped_value(id, tensor, mapper);
        };
        let inner = tensor.inner();
        let updated = match &self.lr {
            Lr::Scalar(lr) => inner - grad.mul_scalar(*lr),
            Lr::PerMember(lr) => inner - grad * lr.clone().reshape([1; D]),
        };
        Param::from_mapped_value(id, Tensor::from_inner(updated).require_grad(), mapper)
    }
}

/// One training step: forward, cross-entropy, backward, SGD. Returns the updated module.
pub fn train_step<B: AutodiffBackend>(
    net: Net<B>,
    x: Tensor<B, 2>,
    y: Tensor<B, 1, Int>,
    lr: Lr<B::InnerBackend>,
) -> Net<B>
where
    Net<B>: AutodiffModule<B>,
{
    let logits = net.forward(x);
    let loss = CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(logits, y);
    let mut grads = GradientsParams::from_grads(loss.backward(), &net);
    net.map(&mut SgdStep {
        grads: &mut grads,
        lr,
    })
}
