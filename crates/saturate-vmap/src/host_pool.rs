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
/// pool's thread count (the caller included): `RAYON_NUM_THREADS`, or one per CPU.
///
/// Call it once, on the thread that trains, before any tensor operation. If that thread
/// exits, the pool's other threads keep serving every other thread's work.
///
/// # Errors
/// [`HostPoolError`]: the pool exists already, the caller is in a pool, only one thread was
/// asked for, or the threads could not be started. The pool then works as without this call.
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
    Ok(threads)
}

/// Joins the pool when `B` runs on saturate's NdArray kernels; `None` for other backends,
/// which keep the calling thread as it is. Errors are returned, not raised: the caller goes
/// on either way.
pub fn join_host_pool_for<B: burn_backend::Backend>() -> Option<Result<usize, HostPoolError>> {
    crate::lowering::is_ndarray::<B>().then(join_host_pool)
}
