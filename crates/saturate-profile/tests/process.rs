//! Process counters and the CPU-only profile.

use saturate_profile::{current_resident_bytes, peak_resident_bytes, process_cpu_time, profile};

#[test]
fn cpu_time_grows_with_cpu_work() {
    let before = process_cpu_time().unwrap();
    // Spin until the clock moves: its resolution is platform-dependent.
    let mut x = 0u64;
    while process_cpu_time().unwrap() == before {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
    }
    std::hint::black_box(x);
    assert!(process_cpu_time().unwrap() > before);
}

#[cfg(target_os = "linux")]
#[test]
fn resident_memory_on_linux_is_positive_and_peak_is_at_least_current() {
    let current = current_resident_bytes().unwrap();
    let peak = peak_resident_bytes().unwrap();
    assert!(current > 0);
    assert!(peak >= current, "peak {peak} < current {current}");
}

#[cfg(target_os = "linux")]
#[test]
fn peak_resident_memory_covers_a_touched_allocation() {
    const BYTES: usize = 64 << 20;
    let (_, profile) = profile(|| {
        let block = vec![1u8; BYTES];
        std::hint::black_box(&block);
    });
    assert!(profile.peak_resident_bytes.unwrap() >= BYTES as u64);
}

#[cfg(not(target_os = "linux"))]
#[test]
fn resident_memory_elsewhere_is_a_typed_unsupported_error() {
    use saturate_profile::ProfileError;
    assert!(matches!(
        current_resident_bytes(),
        Err(ProfileError::Unsupported { .. })
    ));
    assert!(matches!(
        peak_resident_bytes(),
        Err(ProfileError::Unsupported { .. })
    ));
}

#[test]
fn profile_returns_the_work_result_and_cpu_time() {
    let (value, profile) = profile(|| {
        let start = process_cpu_time().unwrap();
        while process_cpu_time().unwrap() == start {}
        42
    });
    assert_eq!(value, 42);
    assert!(profile.wall_seconds > 0.0);
    assert!(profile.cpu_seconds.unwrap() > 0.0);
    assert!(profile.cpu_cores_busy().unwrap() > 0.0);
    assert!(profile.gpu.is_none());
}
