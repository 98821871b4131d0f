//! Which implementation each op family gets on which inner backend: the one place that
//! recognises a backend by its type.
//!
//! [`plan`] answers, for the inner backend type `B`, a [`Plan`]: how convolutions are computed
//! ([`ConvLowering`]: `B`'s default unless [`set_conv_lowering`] chose another), whether
//! convolutions whose input and weights are both batched loop over the members, and which host
//! kernels apply ([`Kernels`]). Every choice that depends on the backend asks it: the
//! convolution lowerings (`conv.rs`, reached from `ops/module/conv.rs`), the host convolution's
//! output, and `float_random` ([`random_float`]).
//!
//! Adding a backend means adding one module under `kernels/` (its host kernels, on its own
//! buffers) and one arm in [`plan`] (recognising its type and naming its [`Plan`]); the compiler
//! then points to each `match` on [`Kernels`] that must say which of its kernels to call.
//!
//! Not decided here, by design:
//! - kernels that give the inner op's values bit for bit (the copy-free reshape, `relu` and
//!   `relu_backward`, the 2-d max pool and its backward, in `kernels/ndarray/`) check the
//!   tensor they are given themselves (a downcast that hands back any other tensor), so the
//!   batching rules try them directly, with no decision to make;
//! - whether the inner `recip` is exact is measured per backend type by a probe
//!   (`ops/reciprocal.rs`), not looked up: it depends on how the backend was built (burn-ndarray
//!   with or without `simd`), which its type does not tell.

pub(crate) mod conv;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use burn_backend::tensor::FloatTensor;
use burn_backend::{Backend, Distribution, FloatDType, Shape};

use crate::VmapDevice;

/// How [`Vmap`](crate::Vmap) computes a convolution (conv1d/2d/3d, the transposed forms, and
/// their input and weight gradients) on an inner backend.
///
/// The default is chosen by the inner backend's type ([`conv_lowering`]): NdArray gets the fast
/// [`HostGemm`](Self::HostGemm) (a member of a group equals itself as a group of one bit for
/// bit, and plain NdArray to rounding); every other backend gets
/// [`InnerConvolution`](Self::InnerConvolution), which took less memory and time than the
/// unfold at every size measured on lavapipe (wgpu) and kept a member equal to itself trained
/// alone to rounding on CUDA, where the unfold did not. [`set_conv_lowering`] changes it per backend type, e.g.
/// to [`InnerConvolution`](Self::InnerConvolution) for bit-for-bit parity with plain NdArray.
///
/// On the benchmark CNN (SmallCNN(16), batch 128, one training step of K = 8 members, NdArray,
/// 2 cores; book: CPU backends) `InnerConvolution` took 2.3 s, `BatchedGemm` 1.35 s and
/// `HostGemm` 0.32 s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvLowering {
    /// Unfold (im2col) + one K-batched matrix product `[K, M, k] @ [K, k, N]`, the groups a
    /// second batch axis. Much faster on NdArray, whose direct convolution (built without
    /// `simd`) is a scalar loop while its matrix product is blocked and vectorised (book:
    /// Benchmarks), but it sums in another order than NdArray's convolution: results agree with
    /// plain NdArray to rounding (1-2 ulp per convolution), not bit for bit. On CubeCL backends
    /// the implicit-GEMM convolution requires `groups == 1`, so a member axis folded into the
    /// groups falls back to the direct kernel; batched matrix products do not. On CUDA (an
    /// H200) its results were not those of the member's own convolution to rounding: the CNN's
    /// parameters differed by up to 6.5e-5 after one SGD step (`examples/parity_check.rs`).
    BatchedGemm,
    /// The inner backend's own convolution: on NdArray one call per member when input and
    /// weights are both per member, elsewhere one call with the member axis folded into the
    /// channel groups; a shared input runs against the K weight sets side by side in the output
    /// channels, shared weights fold K into the batch. Per-member results equal the member's
    /// own convolution on the inner backend bit for bit on NdArray: the choice for checking a
    /// group against plain NdArray, at several times the cost of
    /// [`HostGemm`](Self::HostGemm) (NdArray's direct convolution is a scalar loop).
    InnerConvolution,
    /// Unfold (im2col) + matrix products on host memory, one (member, image) pair at a time,
    /// the pairs in parallel (`kernels/ndarray/conv.rs`): for `f32` convolutions with one or two
    /// spatial axes on CPU backends, whose tensors live in host memory (elsewhere it costs a
    /// device round trip per operand). Each member's unfolded image stays in cache, where
    /// [`BatchedGemm`](Self::BatchedGemm) materialises the columns of all K members at once.
    /// A member's result does not depend on K or on the thread count, so a group member equals
    /// itself trained alone under this lowering bit for bit; against the inner backend's own
    /// convolution it agrees to rounding. Other convolutions (3-d, other dtypes) take
    /// [`BatchedGemm`](Self::BatchedGemm). The default on NdArray.
    HostGemm,
}

