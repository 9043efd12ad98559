//! SIGINT and SIGTERM while a command writes: its temporary files are
//! removed and the process exits 130 or 143 (128 plus the signal number),
//! as a shell reports a process those signals ended. The files it was
//! replacing are untouched (the writes rename only complete files).

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Handles SIGINT and SIGTERM from now on: a thread waits for either and
/// then ends the process through `gguf::write::exit_removing_temp_files`,
/// which removes the temporary files of the writes under way without
/// racing a rename. Installed by the commands that write files only; the
/// others keep the default (the signal ends them, nothing to clean). A
/// signal ignored at start stays ignored: a shell starts a script's
/// background jobs with SIGINT ignored so that Ctrl-C reaches only the
/// foreground, and a handler would undo that.
pub fn install() -> std::io::Result<()> {
    let wanted: Vec<i32> = [SIGINT, SIGTERM]
        .into_iter()
        .filter(|&s| !ignored(s))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let mut signals = Signals::new(wanted)?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                gguf::write::exit_removing_temp_files(128 + signal);
            }
        })?;
    Ok(())
}

/// True when `signal`'s disposition is "ignore".
fn ignored(signal: i32) -> bool {
    // SAFETY: `libc::sigaction` is plain data for which all zeroes is a
    // valid value; with a null new action, sigaction(2) changes nothing
    // and only writes the current action into `old`, which we own.
    let handler = unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 {
            return false;
        }
        old.sa_sigaction
    };
    handler == libc::SIG_IGN
}
