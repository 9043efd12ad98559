//! What every backend shares: the identity of the file checked on each
//! response, and the request counters.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::{Error, RemoteError, Result, SourceError};

use super::http::HttpSource;
use super::location::Location;
use super::redact::{server_text, Secrets};
use super::store::StoreSource;
use super::{RemoteOptions, Stats};

/// The file's identity as the first response described it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Identity {
    pub size: u64,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

/// One remote file and the connection to it.
pub(crate) struct Backend {
    display: String,
    kind: Kind,
    first: Mutex<Option<Identity>>,
    requests: AtomicU64,
    heads: AtomicU64,
    bytes: AtomicU64,
    nanos: AtomicU64,
}

enum Kind {
    Http(HttpSource),
    Store(StoreSource),
}

impl Backend {
    pub(crate) fn new(location: &Location, options: &RemoteOptions) -> Result<Self> {
        let kind = match location {
            Location::Http {
                url,
                token,
                redirects,
            } => Kind::Http(HttpSource::new(
                url.clone(),
                token.clone(),
                *redirects,
                options,
            )?),
            Location::Store { url } => Kind::Store(StoreSource::new(url, options)?),
            Location::Ollama { .. } => {
                return Err(Error::Source(SourceError::BadUrl {
                    url: location.display(),
                    reason: "the Ollama manifest must be read first (Location::resolve)".into(),
                }))
            }
        };
        Ok(Backend {
            display: location.display(),
            kind,
            first: Mutex::new(None),
            requests: AtomicU64::new(0),
            heads: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            nanos: AtomicU64::new(0),
        })
    }

    /// Counts `n` metadata requests made before this backend existed (an
    /// Ollama manifest).
    pub(crate) fn count_metadata_requests(&self, n: u64) {
        self.heads.fetch_add(n, Ordering::Relaxed);
    }

    /// The URL without credentials, for messages.
    pub(crate) fn display(&self) -> &str {
        &self.display
    }

    pub(crate) fn stats(&self) -> Stats {
        Stats {
            requests: self.requests.load(Ordering::Relaxed),
            head_requests: self.heads.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            elapsed: Duration::from_nanos(self.nanos.load(Ordering::Relaxed)),
        }
    }

    pub(crate) fn etag(&self) -> Option<String> {
        self.identity().and_then(|i| i.etag)
    }

    fn identity(&self) -> Option<Identity> {
        self.first.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Reads `len` bytes at `offset` (fewer only at the end of the file)
    /// and returns them with the file's size. Checks the file is the one
    /// the first response described.
    pub(crate) async fn read(&self, offset: u64, len: u64) -> Result<(Vec<u8>, u64)> {
        let started = Instant::now();
        let known = self.identity();
        let result = match &self.kind {
            Kind::Http(h) => {
                self.requests.fetch_add(1, Ordering::Relaxed);
                h.read(&self.display, offset, len, known.as_ref(), &self.bytes)
                    .await
            }
            Kind::Store(s) => {
                let known = match known {
                    Some(k) => k,
                    None => {
                        self.heads.fetch_add(1, Ordering::Relaxed);
                        s.head(&self.display).await?
                    }
                };
                self.requests.fetch_add(1, Ordering::Relaxed);
                s.read(&self.display, offset, len, &known, &self.bytes)
                    .await
            }
        };
        self.nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        let (bytes, identity) = result?;
        self.check_identity(identity)?;
        let size = self.identity().map_or(0, |i| i.size);
        Ok((bytes, size))
    }

    fn check_identity(&self, now: Identity) -> Result<()> {
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        let Some(before) = first.as_ref() else {
            *first = Some(now);
            return Ok(());
        };
        // The values come from the server: shown shortened and escaped.
        let changed = |what: &'static str, a: String, b: String| {
            Error::Remote(RemoteError::RemoteChanged {
                url: self.display.clone(),
                what,
                before: server_text(&a, &Secrets::default()),
                after: server_text(&b, &Secrets::default()),
            })
        };
        if before.size != now.size {
            return Err(changed(
                "size",
                before.size.to_string(),
                now.size.to_string(),
            ));
        }
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
        if before.etag != now.etag {
            return Err(changed("ETag", show(&before.etag), show(&now.etag)));
        }
        if before.last_modified != now.last_modified {
            return Err(changed(
                "Last-Modified",
                show(&before.last_modified),
                show(&now.last_modified),
            ));
        }
        Ok(())
    }
}
