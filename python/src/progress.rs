//! Progress reported to a Python callable from a long call run with the
//! GIL released (an import, a quantization), and Ctrl-C honoured there.
//!
//! The library's progress callbacks return nothing, so a call is stopped
//! by unwinding out of one: the library's writes hold their temporary files
//! in guards that delete them when dropped, which is what the CLI relies
//! on too. The unwind carries a private marker and is caught here, never
//! reaching Python as a panic.

use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// How often a report reaches Python (and signals are checked) at most:
/// often enough for a bar, rarely enough to cost nothing next to the work.
const INTERVAL: Duration = Duration::from_millis(50);

/// The payload of the unwind that stops a call.
struct Stopped;

/// What a running call reports to: an optional Python callable taking
/// `(stage, done, total)`.
pub(crate) struct Progress {
    callback: Option<Py<PyAny>>,
    last: Option<Instant>,
    /// The exception that stopped the call (a KeyboardInterrupt, or what
    /// the callback raised).
    error: Option<PyErr>,
}

impl Progress {
    /// Reports `done` of `total` in `stage`, at most every [`INTERVAL`]
    /// (and always at the end of a stage). Stops the call, unwinding, when
    /// a signal handler raised (Ctrl-C) or the callback raised.
    pub(crate) fn report(&mut self, stage: &str, done: u64, total: u64) {
        let now = Instant::now();
        let finished = total > 0 && done >= total;
        if !finished && self.last.is_some_and(|t| now.duration_since(t) < INTERVAL) {
            return;
        }
        self.last = Some(now);
        let result = Python::attach(|py| -> PyResult<()> {
            py.check_signals()?;
            if let Some(callback) = &self.callback {
                callback.call1(py, (stage, done, total))?;
            }
            Ok(())
        });
        if let Err(e) = result {
            self.error = Some(e);
            // Not a panic: no hook runs, nothing is printed.
            panic::resume_unwind(Box::new(Stopped));
        }
    }
}

/// Runs `work` with the GIL released, giving it a [`Progress`] that calls
/// `callback`; the exception that stopped it, if one did, is raised.
pub(crate) fn run<T: Send>(
    py: Python<'_>,
    callback: Option<Py<PyAny>>,
    work: impl FnOnce(&mut Progress) -> T + Send,
) -> PyResult<T> {
    let mut progress = Progress {
        callback,
        last: None,
        error: None,
    };
    let outcome = py.detach(|| panic::catch_unwind(AssertUnwindSafe(|| work(&mut progress))));
    match outcome {
        Ok(value) => Ok(value),
        Err(payload) if payload.is::<Stopped>() => Err(progress
            .error
            .take()
            .unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err(()))),
        Err(payload) => panic::resume_unwind(payload),
    }
}
