//! Per-group profiles: `RunConfig::with_profile` writes the group's `saturate_profile::Profile`
//! on every trial, read back here from the journal file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use saturate_profile::{GpuSource, Profile, ProfileError};
use saturate_study::prelude::*;
use saturate_train::{run, TrainError, GROUP_ATTR, PROFILE_ATTR};

use crate::common::{quiet, PruneNumbers};

fn journal_study(journal: &Path, pruner: impl Pruner + 'static) -> DefaultStudy {
    let storage: Arc<dyn Storage> = Arc::new(JournalStorage::open(journal).unwrap());
    StudyConfig::new()
        .with_name("profiled")
        .with_storage(storage)
        .with_sampler(RandomSamplerConfig::new().with_seed(5).init())
        .with_pruner(pruner)
        .with_load_if_exists(true)
        .init()
        .unwrap()
}

/// Some CPU work, so that CPU time and wall time are measurably positive.
fn work(rounds: u64) -> f64 {
    (0..rounds * 200_000).map(|i| (i as f64).sqrt()).sum()
}

/// The profile each trial carries, by trial number, read from a fresh storage on the journal.
fn stored_profiles(journal: &Path) -> BTreeMap<u64, (String, Option<Profile>, TrialState)> {
    let study = journal_study(journal, NopPruner);
    study
        .trials(None)
        .unwrap()
        .iter()
        .map(|t| {
            let group = t.system_attrs[GROUP_ATTR].as_str().unwrap().to_string();
            let profile = t.system_attrs.get(PROFILE_ATTR).map(|value| {
                serde_json::from_value::<Profile>(value.clone())
                    .unwrap_or_else(|e| panic!("trial {}: {PROFILE_ATTR} = {value}: {e}", t.number))
            });
            (t.number, (group, profile, t.state))
        })
        .collect()
}

#[test]
fn every_trial_of_a_profiled_group_carries_the_group_profile() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("profiled.journal");
    // Trial 1 (group of 0, 1, 2) is pruned at its first report; its group trains on.
    let pruner = PruneNumbers {
        numbers: BTreeSet::from([1]),
        step: 0,
    };
    let study = journal_study(&journal, pruner);
    let config = quiet(3, 6).with_profile(true);
    let summary = run(&study, &config, |g| {
        let x = g.member().suggest_float("x", 0.0, 1.0)?;
        let mut keep: Vec<usize> = (0..g.members()).collect();
        let mut values = x;
        for step in 0..2 {
            let checksum = work(3);
            assert!(checksum > 0.0);
            keep = g.report(step, &values)?;
            values.retain(&keep);
        }
        assert!(!keep.is_empty());
        Ok(values)
    })
    .unwrap();
    assert_eq!((summary.complete, summary.pruned), (5, 1));

    let profiles = stored_profiles(&journal);
    assert_eq!(profiles.len(), 6);
    for (number, (_, profile, _)) in &profiles {
        let profile = profile
            .as_ref()
            .unwrap_or_else(|| panic!("trial {number} has no {PROFILE_ATTR}"));
        assert!(profile.wall_seconds > 0.0, "trial {number}: {profile:?}");
        let cpu = profile.cpu_seconds.expect("CPU time on every platform");
        assert!(cpu > 0.0, "trial {number}: {profile:?}");
        if cfg!(target_os = "linux") {
            assert!(profile.peak_resident_bytes.unwrap() > 0);
        }
        assert!(profile.gpu.is_none(), "no GPU source was given");
    }
    // Trials finished together carry one profile; the pruned trial's covers only the group's
    // first step, its group-mates' the whole group.
    let (group_a, pruned, state) = profiles[&1].clone();
    assert_eq!(state, TrialState::Pruned);
    let (group_0, first, _) = profiles[&0].clone();
    let (group_2, third, _) = profiles[&2].clone();
    assert_eq!((&group_0, &group_2), (&group_a, &group_a));
    assert_eq!(first, third);
    let (pruned, whole) = (pruned.unwrap(), first.unwrap());
    assert!(
        pruned.wall_seconds < whole.wall_seconds,
        "pruned after one step: {pruned:?}, whole group: {whole:?}"
    );
    assert_ne!(profiles[&3].0, group_a, "trials 3..6 are the second group");
}

#[test]
fn profiling_is_off_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("plain.journal");
    let study = journal_study(&journal, NopPruner);
    run(&study, &quiet(2, 2), |g| {
        Ok(g.member().suggest_float("x", 0.0, 1.0)?)
    })
    .unwrap();
    let profiles = stored_profiles(&journal);
    assert_eq!(profiles.len(), 2);
    assert!(profiles.values().all(|(_, profile, _)| profile.is_none()));
}

/// A GPU that is always 75 % busy, uses 3 MiB and 10 J (10,000 mJ) per sample.
struct FakeGpu {
    energy_mj: u64,
}

impl GpuSource for FakeGpu {
    fn name(&self) -> String {
        "fake GPU".into()
    }
    fn utilization(&mut self) -> Result<Option<u32>, ProfileError> {
        Ok(Some(75))
    }
    fn memory_used(&mut self) -> Result<Option<u64>, ProfileError> {
        Ok(Some(3 << 20))
    }
    fn total_energy_mj(&mut self) -> Result<Option<u64>, ProfileError> {
        self.energy_mj += 10_000;
        Ok(Some(self.energy_mj))
    }
}

#[test]
fn a_gpu_source_adds_busy_fraction_energy_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("gpu.journal");
    let study = journal_study(&journal, NopPruner);
    let config = quiet(2, 4).with_profile_gpu(|| Ok(FakeGpu { energy_mj: 0 }));
    assert!(config.profile, "profile_gpu turns profiling on");
    run(&study, &config, |g| {
        work(2);
        Ok(g.member().suggest_float("x", 0.0, 1.0)?)
    })
    .unwrap();
    let profiles = stored_profiles(&journal);
    assert_eq!(profiles.len(), 4);
    for (number, (_, profile, _)) in profiles {
        let gpu = profile
            .unwrap()
            .gpu
            .unwrap_or_else(|| panic!("trial {number}: no GPU"));
        assert_eq!(gpu.device, "fake GPU");
        assert!(gpu.samples >= 1);
        assert_eq!(gpu.busy_fraction, Some(1.0));
        assert_eq!(gpu.mean_utilization_percent, Some(75.0));
        assert_eq!(gpu.peak_memory_used_bytes, Some(3 << 20));
        // (samples - 1) intervals of 10 J each: a fresh source per group, from 0.
        assert_eq!(gpu.energy_joules, Some((gpu.samples - 1) as f64 * 10.0));
    }
}

#[test]
fn a_gpu_source_that_cannot_start_fails_the_run_before_asking_trials() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("broken.journal");
    let study = journal_study(&journal, NopPruner);
    let config = quiet(2, 4).with_profile_gpu(|| Err::<FakeGpu, _>(ProfileError::NoGpu));
    let error = run(&study, &config, |g| {
        Ok(g.member().suggest_float("x", 0.0, 1.0)?)
    })
    .unwrap_err();
    assert!(
        matches!(
            error,
            TrainError::Profile {
                source: ProfileError::NoGpu
            }
        ),
        "{error}"
    );
    assert!(study.trials(None).unwrap().is_empty(), "no trial was asked");
}
