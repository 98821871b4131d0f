//! The GPU sampler and its aggregation, against fake sources.

use std::sync::mpsc;
use std::time::Duration;

use saturate_profile::{GpuAccumulator, GpuSource, ProfileError, ProfilerConfig};

use crate::common::{Counter, FakeGpu, Reading};

fn accumulate(
    source: &mut FakeGpu,
    samples: usize,
    elapsed: Duration,
) -> saturate_profile::GpuProfile {
    let mut accumulator = GpuAccumulator::new(source.name());
    for _ in 0..samples {
        accumulator.sample(source);
    }
    accumulator.finish(elapsed)
}

#[test]
fn aggregates_busy_fraction_mean_energy_peak_and_rate() {
    let mut gpu = FakeGpu::new([
        Reading::new(0, 100, 5_000),
        Reading::new(50, 300, 6_000),
        Reading::new(100, 200, 7_500),
        Reading::new(10, 250, 9_000),
        Reading::new(0, 150, 10_000),
    ]);
    let profile = accumulate(&mut gpu, 5, Duration::from_millis(500));
    assert_eq!(profile.device, "fake GPU");
    assert_eq!(profile.samples, 5);
    assert_eq!(profile.failed_samples, 0);
    assert_eq!(profile.first_error, None);
    // 5 samples over a (fake) half second.
    assert_eq!(profile.sampling_rate_hz, 10.0);
    // 3 of 5 samples have utilisation > 0.
    assert_eq!(profile.busy_fraction, Some(0.6));
    assert_eq!(profile.mean_utilization_percent, Some(32.0));
    // 10_000 - 5_000 mJ.
    assert_eq!(profile.energy_joules, Some(5.0));
    assert_eq!(profile.peak_memory_used_bytes, Some(300));
}

#[test]
fn missing_counters_are_none_not_zero() {
    let unsupported = Reading {
        utilization: Counter::Unsupported,
        memory_used: Counter::Unsupported,
        total_energy_mj: Counter::Unsupported,
    };
    let mut gpu = FakeGpu::new([unsupported]);
    let profile = accumulate(&mut gpu, 3, Duration::from_secs(1));
    assert_eq!(profile.samples, 3);
    assert_eq!(profile.failed_samples, 0);
    assert_eq!(profile.busy_fraction, None);
    assert_eq!(profile.mean_utilization_percent, None);
    assert_eq!(profile.energy_joules, None);
    assert_eq!(profile.peak_memory_used_bytes, None);
}

#[test]
fn energy_alone_unsupported_leaves_the_other_counters() {
    let reading = |utilization| Reading {
        total_energy_mj: Counter::Unsupported,
        ..Reading::new(utilization, 64, 0)
    };
    let mut gpu = FakeGpu::new([reading(100), reading(0)]);
    let profile = accumulate(&mut gpu, 2, Duration::from_secs(1));
    assert_eq!(profile.energy_joules, None);
    assert_eq!(profile.busy_fraction, Some(0.5));
    assert_eq!(profile.peak_memory_used_bytes, Some(64));
}

#[test]
fn an_energy_counter_that_goes_backwards_gives_no_energy() {
    let mut gpu = FakeGpu::new([Reading::new(1, 1, 9_000), Reading::new(1, 1, 1_000)]);
    let profile = accumulate(&mut gpu, 2, Duration::from_secs(1));
    assert_eq!(profile.energy_joules, None);
}

#[test]
fn failed_reads_are_counted_and_the_rest_of_the_sample_kept() {
    let failing = Reading {
        utilization: Counter::Fails,
        ..Reading::new(0, 999, 2_000)
    };
    let mut gpu = FakeGpu::new([
        Reading::new(100, 10, 1_000),
        failing,
        Reading::new(100, 10, 3_000),
    ]);
    let profile = accumulate(&mut gpu, 3, Duration::from_secs(1));
    assert_eq!(profile.samples, 3);
    assert_eq!(profile.failed_samples, 1);
    let error = profile.first_error.expect("the failure is reported");
    assert!(
        error.contains("utilization") && error.contains("scripted failure"),
        "{error}"
    );
    // Utilisation from the two good samples; memory and energy from all three.
    assert_eq!(profile.busy_fraction, Some(1.0));
    assert_eq!(profile.peak_memory_used_bytes, Some(999));
    assert_eq!(profile.energy_joules, Some(2.0));
}

