//! Replacing a file so that a failure never leaves a half-written file.

use std::fs::File;
use std::path::Path;

use crate::error::{io_at, Error, Result};
use crate::write::temp::{persist_all, TempFile};

/// Writes a file all at once or not at all: runs `write` on a temporary
/// file in `path`'s directory, syncs it and renames it over `path`. On any
/// error, or when the process is interrupted while a command that handles
/// signals runs ([`exit_removing_temp_files`](crate::write::exit_removing_temp_files)),
/// the temporary file is removed and `path` is untouched. A file it
/// replaces keeps its permissions and, where the OS allows, its owner; a
/// new file gets `0o666` minus the umask. An existing `path` that is not a
/// regular file (a device, a FIFO, a directory) is refused before `write`
/// runs ([`check_output`](crate::write::check_output)); a symlink to a
/// regular file is replaced by the new file.
///
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir()?;
/// let page = dir.path().join("page.html");
/// gguf_core::write::replace_file(&page, |f| Ok(f.write_all(b"<p>hi</p>")?))?;
/// assert_eq!(std::fs::read(&page)?, b"<p>hi</p>");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn replace_file<T>(path: &Path, write: impl FnOnce(&mut File) -> Result<T>) -> Result<T> {
    replace_in(path, None, write)
}

/// Runs `write` on a temporary file in `temp_dir` (by default `path`'s
/// directory), syncs it, renames it over `path` and syncs `path`'s
/// directory. On any error the temporary file is removed and `path` is
/// untouched. The temporary file is `.gguf-XXXXXX.tmp` (module `temp`);
/// errors never name it. A file that `path` replaces passes on its
/// permissions and, where the OS lets us, its owner; a new file gets
/// `0o666` minus the umask, as `File::create` gives. `temp_dir` must be on the same file
/// system as `path`: a rename cannot cross file systems, and the error
/// says so rather than falling back to a copy that is not atomic.
pub(crate) fn replace_in<T>(
    path: &Path,
    temp_dir: Option<&Path>,
    write: impl FnOnce(&mut File) -> Result<T>,
) -> Result<T> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // Before any work: a device or FIFO there would be replaced by a file.
    crate::write::check_output(path)?;
    let existing = std::fs::metadata(path).ok();
    let mut tmp = TempFile::new_in(temp_dir.unwrap_or(dir)).map_err(|e| e.with_path(path))?;
    // Errors name the output, not the temporary file beside it.
    let out = write(tmp.file_mut()).map_err(|e| e.with_path(path))?;
    if let Some(meta) = &existing {
        keep_owner(tmp.file(), meta);
        tmp.file()
            .set_permissions(meta.permissions())
            .map_err(io_at(path))?;
    }
    tmp.file().sync_all().map_err(io_at(path))?;
    persist_all(vec![tmp], &[path]).map_err(|(_, e)| Error::io(path, e))?;
    sync_dir(dir).map_err(io_at(dir))?;
    Ok(out)
}

/// Gives `file` the owner and group of the file it replaces. Only root (or
/// a member of the group, for the group) may do so; otherwise the new file
/// is ours, as with `sed -i`, and the write goes ahead.
fn keep_owner(file: &File, old: &std::fs::Metadata) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Ok(new) = file.metadata()
            && (new.uid(), new.gid()) != (old.uid(), old.gid())
        {
            // Failure is the expected case for non-root users; the
            // permissions are still copied.
            let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()))
                .or_else(|_| std::os::unix::fs::fchown(file, None, Some(old.gid())));
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, old);
    }
}

/// Makes a rename durable: fsync of the directory holding the entry.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}
