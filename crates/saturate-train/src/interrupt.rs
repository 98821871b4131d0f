//! SIGINT (Ctrl-C) caught only while a [`run`](crate::run) with `handle_interrupt` runs.
//!
//! The first active run installs the handler and saves the process's previous SIGINT
//! disposition (the default, a user's own handler, or "ignore"); when the last active run
//! returns, that disposition is put back, so after `run` a Ctrl-C does what it did before.
//! Inside a run, the first Ctrl-C sets a flag the groups see at their next report (and says
//! so on stderr); the second exits the process at once with status 130.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Set by the first SIGINT of an active scope; cleared when a new outermost scope starts.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Active scopes and the disposition to restore when the last one ends.
static SCOPES: Mutex<(usize, Option<imp::Saved>)> = Mutex::new((0, None));

const MESSAGE: &[u8] =
    b"saturate: interrupted: in-flight trials stop at their next report (Ctrl-C again to exit now)\n";

/// Whether a SIGINT arrived during the active scopes.
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// While alive, SIGINT sets the flag instead of doing what it did before.
pub(crate) struct InterruptScope(());

impl InterruptScope {
    /// Enters a scope: the outermost one clears the flag and installs the handler.
    pub(crate) fn enter() -> Self {
        let mut scopes = SCOPES.lock().unwrap_or_else(|e| e.into_inner());
        if scopes.0 == 0 {
            INTERRUPTED.store(false, Ordering::SeqCst);
            match imp::install() {
                Ok(saved) => scopes.1 = Some(saved),
                Err(e) => log::warn!(
                    "saturate: could not install the SIGINT handler ({e}); Ctrl-C ends the \
                     process without marking trials"
                ),
            }
        }
        scopes.0 += 1;
        InterruptScope(())
    }
}

impl Drop for InterruptScope {
    fn drop(&mut self) {
        let mut scopes = SCOPES.lock().unwrap_or_else(|e| e.into_inner());
        scopes.0 -= 1;
        if scopes.0 == 0 {
            if let Some(saved) = scopes.1.take() {
                imp::restore(saved);
            }
        }
    }
}

/// The first SIGINT of a scope sets the flag; the second exits. Called by the handler.
fn on_interrupt() -> bool {
    INTERRUPTED.swap(true, Ordering::SeqCst)
}

#[cfg(unix)]
#[allow(unsafe_code)]
mod imp {
    //! `sigaction(2)`: the previous disposition is saved and put back exactly.

    /// A saved `struct sigaction`.
    pub(super) struct Saved(libc::sigaction);

    // SAFETY: a plain C struct (a handler address, a mask, flags), only passed back to
    // `sigaction`; it is never dereferenced here.
    unsafe impl Send for Saved {}

    extern "C" fn handler(_signal: libc::c_int) {
        if super::on_interrupt() {
            // SAFETY: `_exit` is async-signal-safe.
            unsafe { libc::_exit(130) };
        }
        // SAFETY: `write` is async-signal-safe; the buffer is a static.
        unsafe {
            libc::write(2, super::MESSAGE.as_ptr().cast(), super::MESSAGE.len());
        }
    }

    pub(super) fn install() -> Result<Saved, std::io::Error> {
        // SAFETY: zeroed `sigaction` structs are valid; the new one is filled in before use
        // and `sigaction` writes the old one.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = handler as extern "C" fn(libc::c_int) as libc::sighandler_t;
            new.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut new.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGINT, &new, &mut old) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(Saved(old))
        }
    }

    pub(super) fn restore(saved: Saved) {
        // SAFETY: `saved` is what `sigaction` returned for SIGINT.
        let failed = unsafe { libc::sigaction(libc::SIGINT, &saved.0, std::ptr::null_mut()) };
        if failed != 0 {
            log::warn!(
                "saturate: could not restore the previous SIGINT handler: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

#[cfg(not(unix))]
mod imp {
    //! `ctrlc`, installed once for the process (it cannot be removed): outside a scope it
    //! exits with status 130, as the default Ctrl-C does.

    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::OnceLock;

    static ACTIVE: AtomicBool = AtomicBool::new(false);
    static HANDLER: OnceLock<Result<(), String>> = OnceLock::new();

    pub(super) struct Saved;

    pub(super) fn install() -> Result<Saved, String> {
        HANDLER
            .get_or_init(|| {
                ctrlc::set_handler(|| {
                    if !ACTIVE.load(Ordering::SeqCst) || super::on_interrupt() {
                        std::process::exit(130);
                    }
                    eprint!("{}", String::from_utf8_lossy(super::MESSAGE));
                })
                .map_err(|e| e.to_string())
            })
            .clone()?;
        ACTIVE.store(true, Ordering::SeqCst);
        Ok(Saved)
    }

    pub(super) fn restore(_saved: Saved) {
        ACTIVE.store(false, Ordering::SeqCst);
    }
}
