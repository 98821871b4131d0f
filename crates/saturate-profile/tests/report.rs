//! A profile's table, JSON and CSV forms.

use saturate_profile::{GpuProfile, Profile};

fn with_gpu() -> Profile {
    Profile {
        wall_seconds: 2.0,
        cpu_seconds: Some(3.0),
        peak_resident_bytes: Some(3 << 20),
        gpu: Some(GpuProfile {
            device: "NVIDIA \"Test\", rev 1".into(),
            samples: 200,
            failed_samples: 1,
            first_error: Some("GPU lost".into()),
            sampling_rate_hz: 100.0,
            busy_fraction: Some(0.75),
            mean_utilization_percent: Some(42.5),
            energy_joules: None,
            peak_memory_used_bytes: Some(1 << 30),
        }),
    }
}

fn without_gpu() -> Profile {
    Profile {
        wall_seconds: 0.5,
        cpu_seconds: None,
        peak_resident_bytes: None,
        gpu: None,
    }
}

#[test]
fn display_is_a_table_that_marks_missing_values() {
    let table = with_gpu().to_string();
    for expected in [
        "wall time        2.000 s",
        "CPU time         3.000 s (1.50 cores busy)",
        "peak RSS         3.0 MiB",
        "GPU samples      200 (1 failed) at 100.0 Hz",
        "GPU busy         75.0 %",
        "GPU mean util    42.5 %",
        "GPU energy       n/a",
        "GPU peak memory  1024.0 MiB",
        "GPU first error  GPU lost",
    ] {
        assert!(
            table.contains(expected),
            "{expected:?} missing from\n{table}"
        );
    }
    let table = without_gpu().to_string();
    assert!(table.contains("CPU time         n/a"), "{table}");
    assert!(table.contains("GPU              not sampled"), "{table}");
}

#[test]
fn json_round_trips_and_missing_is_null() {
    for profile in [with_gpu(), without_gpu()] {
        let json = serde_json::to_string(&profile).unwrap();
        let back: Profile = serde_json::from_str(&json).unwrap();
        assert_eq!(back, profile);
    }
    let json: serde_json::Value = serde_json::to_value(with_gpu()).unwrap();
    assert_eq!(json["gpu"]["energy_joules"], serde_json::Value::Null);
    assert_eq!(json["gpu"]["busy_fraction"], 0.75);
}

#[test]
fn csv_rows_match_the_header_and_quote_text() {
    let header: Vec<&str> = Profile::csv_header().split(',').collect();
    assert_eq!(header[0], "wall_seconds");
    assert_eq!(header.len(), 11);
    assert_eq!(
        with_gpu().to_csv_row(),
        "2,3,3145728,\"NVIDIA \"\"Test\"\", rev 1\",200,1,100,0.75,42.5,,1073741824"
    );
    assert_eq!(without_gpu().to_csv_row(), "0.5,,,,,,,,,,");
    assert_eq!(without_gpu().to_csv_row().split(',').count(), header.len());
}
