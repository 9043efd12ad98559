//! Reading GGUF files that sit behind a URL or in an object store, at the
//! cost of their header, and single tensors at the cost of their bytes
//! (cargo feature `remote`).
//!
//! Where a file can be:
//! - `http://…`, `https://…`: HTTP range requests;
//! - `hf://OWNER/REPO/PATH.gguf[@REVISION]`: a file of a Hugging Face Hub
//!   repository (`https://huggingface.co/OWNER/REPO/resolve/REVISION/PATH`,
//!   revision `main` by default; the host can be changed with
//!   `HF_ENDPOINT`), with the token of `HF_TOKEN` when set;
//! - `s3://BUCKET/KEY`, `gs://BUCKET/KEY`, `az://CONTAINER/KEY` (also
//!   `abfs://`, `adl://`, `azure://`): object stores through the
//!   `object_store` crate, configured from the environment as its
//!   `from_env` builders read it (for S3: `AWS_ENDPOINT` or
//!   `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, `AWS_REGION`,
//!   `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, ...);
//! - `ms://OWNER/REPO/PATH[@REVISION]`: a file of a ModelScope repository
//!   (`https://modelscope.cn/models/OWNER/REPO/resolve/REVISION/PATH`,
//!   revision `master` by default; the host can be changed with
//!   `MODELSCOPE_ENDPOINT`);
//! - `ollama://HOST/[NAMESPACE/]MODEL[:TAG]`: a model in an Ollama (OCI
//!   distribution) registry, e.g.
//!   `ollama://registry.ollama.ai/library/gemma3:270m` (namespace
//!   `library` and tag `latest` by default): one GET of its manifest, then
//!   range reads of its model blob; HTTPS, plain HTTP only to a loopback
//!   host; anonymous access only.
//!
//! A model pulled into the local Ollama store is a local file:
//! [`ollama_model_path`] finds it (`ollama:NAME[:TAG]`).
//!
//! What it costs: the header is parsed by [`HeaderParser`]
//! from range reads, the first one [`ReadOptions::chunk`] bytes (2 MiB),
//! later ones only as the header needs them; a tensor (or a byte range of
//! it, or some of its rows) is one more range read. Object stores add one
//! `HEAD` request first, for the object's size and ETag.
//!
//! What is checked on every response: the status (206; a `200` carrying
//! the whole body is refused after reading no more than was asked), the
//! `Content-Range` against the range asked, the body's length, and the
//! file's identity (ETag, Last-Modified and size equal to the first
//! response's, so a file replaced between two reads is an error, not a
//! mix of two files).
//!
//! Credentials are never printed: every URL shown (messages, `Debug`,
//! [`AsyncRemoteFile::url`]) goes through [`redact_url`] (user info
//! dropped, query values replaced), and text from a server in an error
//! (an object store's error body) is stripped of anything that looks
//! like a credential, its control characters escaped, and cut to a few
//! hundred bytes. Nor are they sent to another origin: redirects are
//! followed here, no request carries `Referer`, and a redirect that
//! changes scheme, host or port keeps only `Range`, the conditional
//! headers, `Accept` and `User-Agent` (no `Authorization`,
//! `x-amz-security-token`, `x-ms-*`, cookie or token). An `ollama://`
//! registry's redirect to plain HTTP on a host other than loopback is
//! refused ([`RemoteError::RedirectRefused`]).
//!
//! Timeouts ([`RemoteOptions`]): 10 s to connect, 30 s of silence while
//! waiting for a response or between two pieces of a body; a stalled
//! server is a [`RemoteError::Timeout`], not a hang. A whole header read has a
//! deadline (600 s by default): a server trickling bytes is an
//! [`RemoteError::Deadline`] saying how many arrived.
//!
//! ```no_run
//! use gguf_core::Gguf;
//! # fn main() -> gguf_core::Result<()> {
//! use gguf_core::remote::RemoteFile;
//! let remote = RemoteFile::open("hf://Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf")?;
//! println!("{}", remote.file().get_str("general.architecture")?);
//! let first_rows = remote.tensor_rows_f32("token_embd.weight", 0..2)?;
//! eprintln!("{} requests, {} bytes", remote.stats().requests, remote.stats().bytes);
//! # Ok(()) }
//! ```

