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
/// use gguf_core::Source;
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
///
/// # URLs (cargo feature `remote`)
///
/// Where a file can be:
/// - `http://…`, `https://…`: HTTP range requests;
/// - `hf://OWNER/REPO/PATH.gguf[@REVISION]`: a file of a Hugging Face Hub
///   repository (`https://huggingface.co/OWNER/REPO/resolve/REVISION/PATH`,
///   revision `main` by default; the host can be changed with
///   `HF_ENDPOINT`), with the token of `HF_TOKEN` when set;
/// - `s3://BUCKET/KEY`, `gs://BUCKET/KEY`, `az://CONTAINER/KEY` (also
///   `abfs://`, `adl://`, `azure://`): object stores through the
///   `object_store` crate, configured from the environment as its
///   `from_env` builders read it (for S3: `AWS_ENDPOINT` or
///   `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, `AWS_REGION`,
///   `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, ...);
/// - `ms://OWNER/REPO/PATH[@REVISION]`: a file of a ModelScope repository
///   (`https://modelscope.cn/models/OWNER/REPO/resolve/REVISION/PATH`,
///   revision `master` by default; the host can be changed with
///   `MODELSCOPE_ENDPOINT`);
/// - `ollama://HOST/[NAMESPACE/]MODEL[:TAG]`: a model in an Ollama (OCI
///   distribution) registry, e.g.
///   `ollama://registry.ollama.ai/library/gemma3:270m` (namespace
///   `library` and tag `latest` by default): one GET of its manifest, then
///   range reads of its model blob; HTTPS, plain HTTP only to a loopback
///   host; anonymous access only.
///
/// A model pulled into the local Ollama store is a local file:
/// [`ollama_model_path`](crate::read::ollama_model_path) finds it
/// (`ollama:NAME[:TAG]`), without this feature.
///
/// Opening a URL needs nothing else: [`Model::open`] and
/// [`GgufFile::open`] take one like any other source, and
/// [`Tensor::read`] fetches a tensor's bytes.
///
/// What it costs: the header is parsed by [`HeaderParser`](crate::read::HeaderParser)
/// from range reads, the first one [`OpenOptions::chunk`](crate::read::OpenOptions) bytes (2 MiB),
/// later ones only as the header needs them; a tensor (or a byte range of
/// it, or some of its rows) is one more range read. Object stores add one
/// `HEAD` request first, for the object's size and ETag.
///
/// What is checked on every response: the status (206; a `200` carrying
/// the whole body is refused after reading no more than was asked), the
/// `Content-Range` against the range asked, the body's length, and the
/// file's identity (ETag, Last-Modified and size equal to the first
/// response's, so a file replaced between two reads is an error, not a
/// mix of two files).
///
/// Credentials are never printed: every URL shown (messages, `Debug`,
/// [`Origin`](crate::model::Origin)) goes through [`redact_url`](crate::read::redact_url) (user info
/// dropped, query values replaced), and text from a server in an error
/// (an object store's error body) is stripped of anything that looks
/// like a credential, its control characters escaped, and cut to a few
/// hundred bytes. Nor are they sent to another origin: redirects are
/// followed here, no request carries `Referer`, and a redirect that
/// changes scheme, host or port keeps only `Range`, the conditional
/// headers, `Accept` and `User-Agent` (no `Authorization`,
/// `x-amz-security-token`, `x-ms-*`, cookie or token). An `ollama://`
/// registry's redirect to plain HTTP on a host other than loopback is
/// refused (`RemoteError::RedirectRefused`).
///
/// Timeouts ([`OpenOptions`](crate::read::OpenOptions)): 10 s to connect, 30 s of silence while
/// waiting for a response or between two pieces of a body; a stalled
/// server is a `RemoteError::Timeout`, not a hang. A whole header read has a
/// deadline (600 s by default): a server trickling bytes is an
/// `RemoteError::Deadline` saying how many arrived.
///
/// ```no_run
/// use gguf_core::Gguf;
/// # #[cfg(not(feature = "remote"))] fn main() {}
/// # #[cfg(feature = "remote")]
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::Model;
/// let model = Model::open("hf://Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf")?;
/// println!("{}", model.get_str("general.architecture")?);
/// let first_rows = model.tensor("token_embd.weight")?.read_rows_f32(0..2)?;
/// let stats = model.shards()[0].file().remote_stats().unwrap_or_default();
/// eprintln!("{} requests, {} bytes", stats.requests, stats.bytes);
/// # Ok(()) }
/// ```
///
/// [`Model::open`]: crate::model::Model::open
/// [`GgufFile::open`]: crate::read::GgufFile::open
/// [`Tensor::read`]: crate::read::Tensor::read
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
    /// use gguf_core::{Source, GgufFile};
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
