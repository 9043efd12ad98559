//! How a source is opened: [`OpenOptions`], passed as `&OpenOptions` to
//! every `*_with` opening function. It is the one place each limit of
//! opening is set: the parser's [`Limits`] for every source, and with the
//! `remote` feature how URLs are read (chunking, the largest header,
//! timeouts, the header deadline, the Hub token).

#[cfg(feature = "remote")]
use std::time::Duration;

use super::incremental::ReadOptions;
#[cfg(feature = "remote")]
use super::incremental::{DEFAULT_CHUNK, DEFAULT_MAX_HEADER_LEN};
use super::Limits;

/// How [`Model::open_with`](crate::model::Model::open_with) and
/// [`GgufFile::open_with`](super::GgufFile::open_with) read a source: the
/// parser's [`Limits`] for every source and, with the `remote` feature,
/// how URLs are read. Each setting has one field and one builder method.
///
/// ```
/// use gguf_core::{read::Limits, OpenOptions};
/// let options = OpenOptions::default().limits(Limits::default().max_array_depth(2));
/// assert_eq!(options.limits.max_array_depth, 2);
/// ```
///
/// With the `remote` feature:
///
/// ```
/// # #[cfg(feature = "remote")] {
/// use std::time::Duration;
/// use gguf_core::OpenOptions;
/// let options = OpenOptions::default().read_timeout(Duration::from_secs(5));
/// assert_eq!(options.connect_timeout, Duration::from_secs(10));
/// assert_eq!(options.header_deadline, Duration::from_secs(600));
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OpenOptions {
    /// Bounds on what a file may ask of the reader, for every source.
    pub limits: Limits,
    /// Size of the first read of a URL's header, and how far each later
    /// read goes past the end the header is known to reach at least
    /// (default [`DEFAULT_CHUNK`](crate::read::DEFAULT_CHUNK), 2 MiB).
    #[cfg(feature = "remote")]
    pub chunk: u64,
    /// The largest header region read from a URL (default
    /// [`DEFAULT_MAX_HEADER_LEN`](crate::read::DEFAULT_MAX_HEADER_LEN), 1 GiB);
    /// beyond it,
    /// [`FormatError::HeaderTooLarge`](crate::error::FormatError::HeaderTooLarge).
    #[cfg(feature = "remote")]
    pub max_header_len: u64,
    /// Longest wait for a connection (default 10 s).
    #[cfg(feature = "remote")]
    pub connect_timeout: Duration,
    /// Longest silence while waiting for a response's headers or between
    /// two pieces of its body (default 30 s).
    #[cfg(feature = "remote")]
    pub read_timeout: Duration,
    /// Longest time reading a file's header may take, all its requests
    /// together (default 600 s, [`DEFAULT_HEADER_DEADLINE`]): the read
    /// timeout only counts silence, so a server sending a byte a second
    /// would otherwise hold the reader for days. Past it,
    /// [`RemoteError::Deadline`](crate::error::RemoteError::Deadline) says how many bytes arrived.
    #[cfg(feature = "remote")]
    pub header_deadline: Duration,
    /// Bearer token for `hf://` URLs (default: `HF_TOKEN` from the
    /// environment). Sent only to the Hub's host.
    #[cfg(feature = "remote")]
    pub hf_token: Option<String>,
}

// Without `remote` only `limits` is left, and a derive would do; with it,
// the remote defaults are not the types' own.
#[cfg_attr(not(feature = "remote"), allow(clippy::derivable_impls))]
impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            limits: Limits::default(),
            #[cfg(feature = "remote")]
            chunk: DEFAULT_CHUNK,
            #[cfg(feature = "remote")]
            max_header_len: DEFAULT_MAX_HEADER_LEN,
            #[cfg(feature = "remote")]
            connect_timeout: Duration::from_secs(10),
            #[cfg(feature = "remote")]
            read_timeout: Duration::from_secs(30),
            #[cfg(feature = "remote")]
            header_deadline: DEFAULT_HEADER_DEADLINE,
            #[cfg(feature = "remote")]
            hf_token: std::env::var("HF_TOKEN").ok().filter(|t| !t.is_empty()),
        }
    }
}

impl OpenOptions {
    /// Sets [`limits`](Self::limits).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets [`chunk`](Self::chunk) (at least 1 byte).
    #[cfg(feature = "remote")]
    pub fn chunk(mut self, bytes: u64) -> Self {
        self.chunk = bytes.max(1);
        self
    }

    /// Sets [`max_header_len`](Self::max_header_len).
    #[cfg(feature = "remote")]
    pub fn max_header_len(mut self, bytes: u64) -> Self {
        self.max_header_len = bytes;
        self
    }

    /// Sets [`connect_timeout`](Self::connect_timeout).
    #[cfg(feature = "remote")]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets [`read_timeout`](Self::read_timeout).
    #[cfg(feature = "remote")]
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// Sets [`header_deadline`](Self::header_deadline).
    #[cfg(feature = "remote")]
    pub fn header_deadline(mut self, deadline: Duration) -> Self {
        self.header_deadline = deadline;
        self
    }

    /// Sets [`hf_token`](Self::hf_token).
    #[cfg(feature = "remote")]
    pub fn hf_token(mut self, token: Option<String>) -> Self {
        self.hf_token = token;
        self
    }

    /// The header-read options of a remote source: its chunking and
    /// largest header, these limits.
    #[cfg(feature = "remote")]
    pub(crate) fn remote_read(&self) -> ReadOptions {
        ReadOptions::default()
            .chunk(self.chunk)
            .max_header_len(self.max_header_len)
            .limits(self.limits)
    }

    /// The header-read options of a stream: 64 KiB steps (a stream is
    /// near), these limits.
    pub(crate) fn stream_read(&self) -> ReadOptions {
        ReadOptions::default().chunk(1 << 16).limits(self.limits)
    }
}

#[cfg(feature = "remote")]
/// Default [`OpenOptions::header_deadline`]: 10 minutes.
pub const DEFAULT_HEADER_DEADLINE: Duration = Duration::from_secs(600);
