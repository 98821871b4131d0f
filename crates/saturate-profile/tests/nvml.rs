//! NVML's error paths. On a machine with a GPU the out-of-range test still runs: there
//! NVML loads and the index is out of range.

#![cfg(feature = "nvml")]

use saturate_profile::{NvmlSource, ProfileError, Profiler};

#[test]
fn an_impossible_gpu_index_is_a_typed_error() {
    match NvmlSource::new(u32::MAX) {
        Err(ProfileError::NvmlUnavailable { reason }) => {
            assert!(!reason.is_empty());
        }
        Err(ProfileError::NoGpu) => {}
        Err(ProfileError::DeviceOutOfRange { index, count }) => {
            assert_eq!(index, u32::MAX);
            assert!(count > 0);
        }
        other => panic!("expected a typed NVML error, got {other:?}"),
    }
}

#[test]
fn without_a_driver_the_error_says_what_to_do() {
    // Only meaningful where libnvidia-ml is absent (this crate's CI); elsewhere NVML loads.
    if let Err(error @ ProfileError::NvmlUnavailable { .. }) = NvmlSource::new(0) {
        let message = error.to_string();
        assert!(message.contains("install the NVIDIA driver"), "{message}");
    }
}

#[test]
fn the_builder_passes_nvml_errors_on_and_runs_nothing() {
    let mut ran = false;
    let result = Profiler::builder()
        .nvml(u32::MAX)
        .and_then(|builder| builder.profile(|| ran = true));
    assert!(result.is_err());
    assert!(!ran);
}

/// On a GPU machine, profiles GPU 0 end to end.
#[test]
fn gpu_zero_profiles_when_present() {
    let Ok(gpu) = NvmlSource::new(0) else {
        return;
    };
    let (_, profile) = Profiler::builder()
        .gpu(gpu)
        .profile(|| std::thread::sleep(std::time::Duration::from_millis(50)))
        .unwrap();
    let gpu = profile.gpu.unwrap();
    assert!(gpu.samples >= 2);
    assert!(gpu.sampling_rate_hz > 0.0);
    assert!(gpu.peak_memory_used_bytes.is_some());
}
