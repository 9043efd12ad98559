//! [`Origin`]: where a shard of a [`Model`](super::Model) was read from.

use std::path::{Path, PathBuf};

/// Where a shard was read from, as [`Shard::origin`](super::Shard::origin)
/// reports it. Its `Display` shows a path as it is and a URL without
/// credentials (it is held redacted).
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// use gguf_core::model::{Model, Origin};
/// let model = Model::open(&bytes)?;
/// assert_eq!(model.shards()[0].origin(), &Origin::Bytes);
/// assert_eq!(model.shards()[0].origin().path(), None);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// A local file (given, or found as a sibling shard).
    Path(PathBuf),
    /// A URL, redacted ([`redact_url`](crate::read::redact_url)): no user
    /// info, query values replaced.
    Url(String),
    /// Bytes in memory.
    Bytes,
    /// A `Read + Seek` stream.
    Stream,
}

impl Origin {
    /// The local file, when the shard is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Origin::Path(p) => Some(p),
            _ => None,
        }
    }

    /// The URL (redacted), when the shard was read from one.
    pub fn url(&self) -> Option<&str> {
        match self {
            Origin::Url(u) => Some(u),
            _ => None,
        }
    }

    /// The origin as the path of an error (errors name files by path; a
    /// URL is held there as its redacted text).
    pub(crate) fn error_path(&self) -> PathBuf {
        match self {
            Origin::Path(p) => p.clone(),
            other => PathBuf::from(other.to_string()),
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Path(p) => write!(f, "{}", p.display()),
            Origin::Url(u) => f.write_str(u),
            Origin::Bytes => f.write_str("<memory>"),
            Origin::Stream => f.write_str("<stream>"),
        }
    }
}
