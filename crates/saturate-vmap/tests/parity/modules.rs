//! Module parity: each unmodified burn-nn module (and each loss) trained as a K=4 group with a
//! per-member SGD step vs the same 4 members trained one by one.

use burn::module::Module;
use burn::nn::attention::{MhaInput, MultiHeadAttention, MultiHeadAttentionConfig};
use burn::nn::conv::{
    Conv1d, Conv1dConfig, Conv2d, Conv2dConfig, ConvTranspose2d, ConvTranspose2dConfig,
};
use burn::nn::loss::{
    BinaryCrossEntropyLossConfig, CrossEntropyLossConfig, HuberLossConfig, MseLoss, Reduction,
};
use burn::nn::pool::{
    AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig, AvgPool2d, AvgPool2dConfig, MaxPool2d,
    MaxPool2dConfig,
};
use burn::nn::transformer::{
    TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput,
};
use burn::nn::{
    BatchNorm, BatchNormConfig, Embedding, EmbeddingConfig, Gelu, GroupNorm, GroupNormConfig, Gru,
    GruConfig, LayerNorm, LayerNormConfig, LeakyReluConfig, Linear, LinearConfig, Lstm, LstmConfig,
    PRelu, PReluConfig, PaddingConfig1d, PaddingConfig2d, Relu, Sigmoid, Tanh,
};
use burn::tensor::activation;
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use rand::rngs::StdRng;

use super::common::{
    classes, parity, parity_with, shared_parity, uniform, Build, Case, DataMode, Feed, Opts,
};

fn mse<B: Backend, const D: usize>(pred: Tensor<B, D>, target: Tensor<B, D>) -> Tensor<B, 1> {
    MseLoss::new().forward(pred, target, Reduction::Mean)
}

// ---------------------------------------------------------------------------------------------
// Linear
// ---------------------------------------------------------------------------------------------

struct LinearCase;

