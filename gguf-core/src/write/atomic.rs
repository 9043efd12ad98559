//! Replacing a file so that a failure never leaves a half-written file.

use std::fs::File;
use std::path::Path;

use crate::error::Result;

/// Runs `write` on a temporary file in `path`'s directory, syncs it,
/// renames it over `path` and syncs the directory. On any error the
/// temporary file is removed and `path` is untouched.
pub(crate) fn replace<T>(path: &Path, write: impl FnOnce(&mut File) -> Result<T>) -> Result<T> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".gguf-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    let out = write(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    // Keep the permissions of the file being replaced.
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir)?;
    Ok(out)
}

/// Makes a rename durable: fsync of the directory holding the entry.
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
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