/// A name that is not a [`ConvLowering`] (from its [`FromStr`](std::str::FromStr)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown convolution lowering `{0}`: expected `gemm`, `inner` or `host`")]
pub struct ParseConvLoweringError(pub String);

/// The short names the examples and benchmarks take (`SATURATE_CONV_LOWERING`): `gemm`
/// ([`BatchedGemm`](ConvLowering::BatchedGemm)), `inner`
/// ([`InnerConvolution`](ConvLowering::InnerConvolution)) and `host`
/// ([`HostGemm`](ConvLowering::HostGemm)).
///
/// ```
/// use saturate_vmap::ConvLowering;
///
/// assert_eq!("inner".parse(), Ok(ConvLowering::InnerConvolution));
/// assert_eq!(ConvLowering::HostGemm.to_string().parse(), Ok(ConvLowering::HostGemm));
/// assert!("im2col".parse::<ConvLowering>().is_err());
/// ```
impl std::str::FromStr for ConvLowering {
    type Err = ParseConvLoweringError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "gemm" => Ok(Self::BatchedGemm),
            "inner" => Ok(Self::InnerConvolution),
            "host" => Ok(Self::HostGemm),
            other => Err(ParseConvLoweringError(other.to_owned())),
        }
    }
}

/// The short name [`FromStr`](std::str::FromStr) takes: `gemm`, `inner` or `host`.
impl std::fmt::Display for ConvLowering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::BatchedGemm => "gemm",
            Self::InnerConvolution => "inner",
            Self::HostGemm => "host",
        })
    }
}

fn registry() -> &'static RwLock<HashMap<TypeId, ConvLowering>> {
    static CHOSEN: OnceLock<RwLock<HashMap<TypeId, ConvLowering>>> = OnceLock::new();
    CHOSEN.get_or_init(Default::default)
}

/// Chooses how `Vmap<B>` computes convolutions, for the inner backend type `B` (process-wide;
/// takes effect at the next convolution). Without a choice, the default of
/// [`conv_lowering`].
///
/// ```
/// use burn::backend::NdArray;
/// use saturate_vmap::{conv_lowering, set_conv_lowering, ConvLowering};
///
/// // NdArray's own convolutions: a group member equals plain NdArray bit for bit, slower.
/// assert_eq!(conv_lowering::<NdArray>(), ConvLowering::HostGemm);
/// set_conv_lowering::<NdArray>(ConvLowering::InnerConvolution);
/// assert_eq!(conv_lowering::<NdArray>(), ConvLowering::InnerConvolution);
/// ```
pub fn set_conv_lowering<B: Backend>(lowering: ConvLowering) {
    registry()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(TypeId::of::<B>(), lowering);
}

/// The convolution lowering `Vmap<B>` uses for the inner backend type `B`: the one set with
/// [`set_conv_lowering`], else [`ConvLowering::HostGemm`] for NdArray and
/// [`ConvLowering::InnerConvolution`] for every other backend.
pub fn conv_lowering<B: Backend>() -> ConvLowering {
    plan::<B>().conv
}

