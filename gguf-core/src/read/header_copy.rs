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
    /// A copy of `bytes`.
    pub(crate) fn of(bytes: &[u8]) -> std::io::Result<Self> {
        #[cfg(target_os = "linux")]
        if bytes.len() > HEAP_MAX {
            let size = bytes
                .len()
                .checked_next_multiple_of(HUGE_PAGE)
                .unwrap_or(bytes.len());
            if let Some(mut map) = reuse(size).or_else(|| new_map(size)) {
                map[..bytes.len()].copy_from_slice(bytes);
                return Ok(HeaderCopy::Map {
                    map: Recycled(Some(map)),
                    len: bytes.len(),
                });
            }
        }
        let mut v = Vec::new();
        v.try_reserve_exact(bytes.len()).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!(
                    "a header region of {} bytes does not fit in memory",
                    bytes.len()
                ),
            )
        })?;
        v.extend_from_slice(bytes);
        Ok(HeaderCopy::Heap(v))
    }

    /// Forgets the bytes from `len` on.
    pub(crate) fn truncate(&mut self, new_len: usize) {
        match self {
            HeaderCopy::Heap(v) => v.truncate(new_len),
            #[cfg(target_os = "linux")]
            HeaderCopy::Map { len, .. } => *len = (*len).min(new_len),
        }
    }
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