mod backend;
mod http;
mod location;
mod ollama;
mod redact;
mod redirect;
mod split;
mod store;
mod store_http;

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{BuildError, CodecError, Error, LookupError, RemoteError, Result, SourceError};
use crate::read::{Gguf, GgufFile, HeaderParser, ReadOptions, Step};

use backend::Backend;
pub use location::is_remote;
use location::Location;
pub use ollama::{is_ollama_store, ollama_model_path, MODEL_MEDIA_TYPE};
pub use redact::redact_url;
pub use split::{open_shards, open_shards_async, shard_file_names};

/// Default [`RemoteOptions::header_deadline`]: 10 minutes.
pub const DEFAULT_HEADER_DEADLINE: Duration = Duration::from_secs(600);

/// How remote files are read.
///
/// ```
/// use std::time::Duration;
/// use gguf_core::remote::RemoteOptions;
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
    /// [`RemoteError::Deadline`] says how many bytes arrived.
    pub header_deadline: Duration,
    /// Bearer token for `hf://` URLs (default: `HF_TOKEN` from the
    /// environment). Sent only to the Hub's host.
    pub hf_token: Option<String>,
}

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

/// What reading a remote file cost so far.
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

/// A remote GGUF file whose header region has been read (async).
///
/// [`file`](Self::file) offers the same metadata and tensor-info API as a
/// local file; tensor data is fetched on request, one range read each.
pub struct AsyncRemoteFile {
    backend: Arc<Backend>,
    file: GgufFile<'static>,
}

impl std::fmt::Debug for AsyncRemoteFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncRemoteFile")
            .field("url", &self.backend.display())
            .field("file", &self.file)
            .finish()
    }
}

impl AsyncRemoteFile {
    /// Reads the header region of the file at `url` (see the [module
    /// docs](self) for the URL forms).
    pub async fn open(url: &str, options: &RemoteOptions) -> Result<Self> {
        let (location, lookups) = Location::parse(url, options)?.resolve(options).await?;
        let backend = Arc::new(Backend::new(&location, options)?);
        backend.count_metadata_requests(lookups);
        Self::open_backend(backend, options, None).await
    }

    /// Reads the header through `backend`, the first read `first_read`
    /// bytes (default: one chunk), within the header deadline.
    pub(crate) async fn open_backend(
        backend: Arc<Backend>,
        options: &RemoteOptions,
        first_read: Option<u64>,
    ) -> Result<Self> {
        let started = Instant::now();
        let read = Self::read_header(backend.clone(), options, first_read);
        match tokio::time::timeout(options.header_deadline, read).await {
            Ok(r) => r,
            Err(_) => Err(Error::Remote(RemoteError::Deadline {
                url: backend.display().into(),
                deadline: options.header_deadline,
                received: backend.stats().bytes,
                elapsed: started.elapsed(),
            })),
        }
    }

    async fn read_header(
        backend: Arc<Backend>,
        options: &RemoteOptions,
        first_read: Option<u64>,
    ) -> Result<Self> {
        let mut parser = HeaderParser::new(options.read);
        if let Some(len) = first_read {
            parser = parser.first_read(len);
        }
        loop {
            match parser.step()? {
                Step::Read { offset, len } => {
                    let (bytes, size) = backend.read(offset, len).await?;
                    parser.push(bytes, size).map_err(|e| match e {
                        Error::Source(SourceError::ShortRead {
                            offset,
                            expected,
                            got,
                            ..
                        }) => Error::Remote(RemoteError::ShortBody {
                            url: backend.display().into(),
                            offset,
                            expected,
                            got,
                        }),
                        e => e,
                    })?;
                }
                Step::Done(file) => {
                    return Ok(AsyncRemoteFile {
                        backend,
                        file: *file,
                    })
                }
            }
        }
    }