impl Case for LinearCase {
    type Model<B: Backend> = Linear<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> Linear<B> {
        LinearConfig::new(6, 3).init(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[8, 6], -1.0, 1.0),
            uniform(rng, &[8, 3], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &Linear<B>, f: &F) -> Tensor<B, 1> {
        mse(m.forward(f.float::<2>(0)), f.float(1))
    }
}

#[test]
fn linear() {
    parity(&LinearCase, 1, DataMode::Shared);
}

#[test]
fn linear_per_member_data() {
    parity(&LinearCase, 2, DataMode::PerMember);
}

/// Linear on a rank-3 input (batched matmul over a leading batch axis).
struct Linear3dCase;

impl Case for Linear3dCase {
    type Model<B: Backend> = Linear<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> Linear<B> {
        LinearConfig::new(5, 4).init(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[3, 4, 5], -1.0, 1.0),
            uniform(rng, &[3, 4, 4], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &Linear<B>, f: &F) -> Tensor<B, 1> {
        mse(m.forward(f.float::<3>(0)), f.float(1))
    }
}

#[test]
fn linear_rank3() {
    parity(&Linear3dCase, 3, DataMode::Shared);
}

#[test]
fn linear_rank3_per_member_data() {
    parity(&Linear3dCase, 4, DataMode::PerMember);
}

// ---------------------------------------------------------------------------------------------
// Convolutions
// ---------------------------------------------------------------------------------------------

/// Conv1d: channels, kernel, stride, padding, dilation, groups; input `[2, cin, len]`,
/// output `[2, cout, out_len]`.
struct Conv1dCase {
    cin: usize,
    cout: usize,
    kernel: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
    groups: usize,
    len: usize,
}

impl Conv1dCase {
    fn out_len(&self) -> usize {
        (self.len + 2 * self.pad - self.dilation * (self.kernel - 1) - 1) / self.stride + 1
    }
}

impl Case for Conv1dCase {
    type Model<B: Backend> = Conv1d<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> Conv1d<B> {
        Conv1dConfig::new(self.cin, self.cout, self.kernel)
            .with_stride(self.stride)
            .with_padding(PaddingConfig1d::Explicit(self.pad, self.pad))
            .with_dilation(self.dilation)
            .with_groups(self.groups)
            .init(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[2, self.cin, self.len], -1.0, 1.0),
            uniform(rng, &[2, self.cout, self.out_len()], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &Conv1d<B>, f: &F) -> Tensor<B, 1> {
        mse(m.forward(f.float::<3>(0)), f.float(1))
    }
}

#[test]
fn conv1d() {
    let case = Conv1dCase {
        cin: 3,
        cout: 4,
        kernel: 3,
        stride: 1,
        pad: 0,
        dilation: 1,
        groups: 1,
        len: 9,
    };
    parity(&case, 10, DataMode::Shared);
}

#[test]
fn conv1d_stride_padding_dilation_groups() {
    let case = Conv1dCase {
        cin: 4,
        cout: 6,
        kernel: 3,
        stride: 2,
        pad: 1,
        dilation: 2,
        groups: 2,
        len: 11,
    };
    parity(&case, 11, DataMode::Shared);
}

/// Conv2d; input `[2, cin, h, w]`.
struct Conv2dCase {
    channels: [usize; 2],
    kernel: [usize; 2],
    stride: [usize; 2],
    pad: [usize; 2],
    dilation: [usize; 2],
    groups: usize,
    size: [usize; 2],
}

impl Conv2dCase {
    fn plain(channels: [usize; 2], groups: usize) -> Self {
        Self {
            channels,
            kernel: [3, 3],
            stride: [1, 1],
            pad: [0, 0],
            dilation: [1, 1],
            groups,
            size: [6, 6],
        }
    }
    fn out(&self) -> [usize; 2] {
        let o = |i: usize| {
            (self.size[i] + 2 * self.pad[i] - self.dilation[i] * (self.kernel[i] - 1) - 1)
                / self.stride[i]
                + 1
        };
        [o(0), o(1)]
    }
}

impl Case for Conv2dCase {
    type Model<B: Backend> = Conv2d<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> Conv2d<B> {
        Conv2dConfig::new(self.channels, self.kernel)
            .with_stride(self.stride)
            .with_padding(PaddingConfig2d::Explicit(
                self.pad[0],
                self.pad[1],
                self.pad[0],
                self.pad[1],
            ))
            .with_dilation(self.dilation)
            .with_groups(self.groups)
            .init(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        let [h, w] = self.out();
        vec![
            uniform(
                rng,
                &[2, self.channels[0], self.size[0], self.size[1]],
                -1.0,
                1.0,
            ),
            uniform(rng, &[2, self.channels[1], h, w], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &Conv2d<B>, f: &F) -> Tensor<B, 1> {
        mse(m.forward(f.float::<4>(0)), f.float(1))
    }
}

#[test]
fn conv2d() {
    parity(&Conv2dCase::plain([3, 4], 1), 20, DataMode::Shared);
}

#[test]
fn conv2d_per_member_data() {
    parity(&Conv2dCase::plain([3, 4], 1), 21, DataMode::PerMember);
}

#[test]
fn conv2d_groups() {
    parity(&Conv2dCase::plain([4, 6], 2), 22, DataMode::Shared);
}

#[test]
fn conv2d_groups_per_member_data() {
    parity(&Conv2dCase::plain([4, 6], 2), 23, DataMode::PerMember);
}

#[test]
fn conv2d_stride_padding_dilation() {
    let case = Conv2dCase {
        channels: [3, 4],
        kernel: [3, 2],
        stride: [2, 1],
        pad: [1, 2],
        dilation: [1, 2],
        groups: 1,
        size: [7, 6],
    };
    parity(&case, 24, DataMode::Shared);
}

#[test]
fn conv2d_depthwise_strided() {
    let case = Conv2dCase {
        channels: [4, 8],
        kernel: [3, 3],
        stride: [2, 2],
        pad: [1, 1],
        dilation: [1, 1],
        groups: 4,
        size: [7, 7],
    };
    parity(&case, 25, DataMode::Shared);
}

/// ConvTranspose2d; input `[2, cin, 4, 4]`.
struct ConvT2dCase {
    dilation: usize,
    channels: [usize; 2],
    stride: usize,
    pad: usize,
    pad_out: usize,
    groups: usize,
}

impl ConvT2dCase {
    fn out(&self) -> usize {
        // (in - 1) * stride - 2 * pad + dilation * (kernel - 1) + pad_out + 1, kernel 3, in 4.
        3 * self.stride + 2 * self.dilation + self.pad_out + 1 - 2 * self.pad
    }
}

impl Case for ConvT2dCase {
    type Model<B: Backend> = ConvTranspose2d<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> ConvTranspose2d<B> {
        ConvTranspose2dConfig::new(self.channels, [3, 3])
            .with_stride([self.stride; 2])
            .with_padding([self.pad; 2])
            .with_padding_out([self.pad_out; 2])
            .with_groups(self.groups)
            .with_dilation([self.dilation; 2])
            .init(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        let o = self.out();
        vec![
            uniform(rng, &[2, self.channels[0], 4, 4], -1.0, 1.0),
            uniform(rng, &[2, self.channels[1], o, o], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &ConvTranspose2d<B>, f: &F) -> Tensor<B, 1> {
        mse(m.forward(f.float::<4>(0)), f.float(1))
    }
}

#[test]
fn conv_transpose2d() {
    let case = ConvT2dCase {
        dilation: 1,
        channels: [3, 2],
        stride: 1,
        pad: 0,
        pad_out: 0,
        groups: 1,
    };
    parity(&case, 30, DataMode::Shared);
}

#[test]
fn conv_transpose2d_stride_padding_groups() {
    let case = ConvT2dCase {
        dilation: 1,
        channels: [4, 6],
        stride: 2,
        pad: 1,
        pad_out: 1,
        groups: 2,
    };
    parity(&case, 31, DataMode::Shared);
}

// ---------------------------------------------------------------------------------------------
// Pooling (after a conv, so that there are parameters to train)
// ---------------------------------------------------------------------------------------------

#[derive(Module, Debug)]
struct ConvPool<B: Backend> {
    conv: Conv2d<B>,
    max: MaxPool2d,
    avg: AvgPool2d,
    adaptive: AdaptiveAvgPool2d,
}

#[derive(Clone, Copy, Debug)]
enum Pool {
    Max,
    Avg,
    Adaptive,
}

struct PoolCase(Pool);

impl Case for PoolCase {
    type Model<B: Backend> = ConvPool<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> ConvPool<B> {
        ConvPool {
            conv: Conv2dConfig::new([2, 3], [3, 3])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(device),
            max: MaxPool2dConfig::new([2, 2]).init(),
            avg: AvgPool2dConfig::new([3, 3])
                .with_strides([2, 2])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(),
            adaptive: AdaptiveAvgPool2dConfig::new([2, 3]).init(),
        }
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        let out = match self.0 {
            Pool::Max | Pool::Avg => [3, 3],
            Pool::Adaptive => [2, 3],
        };
        vec![
            uniform(rng, &[2, 2, 6, 6], -1.0, 1.0),
            uniform(rng, &[2, 3, out[0], out[1]], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &ConvPool<B>, f: &F) -> Tensor<B, 1> {
        let x = m.conv.forward(f.float::<4>(0));
        let y = match self.0 {
            Pool::Max => m.max.forward(x),
            Pool::Avg => m.avg.forward(x),
            Pool::Adaptive => m.adaptive.forward(x),
        };
        mse(y, f.float(1))
    }
}

#[test]
fn max_pool2d() {
    parity(&PoolCase(Pool::Max), 40, DataMode::Shared);
}

#[test]
fn max_pool2d_per_member_data() {
    parity(&PoolCase(Pool::Max), 41, DataMode::PerMember);
}

#[test]
fn avg_pool2d() {
    parity(&PoolCase(Pool::Avg), 42, DataMode::Shared);
}

#[test]
fn adaptive_avg_pool2d() {
    parity(&PoolCase(Pool::Adaptive), 43, DataMode::Shared);
}

// ---------------------------------------------------------------------------------------------
// Normalisation
// ---------------------------------------------------------------------------------------------

#[derive(Module, Debug)]
struct LinNorm<B: Backend> {
    linear: Linear<B>,
    norm: LayerNorm<B>,
}

struct LayerNormCase;

impl Case for LayerNormCase {
    type Model<B: Backend> = LinNorm<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> LinNorm<B> {
        LinNorm {
            linear: LinearConfig::new(5, 6).init(device),
            norm: LayerNormConfig::new(6).init(device),
        }
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[8, 5], -1.0, 1.0),
            uniform(rng, &[8, 6], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &LinNorm<B>, f: &F) -> Tensor<B, 1> {
        mse(
            m.norm.forward(m.linear.forward(f.float::<2>(0))),
            f.float(1),
        )
    }
}

#[test]
fn layer_norm() {
    parity(&LayerNormCase, 50, DataMode::Shared);
}

#[derive(Module, Debug)]
pub(super) struct ConvNorm<B: Backend> {
    conv: Conv2d<B>,
    batch: BatchNorm<B>,
    group: GroupNorm<B>,
}

pub(super) struct ConvNormCase {
    group_norm: bool,
}

/// Conv2d + BatchNorm (train mode).
pub(super) fn batch_norm_case() -> ConvNormCase {
    ConvNormCase { group_norm: false }
}

impl Case for ConvNormCase {
    type Model<B: Backend> = ConvNorm<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> ConvNorm<B> {
        ConvNorm {
            // No conv bias in front of BatchNorm: BatchNorm subtracts each channel's mean, so
            // the bias's true gradient is exactly zero and what the backward computes is
            // rounding noise, which depends on the convolution's summation order (im2col + GEMM
            // in the group, NdArray's direct loop alone) and which Adam scales up to the
            // learning rate (measured with the bias: `conv.bias` 1e-4 apart after 10 AdamW
            // steps, with or without burn-ndarray's `simd`). GroupNorm (2 channels per group)
            // keeps part of the bias, so it has one there.
            conv: Conv2dConfig::new([2, 4], [3, 3])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .with_bias(self.group_norm)
                .init(device),
            batch: BatchNormConfig::new(4).with_momentum(0.3).init(device),
            group: GroupNormConfig::new(2, 4).init(device),
        }
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[4, 2, 5, 5], -1.0, 2.0),
            uniform(rng, &[4, 4, 5, 5], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &ConvNorm<B>, f: &F) -> Tensor<B, 1> {
        let x = m.conv.forward(f.float::<4>(0));
        let y = if self.group_norm {
            m.group.forward(x)
        } else {
            m.batch.forward(x)
        };
        mse(y, f.float(1))
    }
}

/// BatchNorm in train mode (autodiff enabled): the running mean and variance (compared like
/// parameters) are per member and match the independent runs.
#[test]
fn batch_norm_train() {
    parity(&ConvNormCase { group_norm: false }, 51, DataMode::Shared);
}

#[test]
fn batch_norm_train_per_member_data() {
    parity(&ConvNormCase { group_norm: false }, 52, DataMode::PerMember);
}

#[test]
fn group_norm() {
    parity(&ConvNormCase { group_norm: true }, 53, DataMode::Shared);
}

// ---------------------------------------------------------------------------------------------
// Embedding, attention, transformer, recurrent
// ---------------------------------------------------------------------------------------------

#[derive(Module, Debug)]
struct EmbedLin<B: Backend> {
    embedding: Embedding<B>,
    linear: Linear<B>,
}

struct EmbeddingCase;

impl Case for EmbeddingCase {
    type Model<B: Backend> = EmbedLin<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> EmbedLin<B> {
        EmbedLin {
            embedding: EmbeddingConfig::new(10, 6).init(device),
            linear: LinearConfig::new(6, 2).init(device),
        }
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            classes(rng, &[4, 5], 10),
            uniform(rng, &[4, 5, 2], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &EmbedLin<B>, f: &F) -> Tensor<B, 1> {
        let x = m.embedding.forward(f.int::<2>(0));
        mse(m.linear.forward(x), f.float(1))
    }
}

#[test]
fn embedding() {
    parity(&EmbeddingCase, 60, DataMode::Shared);
}

#[test]
fn embedding_per_member_targets() {
    parity(&EmbeddingCase, 61, DataMode::PerMember);
}

struct MhaCase;

impl Case for MhaCase {
    type Model<B: Backend> = MultiHeadAttention<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> MultiHeadAttention<B> {
        MultiHeadAttentionConfig::new(8, 2)
            .with_dropout(0.0)
            .init(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[2, 5, 8], -1.0, 1.0),
            uniform(rng, &[2, 5, 8], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &MultiHeadAttention<B>, f: &F) -> Tensor<B, 1> {
        let out = m.forward(MhaInput::self_attn(f.float::<3>(0)));
        mse(out.context, f.float(1))
    }
}

#[test]
fn multi_head_attention() {
    parity(&MhaCase, 70, DataMode::Shared);
}

#[test]
fn multi_head_attention_per_member_data() {
    parity(&MhaCase, 71, DataMode::PerMember);
}

struct EncoderCase {
    norm_first: bool,
}

impl Case for EncoderCase {
    type Model<B: Backend> = TransformerEncoder<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> TransformerEncoder<B> {
        TransformerEncoderConfig::new(8, 16, 2, 2)
            .with_dropout(0.0)
            .with_norm_first(self.norm_first)
            .init(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[2, 5, 8], -1.0, 1.0),
            uniform(rng, &[2, 5, 8], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &TransformerEncoder<B>, f: &F) -> Tensor<B, 1> {
        let out = m.forward(TransformerEncoderInput::new(f.float::<3>(0)));
        mse(out, f.float(1))
    }
}

#[test]
fn transformer_encoder() {
    parity(&EncoderCase { norm_first: false }, 72, DataMode::Shared);
}

#[test]
fn transformer_encoder_norm_first() {
    parity(&EncoderCase { norm_first: true }, 73, DataMode::Shared);
}

#[derive(Module, Debug)]
struct Rnn<B: Backend> {
    lstm: Lstm<B>,
    gru: Gru<B>,
}

struct RnnCase {
    gru: bool,
}

impl Case for RnnCase {
    type Model<B: Backend> = Rnn<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> Rnn<B> {
        Rnn {
            lstm: LstmConfig::new(3, 5, true).init(device),
            gru: GruConfig::new(3, 5, true).init(device),
        }
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[2, 4, 3], -1.0, 1.0),
            uniform(rng, &[2, 4, 5], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &Rnn<B>, f: &F) -> Tensor<B, 1> {
        let x = f.float::<3>(0);
        let out = if self.gru {
            m.gru.forward(x, None)
        } else {
            m.lstm.forward(x, None).0
        };
        mse(out, f.float(1))
    }
}

#[test]
fn lstm() {
    parity(&RnnCase { gru: false }, 80, DataMode::Shared);
}

#[test]
fn lstm_per_member_data() {
    parity(&RnnCase { gru: false }, 81, DataMode::PerMember);
}

#[test]
fn gru() {
    parity(&RnnCase { gru: true }, 82, DataMode::Shared);
}

// ---------------------------------------------------------------------------------------------
// Activations: Linear -> activation -> Linear, MSE.
// ---------------------------------------------------------------------------------------------

#[derive(Module, Debug)]
struct ActNet<B: Backend> {
    first: Linear<B>,
    prelu: PRelu<B>,
    second: Linear<B>,
}

#[derive(Clone, Copy, Debug)]
enum Act {
    Relu,
    Gelu,
    GeluApprox,
    Sigmoid,
    Tanh,
    LeakyRelu,
    PRelu,
    Silu,
    Softmax,
    LogSoftmax,
    Softplus,
    Elu,
    Mish,
    HardSigmoid,
    LogSigmoid,
}

const ACTS: [Act; 15] = [
    Act::Relu,
    Act::Gelu,
    Act::GeluApprox,
    Act::Sigmoid,
    Act::Tanh,
    Act::LeakyRelu,
    Act::PRelu,
    Act::Silu,
    Act::Softmax,
    Act::LogSoftmax,
    Act::Softplus,
    Act::Elu,
    Act::Mish,
    Act::HardSigmoid,
    Act::LogSigmoid,
];

struct ActCase(Act);

impl Case for ActCase {
    type Model<B: Backend> = ActNet<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> ActNet<B> {
        ActNet {
            first: LinearConfig::new(4, 6).init(device),
            prelu: PReluConfig::new()
                .with_num_parameters(6)
                .with_alpha(0.2)
                .init(device),
            second: LinearConfig::new(6, 3).init(device),
        }
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        vec![
            uniform(rng, &[8, 4], -2.0, 2.0),
            uniform(rng, &[8, 3], -1.0, 1.0),
        ]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &ActNet<B>, f: &F) -> Tensor<B, 1> {
        let h = m.first.forward(f.float::<2>(0));
        let h = match self.0 {
            Act::Relu => Relu::new().forward(h),
            Act::Gelu => Gelu::new().forward(h),
            Act::GeluApprox => Gelu::new_approximate().forward(h),
            Act::Sigmoid => Sigmoid::new().forward(h),
            Act::Tanh => Tanh::new().forward(h),
            Act::LeakyRelu => LeakyReluConfig::new()
                .with_negative_slope(0.1)
                .init()
                .forward(h),
            Act::PRelu => m.prelu.forward(h),
            Act::Silu => activation::silu(h),
            Act::Softmax => activation::softmax(h, 1),
            Act::LogSoftmax => activation::log_softmax(h, 1),
            Act::Softplus => activation::softplus(h, 1.5),
            Act::Elu => activation::elu(h, 1.0),
            Act::Mish => activation::mish(h),
            Act::HardSigmoid => activation::hard_sigmoid(h, 0.2, 0.5),
            Act::LogSigmoid => activation::log_sigmoid(h),
        };
        mse(m.second.forward(h), f.float(1))
    }
    fn lr_scale(&self) -> f64 {
        // LogSoftmax into MSE diverges at the full rates.
        0.25
    }
}

/// Every activation, one after the other (one test, so a failure names the activation).
#[test]
fn activations() {
    for (i, act) in ACTS.iter().enumerate() {
        eprintln!("activation {act:?}");
        parity(&ActCase(*act), 90 + i as u64, DataMode::Shared);
    }
}

#[test]
fn prelu_per_member_data() {
    parity(&ActCase(Act::PRelu), 120, DataMode::PerMember);
}

// ---------------------------------------------------------------------------------------------
// Losses
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Loss {
    CrossEntropy,
    CrossEntropySmoothing,
    CrossEntropyWeights,
    CrossEntropyPad,
    Mse,
    MseSum,
    BceLogits,
    BceProbs,
    BceSmoothing,
    Huber,
}

struct LossCase(Loss);

impl Case for LossCase {
    type Model<B: Backend> = Linear<B>;
    fn init<B: Backend>(&self, device: &B::Device) -> Linear<B> {
        LinearConfig::new(5, 4).init(device)
    }
    fn batch(&self, rng: &mut StdRng) -> Vec<TensorData> {
        let x = uniform(rng, &[8, 5], -2.0, 2.0);
        let y = match self.0 {
            Loss::CrossEntropy
            | Loss::CrossEntropySmoothing
            | Loss::CrossEntropyWeights
            | Loss::CrossEntropyPad => classes(rng, &[8], 4),
            Loss::BceLogits | Loss::BceProbs | Loss::BceSmoothing => classes(rng, &[8, 4], 2),
            Loss::Mse | Loss::MseSum | Loss::Huber => uniform(rng, &[8, 4], -1.0, 1.0),
        };
        vec![x, y]
    }
    fn loss<B: Backend, F: Feed<B>>(&self, m: &Linear<B>, f: &F) -> Tensor<B, 1> {
        let out = m.forward(f.float::<2>(0));
        let device = f.device();
        match self.0 {
            Loss::CrossEntropy => CrossEntropyLossConfig::new()
                .init(&device)
                .forward(out, f.int(1)),
            Loss::CrossEntropySmoothing => CrossEntropyLossConfig::new()
                .with_smoothing(Some(0.1))
                .init(&device)
                .forward(out, f.int(1)),
            Loss::CrossEntropyWeights => CrossEntropyLossConfig::new()
                .with_weights(Some(vec![1.0, 2.0, 0.5, 1.5]))
                .init(&device)
                .forward(out, f.int(1)),
            Loss::CrossEntropyPad => CrossEntropyLossConfig::new()
                .with_pad_tokens(Some(vec![0]))
                .init(&device)
                .forward(out, f.int(1)),
            Loss::Mse => MseLoss::new().forward(out, f.float(1), Reduction::Mean),
            Loss::MseSum => MseLoss::new().forward(out, f.float(1), Reduction::Sum),
            Loss::BceLogits => BinaryCrossEntropyLossConfig::new()
                .with_logits(true)
                .init(&device)
                .forward(out, f.int(1)),
            Loss::BceProbs => BinaryCrossEntropyLossConfig::new()
                .init(&device)
                .forward(activation::sigmoid(out), f.int(1)),
            Loss::BceSmoothing => BinaryCrossEntropyLossConfig::new()
                .with_logits(true)
                .with_smoothing(Some(0.1))
                .init(&device)
                .forward(out, f.int(1)),
            Loss::Huber => {
                HuberLossConfig::new(0.5)
                    .init()
                    .forward(out, f.float(1), Reduction::Mean)
            }
        }
    }
}

#[test]
fn cross_entropy() {
    parity(&LossCase(Loss::CrossEntropy), 130, DataMode::Shared);
}

#[test]
fn cross_entropy_per_member_data() {
    parity(&LossCase(Loss::CrossEntropy), 131, DataMode::PerMember);
}

#[test]
fn cross_entropy_label_smoothing() {
    parity(
        &LossCase(Loss::CrossEntropySmoothing),
        132,
        DataMode::Shared,
    );
}

#[test]
fn cross_entropy_class_weights() {
    parity(&LossCase(Loss::CrossEntropyWeights), 133, DataMode::Shared);
}

#[test]
fn mse_loss() {
    parity(&LossCase(Loss::Mse), 134, DataMode::Shared);
}

#[test]
fn mse_loss_sum() {
    parity(&LossCase(Loss::MseSum), 135, DataMode::Shared);
}

#[test]
fn binary_cross_entropy_logits() {
    parity(&LossCase(Loss::BceLogits), 136, DataMode::Shared);
}

#[test]
fn binary_cross_entropy_probabilities() {
    parity(&LossCase(Loss::BceProbs), 137, DataMode::Shared);
}

#[test]
fn binary_cross_entropy_smoothing() {
    parity(&LossCase(Loss::BceSmoothing), 138, DataMode::Shared);
}

#[test]
fn huber_loss() {
    parity(&LossCase(Loss::Huber), 139, DataMode::Shared);
}

#[test]
fn huber_loss_per_member_data() {
    parity(&LossCase(Loss::Huber), 140, DataMode::PerMember);
}

#[test]
fn cross_entropy_pad_tokens() {
    parity(&LossCase(Loss::CrossEntropyPad), 141, DataMode::Shared);
}

#[test]
fn cross_entropy_pad_tokens_per_member_data() {
    parity(&LossCase(Loss::CrossEntropyPad), 142, DataMode::PerMember);
}

#[test]
fn cross_entropy_label_smoothing_per_member_data() {
    parity(
        &LossCase(Loss::CrossEntropySmoothing),
        143,
        DataMode::PerMember,
    );
}

#[test]
fn binary_cross_entropy_per_member_data() {
    parity(&LossCase(Loss::BceLogits), 144, DataMode::PerMember);
    parity(&LossCase(Loss::BceProbs), 145, DataMode::PerMember);
}

// ---------------------------------------------------------------------------------------------
// Per-member data for the remaining modules
// ---------------------------------------------------------------------------------------------

#[test]
fn conv1d_per_member_data() {
    let case = Conv1dCase {
        cin: 4,
        cout: 6,
        kernel: 3,
        stride: 2,
        pad: 1,
        dilation: 2,
        groups: 2,
        len: 11,
    };
    parity(&case, 150, DataMode::PerMember);
}

#[test]
fn conv2d_stride_padding_dilation_per_member_data() {
    let case = Conv2dCase {
        channels: [3, 4],
        kernel: [3, 2],
        stride: [2, 1],
        pad: [1, 2],
        dilation: [1, 2],
        groups: 1,
        size: [7, 6],
    };
    parity(&case, 151, DataMode::PerMember);
}

#[test]
fn conv_transpose2d_per_member_data() {
    let case = ConvT2dCase {
        dilation: 1,
        channels: [4, 6],
        stride: 2,
        pad: 1,
        pad_out: 1,
        groups: 2,
    };
    parity(&case, 152, DataMode::PerMember);
}

#[test]
fn avg_and_adaptive_pool2d_per_member_data() {
    parity(&PoolCase(Pool::Avg), 153, DataMode::PerMember);
    parity(&PoolCase(Pool::Adaptive), 154, DataMode::PerMember);
}

#[test]
fn layer_norm_and_group_norm_per_member_data() {
    parity(&LayerNormCase, 155, DataMode::PerMember);
    parity(&ConvNormCase { group_norm: true }, 156, DataMode::PerMember);
}

#[test]
fn gru_per_member_data() {
    parity(&RnnCase { gru: true }, 157, DataMode::PerMember);
}

#[test]
fn transformer_encoder_per_member_data() {
    parity(&EncoderCase { norm_first: true }, 158, DataMode::PerMember);
}

#[test]
fn activations_per_member_data() {
    for (i, act) in ACTS.iter().enumerate() {
        eprintln!("activation {act:?}");
        parity(&ActCase(*act), 160 + i as u64, DataMode::PerMember);
    }
}

// ---------------------------------------------------------------------------------------------
// Groups built with Batched::stack, and other group sizes
// ---------------------------------------------------------------------------------------------

#[test]
fn stacked_groups() {
    let opts = Opts {
        build: Build::Stack,
        ..Opts::new(DataMode::Shared)
    };
    parity_with(&LinearCase, 180, opts);
    parity_with(&ConvNormCase { group_norm: false }, 181, opts);
    parity_with(&Conv2dCase::plain([4, 6], 2), 182, opts);
    parity_with(
        &RnnCase { gru: false },
        183,
        Opts {
            mode: DataMode::PerMember,
            ..opts
        },
    );
}

#[test]
fn one_member_groups() {
    for mode in [DataMode::Shared, DataMode::PerMember] {
        let opts = Opts {
            members: 1,
            ..Opts::new(mode)
        };
        parity_with(&LinearCase, 190, opts);
        parity_with(&Conv2dCase::plain([4, 6], 2), 191, opts);
        parity_with(&ConvNormCase { group_norm: false }, 192, opts);
        parity_with(&PoolCase(Pool::Max), 193, opts);
        parity_with(&MhaCase, 194, opts);
        parity_with(&EmbeddingCase, 195, opts);
        parity_with(&LossCase(Loss::CrossEntropySmoothing), 196, opts);
    }
}

#[test]
fn three_member_groups() {
    let opts = Opts {
        members: 3,
        ..Opts::new(DataMode::PerMember)
    };
    parity_with(&Conv2dCase::plain([3, 4], 1), 197, opts);
    parity_with(&ConvNormCase { group_norm: false }, 198, opts);
    parity_with(&RnnCase { gru: true }, 199, opts);
}

/// Every module with weights shared by all members (unbatched, e.g. frozen) and one batch per
/// member.
#[test]
fn shared_weights_per_member_data() {
    shared_parity(&LinearCase, 700);
    shared_parity(&Linear3dCase, 701);
    shared_parity(
        &Conv1dCase {
            cin: 4,
            cout: 6,
            kernel: 3,
            stride: 2,
            pad: 1,
            dilation: 2,
            groups: 2,
            len: 11,
        },
        702,
    );
    shared_parity(&Conv2dCase::plain([3, 4], 1), 703);
    shared_parity(&Conv2dCase::plain([4, 6], 2), 704);
    shared_parity(
        &ConvT2dCase {
            dilation: 1,
            channels: [4, 6],
            stride: 2,
            pad: 1,
            pad_out: 1,
            groups: 2,
        },
        705,
    );
    shared_parity(&PoolCase(Pool::Max), 706);
    shared_parity(&PoolCase(Pool::Avg), 707);
    shared_parity(&PoolCase(Pool::Adaptive), 708);
    shared_parity(&LayerNormCase, 709);
    shared_parity(&ConvNormCase { group_norm: false }, 710);
    shared_parity(&ConvNormCase { group_norm: true }, 711);
    shared_parity(&EmbeddingCase, 712);
    shared_parity(&MhaCase, 713);
    shared_parity(&EncoderCase { norm_first: true }, 714);
    shared_parity(&RnnCase { gru: false }, 715);
    shared_parity(&RnnCase { gru: true }, 716);
    shared_parity(&ActCase(Act::PRelu), 717);
    shared_parity(&LossCase(Loss::CrossEntropySmoothing), 718);
    shared_parity(&LossCase(Loss::BceLogits), 719);
}

/// More convolution variants with one batch per member.
#[test]
fn conv_variants_per_member_data() {
    let depthwise = Conv2dCase {
        channels: [4, 8],
        kernel: [3, 3],
        stride: [2, 2],
        pad: [1, 1],
        dilation: [1, 1],
        groups: 4,
        size: [7, 7],
    };
    parity(&depthwise, 800, DataMode::PerMember);
    let plain1d = Conv1dCase {
        cin: 3,
        cout: 4,
        kernel: 3,
        stride: 1,
        pad: 0,
        dilation: 1,
        groups: 1,
        len: 9,
    };
    parity(&plain1d, 801, DataMode::PerMember);
    for (i, (stride, pad, pad_out, dilation, groups)) in
        [(1, 0, 0, 1, 1), (2, 1, 1, 2, 1), (2, 0, 1, 2, 2)]
            .into_iter()
            .enumerate()
    {
        let case = ConvT2dCase {
            dilation,
            channels: [4, 6],
            stride,
            pad,
            pad_out,
            groups,
        };
        parity(&case, 802 + i as u64, DataMode::Shared);
        parity(&case, 812 + i as u64, DataMode::PerMember);
    }
}
