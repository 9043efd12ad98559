//! The temporary files of this process's writes: made, renamed into place
//! and removed here only, so that one process-wide list knows which exist.
//!
//! Every file a write creates before renaming it over its output is
//! `.gguf-XXXXXX.tmp` (six random letters or digits) in the output's
//! directory or the write's temporary directory. While a write runs it is
//! listed in [`LIVE`] and holds an exclusive advisory lock (`flock`) on its
//! temporary file. The list lets a program that handles signals remove the
//! files of the writes it interrupts ([`exit_removing_temp_files`]); the lock
//! tells a file left by a killed process from one still being written
//! ([`stale_temp_files`]). The library installs no signal handler.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::{Error, Result};

/// What every temporary file's name starts with.
const PREFIX: &str = ".gguf-";
/// What every temporary file's name ends with.
const SUFFIX: &str = ".tmp";

/// The temporary files that exist now, as absolute paths. A file is listed
/// from the moment it is created to the moment it is renamed or removed,
/// both done while holding this lock, so a reader of the list holding it
/// never sees a renamed output as temporary.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    // Nothing that holds the lock can leave the list half-changed.
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A temporary file of a write under way, `.gguf-XXXXXX.tmp` beside the
/// output: removed when dropped (or by [`exit_removing_temp_files`] when
/// the process is interrupted), unless a write renamed it into place. For
/// intermediate files a caller writes and reads back before the final
/// output (gguf-import's F16 stage before quantizing).
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::write::TempFile;
/// let dir = tempfile::tempdir()?;
/// let tmp = TempFile::new_in(dir.path())?;
/// let path = tmp.path().to_owned();
/// assert!(path.exists());
/// drop(tmp);
/// assert!(!path.exists());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct TempFile {
    /// Its automatic removal is off: [`Drop`] removes it under the lock.
    file: tempfile::NamedTempFile,
    renamed: bool,
}

impl TempFile {
    /// Creates `.gguf-XXXXXX.tmp` in `dir` with mode 0666 minus the umask,
    /// as a new file would get. The error names `dir`, never the temporary
    /// name, which means nothing to the user.
    pub fn new_in(dir: &Path) -> Result<TempFile> {
        let mut live = live();
        let mut tmp = tempfile::Builder::new()
            .prefix(PREFIX)
            .suffix(SUFFIX)
            .make_in(dir, |path| {
                let mut options = OpenOptions::new();
                options.read(true).write(true).create_new(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o666);
                options.open(path)
            })
            .map_err(|source| {
                let dir = dir.to_owned();
                Error::from(std::io::Error::new(
                    source.kind(),
                    CreateError { dir, source },
                ))
            })?;
        // A brand-new file: nobody else can hold its lock. A file system
        // without flock leaves it unlocked; `stale_temp_files` then never
        // calls it stale.
        let _ = tmp.as_file().try_lock();
        tmp.disable_cleanup(true);
        live.push(tmp.path().to_owned());
        Ok(TempFile {
            file: tmp,
            renamed: false,
        })
    }

    /// The open file.
    pub fn file(&self) -> &File {
        self.file.as_file()
    }

    /// The open file, to write.
    pub fn file_mut(&mut self) -> &mut File {
        self.file.as_file_mut()
    }

    /// Where it is (it means nothing to a user: errors name the output).
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let mut live = live();
        live.retain(|p| p != self.path());
        if !self.renamed {
            // Under the lock: removed before anyone can miss it in the list.
            let _ = std::fs::remove_file(self.path());
        }
    }
}

/// A failed creation: the directory and the OS's reason. (tempfile's
/// own message would name the temporary file.)
#[derive(Debug)]
struct CreateError {
    dir: PathBuf,
    source: std::io::Error,
}

impl std::fmt::Display for CreateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot create a temporary file in {}: {}",
            self.dir.display(),
            self.source
        )
    }
}

