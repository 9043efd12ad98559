//! The one error type of the crate, [`Error`], and the groups it is made of.
//!
//! [`Error`] says which part of the crate failed (I/O, the file's format, a
//! lookup, the writer, the editor, the codecs, a split model, a source, a
//! remote read); the group inside says what exactly, with the offset, key,
//! tensor, file or URL. Every enum here is `#[non_exhaustive]`: a new
//! failure is a new variant, not a breaking change.
//!
//! ```
//! use gguf_core::{Error, error::{FormatError, LookupError}};
//!
//! let err = gguf_core::GgufFile::open(&b"GGUF\x03\x00\x00\x00"[..]).unwrap_err();
//! match err {
//!     Error::Format(FormatError::Truncated { offset, .. }) => assert_eq!(offset, 8),
//!     Error::Lookup(LookupError::KeyNotFound { key }) => panic!("no key {key}"),
//!     other => panic!("unexpected: {other}"),
//! }
//! ```

use std::path::{Path, PathBuf};

mod build;
mod codec;
mod edit;
mod format;
mod lookup;
#[cfg(feature = "remote")]
mod remote;
mod source;
mod split;
mod usage;

pub use build::BuildError;
pub use codec::CodecError;
pub use edit::EditError;
pub use format::FormatError;
pub use lookup::LookupError;
#[cfg(feature = "remote")]
pub use remote::RemoteError;
pub use source::SourceError;
pub use split::SplitError;
pub use usage::UsageError;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong reading, writing, editing or decoding GGUF.
///
/// Each variant names a group; the group's variant says what is wrong and
/// where: a byte `offset` from the start of the file, and the key, tensor,
/// file or URL when there is one. Match the group and then its variant
/// (see the [module](self) example); `Display` shows the inner message as is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error from the operating system, with the file it concerns
    /// when the library knows it (the file being opened, read, written or
    /// renamed, a temporary file, an edit journal or lock).
    #[error("{}", io_message(path.as_deref(), source))]
    Io {
        /// The file, when known.
        path: Option<PathBuf>,
        /// What the operating system reported.
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not valid GGUF (the hostile-input errors).
    #[error(transparent)]
    Format(#[from] FormatError),
    /// A key, tensor, type or data region asked for that the file does not
    /// have.
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// The writer refuses a key, a tensor or its data.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// An in-place edit cannot go on safely.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// A tensor codec or typed view failed.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// The shards of a split model do not fit together, or one failed.
    #[error(transparent)]
    Split(#[from] SplitError),
    /// A URL, store entry or source that cannot be read as asked.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// Reading over HTTP or from an object store failed.
    #[cfg(feature = "remote")]
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// The API was used out of order (a parser stepped after it finished):
    /// a mistake of the calling code, not of the file.
    #[error(transparent)]
    Usage(#[from] UsageError),
}

impl From<std::io::Error> for Error {
    /// An I/O error whose file is not known here; see [`Error::with_path`].
    fn from(source: std::io::Error) -> Self {
        Error::Io { path: None, source }
    }
}

impl Error {
    /// An I/O error about `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: Some(path.into()),
            source,
        }
    }

    /// Names `path` in an I/O error that names no file yet; any other
    /// error is returned unchanged.
    pub fn with_path(mut self, path: &Path) -> Self {
        if let Error::Io { path: p @ None, .. } = &mut self {
            *p = Some(path.to_owned());
        }
        self
    }

    /// The I/O error inside, if this is one.
    ///
    /// ```
    /// use gguf_core::Error;
    ///
    /// let err = gguf_core::GgufFile::open("no/such/model.gguf").unwrap_err();
    /// assert_eq!(err.io_error().map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));
    /// assert!(matches!(&err, Error::Io { path: Some(p), .. } if p.ends_with("model.gguf")));
    /// ```
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Names what was being read in an error that says so
    /// ([`Truncated`](FormatError::Truncated),
    /// [`CountTooLarge`](FormatError::CountTooLarge),
    /// [`InvalidUtf8`](FormatError::InvalidUtf8)) and does not yet: the wire
    /// codecs report where, their callers know what.
    pub(crate) fn what(mut self, name: impl FnOnce() -> String) -> Self {
        if let Error::Format(
            FormatError::Truncated { what, .. }
            | FormatError::CountTooLarge { what, .. }
            | FormatError::InvalidUtf8 { what, .. },
        ) = &mut self
            && what.is_empty()
        {
            *what = name();
        }
        self
    }
}

/// `path: I/O error: why`, or `I/O error: why` when no file is known.
fn io_message(path: Option<&Path>, source: &std::io::Error) -> String {
    match path {
        Some(path) => format!("{}: I/O error: {source}", path.display()),
        None => format!("I/O error: {source}"),
    }
}

/// A closure for `map_err` that names `path` in an I/O error.
pub(crate) fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::io(path, source)
}
