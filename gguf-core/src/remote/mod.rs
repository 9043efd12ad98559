//! Reading GGUF files that sit behind a URL or in an object store, at the
//! cost of their header, and single tensors at the cost of their bytes
//! (cargo feature `remote`).
//!
//! The URL forms, what is checked and what it costs are described where
//! users meet them, on [`Source`](crate::read::Source).

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
    let remote = options;
    let (first, lookups) = Location::parse(url, remote)?.resolve(remote).await?;
    let locations = match shards {
        Some(_) => split::shard_locations(first)?,
        None => vec![first],
    };
    let backend = Arc::new(locations[0].connect(remote)?);
    backend.count_metadata_requests(lookups);
    let first = open_backend(backend, options, None, runtime.clone()).await?;
    let guess = shards.map_or(remote.chunk, |f| f(&first.1, remote.chunk));
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
    let deadline = options.header_deadline;
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