#[test]
fn no_elapsed_time_gives_a_zero_rate_not_infinity() {
    let mut gpu = FakeGpu::new([Reading::new(1, 1, 1)]);
    let profile = accumulate(&mut gpu, 1, Duration::ZERO);
    assert_eq!(profile.sampling_rate_hz, 0.0);
}

#[test]
fn the_sampler_thread_samples_until_finished() {
    let (progress, samples_done) = mpsc::channel();
    let gpu = FakeGpu::new([Reading::new(40, 1 << 20, 0), Reading::new(60, 2 << 20, 500)])
        .reporting_to(progress);
    let profiler = ProfilerConfig::new()
        .with_interval(Duration::from_millis(1))
        .with_gpu(gpu)
        .init()
        .unwrap();
    // Wait (untimed) until the thread has taken 5 samples besides the first.
    while samples_done.recv().unwrap() < 6 {}
    let gpu = profiler.finish().gpu.expect("a GPU source was given");
    // At least those 6, and the final one after the stop.
    assert!(gpu.samples >= 7, "{gpu:?}");
    assert!(gpu.sampling_rate_hz > 0.0);
    assert_eq!(gpu.failed_samples, 0);
    assert_eq!(gpu.energy_joules, Some(0.5));
    assert_eq!(gpu.peak_memory_used_bytes, Some(2 << 20));
    // The first sample read 40 %, all others 60 %.
    let expected_mean = (40.0 + 60.0 * (gpu.samples - 1) as f64) / gpu.samples as f64;
    assert!((gpu.mean_utilization_percent.unwrap() - expected_mean).abs() < 1e-9);
}

#[test]
fn a_snapshot_reads_the_samples_so_far_and_sampling_goes_on() {
    let (progress, samples_done) = mpsc::channel();
    let gpu = FakeGpu::new([
        Reading::new(0, 1 << 20, 1_000),
        Reading::new(100, 3 << 20, 3_000),
    ])
    .reporting_to(progress);
    let profiler = ProfilerConfig::new()
        .with_interval(Duration::from_millis(1))
        .with_gpu(gpu)
        .init()
        .unwrap();
    while samples_done.recv().unwrap() < 3 {}
    let so_far = profiler.snapshot();
    let early = so_far.gpu.clone().expect("a GPU source was given");
    assert!(early.samples >= 3, "{early:?}");
    // Only the first sample read 0 %: at least one of three was idle.
    assert!(early.busy_fraction.unwrap() < 1.0);
    assert_eq!(early.energy_joules, Some(2.0));
    // Sampling goes on after the snapshot: wait for 3 more samples than it saw.
    let seen = early.samples as usize;
    while samples_done.recv().unwrap() < seen + 3 {}
    let at_end = profiler.finish();
    let late = at_end.gpu.expect("a GPU source was given");
    assert!(late.samples >= early.samples + 3, "{early:?} then {late:?}");
    assert!(late.busy_fraction.unwrap() > early.busy_fraction.unwrap());
    assert!(at_end.wall_seconds >= so_far.wall_seconds);
}

#[test]
fn a_source_that_fails_at_start_fails_before_the_work() {
    let broken = Reading {
        memory_used: Counter::Fails,
        ..Reading::new(1, 1, 1)
    };
    let mut ran = false;
    let result = ProfilerConfig::new()
        .with_gpu(FakeGpu::new([broken]))
        .profile(|| ran = true);
    assert!(matches!(
        result,
        Err(ProfileError::GpuCounter {
            counter: "memory used",
            ..
        })
    ));
    assert!(!ran, "the work must not run when the profiler cannot start");
}

#[test]
fn a_zero_interval_is_rejected() {
    let result = ProfilerConfig::new()
        .with_interval(Duration::ZERO)
        .with_gpu(FakeGpu::new([Reading::new(1, 1, 1)]))
        .init();
    assert!(matches!(result, Err(ProfileError::InvalidInterval { .. })));
}
