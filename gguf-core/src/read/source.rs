//! [`Source`]: what can be opened, the one argument of every opening
//! function ([`Model::open`](crate::model::Model::open),
//! [`GgufFile::open`](super::GgufFile::open)).

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use super::url::{is_known_url, looks_like_url, redact_url};

/// What a model or file is read from.
///
/// Anything that converts into a `Source` can be opened: a path
/// (`&Path`, `PathBuf`), a string (`&str`, `String`), the bytes of a
/// whole file (`&[u8]`, `&Vec<u8>`, `&[u8; N]`). A string is read as:
/// - a URL when it starts with a scheme this crate reads: `http://`,
///   `https://`, `hf://`, `ms://`, `ollama://`, `s3://`, `gs://`, `az://`
///   (also `s3a://`, `abfs://`, `abfss://`, `adl://`, `azure://`);
/// - an entry of the local Ollama store when it is `ollama:NAME[:TAG]`
///   (no `//`);
/// - a local path otherwise. [`Source::path`] forces a path, for a file
///   whose name looks like a URL or starts with `ollama:`.
///
/// A URL is never held in a `PathBuf`. Reading one needs the cargo feature
/// `remote`; without it, opening one is an error saying so.
///
/// ```
/// use gguf_core::read::Source;
/// assert!(matches!(Source::from("models/m.gguf"), Source::Path(_)));
/// assert!(matches!(Source::from("hf://owner/repo/m.gguf"), Source::Url(_)));
/// assert!(matches!(Source::from("ollama:gemma3:270m"), Source::Ollama(_)));
/// assert!(matches!(Source::path("hf://not-a-url"), Source::Path(_)));
/// let bytes = vec![0u8; 4];
/// assert!(matches!(Source::from(&bytes), Source::Bytes(_)));
/// // Shown without credentials.
/// assert_eq!(
///     Source::from("https://user:pw@host/m.gguf?sig=abc").to_string(),
///     "https://host/m.gguf?sig=REDACTED"
/// );
/// ```
#[non_exhaustive]
pub enum Source<'a> {
    /// A local file (any shard of a split model, for
    /// [`Model::open`](crate::model::Model::open)).
    Path(PathBuf),
    /// A whole file held in memory, borrowed.
    Bytes(&'a [u8]),
    /// A seekable stream: its header region is read, and each tensor's
    /// data on request ([`Tensor::read`](super::Tensor::read)).
    Reader(Stream),
    /// A URL (see the type's docs for the schemes), as given: it may hold
    /// credentials, so it is shown only redacted ([`redact_url`]).
    Url(String),
    /// A model of the local Ollama store: `ollama:NAME[:TAG]`, as given.
    Ollama(String),
}

/// A boxed `Read + Seek` stream, for [`Source::Reader`].
pub struct Stream(pub(crate) Box<dyn ReadSeek + Send>);

/// `Read + Seek`, nameable as one object type.
pub(crate) trait ReadSeek: Read + Seek {}

impl<T: Read + Seek> ReadSeek for T {}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stream")
    }
}

impl<'a> Source<'a> {
    /// A local path, whatever it looks like (a file named `ollama:x` or
    /// `s3://x` in the current directory).
    pub fn path(path: impl Into<PathBuf>) -> Self {
        Source::Path(path.into())
    }

    /// A URL, whatever its scheme (an unsupported one is refused when
    /// opened, naming the URL without credentials).
    pub fn url(url: impl Into<String>) -> Self {
        Source::Url(url.into())
    }

    /// The bytes of a whole file.
    pub fn bytes(bytes: &'a [u8]) -> Self {
        Source::Bytes(bytes)
    }

    /// A seekable stream; offsets count from its position when opened,
    /// so a GGUF file embedded in a larger stream works.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::{read::Source, GgufFile};
    /// let file = GgufFile::open(Source::reader(std::io::Cursor::new(bytes)))?;
    /// let t = file.tensor("output.weight")?;
    /// assert_eq!(t.read()?.len() as u64, t.byte_size()?); // one read of the stream
    /// # Ok(()) }
    /// ```
    pub fn reader(reader: impl Read + Seek + Send + 'static) -> Self {
        Source::Reader(Stream(Box::new(reader)))
    }

    /// A model of the local Ollama store, `NAME[:TAG]` with or without
    /// the `ollama:` prefix.
    pub fn ollama(name: &str) -> Self {
        match name.strip_prefix("ollama:") {
            Some(_) => Source::Ollama(name.to_owned()),
            None => Source::Ollama(format!("ollama:{name}")),
        }
    }

    /// True for a URL.
    pub fn is_url(&self) -> bool {
        matches!(self, Source::Url(_))
    }

    /// True for a local file given by path.
    pub fn is_path(&self) -> bool {
        matches!(self, Source::Path(_))
    }
}

impl std::fmt::Display for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Path(p) => write!(f, "{}", p.display()),
            Source::Bytes(b) => write!(f, "<{} bytes in memory>", b.len()),
            Source::Reader(_) => f.write_str("<stream>"),
            Source::Url(u) => f.write_str(&redact_url(u)),
            Source::Ollama(n) => f.write_str(n),
        }
    }
}

impl std::fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Redacted as Display is: a URL may carry a token.
        write!(f, "Source({self})")
    }
}

impl From<&str> for Source<'_> {
    fn from(s: &str) -> Self {
        if is_known_url(s) || looks_like_url(s) {
            Source::Url(s.to_owned())
        } else if s.starts_with("ollama:") {
            Source::Ollama(s.to_owned())
        } else {
            Source::Path(PathBuf::from(s))
        }
    }
}

impl From<String> for Source<'_> {
    fn from(s: String) -> Self {
        match Source::from(s.as_str()) {
            Source::Path(_) => Source::Path(PathBuf::from(s)),
            other => other,
        }
    }
}

impl From<&String> for Source<'_> {
    fn from(s: &String) -> Self {
        Source::from(s.as_str())
    }
}

impl From<&Path> for Source<'_> {
    fn from(p: &Path) -> Self {
        Source::Path(p.to_owned())
    }
}

impl From<PathBuf> for Source<'_> {
    fn from(p: PathBuf) -> Self {
        Source::Path(p)
    }
}

impl From<&PathBuf> for Source<'_> {
    fn from(p: &PathBuf) -> Self {
        Source::Path(p.clone())
    }
}

impl<'a> From<&'a [u8]> for Source<'a> {
    fn from(b: &'a [u8]) -> Self {
        Source::Bytes(b)
    }
}

impl<'a> From<&'a Vec<u8>> for Source<'a> {
    fn from(b: &'a Vec<u8>) -> Self {
        Source::Bytes(b)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Source<'a> {
    fn from(b: &'a [u8; N]) -> Self {
        Source::Bytes(b)
    }
}

impl From<Stream> for Source<'_> {
    fn from(s: Stream) -> Self {
        Source::Reader(s)
    }
}
