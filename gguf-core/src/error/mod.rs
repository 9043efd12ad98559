//! The one error type of the crate, [`Error`], and the groups it is made of.
//!
//! [`Error`] says which part of the crate failed (I/O, the file's format, a
//! lookup, the writer, the editor, the codecs, a split model, a source, a
//! remote read); the group inside says what exactly, with the offset, key,
//! tensor, file or URL. Every enum here is `#[non_exhaustive]`: a new
//! failure is a new variant, not a breaking change.
//!
//! An error met in a file opened by path names it once, the same way at
//! every door ([`GgufFile::open`](crate::GgufFile::open),
//! [`Model::open`](crate::Model::open), any shard of a split model): an I/O
//! error holds the path itself ([`Error::Io`]), any other error that does
//! not name a file is wrapped in [`Error::File`]. [`Error::path`] and
//! [`Error::offset`] say which file and where in it without reading the
//! message; [`Error::detail`] is the error inside the file context, to
//! match on.
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
    /// An error met in the file at `path` (opened by path, a shard of a
    /// model, a shard being written), whose `source` does not name the file
    /// itself. Shown as `path: source`, the file named once.
    #[error("{}", file_message(path, source))]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong in it.
        #[source]
        source: Box<Error>,
    },
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

    /// Names the file at `path` in this error, once: an I/O error that
    /// names no file gets it as its path; an error that names a file (or a
    /// URL) already is returned unchanged; any other is wrapped in
    /// [`Error::File`]. This is how every door attaches the file it opened.
    ///
    /// ```
    /// use gguf_core::{Error, error::FormatError};
    /// use std::path::Path;
    ///
    /// let e = Error::from(FormatError::EmptyKey { offset: 24 }).in_file(Path::new("m.gguf"));
    /// assert_eq!(e.to_string(), "m.gguf: reading metadata: empty key at offset 24");
    /// // Already named: unchanged, the file named once.
    /// let e = e.in_file(Path::new("m.gguf"));
    /// assert_eq!(e.path(), Some(Path::new("m.gguf")));
    /// assert_eq!(e.to_string().matches("m.gguf").count(), 1);
    /// ```
    pub fn in_file(self, path: &Path) -> Self {
        match self {
            Error::Io { path: None, source } => Error::io(path, source),
            e if e.path().is_some() => e,
            e => Error::File {
                path: path.to_owned(),
                source: Box::new(e),
            },
        }
    }

    /// The error inside the file context: the `source` of an
    /// [`Error::File`] (the file it happened in is [`path`](Self::path)),
    /// this error itself otherwise. Match on it to tell kinds of failure
    /// apart whichever door the file was opened through.
    ///
    /// ```
    /// use gguf_core::{Error, error::FormatError};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("bad.gguf");
    /// std::fs::write(&path, b"GGUX\x03\x00\x00\x00")?;
    /// let err = gguf_core::GgufFile::open(&path).unwrap_err();
    /// assert!(matches!(err.detail(), Error::Format(FormatError::BadMagic { .. })));
    /// assert_eq!(err.path(), Some(path.as_path()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn detail(&self) -> &Error {
        match self {
            Error::File { source, .. } => source.detail(),
            other => other,
        }
    }

    /// The file this error names: the path of an I/O error or of
    /// [`Error::File`], or the file, shard, journal or output a group's
    /// variant names. A URL (held without credentials) or a store entry is
    /// given as its text, as [`Origin`](crate::model::Origin)s are in
    /// errors. `None` when no file is known (bytes in memory, a stream, a
    /// lookup in a file already open).
    ///
    /// ```
    /// use std::path::Path;
    ///
    /// let err = gguf_core::Model::open("no/such/model.gguf").unwrap_err();
    /// assert_eq!(err.path(), Some(Path::new("no/such/model.gguf")));
    /// let err = gguf_core::GgufFile::open(&b"GGUF"[..]).unwrap_err();
    /// assert_eq!(err.path(), None);
    /// ```
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::Io { path, .. } => path.as_deref(),
            Error::File { path, .. } => Some(path),
            Error::Codec(CodecError::TensorCodec { source, .. }) => source.path(),
            Error::Format(_) | Error::Lookup(_) | Error::Codec(_) | Error::Usage(_) => None,
            Error::Build(e) => e.path(),
            Error::Edit(e) => Some(e.path()),
            Error::Split(e) => e.path(),
            Error::Source(e) => Some(e.path()),
            #[cfg(feature = "remote")]
            Error::Remote(e) => Some(e.path()),
        }
    }

    /// The byte offset from the start of the file that the error names:
    /// where a [`FormatError`] found the fault, where a short read began
    /// ([`SourceError::ShortRead`]), through the file context and a
    /// tensor codec's error to the error inside. `None` when the error is
    /// not about a place in the file.
    ///
    /// ```
    /// let err = gguf_core::GgufFile::open(&b"GGUF\x03\x00\x00\x00"[..]).unwrap_err();
    /// assert_eq!(err.offset(), Some(8));
    /// let err = gguf_core::GgufFile::open(&b"GGUX\x03\x00\x00\x00"[..]).unwrap_err();
    /// assert_eq!(err.offset(), Some(0));
    /// ```
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Format(e) => e.offset(),
            Error::Source(SourceError::ShortRead { offset, .. }) => Some(*offset),
            Error::Codec(CodecError::TensorCodec { source, .. }) => source.offset(),
            Error::File { source, .. } => source.offset(),
            _ => None,
        }
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

/// `path: what went wrong`, without naming the path twice when the error
/// inside is an I/O error that already names it.
fn file_message(path: &Path, source: &Error) -> String {
    match source {
        Error::Io { path: Some(p), .. } if p == path => source.to_string(),
        _ => format!("{}: {source}", path.display()),
    }
}

/// A closure for `map_err` that names `path` in an I/O error.
pub(crate) fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::io(path, source)
}