/// The lowering [`set_conv_lowering`] chose for `B`, if any.
fn chosen_conv_lowering<B: Backend>() -> Option<ConvLowering> {
    registry()
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(&TypeId::of::<B>())
        .copied()
}

/// What `Vmap<B>` uses on an inner backend: the answer of [`plan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// How convolutions are computed.
    pub(crate) conv: ConvLowering,
    /// Under [`ConvLowering::InnerConvolution`], whether a convolution whose input and weights
    /// are both batched runs as one inner call per member instead of one grouped call with K
    /// times the groups ([`conv::loops_over_members`]).
    pub(crate) conv_per_member: bool,
    /// Which host kernels apply besides the inner backend's own ops.
    pub(crate) kernels: Kernels,
    /// Whether a reshape that adds axes to a tensor with a size-1 axis goes through the flat
    /// shape ([`reshape_through_flat`]).
    pub(crate) reshape_through_flat: bool,
    /// Whether a broadcasting elementwise op gets its operands expanded to the result's shape
    /// first ([`broadcast_explicitly`]).
    pub(crate) broadcast_explicitly: bool,
}

/// The host kernels (`kernels/`) an inner backend gets besides its own ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernels {
    /// None: the inner backend's own ops only.
    Inner,
    /// `kernels/ndarray/`: counter-based `f32` draws, and the host convolution's results made
    /// as NdArray arrays without a copy.
    NdArray,
}

impl Plan {
    /// Every backend without kernels of its own: the inner backend's ops, convolutions as
    /// grouped convolutions ([`ConvLowering::InnerConvolution`]).
    ///
    /// Measured on Mesa's lavapipe (wgpu; `scripts/bench-conv-memory.sh`, book: GPU): at every
    /// batch size (32, 128, 256) and K (1-8) of SmallCNN(16) it took less device memory and
    /// less time than the unfold, and at batch 256, K = 8 the unfold's one buffer (231 MB) was
    /// more than the device allows, where the grouped convolution ran. Measured on CUDA (an
    /// NVIDIA H200, `examples/parity_check.rs --model cnn`, K = 4): after one SGD step a group
    /// member under the unfold differed from itself trained alone by up to 6.5e-5, under the
    /// grouped convolution by at most 1.5e-8 (rounding); the unfold's matrix products do not
    /// compute with the precision of burn's own CUDA convolution there.
    const INNER: Self = Self {
        conv: ConvLowering::InnerConvolution,
        conv_per_member: false,
        kernels: Kernels::Inner,
        reshape_through_flat: true,
        broadcast_explicitly: true,
    };

    /// burn-ndarray's backend.
    const NDARRAY: Self = Self {
        conv: ConvLowering::HostGemm,
        conv_per_member: true,
        kernels: Kernels::NdArray,
        reshape_through_flat: false,
        broadcast_explicitly: false,
    };
}

/// What `Vmap<B>` uses on the inner backend `B`: the plan of its type, with the convolution
/// lowering [`set_conv_lowering`] chose for `B`, if any.
pub(crate) fn plan<B: Backend>() -> Plan {
    // One arm per backend with kernels of its own; every other backend takes the last.
    let default = if is_ndarray::<B>() {
        Plan::NDARRAY
    } else {
        Plan::INNER
    };
    Plan {
        conv: chosen_conv_lowering::<B>().unwrap_or(default.conv),
        ..default
    }
}

