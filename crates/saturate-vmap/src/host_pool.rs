//! The calling thread as a worker of rayon's global pool, for training on NdArray.
//!
//! NdArray's parallel loops (its element-wise ops and matrix products) and saturate's host
//! kernels run on rayon's global thread pool. Called from a thread outside that pool, as
//! `main` is, every such loop hands its work to the pool's threads, wakes them, and sleeps
//! until they are done: two wake-ups per operation, hundreds per training step. On a small
//! model that is most of the step (measured with `perf` on a 2-core Xeon: the 784-128-10
//! MLP's step at one member took 1.4 ms from `main` and 0.87 ms from inside the pool; the
//! 8-16-4 MLP's, 0.42 ms and 0.08 ms). [`join_host_pool`] makes the calling thread one of
//! the pool's workers, so its loops split their work in place and the other threads steal
//! from it, with no hand-off.
//!
//! [`run_trainer`](../saturate_train/fn.run_trainer.html) calls it for NdArray groups; call
//! it yourself first thing in `main` when you drive training with your own loop:
//!
//! ```
//! // Before any tensor operation (the first parallel loop builds the pool without the caller).
//! match saturate_vmap::join_host_pool() {
//!     Ok(threads) => assert!(threads >= 2),
//!     Err(e) => eprintln!("NdArray's loops hand their work to rayon's threads: {e}"),
//! }
//! ```
//!
//! Results do not change: the kernels sum in an order that does not depend on which thread
//! runs which part.
//!
//! **Warm workers.** A rayon worker with nothing to do sleeps after a few dozen empty looks,
//! and waking a sleeping thread takes tens of microseconds (40 µs on a 2-core virtual Xeon,
//! where a parallel loop's next job would be stolen in under a microsecond by a thread still
//! looking). A small model's step runs short parallel kernels with short serial gaps between
//! them, so each would pay that wake-up. Once the caller joined the pool, saturate's NdArray
//! kernels keep the other workers looking for work for `SATURATE_SPIN_US` microseconds (1000
//! by default; `0` turns it off) after each parallel kernel, as OpenMP runtimes keep their
//! threads spinning between parallel regions. While a step runs they never sleep; within a
//! millisecond of the last kernel, they do.

/// Why [`join_host_pool`] left the calling thread outside rayon's pool. Nothing is broken in
/// any of these cases: the parallel loops run as before, with a hand-off to the pool's
/// threads per loop.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostPoolError {
    /// The pool was already built: by `rayon::ThreadPoolBuilder::build_global`, by an earlier
    /// parallel loop (any tensor operation on NdArray may run one), or by an earlier call on
    /// another thread.
    #[error(
        "rayon's global thread pool was built before this call (by a parallel loop, \
         `build_global`, or `join_host_pool` on another thread); call `join_host_pool` first \
         thing in `main`, before any tensor operation"
    )]
    AlreadyBuilt,
    /// The calling thread is already a worker of a rayon pool.
    #[error("the calling thread is already a worker of a rayon thread pool")]
    AlreadyInPool,
    /// Only one thread was asked for (`RAYON_NUM_THREADS=1`, or one CPU). A pool whose only
    /// thread is the caller would never run work that other threads hand to it while the
    /// caller is busy elsewhere, so the pool keeps a thread of its own.
    #[error(
        "one thread (RAYON_NUM_THREADS=1 or one CPU): the pool keeps its own thread, so that \
         work other threads hand to it never waits for the caller"
    )]
    OneThread,
    /// rayon could not start the pool's threads.
    #[error("rayon could not start its threads: {0}")]
    Spawn(String),
}