    /// The header: metadata and tensor infos, as for a local file
    /// (tensor data is not held: use the fetch methods).
    pub fn file(&self) -> &GgufFile<'static> {
        &self.file
    }

    /// The URL, without credentials.
    pub fn url(&self) -> &str {
        self.backend.display()
    }

    /// Requests, bytes and time spent so far.
    pub fn stats(&self) -> Stats {
        self.backend.stats()
    }

    /// The ETag of the file, when the server sent one.
    pub fn etag(&self) -> Option<String> {
        self.backend.etag()
    }

    /// A tensor's bytes, by one range read.
    pub async fn tensor_bytes(&self, name: &str) -> Result<Vec<u8>> {
        let size = self.file.tensor(name)?.byte_size()?;
        self.tensor_range(name, 0..size).await
    }

    /// Bytes `range` of a tensor's data (relative to its start), by one
    /// range read.
    pub async fn tensor_range(&self, name: &str, range: Range<u64>) -> Result<Vec<u8>> {
        let t = self.file.tensor(name)?;
        let size = t.byte_size()?;
        if range.start > range.end || range.end > size {
            return Err(Error::Build(BuildError::InvalidTensor {
                tensor: name.into(),
                reason: format!(
                    "byte range {}..{} is outside its {size} bytes",
                    range.start, range.end
                ),
            }));
        }
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let start = t.file_offset() + range.start;
        let len = range.end - range.start;
        let (bytes, _) = self.backend.read(start, len).await?;
        if bytes.len() as u64 != len {
            return Err(Error::Remote(RemoteError::ShortBody {
                url: self.url().into(),
                offset: start,
                expected: len,
                got: bytes.len() as u64,
            }));
        }
        Ok(bytes)
    }

    /// Rows `rows` of a tensor (rows of `shape()[0]` elements) decoded to
    /// `f32`, by one range read.
    pub async fn tensor_rows_f32(&self, name: &str, rows: Range<u64>) -> Result<Vec<f32>> {
        let (bytes, ty, endian, count) = {
            let t = self.file.tensor(name)?;
            let (range, count) = row_bytes(&t, &rows)?;
            (
                self.tensor_range(name, range).await?,
                t.ggml_type(),
                t.file_endian(),
                count,
            )
        };
        let mut out = vec![0f32; count];
        crate::tensor::dequantize_par(ty, endian, &bytes, &mut out).map_err(|e| {
            Error::Codec(CodecError::TensorCodec {
                tensor: name.into(),
                source: Box::new(e),
            })
        })?;
        Ok(out)
    }

    /// The header plus one tensor's data, as a [`GgufFile`] on which that
    /// tensor's [`Tensor::data`](crate::Tensor::data) and decoders work
    /// (other tensors' data is not loaded). One range read.
    pub async fn with_tensor(&self, name: &str) -> Result<GgufFile<'static>> {
        let t = self.file.tensor(name)?;
        let start = usize::try_from(t.file_offset()).map_err(|_| {
            Error::Lookup(LookupError::DataNotLoaded {
                tensor: name.into(),
            })
        })?;
        let bytes = self.tensor_bytes(name).await?;
        Ok(self.file.with_window(start, bytes))
    }
}

/// The byte range and element count of rows `rows` of tensor `t`.
fn row_bytes(t: &crate::read::Tensor<'_>, rows: &Range<u64>) -> Result<(Range<u64>, usize)> {
    let size = t.byte_size()?;
    let row_len = t.shape().first().copied().unwrap_or(1);
    let n_rows = t.element_count().checked_div(row_len).unwrap_or(0);
    if rows.start > rows.end || rows.end > n_rows {
        return Err(Error::Build(BuildError::InvalidTensor {
            tensor: t.name().into(),
            reason: format!(
                "rows {}..{} are outside its {n_rows} rows",
                rows.start, rows.end
            ),
        }));
    }
    let row_size = size.checked_div(n_rows).unwrap_or(0);
    let count = (rows.end - rows.start)
        .checked_mul(row_len)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            Error::Build(BuildError::InvalidTensor {
                tensor: t.name().into(),
                reason: "too many elements for this machine".into(),
            })
        })?;
    Ok((rows.start * row_size..rows.end * row_size, count))
}

