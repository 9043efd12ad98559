//! Tensor data that is not held: read on request, one range read per
//! tensor (or part of one), from a stream or a remote file.

#[cfg(feature = "remote")]
use std::future::Future;
#[cfg(feature = "remote")]
use std::pin::Pin;
#[cfg(feature = "remote")]
use std::time::Duration;

use crate::error::Result;

/// A boxed future of a range read.
#[cfg(feature = "remote")]
pub(crate) type ReadFuture<'s> = Pin<Box<dyn Future<Output = Result<Vec<u8>>> + Send + 's>>;

/// Where a header-only [`GgufFile`](super::GgufFile) gets tensor data.
pub(crate) trait RangeRead: Send + Sync {
    /// File bytes `offset..offset + len`; fewer only where the file ends.
    fn read_range(&self, offset: u64, len: u64) -> Result<Vec<u8>>;

    /// [`read_range`](Self::read_range) for async code: a remote file
    /// reads without blocking a thread; a stream reads at once.
    #[cfg(feature = "remote")]
    fn read_range_async(&self, offset: u64, len: u64) -> ReadFuture<'_> {
        Box::pin(std::future::ready(self.read_range(offset, len)))
    }

    /// Where the bytes come from, for messages (a URL redacted).
    fn name(&self) -> Option<&str> {
        None
    }

    /// What reading a remote file cost so far; `None` for a stream.
    #[cfg(feature = "remote")]
    fn stats(&self) -> Option<Stats> {
        None
    }

    /// The remote file's ETag, when its server sent one.
    #[cfg(feature = "remote")]
    fn etag(&self) -> Option<String> {
        None
    }
}

/// What reading a remote file cost so far (cargo feature `remote`).
#[cfg(feature = "remote")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Range requests sent (including ones that failed).
    pub requests: u64,
    /// Metadata requests sent: an object store's `HEAD`, an Ollama
    /// registry's manifest.
    pub head_requests: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Time spent in requests.
    pub elapsed: Duration,
}
