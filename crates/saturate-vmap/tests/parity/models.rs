//! Whole-model parity: an MLP, a CNN and a small Transformer classifier, each K=4 members
//! trained as one group vs one by one.

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::{CrossEntropyLossConfig, MseLoss, Reduction};
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::transformer::{
    TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput,
};
use burn::nn::{
    Dropout, DropoutConfig, Embedding, EmbeddingConfig, Linear, LinearConfig, PaddingConfig2d, Relu,
};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use rand::rngs::StdRng;

use super::common::{classes, parity, parity_with, uniform, Case, DataMode, Feed, Opts};

// ---------------------------------------------------------------------------------------------
// MLP
// ---------------------------------------------------------------------------------------------

#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    pub first: Linear<B>,
    pub hidden: Linear<B>,
    pub out: Linear<B>,
}

impl<B: Backend> Mlp<B> {
    pub fn new(device: &B::Device) -> Self {
        Self {
            first: LinearConfig::new(8, 16).init(device),
            hidden: LinearConfig::new(16, 16).init(device),
            out: LinearConfig::new(16, 4).init(device),
        }
    }

    pub fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        let x = Relu::new().forward(self.first.forward(x));
        let x = Relu::new().forward(self.hidden.forward(x));
        self.out.forward(x)
    }
}

/// MLP classifier (cross-entropy) or regressor (MSE).
pub struct MlpCase {
    pub regression: bool,
}

impl Case for MlpCase {
    type Model<B: Backend> = Mlp<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> Mlp<B> {
        Mlp::new(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        let x = uniform(rng, &[16, 8], -1.0, 1.0);
        let y = if self.regression {
            uniform(rng, &[16, 4], -1.0, 1.0)
        } else {
            classes(rng, &[16], 4)
        };
        vec![x, y]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &Mlp<B>, f: &F) -> Tensor<B, 1> {
        let logits = m.forward(f.float(0));
        if self.regression {
            MseLoss::new().forward(logits, f.float(1), Reduction::Mean)
        } else {
            CrossEntropyLossConfig::new()
                .init(&f.device())
                .forward(logits, f.int(1))
        }
    }
}

#[test]
fn mlp_classifier() {
    parity(&MlpCase { regression: false }, 200, DataMode::Shared);
}

#[test]
fn mlp_classifier_per_member_data() {
    parity(&MlpCase { regression: false }, 201, DataMode::PerMember);
}

#[test]
fn mlp_regressor_per_member_data() {
    parity(&MlpCase { regression: true }, 202, DataMode::PerMember);
}

// ---------------------------------------------------------------------------------------------
// CNN: conv, relu, maxpool, conv, relu, maxpool, dropout (p = 0: per-member dropout statistics
// are tested in batched.rs), linear, cross-entropy.
// ---------------------------------------------------------------------------------------------

#[derive(Module, Debug)]
pub struct Cnn<B: Backend> {
    conv1: Conv2d<B>,
    conv2: Conv2d<B>,
    pool: MaxPool2d,
    dropout: Dropout,
    head: Linear<B>,
}

impl<B: Backend> Cnn<B> {
    fn new(device: &B::Device) -> Self {
        let pad = PaddingConfig2d::Explicit(1, 1, 1, 1);
        Self {
            conv1: Conv2dConfig::new([1, 4], [3, 3])
                .with_padding(pad.clone())
                .init(device),
            conv2: Conv2dConfig::new([4, 8], [3, 3])
                .with_padding(pad)
                .init(device),
            pool: MaxPool2dConfig::new([2, 2]).init(),
            dropout: DropoutConfig::new(0.0).init(),
            head: LinearConfig::new(8 * 2 * 2, 5).init(device),
        }
    }

    fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self
            .pool
            .forward(Relu::new().forward(self.conv1.forward(x)));
        let x = self
            .pool
            .forward(Relu::new().forward(self.conv2.forward(x)));
        let x = self.dropout.forward(x);
        self.head.forward(x.flatten(1, 3))
    }
}

pub struct CnnCase;

