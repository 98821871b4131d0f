//! `recommend_group_size` against synthetic devices.

use std::convert::Infallible;
use std::time::Duration;

use saturate_profile::{recommend_group_size, GroupSizeSearch, ProfileError, StepMeasurement};

fn measurement(step_micros: u64, memory_bytes: u64) -> Result<StepMeasurement, Infallible> {
    Ok(StepMeasurement {
        step_time: Duration::from_micros(step_micros),
        memory_bytes,
    })
}

#[test]
fn exactly_linear_memory_is_fitted_exactly() {
    let recommendation = GroupSizeSearch::new(u64::MAX)
        .max_group_size(16)
        .run(|k| measurement(1_000, 7_000 + 1_234 * k as u64))
        .unwrap();
    let fit = recommendation.memory_fit;
    assert!((fit.intercept - 7_000.0).abs() < 1e-6, "{fit:?}");
    assert!((fit.slope - 1_234.0).abs() < 1e-9, "{fit:?}");
    assert!((recommendation.predicted_memory(100) - 130_400.0).abs() < 1e-6);
}

#[test]
fn throughput_that_saturates_at_8_gives_saturation_k_8() {
    let mut measured = Vec::new();
    let recommendation = recommend_group_size(u64::MAX, 256, |k| {
        measured.push(k);
        // Up to 8 members run in the time of one; beyond that, time grows with K.
        measurement(1_000 * (k as u64).div_ceil(8), 1_000 + 10 * k as u64)
    })
    .unwrap();
    assert_eq!(recommendation.saturation_k, Some(8));
    assert_eq!(recommendation.recommended, 8);
    assert_eq!(recommendation.memory_limited_k, 256);
    // It stops measuring once saturation shows.
    assert_eq!(measured, [1, 2, 4, 8, 16]);
    let throughput: Vec<f64> = recommendation
        .measurements
        .iter()
        .map(|m| m.member_steps_per_second)
        .collect();
    assert_eq!(throughput, [1_000.0, 2_000.0, 4_000.0, 8_000.0, 8_000.0]);
}

#[test]
fn a_small_gain_per_doubling_counts_as_saturated() {
    // Doubling 4 -> 8 gains 5 %: below the 10 % threshold, above a 1 % one.
    let step = |k: usize| match k {
        1 | 2 | 4 => 1_000,
        8 => 1_905, // 8 / 1.905 ms = 4199.5 steps/s vs 4000
        _ => 100_000,
    };
    let run = |gain| {
        GroupSizeSearch::new(u64::MAX)
            .max_group_size(16)
            .saturation_gain(gain)
            .run(|k| measurement(step(k), 1))
            .unwrap()
            .saturation_k
    };
    assert_eq!(run(0.1), Some(4));
    assert_eq!(run(0.01), Some(8));
}

#[test]
fn memory_limits_k_and_the_search_stops_before_running_out() {
    let budget = 1_000_000 + 100_000 * 20;
    let mut measured = Vec::new();
    let recommendation = GroupSizeSearch::new(budget)
        .max_group_size(1024)
        .run(|k| {
            measured.push(k);
            // Perfect scaling: throughput never saturates.
            measurement(1_000, 1_000_000 + 100_000 * k as u64)
        })
        .unwrap();
    assert_eq!(recommendation.memory_limited_k, 20);
    assert_eq!(recommendation.saturation_k, None);
    assert_eq!(recommendation.recommended, 20);
    // 32 members are predicted not to fit, so they are never tried.
    assert_eq!(measured, [1, 2, 4, 8, 16]);
    assert!(recommendation.predicted_memory(20) <= budget as f64);
    assert!(recommendation.predicted_memory(21) > budget as f64);
}

#[test]
fn a_measurement_over_budget_ends_the_search_and_still_fits() {
    // 1 member: 100, 2 members: 10_000 (a jump the fit could not foresee).
    let mut measured = Vec::new();
    let recommendation = GroupSizeSearch::new(5_000)
        .max_group_size(64)
        .run(|k| {
            measured.push(k);
            measurement(1_000, if k == 1 { 100 } else { 10_000 * k as u64 / 2 })
        })
        .unwrap();
    assert_eq!(measured, [1, 2]);
    assert_eq!(recommendation.memory_limited_k, 1);
    assert_eq!(recommendation.recommended, 1);
}

#[test]
fn a_budget_too_small_for_one_member_is_a_typed_error() {
    let error = recommend_group_size(1_000, 64, |_| measurement(1_000, 2_000)).unwrap_err();
    assert!(matches!(
        error,
        ProfileError::BudgetTooSmall {
            budget_bytes: 1_000,
            measured_bytes: 2_000
        }
    ));
    assert!(error.to_string().contains("raise the budget"), "{error}");
}

#[test]
fn max_group_size_caps_measurements_and_recommendation() {
    let mut measured = Vec::new();
    let recommendation = recommend_group_size(u64::MAX, 6, |k| {
        measured.push(k);
        measurement(1_000, 10 * k as u64)
    })
    .unwrap();
    assert_eq!(measured, [1, 2, 4]);
    assert_eq!(recommendation.memory_limited_k, 6);
    assert_eq!(recommendation.recommended, 6);
}

#[test]
fn one_measurement_attributes_all_memory_to_the_member() {
    let recommendation = recommend_group_size(1_000, 1, |_| measurement(1_000, 300)).unwrap();
    assert_eq!(recommendation.memory_fit.intercept, 0.0);
    assert_eq!(recommendation.memory_fit.slope, 300.0);
    assert_eq!(recommendation.recommended, 1);
}

#[test]
fn the_callers_error_is_wrapped_with_the_group_size() {
    let error = recommend_group_size(u64::MAX, 64, |k| {
        if k == 4 {
            Err("out of device memory")
        } else {
            Ok(StepMeasurement {
                step_time: Duration::from_millis(1),
                memory_bytes: 1,
            })
        }
    })
    .unwrap_err();
    match error {
        ProfileError::Measurement { group_size, source } => {
            assert_eq!(group_size, 4);
            assert_eq!(source.to_string(), "out of device memory");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn invalid_options_and_step_times_are_typed_errors() {
    let ok = |_| measurement(1_000, 1);
    assert!(matches!(
        GroupSizeSearch::new(10).max_group_size(0).run(ok),
        Err(ProfileError::InvalidMaxGroupSize)
    ));
    assert!(matches!(
        GroupSizeSearch::new(10).saturation_gain(f64::NAN).run(ok),
        Err(ProfileError::InvalidSaturationGain { .. })
    ));
    assert!(matches!(
        recommend_group_size(10, 4, |_| measurement(0, 1)),
        Err(ProfileError::InvalidStepTime { group_size: 1, .. })
    ));
}

#[test]
fn recommendation_serializes() {
    let recommendation =
        recommend_group_size(10_000, 8, |k| measurement(1_000, 100 * k as u64)).unwrap();
    let json = serde_json::to_string(&recommendation).unwrap();
    let back: saturate_profile::Recommendation = serde_json::from_str(&json).unwrap();
    assert_eq!(back, recommendation);
}
