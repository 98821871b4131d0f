//! glibc malloc settings for training with large, short-lived tensors.
//!
//! A training step on a CPU backend allocates and frees buffers of tens of megabytes many
//! times (every activation and gradient of K members at once). glibc's defaults serve each
//! such buffer with a fresh `mmap` and return it to the kernel when it is freed, so every
//! step pays the page faults of touching new memory again: on saturate's benchmark CNN at
//! K = 8 on NdArray that was 1.8x the step time (book: CPU backends). [`tune`] serves large
//! buffers from the heap instead of `mmap`, keeps up to 1 GiB of freed heap instead of
//! trimming it, and grows the heap 256 MiB at a time, so freed buffers are reused: the same
//! settings as
//!
//! ```text
//! GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1073741824:glibc.malloc.top_pad=268435456
//! ```
//!
//! (`mallopt` cannot raise the `mmap` threshold above 32 MiB, smaller than one activation of
//! the benchmark CNN's group, so `mmap` is switched off for the main heap instead; glibc still
//! falls back to `mmap` where a heap cannot grow.)
//!
//! but set from inside the program, so that nobody has to remember an environment variable.
//! The price is memory: up to about 1 GiB of freed heap is kept for reuse instead of being
//! returned to the system.
//!
//! ```
//! // First thing in `main`, before the first large allocation.
//! let applied = saturate_malloc::tune();
//! if cfg!(all(target_os = "linux", target_env = "gnu")) {
//!     assert!(applied);
//! }
//! ```

/// How many buffers may be served by `mmap` at once: 0, every buffer comes from a heap.
pub const MMAP_MAX: usize = 0;
/// Free memory at the top of the heap is returned to the system only above this (1 GiB).
pub const TRIM_THRESHOLD: usize = 1 << 30;
/// Extra memory requested whenever the heap grows (256 MiB).
pub const TOP_PAD: usize = 256 << 20;

/// Applies the settings above to glibc's allocator, process-wide. Returns whether they were
/// applied: `false` on other C libraries or operating systems (nothing is changed there), or
/// when `SATURATE_MALLOC=system` is set in the environment (to measure the defaults), or if
/// glibc refused a setting.
///
/// Idempotent; call it early in `main`. It changes the behaviour of the process's allocator
/// for all code, not only saturate's.
pub fn tune() -> bool {
    if std::env::var("SATURATE_MALLOC").is_ok_and(|v| v == "system") {
        return false;
    }
    apply()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn apply() -> bool {
    let settings = [
        (libc::M_MMAP_MAX, MMAP_MAX),
        (libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD),
        (libc::M_TOP_PAD, TOP_PAD),
    ];
    settings.iter().all(|&(param, value)| {
        let value = libc::c_int::try_from(value).expect("the settings fit a C int");
        // SAFETY: `mallopt` takes two integers, touches only glibc's allocator state under its
        // own lock, and may be called at any time; it returns 0 on an invalid value.
        unsafe { libc::mallopt(param, value) == 1 }
    })
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn apply() -> bool {
    false
}
