//! Sources that cannot be read as asked.

/// What was to be opened cannot be read as asked: a URL or store entry that
/// cannot be used, or a source that returns fewer bytes than it holds.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// A URL or object-store path that cannot be used.
    #[error("{url}: {reason}")]
    BadUrl {
        /// The URL (without credentials).
        url: String,
        /// Why.
        reason: String,
    },
    /// An Ollama manifest (local or from a registry) that is missing or
    /// names no usable model blob.
    #[error("Ollama manifest {source_name}: {reason}")]
    BadManifest {
        /// The manifest's path or URL.
        source_name: String,
        /// Why.
        reason: String,
    },
    /// A positional read returned fewer bytes than asked although the
    /// source is longer (a source that shrank or misbehaves).
    #[error("{source_name}: read at offset {offset} returned {got} of {expected} bytes")]
    ShortRead {
        /// The source (file name or URL without credentials).
        source_name: String,
        /// Offset read.
        offset: u64,
        /// Bytes asked.
        expected: u64,
        /// Bytes received.
        got: u64,
    },
    /// A local input that is not a regular file after following symlinks
    /// (a FIFO would block the read forever, a device such as `/dev/zero`
    /// never ends): refused before it is read.
    #[error("{}: is {kind}, not a regular file", path.display())]
    NotRegularFile {
        /// The path as given.
        path: std::path::PathBuf,
        /// What it is ("a FIFO", "a character device", ...).
        kind: &'static str,
    },
    /// A JSON or text input larger than the reader accepts for it.
    #[error("{}: {len} bytes, more than the {limit} bytes accepted for this file", path.display())]
    TooLarge {
        /// The path as given.
        path: std::path::PathBuf,
        /// Its size (at least; a file that grew is stopped at the limit).
        len: u64,
        /// The limit.
        limit: u64,
    },
}

impl SourceError {
    /// The file, URL or store entry the error names, as a path (see
    /// [`Error::path`](super::Error::path)).
    pub(crate) fn path(&self) -> &std::path::Path {
        match self {
            SourceError::BadUrl { url, .. } => std::path::Path::new(url),
            SourceError::BadManifest { source_name, .. }
            | SourceError::ShortRead { source_name, .. } => std::path::Path::new(source_name),
            SourceError::NotRegularFile { path, .. } | SourceError::TooLarge { path, .. } => path,
        }
    }
}
