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
}
