//! The owned copy of a file's header region.
//!
//! What copying a big-vocabulary header costs is mostly memory, not the
//! copy: 6 MB of fresh memory in 4 KiB pages takes 1,500 first-touch page
//! faults, each a trap, a page allocation and a page of zeroes. On a
//! virtual machine, a process opening Gemma 3 270M took 1,784 page faults
//! and 6.7 ms of CPU that way; with the copy in 2 MiB pages, 194 faults
//! and 3.9 ms. So a header larger than `HEAP_MAX` is copied into an
//! anonymous map that the kernel backs with 2 MiB pages where it can
//! (Linux's transparent huge pages, `MADV_HUGEPAGE`). Smaller headers,
//! other systems, and a map that cannot be made: a `Vec`.
//!
//! When a copy is dropped, its map is kept for the next one, as an
//! allocator keeps freed memory (a `Vec` gets that from the allocator):
//! a program that opens big headers one after another touches fresh memory
//! only once. At most one map of at most `SPARE_MAX` bytes is kept.

use std::fs::File;
use std::io;
use std::ops::Deref;

/// Headers up to this size are copied into a `Vec`: below it, the few
/// small-page faults cost less than zeroing a 2 MiB page (measured on a
/// virtual machine, where each fault costs several microseconds).
#[cfg(target_os = "linux")]
const HEAP_MAX: usize = 256 << 10;

/// Huge page size on x86-64 and most aarch64 kernels; the map is a
/// multiple of it, so that the kernel aligns it to huge pages.
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// The least address space taken for a header that outgrows the heap.
#[cfg(target_os = "linux")]
const RESERVE: usize = 32 << 20;

/// The largest map kept for reuse: more than any real header needs, so a
/// hostile one is not kept for the life of the process.
#[cfg(target_os = "linux")]
const SPARE_MAX: usize = 64 << 20;

/// The map of the last big header dropped, its pages already faulted in.
#[cfg(target_os = "linux")]
static SPARE: std::sync::Mutex<Option<memmap2::MmapMut>> = std::sync::Mutex::new(None);

/// File bytes `0..len()`, owned.
pub(crate) enum HeaderCopy {
    Heap(Vec<u8>),
    #[cfg(target_os = "linux")]
    Map {
        map: Recycled,
        len: usize,
    },
}

impl HeaderCopy {
    /// Forgets the bytes from `len` on.
    pub(crate) fn truncate(&mut self, new_len: usize) {
        match self {
            HeaderCopy::Heap(v) => v.truncate(new_len),
            #[cfg(target_os = "linux")]
            HeaderCopy::Map { len, .. } => *len = (*len).min(new_len),
        }
    }
}

/// A header region being read from a file: its first `filled` bytes are
/// the file's, the rest of its storage is zeroes waiting to be read into.
/// Storage that grows past `HEAP_MAX` is a (reused) huge-page map, so the
/// bytes are read straight into the memory that keeps them, once.
pub(crate) struct HeaderBuf {
    /// All of it initialized (zeroes where nothing was read yet), so that
    /// reads go into it without `unsafe`; a fresh map comes zeroed from the
    /// kernel, without a pass over it here.
    storage: HeaderCopy,
    filled: usize,
    /// The most storage worth having: the file's length.
    max_len: usize,
}

impl HeaderBuf {
    /// An empty buffer for the header of a file of `file_len` bytes.
    pub(crate) fn new(file_len: u64) -> Self {
        HeaderBuf {
            storage: HeaderCopy::Heap(Vec::new()),
            filled: 0,
            max_len: usize::try_from(file_len).unwrap_or(usize::MAX),
        }
    }

    /// The bytes read so far: the file's bytes `0..filled`.
    pub(crate) fn filled(&self) -> &[u8] {
        &self.storage[..self.filled]
    }

    /// Reads the file's bytes `filled..end` with positioned reads. A file
    /// that ends before `end` (it shrank since its length was taken) is an
    /// error: the caller asks only for bytes within the length it knows.
    pub(crate) fn read_to(&mut self, file: &File, end: usize) -> io::Result<()> {
        if end <= self.filled {
            return Ok(());
        }
        self.reserve(end)?;
        while self.filled < end {
            let into = &mut self.storage.as_mut_slice()[self.filled..end];
            match read_at(file, into, self.filled as u64) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "the file ended at byte {} while its header region was read \
                             (it was shortened meanwhile)",
                            self.filled
                        ),
                    ))
                }
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The bytes read, as the owned header copy.
    pub(crate) fn into_copy(self) -> HeaderCopy {
        let mut copy = self.storage;
        copy.truncate(self.filled);
        copy
    }

    /// Makes room for `end` bytes, keeping those read.
    fn reserve(&mut self, end: usize) -> io::Result<()> {
        if self.storage.capacity() >= end {
            return Ok(());
        }
        // Growing in doublings bounds the bytes moved by a header whose
        // size was guessed short to the size of the header.
        let want = end.max(self.storage.capacity().saturating_mul(2).min(self.max_len));
        #[cfg(target_os = "linux")]
        if want > HEAP_MAX {
            // Room to grow without moving: a guess of the header's length
            // can come out short, and address space costs nothing until
            // it is touched (only the pages read into are).
            let room = want
                .saturating_mul(2)
                .max(RESERVE)
                .min(self.max_len.max(want));
            let size = room.checked_next_multiple_of(HUGE_PAGE).unwrap_or(room);
            if let Some(mut map) = reuse(size).or_else(|| new_map(size)) {
                map[..self.filled].copy_from_slice(&self.storage[..self.filled]);
                self.storage = HeaderCopy::Map {
                    len: map.len(),
                    map: Recycled(Some(map)),
                };
                return Ok(());
            }
        }
        let HeaderCopy::Heap(v) = &mut self.storage else {
            // A map that cannot grow into another map: move to the heap.
            let mut v = Vec::new();
            try_reserve(&mut v, want)?;
            v.extend_from_slice(&self.storage[..self.filled]);
            v.resize(want, 0);
            self.storage = HeaderCopy::Heap(v);
            return Ok(());
        };
        // Zeroing costs a pass over the memory, which stays small on Linux
        // (at most `HEAP_MAX`; larger headers go to a map).
        try_reserve(v, want - v.len())?;
        v.resize(want, 0);
        Ok(())
    }
}

