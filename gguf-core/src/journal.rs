//! The on-disk format of the in-place edit journal, and reading it.
//!
//! Before an in-place edit overwrites the header region of `model.gguf`,
//! the editor saves the old bytes to `model.gguf.journal` (see
//! [`edit`](crate::edit)). This leaf module holds what both sides need: the
//! journal's name and format, and finding a journal beside a file. The
//! reader uses it to present a file as it was before an interrupted edit
//! ([`saved_header`]); the editor writes, removes and replays journals
//! (`edit/journal.rs`).
//!
//! Format (little-endian): magic `GGUFJRNL`, u32 format version (1), u64
//! length of the model file, u64 length `n` of the saved region, u32 CRC-32
//! of the saved bytes, then the `n` saved bytes. A journal that is short or
//! fails its CRC was never completely written, which means the model file
//! was not touched yet.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{io_at, EditError, Error, Result};

const MAGIC: &[u8; 8] = b"GGUFJRNL";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 8 + 8 + 4;

/// Path of the journal of `path`. The editor resolves symbolic links
/// first: for a link, the journal lies beside the file it points to.
///
/// ```
/// use std::path::Path;
/// assert_eq!(
///     gguf_core::edit::journal_path(Path::new("dir/model.gguf")),
///     Path::new("dir/model.gguf.journal")
/// );
/// ```
pub fn journal_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".journal");
    path.with_file_name(name)
}

/// The journal's header for `old` (the bytes at offset 0 of a file of
/// `file_len` bytes); the saved bytes follow it.
pub(crate) fn encode_header(file_len: u64, old: &[u8]) -> Vec<u8> {
    let mut head = Vec::with_capacity(HEADER_LEN);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&file_len.to_le_bytes());
    head.extend_from_slice(&(old.len() as u64).to_le_bytes());
    head.extend_from_slice(&crc32fast::hash(old).to_le_bytes());
    head
}

/// The file length and saved bytes of a complete journal; `None` for one
/// that was never completely written.
fn parse(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let head = bytes.get(..HEADER_LEN)?;
    if &head[..8] != MAGIC || head[8..12] != VERSION.to_le_bytes() {
        return None;
    }
    let file_len = u64::from_le_bytes(head[12..20].try_into().ok()?);
    let n = u64::from_le_bytes(head[20..28].try_into().ok()?);
    let crc = u32::from_le_bytes(head[28..32].try_into().ok()?);
    let old = bytes.get(HEADER_LEN..)?;
    (old.len() as u64 == n && crc32fast::hash(old) == crc).then_some((file_len, old))
}

/// What a journal beside a file says.
pub(crate) enum Found {
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
pub(crate) fn find(path: &Path, file_len: u64) -> Result<Found> {
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
    Ok(Found::Complete(old.to_vec()))
}

/// The header bytes a reader should see instead of the file's own: the
/// saved old header when a complete journal of an interrupted edit lies
/// beside `path`. Reads only; the editor's `recover` does the repair.
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

#[cfg(test)]
mod tests {
    use super::{encode_header, parse, HEADER_LEN};

    fn journal(file_len: u64, old: &[u8]) -> Vec<u8> {
        let mut j = encode_header(file_len, old);
        j.extend_from_slice(old);
        j
    }

    #[test]
    fn a_complete_journal_parses_back() {
        let j = journal(1000, b"old header");
        assert_eq!(parse(&j), Some((1000, &b"old header"[..])));
    }

    /// Short, corrupted or foreign journals read as never completely
    /// written, not as a header to present.
    #[test]
    fn an_incomplete_journal_does_not_parse() {
        let j = journal(1000, b"old header");
        assert_eq!(parse(&j[..j.len() - 1]), None);
        assert_eq!(parse(&j[..HEADER_LEN - 1]), None);
        let mut flipped = j.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(parse(&flipped), None);
        let mut version = j.clone();
        version[8] = 2;
        assert_eq!(parse(&version), None);
    }
}
