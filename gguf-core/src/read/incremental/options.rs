//! How an incremental header read proceeds: [`ReadOptions`] and its
//! defaults.

use crate::read::Limits;

#[cfg(doc)]
use crate::error::FormatError;

/// Default size of the first read and of the margin past the known part
/// of the header: 2 MiB, as the Hugging Face Hub's own GGUF parser uses.
pub const DEFAULT_CHUNK: u64 = 2 << 20;

/// Default [`ReadOptions::max_header_len`]: 1 GiB. Real headers are a few
/// MB; a lying header claiming more is refused before it is downloaded.
pub const DEFAULT_MAX_HEADER_LEN: u64 = 1 << 30;

/// How an incremental header read proceeds.
///
/// ```
/// use gguf_core::read::ReadOptions;
/// let options = ReadOptions::default().chunk(256 * 1024);
/// assert_eq!(options.chunk, 256 * 1024);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Size of the first read, and how far each later read goes past the
    /// end the header is known to reach at least (default [`DEFAULT_CHUNK`]).
    pub chunk: u64,
    /// The largest header region that will be read (default
    /// [`DEFAULT_MAX_HEADER_LEN`]); beyond it, [`FormatError::HeaderTooLarge`].
    pub max_header_len: u64,
    /// Parser limits, as for a local file.
    pub limits: Limits,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            chunk: DEFAULT_CHUNK,
            max_header_len: DEFAULT_MAX_HEADER_LEN,
            limits: Limits::default(),
        }
    }
}

impl ReadOptions {
    /// Sets [`chunk`](Self::chunk) (at least 1 byte).
    pub fn chunk(mut self, bytes: u64) -> Self {
        self.chunk = bytes.max(1);
        self
    }

    /// Sets [`max_header_len`](Self::max_header_len).
    pub fn max_header_len(mut self, bytes: u64) -> Self {
        self.max_header_len = bytes;
        self
    }

    /// Sets [`limits`](Self::limits).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}