fn try_reserve(v: &mut Vec<u8>, additional: usize) -> io::Result<()> {
    v.try_reserve_exact(additional)
        .map_err(|_| too_large(v.len().saturating_add(additional)))
}

fn too_large(len: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!("a header region of {len} bytes does not fit in memory"),
    )
}

/// One positioned read: at most `buf.len()` bytes at `offset`.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::read_at(file, buf, offset);
    #[cfg(windows)]
    return std::os::windows::fs::FileExt::seek_read(file, buf, offset);
}

/// The spare map, when there is one of at least `size` bytes.
#[cfg(target_os = "linux")]
fn reuse(size: usize) -> Option<memmap2::MmapMut> {
    let mut spare = SPARE.lock().ok()?;
    if spare.as_ref()?.len() < size {
        return None;
    }
    spare.take()
}

#[cfg(target_os = "linux")]
fn new_map(size: usize) -> Option<memmap2::MmapMut> {
    let map = memmap2::MmapOptions::new().len(size).map_anon().ok()?;
    // A hint: without huge pages the map still works, in small pages.
    let _ = map.advise(memmap2::Advice::HugePage);
    Some(map)
}

/// A map that goes back to [`SPARE`] when dropped.
#[cfg(target_os = "linux")]
pub(crate) struct Recycled(Option<memmap2::MmapMut>);

#[cfg(target_os = "linux")]
impl Drop for Recycled {
    fn drop(&mut self) {
        let Some(map) = self.0.take() else { return };
        if map.len() > SPARE_MAX {
            return;
        }
        if let Ok(mut spare) = SPARE.lock() {
            // The larger of the two stays; the other is unmapped.
            if spare.as_ref().is_none_or(|s| s.len() <= map.len()) {
                *spare = Some(map);
            }
        }
    }
}

impl HeaderCopy {
    /// How many bytes the storage holds, read or not.
    fn capacity(&self) -> usize {
        match self {
            HeaderCopy::Heap(v) => v.len(),
            #[cfg(target_os = "linux")]
            HeaderCopy::Map { map, .. } => map.0.as_ref().map_or(0, |m| m.len()),
        }
    }

    /// All of the storage, read or not.
    fn as_mut_slice(&mut self) -> &mut [u8] {
        match self {
            HeaderCopy::Heap(v) => v,
            #[cfg(target_os = "linux")]
            HeaderCopy::Map { map, .. } => map.0.as_deref_mut().unwrap_or(&mut []),
        }
    }
}

impl From<Vec<u8>> for HeaderCopy {
    fn from(v: Vec<u8>) -> Self {
        HeaderCopy::Heap(v)
    }
}

impl Deref for HeaderCopy {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            HeaderCopy::Heap(v) => v,
            #[cfg(target_os = "linux")]
            HeaderCopy::Map { map, len } => map.0.as_deref().map_or(&[], |m| &m[..*len]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_of(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, bytes).unwrap();
        let file = File::open(&path).unwrap();
        (dir, file)
    }

    /// Reads in steps, across the move from the heap to a map, keep every
    /// byte read before.
    #[test]
    fn reads_in_steps_keep_the_bytes_read_before() {
        let bytes: Vec<u8> = (0..(3 << 20) as u32).map(|i| (i % 251) as u8).collect();
        let (_dir, file) = file_of(&bytes);
        let mut buf = HeaderBuf::new(bytes.len() as u64);
        for end in [0, 10, 4096, 300 << 10, 2 << 20, 3 << 20] {
            buf.read_to(&file, end).unwrap();
            assert_eq!(buf.filled(), &bytes[..end], "{end}");
        }
        let copy = buf.into_copy();
        assert_eq!(&*copy, &bytes[..]);
    }

    /// A file shorter than the bytes asked for (one shortened while it is
    /// read) is an error, not a loop or a buffer of zeroes.
    #[test]
    fn a_file_shorter_than_asked_is_an_error() {
        let (_dir, file) = file_of(&[7; 100]);
        let mut buf = HeaderBuf::new(200);
        let err = buf.read_to(&file, 150).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("ended at byte 100"), "{err}");
    }
}