impl Case for CnnCase {
    type Model<B: Backend> = Cnn<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> Cnn<B> {
        Cnn::new(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![uniform(rng, &[6, 1, 8, 8], 0.0, 1.0), classes(rng, &[6], 5)]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &Cnn<B>, f: &F) -> Tensor<B, 1> {
        CrossEntropyLossConfig::new()
            .init(&f.device())
            .forward(m.forward(f.float(0)), f.int(1))
    }
}

#[test]
fn cnn_classifier() {
    parity(&CnnCase, 210, DataMode::Shared);
}

#[test]
fn cnn_classifier_per_member_data() {
    parity(&CnnCase, 211, DataMode::PerMember);
}

// ---------------------------------------------------------------------------------------------
// Transformer classifier: embedding + positional embedding + TransformerEncoder + mean pool +
// linear + cross-entropy.
// ---------------------------------------------------------------------------------------------

const VOCAB: usize = 12;
const SEQ: usize = 6;
const D_MODEL: usize = 8;
/// The padding token (masked out of attention in the masked variant).
const PAD: i64 = 0;

#[derive(Module, Debug)]
pub struct TextClassifier<B: Backend> {
    tokens: Embedding<B>,
    positions: Embedding<B>,
    encoder: TransformerEncoder<B>,
    head: Linear<B>,
}

impl<B: Backend> TextClassifier<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            tokens: EmbeddingConfig::new(VOCAB, D_MODEL).init(device),
            positions: EmbeddingConfig::new(SEQ, D_MODEL).init(device),
            encoder: TransformerEncoderConfig::new(D_MODEL, 16, 2, 2)
                .with_dropout(0.0)
                .init(device),
            head: LinearConfig::new(D_MODEL, 3).init(device),
        }
    }

    fn forward(&self, tokens: Tensor<B, 2, burn::tensor::Int>, masked: bool) -> Tensor<B, 2> {
        let [batch, seq] = tokens.dims();
        let device = tokens.device();
        let positions = Tensor::<B, 1, burn::tensor::Int>::arange(0..seq as i64, &device)
            .reshape([1, seq])
            .repeat_dim(0, batch);
        let mask = tokens.clone().equal_elem(PAD);
        let x = self.tokens.forward(tokens) + self.positions.forward(positions);
        let input = TransformerEncoderInput::new(x);
        let input = if masked { input.mask_pad(mask) } else { input };
        let x = self.encoder.forward(input);
        let pooled: Tensor<B, 2> = x.mean_dim(1).squeeze_dim(1);
        self.head.forward(pooled)
    }
}

pub struct TextCase {
    pub masked: bool,
}

impl Case for TextCase {
    type Model<B: Backend> = TextClassifier<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> TextClassifier<B> {
        TextClassifier::new(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![classes(rng, &[4, SEQ], VOCAB as i64), classes(rng, &[4], 3)]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &TextClassifier<B>, f: &F) -> Tensor<B, 1> {
        CrossEntropyLossConfig::new()
            .with_smoothing(Some(0.05))
            .init(&f.device())
            .forward(m.forward(f.int(0), self.masked), f.int(1))
    }
}

#[test]
fn transformer_classifier() {
    parity(&TextCase { masked: false }, 220, DataMode::Shared);
}

#[test]
fn transformer_classifier_padding_mask() {
    parity(&TextCase { masked: true }, 221, DataMode::Shared);
}

#[test]
fn transformer_classifier_padding_mask_per_member_data() {
    parity(&TextCase { masked: true }, 222, DataMode::PerMember);
}

#[test]
fn eight_member_groups() {
    for mode in [DataMode::Shared, DataMode::PerMember] {
        let opts = Opts {
            members: 8,
            ..Opts::new(mode)
        };
        parity_with(&MlpCase { regression: false }, 230, opts);
        parity_with(&CnnCase, 231, opts);
    }
}

/// Per-member accuracy, computed inside the group (argmax, equal, mean on batched tensors) and
/// read with `member_values`, equals each member's accuracy computed alone.
#[test]
fn per_member_accuracy() {
    use burn::module::AutodiffModule;
    use saturate_vmap::{member_values, Batched, Vmap};

    use super::common::{inner_device, transfer, Inner, G};

    let group: Batched<Mlp<G>> = Batched::init(4, &inner_device(), Mlp::new).unwrap();
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(240);
    let x = uniform(&mut rng, &[64, 8], -1.0, 1.0);
    let y = classes(&mut rng, &[64], 4);
    let valid = group.valid();
    let device = group.device();
    let logits = valid.forward(Tensor::<Vmap<Inner>, 2>::from_data(x.clone(), &device));
    let targets = Tensor::<Vmap<Inner>, 1, burn::tensor::Int>::from_data(y.clone(), &device);
    let acc = logits
        .argmax(1)
        .squeeze_dim::<1>(1)
        .equal(targets)
        .float()
        .mean();
    let acc = member_values(acc).unwrap();
    let mut distinct = acc.clone();
    distinct.dedup();
    for (k, got) in acc.iter().enumerate() {
        let member = group.member(k).unwrap();
        let alone: Mlp<Inner> =
            transfer::<G, Inner, _, _>(member, Mlp::new(&inner_device()), &inner_device());
        let logits = alone.forward(Tensor::from_data(x.clone(), &inner_device()));
        let targets = Tensor::<Inner, 1, burn::tensor::Int>::from_data(y.clone(), &inner_device());
        let want: f64 = logits
            .argmax(1)
            .squeeze_dim::<1>(1)
            .equal(targets)
            .float()
            .mean()
            .into_scalar()
            .into();
        assert!(
            (got - want).abs() < 1e-6,
            "member {k}: accuracy {got} vs {want}"
        );
    }
}

#[test]
fn shared_weights_models() {
    use super::common::shared_parity;
    shared_parity(&MlpCase { regression: false }, 720);
    shared_parity(&CnnCase, 721);
    shared_parity(&TextCase { masked: true }, 722);
}
