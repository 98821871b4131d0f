//! Times `matrixmultiply::sgemm` (one thread) on the GEMM shapes of one training step of the
//! benchmark models, and prints one CSV row per shape: `kernel,shape,m,k,n,us_per_call,gflops`.
//! The kernel is whatever matrixmultiply selects at run time on this CPU for this build.

use std::time::Instant;

/// `(name, m, k, n)`: C[m×n] = A[m×k] · B[k×n].
const SHAPES: &[(&str, usize, usize, usize)] = &[
    // MLP 784-128-10, batch 128 (one member): forward, weight gradient, input gradient.
    ("mlp784 fc1 forward", 128, 784, 128),
    ("mlp784 fc1 weight grad", 784, 128, 128),
    ("mlp784 fc2 forward", 128, 128, 10),
    // SmallCNN(16) on 28x28 images, one image (the host convolution's unit of work).
    ("cnn conv1 forward", 16, 9, 784),
    ("cnn conv2 forward", 32, 144, 196),
    ("cnn conv2 weight grad", 32, 196, 144),
    ("cnn conv2 input grad", 144, 32, 196),
    ("cnn fc forward", 128, 1568, 10),
];

fn main() {
    let kernel = if cfg!(feature = "avx512") && std::arch::is_x86_feature_detected!("avx512f") {
        "avx512"
    } else {
        "fma-avx2"
    };
    let mut state = 0x2545_f491_u32;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state as f32 / u32::MAX as f32) - 0.5
    };
    for &(name, m, k, n) in SHAPES {
        let a: Vec<f32> = (0..m * k).map(|_| random()).collect();
        let b: Vec<f32> = (0..k * n).map(|_| random()).collect();
        let mut c = vec![0.0f32; m * n];
        let call = |c: &mut [f32]| unsafe {
            matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                k as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            );
        };
        // Calls per sample: about 50 ms each.
        let start = Instant::now();
        let mut calls = 0usize;
        while start.elapsed().as_secs_f64() < 0.05 {
            call(&mut c);
            calls += 1;
        }
        let mut samples: Vec<f64> = (0..9)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..calls {
                    call(&mut c);
                }
                t.elapsed().as_secs_f64() / calls as f64
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        let median = samples[samples.len() / 2];
        let gflops = 2.0 * (m * k * n) as f64 / median / 1e9;
        println!(
            "{kernel},{name},{m},{k},{n},{:.3},{gflops:.2}",
            median * 1e6
        );
        std::hint::black_box(&c);
    }
}