impl std::error::Error for CreateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Renames each temporary file to its path, in order, all under the lock
/// of the list: whoever removes the listed files for an interrupted
/// process sees either every one still temporary or every one renamed.
/// Should a rename fail, the files already renamed are removed again, so
/// that no partial set stays visible (files they replaced are lost either
/// way, as with any rename), every temporary file is removed, and the
/// error comes with the index of the path that failed.
pub(crate) fn persist_all(
    mut temps: Vec<TempFile>,
    paths: &[&Path],
) -> std::result::Result<(), (usize, std::io::Error)> {
    #[cfg(feature = "testing")]
    pause(PAUSE_BEFORE_RENAME);
    let mut live = live();
    // Checked by the writers before they start; again here, as a FIFO or
    // device may have appeared at an output path during a long write.
    for (i, &path) in paths.iter().enumerate() {
        if let Ok(meta) = std::fs::metadata(path)
            && !meta.is_file()
        {
            let kind = crate::read::file_kind(&meta.file_type());
            let e = std::io::Error::other(format!(
                "the output is {kind}, not a regular file: not replaced"
            ));
            drop(live);
            return Err((i, e));
        }
    }
    let mut renamed: Vec<&Path> = Vec::with_capacity(paths.len());
    for (i, (tmp, &path)) in temps.iter().zip(paths).enumerate() {
        if let Err(e) = std::fs::rename(tmp.path(), path) {
            for p in renamed {
                let _ = std::fs::remove_file(p);
            }
            // The temporary files are removed as `temps` drops, which
            // takes the lock.
            drop(live);
            return Err((i, e));
        }
        renamed.push(path);
    }
    for tmp in &mut temps {
        tmp.renamed = true;
        live.retain(|p| p != tmp.path());
        // The file is the output now: readers take its shared lock.
        // Unlocked explicitly, as a child forked by another thread may
        // hold a copy of the descriptor until its exec.
        let _ = tmp.file().unlock();
    }
    drop(live);
    #[cfg(feature = "testing")]
    pause(PAUSE_AFTER_RENAME);
    Ok(())
}

/// The environment variable that pauses a file write just before its
/// rename (feature `testing`, re-exported by the `testing` module): set it
/// to a path, and a write whose temporary files are complete creates that
/// file and then sleeps until the process is ended, so a test can
/// interrupt it at a known point.
#[cfg(any(test, feature = "testing"))]
pub const PAUSE_BEFORE_RENAME: &str = "GGUF_TEST_PAUSE_BEFORE_RENAME";

/// As [`PAUSE_BEFORE_RENAME`], just after the rename.
#[cfg(any(test, feature = "testing"))]
pub const PAUSE_AFTER_RENAME: &str = "GGUF_TEST_PAUSE_AFTER_RENAME";

