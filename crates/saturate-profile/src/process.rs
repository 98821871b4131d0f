//! Process counters: CPU time and resident memory.

use std::time::Duration;

use crate::ProfileError;

/// CPU time (user + system, all threads) this process has used since it started.
///
/// ```
/// let cpu = saturate_profile::process_cpu_time()?;
/// assert!(cpu > std::time::Duration::ZERO);
/// # Ok::<(), saturate_profile::ProfileError>(())
/// ```
pub fn process_cpu_time() -> Result<Duration, ProfileError> {
    cpu_time::ProcessTime::try_now()
        .map(|time| time.as_duration())
        .map_err(|source| ProfileError::Os {
            what: "process CPU time",
            source,
        })
}

/// The most resident memory (bytes) this process has held since it started
/// (`VmHWM` in `/proc/self/status`).
///
/// Linux only; elsewhere [`ProfileError::Unsupported`].
///
/// ```
/// match saturate_profile::peak_resident_bytes() {
///     Ok(bytes) => assert!(bytes > 0),
///     Err(saturate_profile::ProfileError::Unsupported { .. }) => {}
///     Err(other) => panic!("{other}"),
/// }
/// ```
pub fn peak_resident_bytes() -> Result<u64, ProfileError> {
    proc_status_bytes("VmHWM", "peak resident memory")
}

/// The resident memory (bytes) this process holds now (`VmRSS` in `/proc/self/status`).
///
/// A memory reading for [`recommend_group_size`](crate::recommend_group_size) on CPU
/// backends. Linux only; elsewhere [`ProfileError::Unsupported`].
///
/// ```
/// match saturate_profile::current_resident_bytes() {
///     Ok(bytes) => assert!(bytes > 0),
///     Err(saturate_profile::ProfileError::Unsupported { .. }) => {}
///     Err(other) => panic!("{other}"),
/// }
/// ```
pub fn current_resident_bytes() -> Result<u64, ProfileError> {
    proc_status_bytes("VmRSS", "resident memory")
}

#[cfg(target_os = "linux")]
fn proc_status_bytes(field: &'static str, what: &'static str) -> Result<u64, ProfileError> {
    const PROC_STATUS: &str = "/proc/self/status";
    let status =
        std::fs::read_to_string(PROC_STATUS).map_err(|source| ProfileError::Os { what, source })?;
    parse_status_kib(&status, field)
        .map(|kib| kib * 1024)
        .ok_or(ProfileError::ProcField {
            path: PROC_STATUS,
            field,
        })
}

#[cfg(not(target_os = "linux"))]
fn proc_status_bytes(_field: &'static str, what: &'static str) -> Result<u64, ProfileError> {
    Err(ProfileError::Unsupported {
        what,
        platform: std::env::consts::OS,
    })
}

/// The value of a `Name:   1234 kB` line of `/proc/<pid>/status`, in KiB.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn parse_status_kib(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        let mut words = rest.split_whitespace();
        let value = words.next()?.parse().ok()?;
        (words.next() == Some("kB")).then_some(value)
    })
}

#[cfg(test)]
mod tests {
    use super::parse_status_kib;

    #[test]
    fn parses_kib_lines_and_rejects_others() {
        let status = "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t 1024 kB\nVmBad:\t12\n";
        assert_eq!(parse_status_kib(status, "VmHWM"), Some(2048));
        assert_eq!(parse_status_kib(status, "VmRSS"), Some(1024));
        assert_eq!(parse_status_kib(status, "VmBad"), None);
        assert_eq!(parse_status_kib(status, "VmSwap"), None);
        // A prefix of another field's name is not that field.
        assert_eq!(parse_status_kib("VmHWMX:\t1 kB\n", "VmHWM"), None);
    }
}
