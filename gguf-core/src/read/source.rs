//! Where a [`GgufFile`](super::GgufFile)'s bytes live.

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

pub(crate) enum Source<'a> {
    /// The caller's buffer.
    Borrowed(&'a [u8]),
    /// A read-only map of a whole file, and the file (kept for kernel-side
    /// copies of tensor data).
    Mmap(Mmap, File),
    /// Only the header region, read from a stream.
    Header(Vec<u8>),
    /// The header region, and the bytes of the file at `start..` fetched
    /// on their own (one tensor's data read from a remote file).
    Window {
        header: Vec<u8>,
        start: u64,
        data: Vec<u8>,
    },
}

impl Source<'_> {
    pub(crate) fn map(path: &Path) -> std::io::Result<Source<'static>> {
        let file = File::open(path)?;
        if file.metadata()?.len() == 0 {
            // Mapping an empty file fails on some systems; an empty buffer
            // gives the same "truncated" error as any short file.
            return Ok(Source::Header(Vec::new()));
        }
        // SAFETY: the map is read-only and private to this value. Another
        // process truncating or rewriting the file while it is mapped is
        // outside Rust's model (every mmap-based reader shares this caveat);
        // our own writers and editor replace files by rename or write the
        // header region only, never truncating a file in place.
        let map = unsafe { Mmap::map(&file)? };
        Ok(Source::Mmap(map, file))
    }

    pub(crate) fn release(&self, start: usize, len: usize) {
        #[cfg(unix)]
        if let Source::Mmap(m, _) = self {
            // SAFETY: DONTNEED on a read-only, file-backed private map only
            // drops clean pages; a later access re-reads them from the file,
            // so no borrowed slice can observe a change.
            let _ =
                unsafe { m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, len) };
        }
        #[cfg(not(unix))]
        let _ = (start, len);
    }

    /// The mapped file, when the bytes are a map of one.
    pub(crate) fn file(&self) -> Option<&File> {
        match self {
            Source::Mmap(_, f) => Some(f),
            _ => None,
        }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Source::Borrowed(b) => b,
            Source::Mmap(m, _) => m,
            Source::Header(v) | Source::Window { header: v, .. } => v,
        }
    }

    /// File bytes `start..start + len`, when held.
    pub(crate) fn range(&self, start: u64, len: u64) -> Option<&[u8]> {
        let end = start.checked_add(len)?;
        let (bytes, base) = match self {
            Source::Header(_) => return None,
            Source::Window {
                start: base, data, ..
            } => (&data[..], *base),
            _ => (self.bytes(), 0),
        };
        let from = usize::try_from(start.checked_sub(base)?).ok()?;
        let to = usize::try_from(end - base).ok()?;
        bytes.get(from..to)
    }
}