/// Builds rayon's global pool with the calling thread as its first worker and returns the
/// pool's thread count (the caller included): `RAYON_NUM_THREADS`, or one per CPU. From then
/// on the other workers stay warm between saturate's parallel kernels (see the
/// [module docs](self); `SATURATE_SPIN_US=0` turns it off).
///
/// Call it once, on the thread that trains, before any tensor operation. If that thread
/// exits, the pool's other threads keep serving every other thread's work. When it succeeds
/// it also sets `MATMUL_NUM_THREADS=1` unless that variable is set: matrixmultiply, which
/// computes NdArray's matrix products, then leaves the parallelism to the pool instead of
/// starting threads of its own.
///
/// # Errors
/// [`HostPoolError`]: the pool exists already, the caller is in a pool, only one thread was
/// asked for, or the threads could not be started. The pool then works as without this call.
///
/// ```
/// use rayon::prelude::*;
/// use saturate_vmap::{join_host_pool, HostPoolError};
///
/// std::env::set_var("RAYON_NUM_THREADS", "2");
/// assert_eq!(join_host_pool(), Ok(2));
/// assert_eq!(std::env::var("MATMUL_NUM_THREADS").as_deref(), Ok("1"));
/// assert_eq!(rayon::current_thread_index(), Some(0)); // the caller is worker 0
/// assert_eq!(join_host_pool(), Err(HostPoolError::AlreadyInPool));
/// // Another thread finds the pool built; its parallel work runs on the pool's other thread
/// // while the caller is busy elsewhere (here: waiting for that thread).
/// let other = std::thread::spawn(|| {
///     let err = join_host_pool();
///     (err, (0..100_000u64).into_par_iter().sum::<u64>())
/// });
/// assert_eq!(other.join().unwrap(), (Err(HostPoolError::AlreadyBuilt), 4_999_950_000));
/// // The caller's own loops split in place.
/// assert_eq!((0..1000u64).into_par_iter().map(|i| i * i).sum::<u64>(), 332_833_500);
/// ```
pub fn join_host_pool() -> Result<usize, HostPoolError> {
    if rayon::current_thread_index().is_some() {
        return Err(HostPoolError::AlreadyInPool);
    }
    let threads = match std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        Some(n) if n > 0 => n,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if threads < 2 {
        return Err(HostPoolError::OneThread);
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .use_current_thread()
        .build_global()
        .map_err(|e| {
            // rayon's error says which case it is only through its message.
            if rayon::current_thread_index().is_some() {
                HostPoolError::AlreadyInPool
            } else if e.to_string().contains("already") {
                HostPoolError::AlreadyBuilt
            } else {
                HostPoolError::Spawn(e.to_string())
            }
        })?;
    // matrixmultiply (NdArray's matrix products) splits a large product over threads of its
    // own: next to the pool's threads, which already run the products of several members or
    // images at once, they only compete for the same cores (the 784-128-10 MLP's step at 8
    // members: 5.4 ms with them, 4.3 ms without, 2-core Xeon). It reads the variable once, at
    // its first threaded product; a value the user set is kept.
    if std::env::var_os("MATMUL_NUM_THREADS").is_none() {
        std::env::set_var("MATMUL_NUM_THREADS", "1");
    }
    let spin = std::env::var("SATURATE_SPIN_US")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(DEFAULT_SPIN_US);
    warm::SPIN_US.store(spin, std::sync::atomic::Ordering::Relaxed);
    Ok(threads)
}

/// Joins the pool when `B` runs on saturate's NdArray kernels; `None` for other backends,
/// which keep the calling thread as it is. Errors are returned, not raised: the caller goes
/// on either way.
pub fn join_host_pool_for<B: burn_backend::Backend>() -> Option<Result<usize, HostPoolError>> {
    crate::lowering::is_ndarray::<B>().then(join_host_pool)
}

/// Microseconds the other workers keep looking for work after a parallel kernel, unless
/// `SATURATE_SPIN_US` says otherwise: longer than the serial gaps in a small model's step.
const DEFAULT_SPIN_US: u64 = 1000;

/// Keeps the pool's other workers awake for [`warm::SPIN_US`] microseconds from now (nothing
/// unless [`join_host_pool`] succeeded). The NdArray kernels call it after their parallel
/// work, while the workers that shared it are still awake.
pub(crate) fn keep_warm() {
    warm::keep();
}

mod warm {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    use std::sync::OnceLock;
    use std::time::Instant;

    /// The spin window in microseconds; 0 (the value until `join_host_pool` succeeds): off.
    pub(super) static SPIN_US: AtomicU64 = AtomicU64::new(0);
    /// `spin_loop` hints between two looks for work (a fraction of a microsecond).
    const PAUSE: usize = 64;
    /// Spinner jobs queued or running.
    static SPINNERS: AtomicUsize = AtomicUsize::new(0);
    /// When the last parallel kernel ended, in microseconds since [`epoch`].
    static LAST: AtomicU64 = AtomicU64::new(0);

    fn epoch() -> Instant {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        *EPOCH.get_or_init(Instant::now)
    }

    fn now_us() -> u64 {
        u64::try_from(epoch().elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    pub(super) fn keep() {
        let window = SPIN_US.load(Ordering::Relaxed);
        if window == 0 {
            return;
        }
        let Some(me) = rayon::current_thread_index() else {
            return;
        };
        LAST.store(now_us(), Ordering::Relaxed);
        let others = rayon::current_num_threads().saturating_sub(1);
        while SPINNERS.load(Ordering::Acquire) < others {
            SPINNERS.fetch_add(1, Ordering::AcqRel);
            // Queued on this worker's deque: a worker that is still awake steals it.
            rayon::spawn(move || spin(me, window));
        }
    }

    /// Looks for work (and runs what it finds) until `window` microseconds pass with no
    /// parallel kernel ending. A spinner the spawning thread picks up itself (while it waits
    /// inside a parallel loop) returns at once: that thread has work of its own.
    fn spin(spawner: usize, window: u64) {
        if rayon::current_thread_index() != Some(spawner) {
            while now_us().saturating_sub(LAST.load(Ordering::Relaxed)) <= window {
                match rayon::yield_now() {
                    Some(rayon::Yield::Executed) => {}
                    // A pause between looks: each look reads the other workers' queues, and
                    // looking back to back slows the thread that pushes onto them.
                    _ => (0..PAUSE).for_each(|_| std::hint::spin_loop()),
                }
            }
        }
        SPINNERS.fetch_sub(1, Ordering::AcqRel);
    }
}
