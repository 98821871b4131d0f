use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml;

use crate::{GpuSource, ProfileError};

/// An NVIDIA GPU read through NVML (feature `nvml`).
///
/// libnvidia-ml is loaded when [`NvmlSource::new`] runs, not at build time: a program
/// built with `nvml` runs on machines without a GPU and gets a typed error there.
///
/// ```
/// use saturate_profile::{NvmlSource, ProfileError, ProfilerConfig};
///
/// match NvmlSource::new(0) {
///     Ok(gpu) => {
///         let (_, profile) = ProfilerConfig::new().with_gpu(gpu).profile(|| ())?;
///         assert!(profile.gpu.is_some());
///     }
///     // No driver, or no GPU: profile without one.
///     Err(ProfileError::NvmlUnavailable { .. } | ProfileError::NoGpu) => {}
///     Err(other) => return Err(other),
/// }
/// # Ok::<(), ProfileError>(())
/// ```
pub struct NvmlSource {
    nvml: Nvml,
    index: u32,
    name: String,
}

impl std::fmt::Debug for NvmlSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NvmlSource")
            .field("index", &self.index)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl NvmlSource {
    /// Loads NVML and opens GPU `index` (NVML's order, which `nvidia-smi` shows; it can
    /// differ from CUDA's unless `CUDA_DEVICE_ORDER=PCI_BUS_ID`).
    ///
    /// # Errors
    ///
    /// [`ProfileError::NvmlUnavailable`] when libnvidia-ml cannot be loaded or the driver
    /// is not running, [`ProfileError::NoGpu`] when NVML sees no device,
    /// [`ProfileError::DeviceOutOfRange`] when `index` is too large.
    pub fn new(index: u32) -> Result<Self, ProfileError> {
        Self::open(Nvml::init(), index)
    }

    /// Like [`new`](Self::new), loading NVML from `library` (a path to
    /// libnvidia-ml.so / nvml.dll) instead of the system's default search.
    ///
    /// ```
    /// use saturate_profile::{NvmlSource, ProfileError};
    ///
    /// let missing = NvmlSource::from_library("/nonexistent/libnvidia-ml.so.1", 0);
    /// assert!(matches!(missing, Err(ProfileError::NvmlUnavailable { .. })));
    /// ```
    pub fn from_library(
        library: impl AsRef<std::ffi::OsStr>,
        index: u32,
    ) -> Result<Self, ProfileError> {
        Self::open(Nvml::builder().lib_path(library.as_ref()).init(), index)
    }

    fn open(init: Result<Nvml, NvmlError>, index: u32) -> Result<Self, ProfileError> {
        let nvml = init.map_err(init_error)?;
        let count = nvml
            .device_count()
            .map_err(|error| call_error("device_count", error))?;
        if count == 0 {
            return Err(ProfileError::NoGpu);
        }
        if index >= count {
            return Err(ProfileError::DeviceOutOfRange { index, count });
        }
        let name = nvml
            .device_by_index(index)
            .and_then(|device| device.name())
            .map_err(|error| call_error("device_by_index", error))?;
        Ok(Self {
            nvml,
            index,
            name: format!("{name} (GPU {index})"),
        })
    }

    /// Reads one counter; `NotSupported` means the device lacks it.
    fn read<T>(
        &self,
        counter: &'static str,
        read: impl FnOnce(&nvml_wrapper::Device<'_>) -> Result<T, NvmlError>,
    ) -> Result<Option<T>, ProfileError> {
        match self.nvml.device_by_index(self.index).and_then(|d| read(&d)) {
            Ok(value) => Ok(Some(value)),
            Err(NvmlError::NotSupported) => Ok(None),
            Err(error) => Err(ProfileError::GpuCounter {
                counter,
                device: self.name.clone(),
                message: error.to_string(),
            }),
        }
    }
}

impl GpuSource for NvmlSource {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn utilization(&mut self) -> Result<Option<u32>, ProfileError> {
        self.read("utilization", |device| {
            device.utilization_rates().map(|rates| rates.gpu)
        })
    }

    fn memory_used(&mut self) -> Result<Option<u64>, ProfileError> {
        self.read("memory used", |device| {
            device.memory_info().map(|memory| memory.used)
        })
    }

    fn total_energy_mj(&mut self) -> Result<Option<u64>, ProfileError> {
        self.read("total energy", |device| device.total_energy_consumption())
    }
}

fn init_error(error: NvmlError) -> ProfileError {
    match error {
        NvmlError::LibloadingError(_)
        | NvmlError::FailedToLoadSymbol(_)
        | NvmlError::LibraryNotFound
        | NvmlError::DriverNotLoaded
        | NvmlError::NoPermission
        | NvmlError::LibRmVersionMismatch => ProfileError::NvmlUnavailable {
            reason: error.to_string(),
        },
        other => call_error("init", other),
    }
}

fn call_error(call: &'static str, error: NvmlError) -> ProfileError {
    ProfileError::Nvml {
        call,
        message: error.to_string(),
    }
}
