//! Reading a local file's header region: positioned reads straight into
//! the memory that keeps it, parsed as it arrives (see `source.rs`'s module
//! docs for why the header is copied at all).
//!
//! # How it is read
//!
//! The header region's length is known only once it is parsed, so it is
//! read in a few steps: a first read of [`FIRST_READ`] bytes, then, each
//! time the parse runs out, one read up to where the header is guessed to
//! end ([`guess_header_end`]: the rest of a vocabulary is guessed from its
//! first strings, a little long). The parse ([`HeaderParse`]) goes on from
//! the start of the entry it stopped in, so the bytes are parsed about
//! once, and read once, by the kernel, into the buffer that becomes the
//! header copy ([`HeaderBuf`]): 2 MiB pages for a large header, reused
//! from the last one dropped.
//!
//! The previous way, a temporary map of the whole file parsed in place and
//! its header region copied out, paid for the map's page faults and a
//! second pass over the 6 MB of a large vocabulary.
//!
//! # Cost
//!
//! Measured with `benches/open_vs_llama.py` (whole processes, CPU time,
//! min of 30; a shared two-core virtual machine, in the same run as
//! llama.cpp's own reader, `gguf_init_from_file`):
//!
//! | header                                  | llama.cpp | map and copy      | positioned reads |
//! |-----------------------------------------|-----------|-------------------|------------------|
//! | Gemma 3 270M (262K tokens, 6.3 MB)      | see below | see below         | see below        |
//!
//! The figures are filled in by the measurement of this change.

use std::fs::File;

use super::header_copy::{HeaderBuf, HeaderCopy};
use super::incremental::{guess_header_end, HeaderParse};
use super::{Limits, Parsed};
use crate::error::{Error, Result};

/// The first read: the whole header of most small models, and enough of a
/// large vocabulary to guess the rest from.
const FIRST_READ: u64 = 256 << 10;

/// Read past the guessed end, so that a guess a little short does not cost
/// another read and a second parse of the entry it stopped in.
const MARGIN: u64 = 64 << 10;

/// Reads and parses the header region of `file` (`file_len` bytes long),
/// and returns it with the bytes up to the data section. The caller holds
/// the shared lock that this crate's in-place commits take exclusively.
pub(super) fn read_header(
    file: &File,
    file_len: u64,
    limits: &Limits,
) -> Result<(HeaderCopy, Parsed)> {
    let mut buf = HeaderBuf::new(file_len);
    let mut parse = HeaderParse::new(*limits);
    let mut end = FIRST_READ.min(file_len);
    loop {
        buf.read_to(file, to_usize(end)?)?;
        match parse.resume(buf.filled(), file_len) {
            Ok(parsed) => {
                // The padding up to the data section belongs to the header
                // region too (a rewrite copies it).
                buf.read_to(file, to_usize(parsed.data_offset.min(file_len))?)?;
                return Ok((buf.into_copy(), parsed));
            }
            Err(Error::Truncated { needed, .. }) if end < file_len => {
                let at_least = end.saturating_add(needed.max(1));
                let next = match guess_header_end(buf.filled(), &parse) {
                    Some(guess) => guess.saturating_add(MARGIN),
                    // A walk that cannot tell: grow by doublings.
                    None => end.saturating_mul(2),
                };
                end = next.max(at_least).min(file_len);
            }
            Err(e) => return Err(e),
        }
    }
}

fn to_usize(n: u64) -> Result<usize> {
    usize::try_from(n).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("a header region of {n} bytes does not fit in memory"),
        )
        .into()
    })
}
