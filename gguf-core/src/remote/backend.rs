//! What every backend shares: the identity of the file checked on each
//! response, and the request counters.

use crate::error::RemoteError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::read::RemoteStats;

use super::redact::{server_text, Secrets};

/// The file's identity as the first response described it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Identity {
    pub size: u64,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

/// What one file's requests cost, counted by the sources as they send.
#[derive(Default)]
pub(crate) struct Counters {
    /// Range requests sent (failed ones included).
    pub requests: AtomicU64,
    /// Metadata requests (an object store's `HEAD`, a manifest).
    pub heads: AtomicU64,
    /// Body bytes received.
    pub bytes: AtomicU64,
}

/// A remote file read by range: HTTP(S) or an object store.
#[async_trait::async_trait]
pub(crate) trait RangeSource: Send + Sync {
    /// Bytes `offset..offset + len` (fewer only at the end of the file)
    /// and the identity the response describes; `known` is the first
    /// response's, when there was one. `display` (the redacted URL) names
    /// the file in errors.
    async fn read_range(
        &self,
        display: &str,
        offset: u64,
        len: u64,
        known: Option<Identity>,
        counters: &Counters,
    ) -> Result<(Vec<u8>, Identity)>;
}

/// One remote file and the connection to it: every response checked
/// against the first one's identity.
pub(crate) struct Backend {
    display: String,
    source: Box<dyn RangeSource>,
    first: Mutex<Option<Identity>>,
    counters: Counters,
    nanos: AtomicU64,
}

impl Backend {
    pub(crate) fn new(display: String, source: Box<dyn RangeSource>) -> Self {
        Backend {
            display,
            source,
            first: Mutex::new(None),
            counters: Counters::default(),
            nanos: AtomicU64::new(0),
        }
    }

    /// Counts `n` metadata requests made before this backend existed (an
    /// Ollama manifest).
    pub(crate) fn count_metadata_requests(&self, n: u64) {
        self.counters.heads.fetch_add(n, Ordering::Relaxed);
    }

    /// The URL without credentials, for messages.
    pub(crate) fn display(&self) -> &str {
        &self.display
    }

    pub(crate) fn stats(&self) -> RemoteStats {
        RemoteStats {
            requests: self.counters.requests.load(Ordering::Relaxed),
            head_requests: self.counters.heads.load(Ordering::Relaxed),
            bytes: self.counters.bytes.load(Ordering::Relaxed),
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
        let result = self
            .source
            .read_range(&self.display, offset, len, known, &self.counters)
            .await;
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
