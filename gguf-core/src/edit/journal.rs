//! The side file that makes in-place header writes crash-safe.
//!
//! Before the header region of `model.gguf` is overwritten, its old bytes
//! are saved to `model.gguf.journal` and synced. If the process dies while
//! the header is being written, the next [`Editor::open`](super::Editor::open) (or
//! [`recover`]) finds the journal and puts the old header back: the file is
//! then exactly the old version; readers meanwhile see that old version
//! without writing anything (`saved_header`). Once the
//! new header is synced the journal is deleted: the file is the new version.
//!
//! Format (little-endian): magic `GGUFJRNL`, u32 format version (1), u64
//! length of the model file, u64 length `n` of the saved region, u32 CRC-32
//! of the saved bytes, then the `n` saved bytes. A journal that is short or
//! fails its CRC was never completely written, which means the model file
//! was not touched yet, so it is simply removed.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{io_at, EditError, Error, Result};
use crate::write::sync_dir;

const MAGIC: &[u8; 8] = b"GGUFJRNL";
const HEADER_LEN: usize = 8 + 4 + 8 + 8 + 4;

/// Path of the journal of `path`. The editor resolves symbolic links
/// first: for a link, the journal lies beside the file it points to.
pub fn journal_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".journal");
    path.with_file_name(name)
}

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
    let mut head = Vec::with_capacity(HEADER_LEN);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&1u32.to_le_bytes());
    head.extend_from_slice(&file_len.to_le_bytes());
    head.extend_from_slice(&(old.len() as u64).to_le_bytes());
    head.extend_from_slice(&crc32fast::hash(old).to_le_bytes());
    j.write_all(&head)
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

/// What a journal beside a file says.
enum Found {
    /// No journal.
    None,
    /// A journal that was never completely written: the file was not
    /// touched yet.
    Incomplete,
    /// A complete journal: the file's header region as it was before the
    /// interrupted edit.
    Complete(Vec<u8>),
}

/// Reads the journal of `path` (a resolved path) and checks it against the
/// file's length.
fn find(path: &Path, file_len: u64) -> Result<Found> {
    let jpath = journal_path(path);
    let mut j = match File::open(&jpath) {
        Ok(j) => j,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::None),
        Err(e) => return Err(Error::io(jpath, e)),
    };
    let bad = |reason: String| {
        Error::Edit(EditError::BadJournal {
            path: jpath.clone(),
            reason,
        })
    };
    // The journal holds one header region; refuse absurd sizes rather
    // than read them.
    let jlen = j.metadata().map_err(io_at(&jpath))?.len();
    if jlen > file_len.saturating_add(HEADER_LEN as u64) {
        return Err(bad(format!(
            "{jlen} bytes, larger than the file it protects"
        )));
    }
    let mut bytes = Vec::new();
    j.read_to_end(&mut bytes).map_err(io_at(&jpath))?;
    let Some((saved_len, old)) = parse(&bytes) else {
        return Ok(Found::Incomplete);
    };
    if saved_len != file_len {
        return Err(bad(format!(
            "journal is for a file of {saved_len} bytes, the file has {file_len}"
        )));
    }
    let old = old.to_vec();
    Ok(Found::Complete(old))
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

/// The header bytes a reader should see instead of the file's own: the
/// saved old header when a complete journal of an interrupted edit lies
/// beside `path`. Reads only; see [`recover`] for the repair.
pub(crate) fn saved_header(path: &Path, file_len: u64) -> Result<Option<Vec<u8>>> {
    // The editor journals beside the file a symbolic link points to.
    let Ok(real) = fs::canonicalize(path) else {
        return Ok(None);
    };
    Ok(match find(&real, file_len)? {
        Found::Complete(old) => Some(old),
        Found::None | Found::Incomplete => None,
    })
}

/// The file length and saved bytes of a complete journal.
fn parse(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let head = bytes.get(..HEADER_LEN)?;
    if &head[..8] != MAGIC || head[8..12] != 1u32.to_le_bytes() {
        return None;
    }
    let file_len = u64::from_le_bytes(head[12..20].try_into().ok()?);
    let n = u64::from_le_bytes(head[20..28].try_into().ok()?);
    let crc = u32::from_le_bytes(head[28..32].try_into().ok()?);
    let old = bytes.get(HEADER_LEN..)?;
    (old.len() as u64 == n && crc32fast::hash(old) == crc).then_some((file_len, old))
}

/// Finishes what an interrupted in-place edit of `path` left behind:
/// with a complete journal beside the file, writes the saved old header
/// back and removes the journal; an incomplete journal (the file was
/// never touched) is just removed. Returns true when there was a journal.
///
/// Reading never needs this: [`GgufFile::open`](crate::GgufFile::open)
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
    use crate::read::Gguf;
    use crate::GgufFile;

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
        assert!(super::journal_path(&path).exists());
    }
}
