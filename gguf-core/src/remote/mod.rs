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
//! [`ollama_model_path`](crate::read::ollama_model_path) finds it
//! (`ollama:NAME[:TAG]`), without this feature.
//!
//! Users do not call this module to open a file: [`Model::open`] and
//! [`GgufFile::open`] take a URL like any other [`Source`], and
//! [`Tensor::read`] fetches a tensor's bytes.
//!
//! What it costs: the header is parsed by [`HeaderParser`]
//! from range reads, the first one [`ReadOptions::chunk`](crate::read::ReadOptions::chunk) bytes (2 MiB),
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
//! [`Origin`](crate::model::Origin)) goes through [`redact_url`](crate::read::redact_url) (user info
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
//! Timeouts ([`RemoteOptions`](crate::read::RemoteOptions)): 10 s to connect, 30 s of silence while
//! waiting for a response or between two pieces of a body; a stalled
//! server is a [`RemoteError::Timeout`], not a hang. A whole header read has a
//! deadline (600 s by default): a server trickling bytes is an
//! [`RemoteError::Deadline`] saying how many arrived.
//!
//! ```no_run
//! use gguf_core::Gguf;
//! # fn main() -> gguf_core::Result<()> {
//! use gguf_core::Model;
//! let model = Model::open("hf://Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf")?;
//! println!("{}", model.get_str("general.architecture")?);
//! let first_rows = model.tensor("token_embd.weight")?.read_rows_f32(0..2)?;
//! let stats = model.shards()[0].file().remote_stats().unwrap_or_default();
//! eprintln!("{} requests, {} bytes", stats.requests, stats.bytes);
//! # Ok(()) }
//! ```
//!
//! [`Model::open`]: crate::model::Model::open
//! [`GgufFile::open`]: crate::read::GgufFile::open
//! [`Source`]: crate::read::Source
//! [`Tensor::read`]: crate::read::Tensor::read

mod backend;
mod http;
mod location;
mod ollama;
mod redact;
mod redirect;
mod split;
mod store;
mod store_http;

use crate::error::{RemoteError, SourceError};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::read::{GgufFile, HeaderParser, OpenOptions, ParseStep};

use backend::Backend;
use location::Location;
pub(crate) use split::FirstRead;

/// The runtime of the blocking API, shared by the shards of one model.
type SharedRuntime = Arc<OnceLock<tokio::runtime::Runtime>>;

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// The file at `url`, or with `shards` every shard of the split model
/// its name belongs to, in order, each with its URL redacted (blocking:
/// runs its own runtime, kept for later tensor reads).
pub(crate) fn open(
    url: &str,
    options: &OpenOptions,
    shards: Option<FirstRead>,
) -> Result<Vec<(String, GgufFile<'static>)>> {
    let shared: SharedRuntime = Arc::new(OnceLock::new());
    let _ = shared.set(runtime()?);
    let rt = shared
        .get()
        .ok_or_else(|| Error::from(std::io::Error::other("no runtime")))?;
    rt.block_on(open_async_in(url, options, shards, shared.clone()))
}

/// [`open`] for async code: reads through the caller's runtime.
pub(crate) async fn open_async(
    url: &str,
    options: &OpenOptions,
    shards: Option<FirstRead>,
) -> Result<Vec<(String, GgufFile<'static>)>> {
    open_async_in(url, options, shards, Arc::new(OnceLock::new())).await
}

async fn open_async_in(
    url: &str,
    options: &OpenOptions,
    shards: Option<FirstRead>,
    runtime: SharedRuntime,
) -> Result<Vec<(String, GgufFile<'static>)>> {
    let remote = &options.remote;
    let (first, lookups) = Location::parse(url, remote)?.resolve(remote).await?;
    let locations = match shards {
        Some(_) => split::shard_locations(first)?,
        None => vec![first],
    };
    let backend = Arc::new(locations[0].connect(remote)?);
    backend.count_metadata_requests(lookups);
    let first = open_backend(backend, options, None, runtime.clone()).await?;
    let guess = shards.map_or(remote.read.chunk, |f| f(&first.1, remote.read.chunk));
    let rest = locations[1..].iter().map(|l| {
        let runtime = runtime.clone();
        async move {
            let backend = Arc::new(l.connect(remote)?);
            open_backend(backend, options, Some(guess), runtime).await
        }
    });
    let mut files = vec![first];
    files.extend(futures::future::try_join_all(rest).await?);
    Ok(files)
}

/// Reads the header through `backend`, the first read `first_read`
/// bytes (default: one chunk), within the header deadline.
async fn open_backend(
    backend: Arc<Backend>,
    options: &OpenOptions,
    first_read: Option<u64>,
    runtime: SharedRuntime,
) -> Result<(String, GgufFile<'static>)> {
    let started = Instant::now();
    let deadline = options.remote.header_deadline;
    let read = read_header(backend.clone(), options, first_read);
    let file = match tokio::time::timeout(deadline, read).await {
        Ok(r) => r?,
        Err(_) => {
            return Err(Error::Remote(RemoteError::Deadline {
                url: backend.display().into(),
                deadline,
                received: backend.stats().bytes,
                elapsed: started.elapsed(),
            }))
        }
    };
    let name = backend.display().to_owned();
    Ok((
        name,
        file.with_reader(Arc::new(RemoteReader { backend, runtime })),
    ))
}

async fn read_header(
    backend: Arc<Backend>,
    options: &OpenOptions,
    first_read: Option<u64>,
) -> Result<GgufFile<'static>> {
    let mut parser = HeaderParser::new(&options.remote_read());
    if let Some(len) = first_read {
        parser = parser.first_read(len);
    }
    loop {
        match parser.step()? {
            ParseStep::Read { offset, len } => {
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
            ParseStep::Done(file) => return Ok(*file),
        }
    }
}

/// Tensor data of a remote file: one range request per read.
struct RemoteReader {
    backend: Arc<Backend>,
    /// The blocking API's runtime; empty for a file opened from async
    /// code, whose reads are async only.
    runtime: SharedRuntime,
}

impl RemoteReader {
    async fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let (bytes, _) = self.backend.read(offset, len).await?;
        if bytes.len() as u64 != len {
            return Err(Error::Remote(RemoteError::ShortBody {
                url: self.backend.display().into(),
                offset,
                expected: len,
                got: bytes.len() as u64,
            }));
        }
        Ok(bytes)
    }
}

impl crate::read::RangeRead for RemoteReader {
    /// Blocking: on the runtime the blocking door opened the file with.
    /// A file opened from async code ([`Model::open_async`]) has its
    /// connections on the caller's runtime, which a blocking read could
    /// not drive: it is an error naming the async read instead of a hang.
    ///
    /// [`Model::open_async`]: crate::model::Model::open_async
    fn read_range(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let rt = match self.runtime.get() {
            Some(rt) if tokio::runtime::Handle::try_current().is_err() => rt,
            _ => {
                return Err(Error::Source(SourceError::BadUrl {
                    url: self.backend.display().into(),
                    reason: "a blocking read of a file opened from async code: use \
                             Tensor::read_async (or open it with Model::open)"
                        .into(),
                }))
            }
        };
        rt.block_on(self.read(offset, len))
    }

    fn read_range_async(&self, offset: u64, len: u64) -> crate::read::ReadFuture<'_> {
        Box::pin(self.read(offset, len))
    }

    fn name(&self) -> Option<&str> {
        Some(self.backend.display())
    }

    fn stats(&self) -> Option<crate::read::RemoteStats> {
        Some(self.backend.stats())
    }

    fn etag(&self) -> Option<String> {
        self.backend.etag()
    }
}
