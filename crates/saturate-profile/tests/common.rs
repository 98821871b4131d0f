//! Fake GPU sources: scripted counter readings, no GPU needed.

use std::collections::VecDeque;
use std::sync::mpsc;

use saturate_profile::{GpuSource, ProfileError};

/// One scripted reading of every counter.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    pub utilization: Counter<u32>,
    pub memory_used: Counter<u64>,
    pub total_energy_mj: Counter<u64>,
}

/// A scripted counter value: a value, "not supported", or a failed read.
#[derive(Debug, Clone, Copy)]
pub enum Counter<T> {
    Value(T),
    Unsupported,
    Fails,
}

impl Reading {
    pub fn new(utilization: u32, memory_used: u64, total_energy_mj: u64) -> Self {
        Self {
            utilization: Counter::Value(utilization),
            memory_used: Counter::Value(memory_used),
            total_energy_mj: Counter::Value(total_energy_mj),
        }
    }
}

/// Plays back `readings` one sample at a time, then repeats the last one. Reports the
/// number of completed samples on `progress`, if set.
pub struct FakeGpu {
    readings: VecDeque<Reading>,
    current: Reading,
    progress: Option<mpsc::Sender<usize>>,
    samples: usize,
}

impl FakeGpu {
    pub fn new(readings: impl IntoIterator<Item = Reading>) -> Self {
        let mut readings: VecDeque<Reading> = readings.into_iter().collect();
        let current = readings.pop_front().expect("at least one reading");
        Self {
            readings,
            current,
            progress: None,
            samples: 0,
        }
    }

    pub fn reporting_to(mut self, progress: mpsc::Sender<usize>) -> Self {
        self.progress = Some(progress);
        self
    }

    fn read<T: Copy>(
        &self,
        counter: Counter<T>,
        name: &'static str,
    ) -> Result<Option<T>, ProfileError> {
        match counter {
            Counter::Value(value) => Ok(Some(value)),
            Counter::Unsupported => Ok(None),
            Counter::Fails => Err(ProfileError::GpuCounter {
                counter: name,
                device: self.name(),
                message: "scripted failure".into(),
            }),
        }
    }
}

impl GpuSource for FakeGpu {
    fn name(&self) -> String {
        "fake GPU".into()
    }

    fn utilization(&mut self) -> Result<Option<u32>, ProfileError> {
        self.read(self.current.utilization, "utilization")
    }

    fn memory_used(&mut self) -> Result<Option<u64>, ProfileError> {
        self.read(self.current.memory_used, "memory used")
    }

    /// The last read of a sample: advances the script.
    fn total_energy_mj(&mut self) -> Result<Option<u64>, ProfileError> {
        let result = self.read(self.current.total_energy_mj, "total energy");
        if let Some(next) = self.readings.pop_front() {
            self.current = next;
        }
        self.samples += 1;
        if let Some(progress) = &self.progress {
            let _ = progress.send(self.samples);
        }
        result
    }
}
