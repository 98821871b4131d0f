//! NVML's error paths. On a machine with a GPU the out-of-range test still runs: there
//! NVML loads and the index is out of range.

#![cfg(feature = "nvml")]

use saturate_profile::{NvmlSource, ProfileError, ProfilerConfig};

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
fn a_missing_library_is_a_typed_error_that_says_what_to_do() {
    let error = NvmlSource::from_library("/nonexistent/libnvidia-ml.so.1", 0).unwrap_err();
    assert!(
        matches!(error, ProfileError::NvmlUnavailable { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("install the NVIDIA driver"), "{message}");
}

/// Where no NVIDIA driver is installed (this project's CI), the default search fails
/// with the same typed error; set `SATURATE_EXPECT_NO_NVML=1` to require it.
#[test]
fn without_a_driver_the_default_search_is_a_typed_error() {
    let result = NvmlSource::new(0);
    if std::env::var_os("SATURATE_EXPECT_NO_NVML").is_some() {
        assert!(
            matches!(result, Err(ProfileError::NvmlUnavailable { .. })),
            "{result:?}"
        );
    }
    if let Err(error) = result {
        println!("{error}");
        assert!(
            matches!(
                error,
                ProfileError::NvmlUnavailable { .. } | ProfileError::NoGpu
            ),
            "{error:?}"
        );
    }
}

#[test]
fn the_builder_passes_nvml_errors_on_and_runs_nothing() {
    let mut ran = false;
    let result = ProfilerConfig::new()
        .with_nvml(u32::MAX)
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
    let (_, profile) = ProfilerConfig::new()
        .with_gpu(gpu)
        .profile(|| std::thread::sleep(std::time::Duration::from_millis(50)))
        .unwrap();
    let gpu = profile.gpu.unwrap();
    assert!(gpu.samples >= 2);
    assert!(gpu.sampling_rate_hz > 0.0);
    assert!(gpu.peak_memory_used_bytes.is_some());
}
