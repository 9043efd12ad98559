//! Reading a local file's header region: parsed and copied out while the
//! caller holds the shared lock (see `backing.rs`'s module docs for why the
//! header is copied).
//!
//! # What it costs
//!
//! The copy costs a `memcpy` of the header region and the fresh memory it
//! goes to, which `header_copy.rs` takes in 2 MiB pages. Whole-process CPU
//! time, min of 40 processes, in one run of `benches/open_vs_llama.py` on a
//! shared two-core virtual machine, against llama.cpp's own C reader
//! (`gguf_init_from_file`, no tensor data); the two figures of ours are the
//! same code built twice (before and after issue 21's speed work, which
//! left this read as it was), so their gap is the machine's noise:
//!
//! | header                                   | llama.cpp | this read                  |
//! |------------------------------------------|-----------|----------------------------|
//! | Gemma 3 270M (262K tokens, 6.3 MB)       | 36.2 ms   | 2.9-3.5 ms (0.081-0.096x)  |
//! | Qwen2-shaped (152K tokens + 151K merges) | 28.2 ms   | 2.2 ms (0.078-0.079x)      |
//!
//! In one process, opening the same file again and again (the huge-page
//! buffer reused), `open` takes 1.3x-1.4x `GgufFile::open(&bytes)` (from memory) on the
//! same bytes for the Qwen2-shaped header and 2.1x-2.2x for Gemma, whose
//! 2 MB of scores and token types the parse skips but the copy does not.
//! Moving 6 MB costs about 0.2-0.3 ms here, a third of the parse, so
//! "within 10%" would need the copy to run beside the parse (another
//! thread) rather than after it.

use std::fs::File;

use memmap2::Mmap;

use super::header_copy::HeaderCopy;
use crate::error::Result;

/// Parses the header region from a temporary map of the whole file and
/// copies it out ([`HeaderCopy::of`]); the map is dropped before returning.
///
/// Parsing over the map reads each header byte where the page cache holds
/// it, and the copy is then one `memcpy` of the region, whose length the
/// parse has just found.
///
/// Positioned reads straight into the huge-page buffer, parsed there,
/// were tried and measured in the same runs as this read (issue 21): the
/// region's length is unknown before the parse, so it took a 256 KiB first
/// read, reads up to a guessed end (the rest of a vocabulary extrapolated
/// from its first strings) and a parse that resumed at the entry it stopped
/// in. It was no faster: whole-process CPU 2.65-3.25 ms against 2.22-2.44
/// for the Qwen2-shaped header and 2.88-3.94 against 2.84-3.18 for Gemma,
/// in process 1.31-1.33 ms against 1.05 (Qwen2). Even one read of the whole
/// region, its length known, only matched this read: the kernel's copy out
/// of the page cache (`_copy_to_iter`) reads the cold pages that the parse
/// reads here, and costs more than the `memcpy` from pages the parse has
/// just brought into the cache; the map's page faults it spares are few
/// (the kernel maps 16 pages around each).
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