/// A remote GGUF file whose header region has been read: the blocking
/// facade over [`AsyncRemoteFile`], for synchronous code and the CLI.
///
/// ```no_run
/// use gguf_core::Gguf;
/// # fn main() -> gguf_core::Result<()> {
/// let remote = gguf_core::remote::RemoteFile::open("s3://models/llama.gguf")?;
/// for t in remote.file().tensors() {
///     println!("{} {:?}", t.name(), t.shape());
/// }
/// let bytes = remote.tensor_bytes("output_norm.weight")?; // one range read
/// # Ok(()) }
/// ```
pub struct RemoteFile {
    /// Shared by the shards of one model.
    runtime: Arc<tokio::runtime::Runtime>,
    inner: AsyncRemoteFile,
}

impl std::fmt::Debug for RemoteFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

impl RemoteFile {
    /// [`open_with`](Self::open_with) default options.
    pub fn open(url: &str) -> Result<Self> {
        Self::open_with(url, &RemoteOptions::default())
    }

    /// Reads the header region of the file at `url`.
    pub fn open_with(url: &str, options: &RemoteOptions) -> Result<Self> {
        let runtime = runtime()?;
        let inner = runtime.block_on(AsyncRemoteFile::open(url, options))?;
        Ok(RemoteFile {
            runtime: Arc::new(runtime),
            inner,
        })
    }

    /// The file at `url` or, when its name is a shard's
    /// (`…-00002-of-00005.gguf`), every shard of its split model in order,
    /// their headers fetched concurrently (see [`open_shards_async`]).
    ///
    /// ```no_run
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::remote::{RemoteFile, RemoteOptions};
    /// let shards = RemoteFile::open_model("s3://models/big-00001-of-00003.gguf", &RemoteOptions::default())?;
    /// let bytes = shards[2].tensor_bytes("output.weight")?;
    /// # Ok(()) }
    /// ```
    pub fn open_model(url: &str, options: &RemoteOptions) -> Result<Vec<Self>> {
        let runtime = Arc::new(runtime()?);
        let files = runtime.block_on(open_shards_async(url, options))?;
        Ok(files
            .into_iter()
            .map(|inner| RemoteFile {
                runtime: runtime.clone(),
                inner,
            })
            .collect())
    }

    /// The async file underneath.
    pub fn as_async(&self) -> &AsyncRemoteFile {
        &self.inner
    }

    /// See [`AsyncRemoteFile::file`].
    pub fn file(&self) -> &GgufFile<'static> {
        self.inner.file()
    }

    /// See [`AsyncRemoteFile::url`].
    pub fn url(&self) -> &str {
        self.inner.url()
    }

    /// See [`AsyncRemoteFile::stats`].
    pub fn stats(&self) -> Stats {
        self.inner.stats()
    }

    /// See [`AsyncRemoteFile::etag`].
    pub fn etag(&self) -> Option<String> {
        self.inner.etag()
    }

    /// See [`AsyncRemoteFile::tensor_bytes`].
    pub fn tensor_bytes(&self, name: &str) -> Result<Vec<u8>> {
        self.runtime.block_on(self.inner.tensor_bytes(name))
    }

    /// See [`AsyncRemoteFile::tensor_range`].
    pub fn tensor_range(&self, name: &str, range: Range<u64>) -> Result<Vec<u8>> {
        self.runtime.block_on(self.inner.tensor_range(name, range))
    }

    /// See [`AsyncRemoteFile::tensor_rows_f32`].
    pub fn tensor_rows_f32(&self, name: &str, rows: Range<u64>) -> Result<Vec<f32>> {
        self.runtime
            .block_on(self.inner.tensor_rows_f32(name, rows))
    }

    /// See [`AsyncRemoteFile::with_tensor`].
    pub fn with_tensor(&self, name: &str) -> Result<GgufFile<'static>> {
        self.runtime.block_on(self.inner.with_tensor(name))
    }

    /// The header as a [`GgufFile`], dropping the connection.
    pub fn into_file(self) -> GgufFile<'static> {
        self.inner.file
    }
}
