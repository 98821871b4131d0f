//! **float_random** (Bernoulli and the default uniform `[0, 1)`, `f32`): burn-ndarray draws
//! element by element through `TensorData::random`, which builds a new sampler for every
//! element and runs ChaCha12 on one thread (5% of the CNN step at K = 8, for dropout's masks).
//! Here a counter-based generator (SplitMix64 of `seed + index`) fills the tensor in parallel;
//! the seed is two 32-bit draws from NdArray's own generator, so `Backend::seed` still makes
//! every draw reproducible, and the values depend neither on the thread count nor on how the
//! work is split. Member `m` of a `[K, ...]` draw takes the indices `m * n..(m + 1) * n`: a
//! group's first member draws what a group of one would.

use burn_backend::Shape;

#[cfg(feature = "ndarray")]
use super::base::{to_tensor, ELEMENTWISE_CHUNK};

/// SplitMix64's output function of `state` (Steele, Lea and Flood, 2014): a bijective mix of
/// 64 bits whose values for consecutive states pass BigCrush.
#[cfg(feature = "ndarray")]
fn splitmix64(state: u64) -> u64 {
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A draw of `shape` from `distribution` as an NdArray `f32` tensor, for
/// [`Distribution::Bernoulli`](burn_backend::Distribution::Bernoulli) (1.0 with probability
/// `p`, else 0.0) and [`Distribution::Default`](burn_backend::Distribution::Default) (uniform
/// on `[0, 1)` in steps of 2^-24); `None` for other distributions. The seed comes from
/// `seed_draw`, two values below 2^32 from the backend's own generator.
#[cfg(feature = "ndarray")]
pub(crate) fn random_f32<P: 'static>(
    shape: &Shape,
    distribution: burn_backend::Distribution,
    seed_draw: impl FnOnce() -> [u64; 2],
) -> Option<P> {
    use burn_backend::Distribution;
    use burn_ndarray::NdArrayTensor;
    use rayon::prelude::*;

    // The golden-ratio increment of SplitMix64's state.
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
    let threshold = match distribution {
        // `x < p * 2^64` with probability p (rand's `Bernoulli` compares the same way).
        Distribution::Bernoulli(p) if (0.0..=1.0).contains(&p) => Some(if p >= 1.0 {
            None
        } else {
            Some((p * 2f64.powi(64)) as u64)
        }),
        Distribution::Default => None,
        _ => return None,
    };
    let [hi, lo] = seed_draw();
    let seed = splitmix64((hi << 32) | (lo & 0xffff_ffff));
    let len = shape.num_elements();
    let mut out = vec![0.0f32; len];
    out.par_chunks_mut(ELEMENTWISE_CHUNK)
        .enumerate()
        .for_each(|(chunk, values)| {
            let first = (chunk * ELEMENTWISE_CHUNK) as u64;
            for (i, v) in values.iter_mut().enumerate() {
                let x = splitmix64(seed.wrapping_add((first + i as u64).wrapping_mul(GAMMA)));
                *v = match threshold {
                    Some(Some(t)) => (x < t) as u32 as f32,
                    Some(None) => 1.0,
                    None => (x >> 40) as f32 * (1.0 / (1u64 << 24) as f32),
                };
            }
        });
    super::warm_after(len);
    let array = ndarray::Array::from_shape_vec(ndarray::IxDyn(shape.as_slice()), out)
        .expect("the draw's shape")
        .into_shared();
    Some(to_tensor(NdArrayTensor::from(array)))
}

/// Vmap's `float_random` of the physical `shape` on NdArray for `f32` Bernoulli and default
/// draws ([`random_f32`]); `None` (the inner backend's own draw) otherwise. `B` is NdArray: the
/// caller asked [`plan`](crate::lowering::plan) ([`Kernels::NdArray`](crate::lowering::Kernels)).
pub(crate) fn random_float<B: burn_backend::Backend>(
    shape: &Shape,
    distribution: burn_backend::Distribution,
    device: &crate::VmapDevice<B>,
    dtype: burn_backend::FloatDType,
) -> Option<burn_backend::tensor::FloatTensor<B>> {
    #[cfg(feature = "ndarray")]
    if dtype == burn_backend::FloatDType::F32 {
        return random_f32(shape, distribution, || {
            let draw = B::int_random(
                Shape::from(vec![2]),
                burn_backend::Distribution::Uniform(0.0, 4_294_967_296.0),
                &device.inner,
                burn_backend::IntDType::I64,
            );
            let data = burn::tensor::try_read_sync(B::int_into_data(draw))
                .expect("NdArray reads synchronously")
                .expect("reading an NdArray tensor cannot fail");
            let v: Vec<i64> = data.convert::<i64>().to_vec().expect("i64 data");
            [v[0] as u64, v[1] as u64]
        });
    }
    #[cfg(not(feature = "ndarray"))]
    let _ = (shape, distribution, device, dtype);
    None
}

#[cfg(all(test, feature = "ndarray"))]
mod tests {
    //! The counter-based draws of [`random_f32`] for a fixed seed: the same values whatever the
    //! thread count, different for another seed, only 0 and 1 for Bernoulli.

    use burn::backend::NdArray;
    use burn::tensor::{Tensor, TensorPrimitive};
    use burn_backend::tensor::FloatTensor;
    use burn_backend::{Distribution, Shape};

    use super::random_f32;

    type I = NdArray<f32>;

    fn draw(len: usize, distribution: Distribution, seed: [u64; 2]) -> Vec<f32> {
        let t: FloatTensor<I> = random_f32(&Shape::from(vec![len]), distribution, || seed)
            .expect("a distribution of the fast path");
        Tensor::<I, 1>::from_primitive(TensorPrimitive::Float(t))
            .into_data()
            .to_vec::<f32>()
            .unwrap()
    }

    #[test]
    fn draws_depend_on_the_seed_only() {
        // Several chunks of the parallel fill, then one thread only.
        let len = 5 * super::ELEMENTWISE_CHUNK + 17;
        for distribution in [Distribution::Bernoulli(0.3), Distribution::Default] {
            let a = draw(len, distribution, [1, 2]);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            let one_thread = pool.install(|| draw(len, distribution, [1, 2]));
            assert_eq!(
                a, one_thread,
                "{distribution:?}: the thread count changed the draw"
            );
            assert_ne!(
                a,
                draw(len, distribution, [1, 3]),
                "{distribution:?}: seed ignored"
            );
            assert_ne!(
                a,
                draw(len, distribution, [2, 2]),
                "{distribution:?}: seed ignored"
            );
        }
        let bernoulli = draw(len, Distribution::Bernoulli(0.3), [1, 2]);
        assert!(bernoulli.iter().all(|&v| v == 0.0 || v == 1.0));
        let uniform = draw(len, Distribution::Default, [1, 2]);
        assert!(uniform.iter().all(|v| (0.0..1.0).contains(v)));
    }

    #[test]
    fn other_distributions_take_the_backends_own_draw() {
        let t: Option<FloatTensor<I>> = random_f32(
            &Shape::from(vec![4]),
            Distribution::Normal(0.0, 1.0),
            || unreachable!("no seed is drawn for a distribution the fast path leaves alone"),
        );
        assert!(t.is_none());
        let t: Option<FloatTensor<I>> = random_f32(
            &Shape::from(vec![4]),
            Distribution::Uniform(0.0, 2.0),
            || unreachable!("no seed is drawn for a distribution the fast path leaves alone"),
        );
        assert!(t.is_none());
    }
}