/// Pauses the write for good when the environment variable `var` names a
/// file to create; does nothing otherwise.
#[cfg(feature = "testing")]
fn pause(var: &str) {
    let Some(marker) = std::env::var_os(var) else {
        return;
    };
    if std::fs::write(&marker, b"paused\n").is_err() {
        return;
    }
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// Removes the temporary files of every write under way in this process,
/// then ends the process with `code`, for a program's handler of SIGINT or
/// SIGTERM (the library installs none): without it, an interrupted write
/// leaves its `.gguf-XXXXXX.tmp` file beside the output (see
/// [`stale_temp_files`]). The files it replaces are untouched either way.
///
/// Call it from an ordinary thread, never from inside a signal handler
/// (it takes a lock and removes files): signal-hook's `Signals` iterator or
/// the `ctrlc` crate run their callbacks on such a thread. No write can
/// rename its file into place between the removal and the exit, so a file
/// that was already renamed is kept and a temporary one never outlives
/// the process.
///
/// ```no_run
/// // In a program's signal thread, after SIGINT:
/// gguf_core::write::exit_removing_temp_files(130);
/// ```
pub fn exit_removing_temp_files(code: i32) -> ! {
    let live = live();
    for path in live.iter() {
        let _ = std::fs::remove_file(path);
    }
    // The lock stays held to the end: a write that reaches its rename
    // waits for the exit.
    std::process::exit(code)
}

/// The temporary files in `dir` that no write is using: left by a process
/// that was killed (SIGKILL, a crash, a power cut) or interrupted without
/// [`exit_removing_temp_files`]. They are named `.gguf-XXXXXX.tmp` and can
/// be removed; the outputs they were written for are untouched. A file
/// still being written, in this process or another, is locked by its
/// writer and not listed. Sorted by name.
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join(".gguf-AbC123.tmp"), b"half a model")?;
/// let stale = gguf_core::write::stale_temp_files(dir.path())?;
/// assert_eq!(stale, [dir.path().join(".gguf-AbC123.tmp")]);
/// # Ok(()) }
/// ```
pub fn stale_temp_files(dir: impl AsRef<Path>) -> Result<Vec<PathBuf>> {
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(dir.as_ref())? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let ours = name.len() > PREFIX.len() + SUFFIX.len()
            && name.starts_with(PREFIX)
            && name.ends_with(SUFFIX);
        if !ours || !entry.file_type()?.is_file() {
            continue;
        }
        let Ok(file) = File::open(entry.path()) else {
            continue;
        };
        // Unlocked means no writer: the lock lives as long as the
        // writer's descriptor, so a killed writer leaves none.
        if file.try_lock_shared().is_ok() {
            stale.push(entry.path());
        }
    }
    stale.sort();
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    fn is_listed(path: &Path) -> bool {
        live().iter().any(|p| p == path)
    }

    #[test]
    fn a_temp_file_is_listed_until_renamed_or_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let a = TempFile::new_in(dir.path()).unwrap();
        let a_path = a.path().to_owned();
        let name = a_path.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with(".gguf-") && name.ends_with(".tmp"),
            "{name}"
        );
        assert!(is_listed(&a_path));
        drop(a);
        assert!(!is_listed(&a_path));
        assert!(names(dir.path()).is_empty(), "dropped file not removed");

        let mut b = TempFile::new_in(dir.path()).unwrap();
        let b_path = b.path().to_owned();
        std::io::Write::write_all(b.file_mut(), b"out").unwrap();
        let out = dir.path().join("out.gguf");
        persist_all(vec![b], &[&out]).unwrap();
        assert!(!is_listed(&b_path));
        assert_eq!(names(dir.path()), ["out.gguf"]);
        assert_eq!(std::fs::read(&out).unwrap(), b"out");
    }

    #[test]
    fn a_failed_rename_removes_the_set_and_its_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let one = TempFile::new_in(dir.path()).unwrap();
        let two = TempFile::new_in(dir.path()).unwrap();
        let first = dir.path().join("a.gguf");
        let nowhere = dir.path().join("missing").join("b.gguf");
        assert!(persist_all(vec![one, two], &[&first, &nowhere]).is_err());
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn a_creation_error_names_the_directory_not_the_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let err = TempFile::new_in(&missing).err().unwrap().to_string();
        assert!(err.contains(&*missing.to_string_lossy()), "{err}");
        assert!(!err.contains(".gguf-"), "{err}");
    }

    #[test]
    fn stale_files_are_the_unlocked_ones() {
        let dir = tempfile::tempdir().unwrap();
        let writing = TempFile::new_in(dir.path()).unwrap();
        let left = dir.path().join(".gguf-Left01.tmp");
        std::fs::write(&left, b"x").unwrap();
        std::fs::write(dir.path().join(".gguf-.tmp"), b"").unwrap();
        std::fs::write(dir.path().join("model.gguf"), b"").unwrap();
        assert_eq!(stale_temp_files(dir.path()).unwrap(), [left]);
        drop(writing);
    }
}
