//! The side file that makes in-place header writes crash-safe.
//!
//! Before the header region of `model.gguf` is overwritten, its old bytes
//! are saved to `model.gguf.journal` and synced. If the process dies while
//! the header is being written, the next open finds the journal and puts
//! the old header back: the file is then exactly the old version. Once the
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

use crate::error::{Error, Result};
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
        .open(&jpath)?;
    let mut head = Vec::with_capacity(HEADER_LEN);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&1u32.to_le_bytes());
    head.extend_from_slice(&file_len.to_le_bytes());
    head.extend_from_slice(&(old.len() as u64).to_le_bytes());
    head.extend_from_slice(&crc32fast::hash(old).to_le_bytes());
    j.write_all(&head)?;
    j.write_all(old)?;
    j.sync_all()?;
    sync_dir(parent(path))?;
    Ok(())
}

/// Deletes the journal and makes the deletion durable.
pub(crate) fn remove(path: &Path) -> Result<()> {
    match fs::remove_file(journal_path(path)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e.into()),
    }
    sync_dir(parent(path))?;
    Ok(())
}

/// What recovery did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// No journal: nothing to do.
    Clean,
    /// An incomplete journal (the file was never touched) was removed.
    DiscardedIncomplete,
    /// The old header was restored from a complete journal.
    RestoredOld,
}

/// If `path` has a journal, brings the file back to its pre-edit state
/// and removes the journal. The caller holds the file's edit lock.
pub(crate) fn recover(path: &Path, file: &File) -> Result<Recovery> {
    let jpath = journal_path(path);
    let mut j = match File::open(&jpath) {
        Ok(j) => j,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Recovery::Clean),
        Err(e) => return Err(e.into()),
    };
    let bad = |reason: String| Error::BadJournal {
        path: jpath.clone(),
        reason,
    };
    let mut bytes = Vec::new();
    // The journal holds one header region; refuse absurd sizes rather
    // than read them.
    let jlen = j.metadata()?.len();
    let file_len = file.metadata()?.len();
    if jlen > file_len.saturating_add(HEADER_LEN as u64) {
        return Err(bad(format!(
            "{jlen} bytes, larger than the file it protects"
        )));
    }
    j.read_to_end(&mut bytes)?;
    let complete = parse(&bytes);
    let Some((saved_len, old)) = complete else {
        remove(path)?;
        return Ok(Recovery::DiscardedIncomplete);
    };
    if saved_len != file_len {
        return Err(bad(format!(
            "journal is for a file of {saved_len} bytes, the file has {file_len}"
        )));
    }
    file.write_all_at(old, 0)?;
    file.sync_all()?;
    remove(path)?;
    Ok(Recovery::RestoredOld)
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

/// Recovers `path` if a journal is present, taking the edit lock for the
/// duration (waiting for a commit in progress to finish).
pub(crate) fn recover_if_needed(path: &Path) -> Result<Recovery> {
    // The editor journals beside the file a symbolic link points to.
    let real = match fs::canonicalize(path) {
        Ok(real) => real,
        // Let the caller's open report a missing file.
        Err(_) => return Ok(Recovery::Clean),
    };
    let path = real.as_path();
    if !journal_path(path).exists() {
        return Ok(Recovery::Clean);
    }
    let file = OpenOptions::new().read(true).write(true).open(path)?;
    file.lock()?;
    let result = recover(path, &file);
    let _ = file.unlock();
    result
}
