//! Reading a local file's header region: parsed and copied out while the
//! caller holds the shared lock (see `source.rs`'s module docs for why the
//! header is copied).

use std::fs::File;

use memmap2::Mmap;

use super::header_copy::HeaderCopy;
use crate::error::Result;

/// Parses the header region from a temporary map of the whole file and
/// copies it out ([`HeaderCopy::of`]); the map is dropped before returning.
///
/// Parsing over the map reads each header byte where the page cache holds
/// it, and the copy is then one `memcpy` of the region, whose length the
/// parse has just found. Reading the region with one `pread` and parsing
/// the copy would spare the map's page faults, but needs that length
/// before parsing: only a walk hopping over every string gives it (262,144
/// hops for Gemma 3's vocabulary), and in measurement the walk cost about
/// what the faults it spares do, while the kernel's copy out of the page
/// cache was slower than the `memcpy` from pages the parse had just read.
pub(super) fn read_header<P>(
    file: &File,
    file_len: u64,
    parse: impl FnOnce(&[u8], u64) -> Result<(P, u64)>,
) -> Result<(HeaderCopy, P, u64)> {
    if file_len == 0 {
        // Mapping an empty file fails on some systems; an empty buffer
        // gives the same "truncated" error as any short file.
        let (parsed, data_offset) = parse(&[], 0)?;
        return Ok((HeaderCopy::from(Vec::new()), parsed, data_offset));
    }
    // SAFETY: the map lives only inside this function, while the caller
    // holds the shared lock that this crate's in-place commits take
    // exclusively, so no writer of this crate changes the bytes under it;
    // every slice of it is dropped (its bytes copied) before the lock is
    // released. Other programs writing the file meanwhile: see the module
    // docs.
    #[allow(unsafe_code)]
    let map = unsafe { Mmap::map(file)? };
    let (parsed, data_offset) = parse(&map, file_len)?;
    let end = usize::try_from(data_offset.min(file_len)).unwrap_or(usize::MAX);
    let header = HeaderCopy::of(map.get(..end).unwrap_or(&map))?;
    Ok((header, parsed, data_offset))
}
