//! How a source is opened: [`OpenOptions`], passed as `&OpenOptions` to
//! every `*_with` opening function.

#[cfg(feature = "remote")]
use std::time::Duration;

use super::incremental::ReadOptions;
use super::Limits;

/// How [`Model::open_with`](crate::model::Model::open_with) and
/// [`GgufFile::open_with`](super::GgufFile::open_with) read a source: the
/// parser's [`Limits`], and with the `remote` feature the
/// [`RemoteOptions`] of URLs.
///
/// ```
/// use gguf_core::{read::Limits, OpenOptions};
/// let options = OpenOptions::default().limits(Limits::default().max_array_depth(2));
/// assert_eq!(options.limits.max_array_depth, 2);
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct OpenOptions {
    /// Bounds on what a file may ask of the reader, for every source.
    pub limits: Limits,
    /// How URLs are read (timeouts, deadline, chunking, token).
    #[cfg(feature = "remote")]
    pub remote: RemoteOptions,
}

impl OpenOptions {
    /// Sets [`limits`](Self::limits).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets [`remote`](Self::remote).
    #[cfg(feature = "remote")]
    pub fn remote(mut self, remote: RemoteOptions) -> Self {
        self.remote = remote;
        self
    }

    /// The header-read options of a remote source: the remote ones, with
    /// these limits.
    #[cfg(feature = "remote")]
    pub(crate) fn remote_read(&self) -> ReadOptions {
        self.remote.read.limits(self.limits)
    }

    /// The header-read options of a stream: 64 KiB steps (a stream is
    /// near), these limits.
    pub(crate) fn stream_read(&self) -> ReadOptions {
        ReadOptions::default().chunk(1 << 16).limits(self.limits)
    }
}

#[cfg(feature = "remote")]
/// Default [`RemoteOptions::header_deadline`]: 10 minutes.
pub const DEFAULT_HEADER_DEADLINE: Duration = Duration::from_secs(600);

#[cfg(feature = "remote")]
/// How remote files are read (cargo feature `remote`). Its
/// [`read`](Self::read) options' limits are replaced by
/// [`OpenOptions::limits`] when it is part of an [`OpenOptions`].
///
/// ```
/// use std::time::Duration;
/// use gguf_core::read::RemoteOptions;
/// let options = RemoteOptions::default().read_timeout(Duration::from_secs(5));
/// assert_eq!(options.connect_timeout, Duration::from_secs(10));
/// assert_eq!(options.header_deadline, Duration::from_secs(600));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// Chunking and limits of the header read.
    pub read: ReadOptions,
    /// Longest wait for a connection (default 10 s).
    pub connect_timeout: Duration,
    /// Longest silence while waiting for a response's headers or between
    /// two pieces of its body (default 30 s).
    pub read_timeout: Duration,
    /// Longest time reading a file's header may take, all its requests
    /// together (default 600 s, [`DEFAULT_HEADER_DEADLINE`]): the read
    /// timeout only counts silence, so a server sending a byte a second
    /// would otherwise hold the reader for days. Past it,
    /// [`RemoteError::Deadline`](crate::error::RemoteError::Deadline) says how many bytes arrived.
    pub header_deadline: Duration,
    /// Bearer token for `hf://` URLs (default: `HF_TOKEN` from the
    /// environment). Sent only to the Hub's host.
    pub hf_token: Option<String>,
}

#[cfg(feature = "remote")]
impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            read: ReadOptions::default(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            header_deadline: DEFAULT_HEADER_DEADLINE,
            hf_token: std::env::var("HF_TOKEN").ok().filter(|t| !t.is_empty()),
        }
    }
}

#[cfg(feature = "remote")]
impl RemoteOptions {
    /// Sets [`read`](Self::read).
    pub fn read(mut self, read: ReadOptions) -> Self {
        self.read = read;
        self
    }

    /// Sets [`connect_timeout`](Self::connect_timeout).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets [`read_timeout`](Self::read_timeout).
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// Sets [`header_deadline`](Self::header_deadline).
    pub fn header_deadline(mut self, deadline: Duration) -> Self {
        self.header_deadline = deadline;
        self
    }

    /// Sets [`hf_token`](Self::hf_token).
    pub fn hf_token(mut self, token: Option<String>) -> Self {
        self.hf_token = token;
        self
    }
}
