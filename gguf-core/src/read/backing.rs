//! Where a [`GgufFile`](super::GgufFile)'s bytes live, and how a file on
//! disk is read soundly.
//!
//! # The header is copied, the tensor data is mapped
//!
//! [`GgufFile::open`](super::GgufFile::open) copies the header region
//! (`0..data_offset`: header, metadata, tensor infos and padding) into an
//! owned buffer and memory-maps only the data section (`data_offset..`).
//! Every `&str`, array and key handed out borrows the owned copy; only
//! tensor data borrows the map.
//!
//! Why not one map of the whole file: a file map is `MAP_SHARED` (memmap2's
//! `Mmap::map`; a private map would not help either, its untouched pages
//! still show later writes to the file), and this crate's own
//! [`Editor`](crate::edit::Editor) rewrites the header region *in place*,
//! from this process or another. A `&str` borrowed from a mapped header
//! would then change under the borrow, which Rust's aliasing rules forbid.
//! The in-place commit never touches the data section, and a rewrite
//! replaces the file by rename (the old inode, and our map of it, stays
//! intact), so with the header copied no write of this crate can change
//! bytes that a live reference covers.
//!
//! The alternative, refusing in-place commits while a map of the same file
//! is alive in the process, cannot see readers in other processes, and makes
//! the editor's behaviour depend on unrelated parts of a program.
//!
//! The copy costs a `memcpy` of the header region, and the fresh memory it
//! goes to (`local_header.rs` gives the figures). The header is parsed from a temporary map of the file, taken and dropped
//! under a shared advisory lock (the lock the editor takes exclusively to
//! commit), so neither a torn header nor a header that changes while it is
//! parsed can be seen by way of this crate.
//!
//! What remains outside Rust's model is what every mmap-based reader shares:
//! another program writing tensor data in place or truncating the file while
//! it is mapped.
//!
//! # Opening never writes
//!
//! If a journal of an interrupted in-place edit lies beside the file (see
//! [`edit`](crate::edit)), opening presents the file as it was before that
//! edit, taking the old header bytes from the journal instead of the file.
//! Nothing is written: the file and journal stay as they are until an
//! [`Editor`](crate::edit::Editor) or [`edit::recover`](crate::edit::recover)
//! repairs them, so read-only files and directories open normally.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use memmap2::{Mmap, MmapOptions};

use super::header_copy::HeaderCopy;
use super::local_header::read_header;
use super::range::RangeRead;
use crate::error::Result;

pub(crate) enum Backing<'a> {
    /// The caller's buffer: the whole file.
    Borrowed(&'a [u8]),
    /// A file opened by path.
    File(Mapped),
    /// Only the header region ([`HeaderParser`](super::HeaderParser)).
    Header(Vec<u8>),
    /// The header region, and where tensor data is read on request (a
    /// stream, a remote file): one range read per tensor.
    Ranged {
        header: Vec<u8>,
        reader: Arc<dyn RangeRead>,
    },
}

/// A file opened by path: its header region copied, its data section mapped.
pub(crate) struct Mapped {
    /// File bytes `0..header.len()`: the header region, normally up to
    /// the data section (or the end of the file).
    header: HeaderCopy,
    /// File bytes `data_offset..`, absent when the data section is empty.
    /// Its start is `data_offset`, not `header.len()`.
    data: Option<Mmap>,
    data_offset: usize,
    /// Kept for kernel-side copies of tensor data.
    file: File,
}

impl Backing<'static> {
    /// Opens `path`, parses its header region with `parse` (given the
    /// header bytes and the file length; returns the parsed value and its
    /// data offset), copies the header and maps the data section.
    pub(crate) fn open<P>(
        path: &Path,
        parse: impl FnOnce(&[u8], u64) -> Result<(P, u64)>,
    ) -> Result<(Backing<'static>, P)> {
        // A directory, a FIFO (whose open would block) or a device is
        // refused before it is read.
        let file = super::regular::open_regular(path)?;
        let meta = file.metadata()?;
        let file_len = meta.len();
        let (header, parsed, data_offset) = {
            // Held while the header is read: an in-place commit holds the
            // exclusive lock from its journal write to its last header byte.
            // Advisory and best effort: a filesystem without locks still
            // reads, as every other GGUF reader does.
            let _lock = SharedLock::take(&file);
            match saved_header(path, file_len)? {
                Some(old) => {
                    let (parsed, data_offset) = parse(&old, file_len)?;
                    (HeaderCopy::from(old), parsed, data_offset)
                }
                None => read_header(&file, file_len, parse)?,
            }
        };
        let mut header = header;
        header.truncate(usize::try_from(data_offset.min(file_len)).unwrap_or(usize::MAX));
        // Where the data section starts, whatever the header copy holds (a
        // journal may hold less than the padded header region).
        let data_offset = usize::try_from(data_offset.min(file_len)).unwrap_or(usize::MAX);
        let data = if (data_offset as u64) < file_len {
            // SAFETY: a map is sound while no one writes the mapped bytes of
            // the file. This map covers only the data section, which this
            // crate never writes in place: the editor writes the header
            // region only, and every rewrite goes to a new file renamed over
            // this one (our descriptor keeps the old inode). Another program
            // writing or truncating the data section while it is mapped is
            // the caveat every mmap-based reader shares.
            #[allow(unsafe_code)]
            let map = unsafe { MmapOptions::new().offset(data_offset as u64).map(&file)? };
            Some(map)
        } else {
            None
        };
        let mapped = Mapped {
            header,
            data,
            data_offset,
            file,
        };
        Ok((Backing::File(mapped), parsed))
    }
}