/// Whether `reshape(from -> to)` must go through the flat shape `[from.num_elements()]` on the
/// inner backend `B`: when it adds axes (other than leading size-1 ones) to a tensor that has a
/// size-1 axis, on every backend but NdArray.
///
/// Why: burn 0.21's stride analysis for such reshapes (burn-std's `reshape_analysis` →
/// `split_strides`, which every CubeCL backend — CUDA, ROCm, Metal, Vulkan/wgpu — uses to turn a
/// reshape of a non-contiguous tensor into a view) walks the old axes from the last one and
/// takes the stride of a size-1 axis as if it were meaningful. A size-1 axis of a
/// non-contiguous tensor can have any stride: `adaptive_avg_pool2d` to `[1, 1]` on CubeCL
/// returns an NHWC buffer seen as NCHW (shape `[N, C, 1, 1]`, strides `[C, 1, C, C]`), and
/// `reshape([K, N / K, C, 1, 1])` of it — `Vmap`'s split of the member axis back out of the
/// batch — gets the channel stride `C` instead of `1` and reads the wrong elements (measured
/// on lavapipe: after the 6th value, zeros; `tests/cubecl/pool.rs`). A reshape to fewer axes is
/// never a view of a non-contiguous tensor there (it copies into contiguous memory), and a
/// reshape of contiguous memory is a view with canonical strides, so the detour costs one copy
/// where the tensor was not contiguous and nothing where it was. Leading size-1 axes alone keep
/// the old strides (burn's `Broadcasted` case), which is right, so they take the direct path.
pub(crate) fn reshape_through_flat<B: Backend>(from: &Shape, to: &Shape) -> bool {
    let (old, new) = (from.len(), to.len());
    if new <= old || !from.contains(&1) {
        return false;
    }
    let added = new - old;
    if to[..added].iter().all(|&d| d == 1) && to[added..] == from[..] {
        return false;
    }
    plan::<B>().reshape_through_flat
}

/// Whether a broadcasting elementwise op (`add`, `mul`, a comparison, ..., and the bias of
/// `linear`) expands its operands to the result's shape before calling the inner op, on every
/// backend but NdArray. An expand is a view (stride 0), so this costs no copy.
///
/// Why: burn 0.21's fusion (`Fusion<CubeBackend<..>>`, burn's default for wgpu, CUDA, ROCm and
/// Metal) computes wrong values when a matmul's output is fused with an elementwise op whose
/// other operand is a *reshaped* tensor broadcast implicitly and a further elementwise op
/// follows: plain burn, no saturate, on wgpu,
/// `relu(x.matmul(w) + b.reshape([4, 1, 16]))` with `x: [4, 16, 8]`, `w: [4, 8, 16]`,
/// `b: [4, 16]` differs from the unfused `CubeBackend` by up to 2.8 (measured on lavapipe;
/// `tests/cubecl/fusion.rs`), while the same with `.expand([4, 16, 16])` after the reshape
/// agrees. `Vmap`'s batching rules make exactly this pattern — a per-member bias `[K, out]`
/// reshaped to `[K, 1, out]` after a K-batched matmul, an unbatched operand reshaped to
/// `[1, ...]` — so every `Linear` followed by an activation hit it.
pub(crate) fn broadcast_explicitly<B: Backend>() -> bool {
    plan::<B>().broadcast_explicitly
}

/// Whether `B` is burn-ndarray's backend (f32 or f64 floats, i32 or i64 ints, the default
/// quantized element).
pub(crate) fn is_ndarray<B: Backend>() -> bool {
    #[cfg(feature = "ndarray")]
    {
        use burn_ndarray::NdArray;
        let id = TypeId::of::<B>();
        [
            TypeId::of::<NdArray<f32, i64>>(),
            TypeId::of::<NdArray<f32, i32>>(),
            TypeId::of::<NdArray<f64, i64>>(),
            TypeId::of::<NdArray<f64, i32>>(),
        ]
        .contains(&id)
    }
    #[cfg(not(feature = "ndarray"))]
    {
        let _ = core::any::type_name::<B>(); // no NdArray to compare with
        false
    }
}

/// Vmap's `float_random` of the physical `shape` on the kernels of `B`'s [`plan`]: NdArray's
/// counter-based draws for `f32` Bernoulli and default draws; `None` (the inner backend's own
/// draw) otherwise.
pub(crate) fn random_float<B: Backend>(
    shape: &Shape,
    distribution: Distribution,
    device: &VmapDevice<B>,
    dtype: FloatDType,
) -> Option<FloatTensor<B>> {
    match plan::<B>().kernels {
        Kernels::NdArray => {
            crate::kernels::ndarray::random_float::<B>(shape, distribution, device, dtype)
        }
        Kernels::Inner => None,
    }
}
