//! Several files written as one: all renamed into place, or none.

use std::path::{Path, PathBuf};

use crate::error::{io_at, Error, Result};
use crate::write::atomic::sync_dir;
use crate::write::modes::WriteMode;
use crate::write::temp::{persist_all, TempFile};
use crate::write::Builder;

/// Writes each builder to its path through a temporary file beside it,
/// synced, then renames them all, so that none appears unless all are
/// complete (the shards of one model, say). `progress(k, bytes)` is told
/// the bytes written so far of file `k`. A failed write leaves every
/// existing file untouched and no temporary file behind.
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::write::{write_all_or_none, Builder};
/// let dir = tempfile::tempdir()?;
/// let paths = [dir.path().join("a.gguf"), dir.path().join("b.gguf")];
/// let mut builders = [Builder::new(), Builder::new()];
/// write_all_or_none(&mut builders, &paths, &mut |_, _| {})?;
/// assert!(paths.iter().all(|p| p.exists()));
/// # Ok(()) }
/// ```
pub fn write_all_or_none(
    builders: &mut [Builder<'_>],
    paths: &[PathBuf],
    progress: &mut dyn FnMut(usize, u64),
) -> Result<()> {
    let mut temps = Vec::with_capacity(builders.len());
    for (k, (b, path)) in builders.iter_mut().zip(paths).enumerate() {
        let dir = parent(path);
        let mut tmp = TempFile::new_in(dir).map_err(|e| e.with_path(path))?;
        b.write_file(
            tmp.file_mut(),
            WriteMode::Single,
            &mut |d, _| progress(k, d),
            true,
        )
        .map_err(|e| e.with_path(path))?;
        tmp.file().sync_all().map_err(io_at(path))?;
        temps.push(tmp);
    }
    let names: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    persist_all(temps, &names).map_err(|(i, e)| Error::io(&paths[i], e))?;
    for path in paths {
        let dir = parent(path);
        sync_dir(dir).map_err(io_at(dir))?;
    }
    Ok(())
}

/// The directory of `path` (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}
