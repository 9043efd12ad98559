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
/// others keep the default (the signal ends them, nothing to clean).
pub fn install() -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                gguf::write::exit_removing_temp_files(128 + signal);
            }
        })?;
    Ok(())
}
