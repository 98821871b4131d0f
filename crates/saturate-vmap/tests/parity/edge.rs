//! Edge shapes: sizes equal to the member count (a rule that mixes up the member axis with a
//! batch / feature axis of the same size would still produce well-shaped, wrong results), and
//! size-1 axes (broadcasting and squeeze traps); plus a transformer decoder (cross-attention
//! with masks).

use burn::module::Module;
use burn::nn::attention::generate_autoregressive_mask;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::{CrossEntropyLossConfig, MseLoss, Reduction};
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::transformer::{
    TransformerDecoder, TransformerDecoderConfig, TransformerDecoderInput,
};
use burn::nn::{
    BatchNorm, BatchNormConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig, Lstm, LstmConfig,
};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use rand::rngs::StdRng;

use super::common::{classes, parity_with, uniform, Case, DataMode, Feed, Opts, K};

fn mse<B: Backend, const D: usize>(pred: Tensor<B, D>, target: Tensor<B, D>) -> Tensor<B, 1> {
    MseLoss::new().forward(pred, target, Reduction::Mean)
}

/// Linear + LayerNorm + Linear + cross-entropy with every size a parameter.
struct Dense {
    batch: usize,
    d_in: usize,
    hidden: usize,
    classes: usize,
}

#[derive(Module, Debug)]
struct DenseNet<B: Backend> {
    first: Linear<B>,
    norm: LayerNorm<B>,
    out: Linear<B>,
}

impl Case for Dense {
    type Model<B: Backend> = DenseNet<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> DenseNet<B> {
        DenseNet {
            first: LinearConfig::new(self.d_in, self.hidden).init(device),
            norm: LayerNormConfig::new(self.hidden).init(device),
            out: LinearConfig::new(self.hidden, self.classes).init(device),
        }
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[self.batch, self.d_in], -1.0, 1.0),
            classes(rng, &[self.batch], self.classes as i64),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &DenseNet<B>, f: &F) -> Tensor<B, 1> {
        let h = m.norm.forward(m.first.forward(f.float::<2>(0))).tanh();
        CrossEntropyLossConfig::new()
            .init(&f.device())
            .forward(m.out.forward(h), f.int(1))
    }
}

/// BatchNorm + Conv2d + max-pool + MSE with every size a parameter. BatchNorm is applied to
/// the input, not to the convolution's output: with one output channel and a 1x1 kernel,
/// BatchNorm after the convolution makes the loss independent of the weight's scale (and of the
/// bias), so the weight's gradient is only the `epsilon` term of the normalisation, amplified
/// ill-conditioned rounding (measured: `conv.weight` 9e-5 apart after 10 SGD steps between the
/// group's im2col + GEMM and NdArray's direct convolution, with or without `simd`).
struct Conv {
    batch: usize,
    channels: [usize; 2],
    size: usize,
}

#[derive(Module, Debug)]
struct ConvNet<B: Backend> {
    conv: Conv2d<B>,
    bn: BatchNorm<B>,
    pool: MaxPool2d,
}

impl Case for Conv {
    type Model<B: Backend> = ConvNet<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> ConvNet<B> {
        ConvNet {
            conv: Conv2dConfig::new(self.channels, [1, 1]).init(device),
            bn: BatchNormConfig::new(self.channels[0]).init(device),
            pool: MaxPool2dConfig::new([1, 1]).init(),
        }
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        let [cin, cout] = self.channels;
        vec![
            uniform(rng, &[self.batch, cin, self.size, self.size], -1.0, 1.0),
            uniform(rng, &[self.batch, cout, self.size, self.size], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &ConvNet<B>, f: &F) -> Tensor<B, 1> {
        let y = m
            .pool
            .forward(m.conv.forward(m.bn.forward(f.float::<4>(0))));
        mse(y, f.float(1))
    }
}

/// Lstm over `seq` steps.
struct Seq {
    batch: usize,
    seq: usize,
    d: usize,
}

impl Case for Seq {
    type Model<B: Backend> = Lstm<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> Lstm<B> {
        LstmConfig::new(self.d, self.d, true).init(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[self.batch, self.seq, self.d], -1.0, 1.0),
            uniform(rng, &[self.batch, self.seq, self.d], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &Lstm<B>, f: &F) -> Tensor<B, 1> {
        mse(m.forward(f.float::<3>(0), None).0, f.float(1))
    }
}

fn both_modes(run: impl Fn(DataMode)) {
    run(DataMode::Shared);
    run(DataMode::PerMember);
}

#[test]
fn sizes_equal_to_the_member_count() {
    both_modes(|mode| {
        let opts = Opts::new(mode);
        parity_with(
            &Dense {
                batch: K,
                d_in: K,
                hidden: K,
                classes: K,
            },
            600,
            opts,
        );
        parity_with(
            &Conv {
                batch: K,
                channels: [K, K],
                size: K,
            },
            601,
            opts,
        );
        parity_with(
            &Seq {
                batch: K,
                seq: K,
                d: K,
            },
            602,
            opts,
        );
    });
}

#[test]
fn size_one_axes() {
    both_modes(|mode| {
        let opts = Opts::new(mode);
        parity_with(
            &Dense {
                batch: 1,
                d_in: 1,
                hidden: 2,
                classes: 2,
            },
            610,
            opts,
        );
        parity_with(
            &Dense {
                batch: 3,
                d_in: 1,
                hidden: 1,
                classes: 3,
            },
            611,
            opts,
        );
        parity_with(
            &Conv {
                batch: 2,
                channels: [1, 1],
                size: 1,
            },
            612,
            opts,
        );
        parity_with(
            &Seq {
                batch: 1,
                seq: 1,
                d: 1,
            },
            613,
            opts,
        );
    });
}

#[test]
fn size_one_axes_with_one_member() {
    let opts = Opts {
        members: 1,
        ..Opts::new(DataMode::PerMember)
    };
    parity_with(
        &Dense {
            batch: 1,
            d_in: 1,
            hidden: 1,
            classes: 2,
        },
        620,
        opts,
    );
    parity_with(
        &Seq {
            batch: 1,
            seq: 1,
            d: 1,
        },
        621,
        opts,
    );
}

// ---------------------------------------------------------------------------------------------
// TransformerDecoder: self-attention with a causal mask, cross-attention to a memory with a
// padding mask.
// ---------------------------------------------------------------------------------------------

struct DecoderCase;

impl Case for DecoderCase {
    type Model<B: Backend> = TransformerDecoder<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> TransformerDecoder<B> {
        TransformerDecoderConfig::new(8, 16, 2, 2)
            .with_dropout(0.0)
            .init(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[2, 5, 8], -1.0, 1.0),
            uniform(rng, &[2, 6, 8], -1.0, 1.0),
            // memory padding: 1 marks a padded position
            classes(rng, &[2, 6], 4),
            uniform(rng, &[2, 5, 8], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &TransformerDecoder<B>, f: &F) -> Tensor<B, 1> {
        let causal = generate_autoregressive_mask::<B>(2, 5, &f.device());
        let pad = f.int::<2>(2).equal_elem(0);
        let input = TransformerDecoderInput::new(f.float(0), f.float(1))
            .target_mask_attn(causal)
            .memory_mask_pad(pad);
        mse(m.forward(input), f.float(3))
    }
}

#[test]
fn transformer_decoder() {
    both_modes(|mode| parity_with(&DecoderCase, 630, Opts::new(mode)));
}
