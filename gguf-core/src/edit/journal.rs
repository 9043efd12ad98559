//! The side file that makes in-place header writes crash-safe: writing,
//! removing and replaying it (its format, and reading it, are the leaf
//! module `crate::journal`, which the reader uses too).
//!
//! Before the header region of `model.gguf` is overwritten, its old bytes
//! are saved to `model.gguf.journal` and synced. If the process dies while
//! the header is being written, the next [`Editor::open`](super::Editor::open) (or
//! [`recover`]) finds the journal and puts the old header back: the file is
//! then exactly the old version; readers meanwhile see that old version
//! without writing anything. Once the new header is synced the journal is
//! deleted: the file is the new version. A journal that is short or fails
//! its CRC was never completely written, which means the model file was
//! not touched yet, so it is simply removed.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::{io_at, Error, Result};
use crate::journal::{encode_header, find, journal_path, Found};
use crate::write::sync_dir;

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Saves `old` (the bytes at offset 0 of a file of `file_len` bytes) and
/// syncs the journal and its directory entry.
pub(crate) fn write(path: &Path, file_len: u64, old: &[u8]) -> Result<()> {
    let jpath = journal_path(path);
    let mut j = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&jpath)
        .map_err(io_at(&jpath))?;
    j.write_all(&encode_header(file_len, old))
        .and_then(|()| j.write_all(old))
        .and_then(|()| j.sync_all())
        .map_err(io_at(&jpath))?;
    sync_dir(parent(path)).map_err(io_at(parent(path)))?;
    Ok(())
}

/// Deletes the journal and makes the deletion durable.
pub(crate) fn remove(path: &Path) -> Result<()> {
    let jpath = journal_path(path);
    match fs::remove_file(&jpath) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(jpath, e)),
    }
    sync_dir(parent(path)).map_err(io_at(parent(path)))?;
    Ok(())
}

/// If `path` has a journal, brings the file back to its pre-edit state
/// and removes the journal; true when there was a journal. The caller
/// holds the file's edit lock.
fn recover_locked(path: &Path, file: &File) -> Result<bool> {
    match find(path, file.metadata().map_err(io_at(path))?.len())? {
        Found::None => return Ok(false),
        Found::Incomplete => {}
        Found::Complete(old) => {
            file.write_all_at(&old, 0)
                .and_then(|()| file.sync_all())
                .map_err(io_at(path))?;
        }
    }
    remove(path)?;
    Ok(true)
}

/// Finishes what an interrupted in-place edit of `path` left behind:
/// with a complete journal beside the file, writes the saved old header
/// back and removes the journal; an incomplete journal (the file was
/// never touched) is just removed. Returns true when there was a journal.
///
/// Reading never needs this: [`GgufFile::open`](crate::read::GgufFile::open)
/// already presents the restored file without writing. [`Editor::open`]
/// calls it before editing. It takes the file's edit lock, waiting for a
/// commit in progress to finish, and needs write access to the file and
/// its directory.
///
/// ```no_run
/// # fn main() -> gguf_core::Result<()> {
/// if gguf_core::edit::recover("model.gguf")? {
///     println!("finished what an interrupted edit left behind");
/// }
/// # Ok(()) }
/// ```
///
/// [`Editor::open`]: super::Editor::open
pub fn recover(path: impl AsRef<Path>) -> Result<bool> {
    // The editor journals beside the file a symbolic link points to.
    let real = fs::canonicalize(path.as_ref()).map_err(io_at(path.as_ref()))?;
    let path = real.as_path();
    if !journal_path(path).exists() {
        return Ok(false);
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io_at(path))?;
    file.lock().map_err(io_at(path))?;
    let result = recover_locked(path, &file);
    let _ = file.unlock();
    result
}

#[cfg(test)]
mod tests {
    use crate::journal::journal_path;
    use crate::read::{Gguf, GgufFile};

    /// A complete journal that saved less than the padded header region
    /// (only the editor writes journals, but a reader must not trust their
    /// length): tensor data still comes from the data section.
    #[test]
    fn a_short_journal_does_not_shift_the_data() {
        let bytes = crate::testing::tiny_file();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.gguf");
        std::fs::write(&path, &bytes).unwrap();
        let f = GgufFile::open(&bytes).unwrap();
        let header_len = f.header_len() as usize;
        assert!(
            header_len < f.data_offset() as usize,
            "no padding to leave out"
        );
        super::write(&path, bytes.len() as u64, &bytes[..header_len]).unwrap();
        let g = GgufFile::open(&path).unwrap();
        for (a, b) in f.tensors().zip(g.tensors()) {
            assert_eq!(a.data().unwrap(), b.data().unwrap());
        }
        assert_eq!(g.data_section(), f.data_section());
        assert!(journal_path(&path).exists());
    }
}