/// The header bytes to present instead of the file's when an interrupted
/// edit left a complete journal beside it.
#[cfg(unix)]
fn saved_header(path: &Path, file_len: u64) -> Result<Option<Vec<u8>>> {
    crate::journal::saved_header(path, file_len)
}

#[cfg(not(unix))]
fn saved_header(_: &Path, _: u64) -> Result<Option<Vec<u8>>> {
    Ok(None)
}

/// A shared advisory lock, released explicitly on drop (closing is not
/// enough while a forked child holds a copy of the descriptor).
struct SharedLock<'f>(Option<&'f File>);

impl<'f> SharedLock<'f> {
    fn take(file: &'f File) -> Self {
        SharedLock(file.lock_shared().ok().map(|()| file))
    }
}

impl Drop for SharedLock<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.0 {
            let _ = f.unlock();
        }
    }
}

impl<'a> Backing<'a> {
    /// The header region: the bytes every metadata offset points into.
    pub(crate) fn header(&self) -> &[u8] {
        match self {
            Backing::Borrowed(b) => b,
            Backing::File(m) => &m.header,
            Backing::Header(v) | Backing::Ranged { header: v, .. } => v,
        }
    }

    /// File bytes `start..start + len`, when held: within the header
    /// region or within the data section, never across both.
    pub(crate) fn range(&self, start: usize, len: usize) -> Option<&[u8]> {
        let end = start.checked_add(len)?;
        match self {
            Backing::Borrowed(b) => b.get(start..end),
            Backing::Header(v) | Backing::Ranged { header: v, .. } => v.get(start..end),
            Backing::File(m) => match start.checked_sub(m.data_offset) {
                Some(rel) => m.data.as_deref().unwrap_or(&[]).get(rel..rel + len),
                None => m.header.get(start..end),
            },
        }
    }

    /// The data section (`data_offset..`), when held.
    pub(crate) fn data_section(&self, data_offset: u64) -> Option<&[u8]> {
        match self {
            Backing::Borrowed(b) => Some(
                usize::try_from(data_offset)
                    .ok()
                    .and_then(|d| b.get(d..))
                    .unwrap_or(&[]),
            ),
            Backing::File(m) => Some(m.data.as_deref().unwrap_or(&[])),
            Backing::Header(_) | Backing::Ranged { .. } => None,
        }
    }

    /// True when all tensor data is held.
    pub(crate) fn has_data(&self) -> bool {
        !matches!(self, Backing::Header(_) | Backing::Ranged { .. })
    }

    /// Where tensor data is read on request, when it is not held.
    pub(crate) fn reader(&self) -> Option<&Arc<dyn RangeRead>> {
        match self {
            Backing::Ranged { reader, .. } => Some(reader),
            _ => None,
        }
    }

    /// Tells the kernel that file bytes `start..start + len` of the data
    /// section will not be needed soon.
    pub(crate) fn release(&self, start: usize, len: usize) {
        #[cfg(unix)]
        if let Backing::File(Mapped {
            data: Some(map),
            data_offset,
            ..
        }) = self
        {
            let Some(rel) = start.checked_sub(*data_offset) else {
                return;
            };
            if rel.checked_add(len).is_none_or(|end| end > map.len()) {
                return;
            }
            // SAFETY: MADV_DONTNEED on a shared, read-only file map drops
            // the pages from this process's page tables only; they were
            // never written through the map, so nothing is lost, and the
            // next access faults them in again from the page cache with
            // the file's current contents, which are the same bytes (this
            // crate never writes the data section in place). So no
            // borrowed slice can observe a change. The range was checked
            // above to lie inside the map (memmap2 checks offset and length
            // only separately), so no other mapping is touched.
            #[allow(unsafe_code)]
            let _ =
                unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, rel, len) };
        }
        #[cfg(not(unix))]
        let _ = (start, len);
    }

    /// The mapped file, when the data section is a map of one.
    pub(crate) fn file(&self) -> Option<&File> {
        match self {
            Backing::File(m) => Some(&m.file),
            _ => None,
        }
    }
}
