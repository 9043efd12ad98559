//! Failures of HTTP and object-store reading (feature `remote`).

/// Reading over HTTP or from an object store failed (feature `remote`);
/// each variant names the URL, without credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The server answered a range request with the whole body (status
    /// 200): the file was not downloaded.
    #[error("{url}: the server ignored the Range request for bytes {offset}..{end} and began sending the whole {} instead; stopped reading (range requests are required)", total.map_or("body".to_string(), |n| format!("{n}-byte body")))]
    RangeIgnored {
        /// The URL.
        url: String,
        /// Start of the range asked.
        offset: u64,
        /// End (exclusive) of the range asked.
        end: u64,
        /// Length of the body announced, when known.
        total: Option<u64>,
    },
    /// A partial response whose `Content-Range` is missing, malformed or
    /// not the range asked.
    #[error("{url}: asked for bytes {offset}..{end}, the response's Content-Range is {}", found.as_deref().map_or("missing".to_string(), |f| format!("{f:?}")))]
    BadContentRange {
        /// The URL.
        url: String,
        /// Start of the range asked.
        offset: u64,
        /// End (exclusive) of the range asked.
        end: u64,
        /// The header received, if any.
        found: Option<String>,
    },
    /// A response body that ended before the bytes it announced (the
    /// connection closed early or the server sent too little).
    #[error("{url}: response for bytes {offset}..{} ended after {got} of {expected} bytes", offset + expected)]
    ShortBody {
        /// The URL.
        url: String,
        /// Start of the range.
        offset: u64,
        /// Bytes announced.
        expected: u64,
        /// Bytes received.
        got: u64,
    },
    /// An HTTP error status (403, 404, 5xx, ...).
    #[error("{url}: HTTP status {status}{}", status_hint(*status))]
    HttpStatus {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// No progress within the configured time.
    #[error("{url}: {what} timed out after {} s", after.as_secs_f64())]
    Timeout {
        /// The URL.
        url: String,
        /// What was waited for: "connecting", "reading the response", ...
        what: &'static str,
        /// The limit that ran out.
        after: std::time::Duration,
    },
    /// The remote file changed between two reads (its ETag, Last-Modified
    /// or size differs from the first response).
    #[error("{url}: the file changed while being read: {what} was {before:?}, is now {after:?}")]
    RemoteChanged {
        /// The URL.
        url: String,
        /// What differs: "ETag", "Last-Modified" or "size".
        what: &'static str,
        /// Value at the first read.
        before: String,
        /// Value now.
        after: String,
    },
    /// Reading a remote file's header took longer than
    /// `OpenOptions::header_deadline` (a slow or trickling server).
    #[error("{url}: the header was not read within the deadline of {} s: {received} bytes arrived in {:.1} s", deadline.as_secs_f64(), elapsed.as_secs_f64())]
    Deadline {
        /// The URL.
        url: String,
        /// The deadline.
        deadline: std::time::Duration,
        /// Body bytes received by then.
        received: u64,
        /// Time spent.
        elapsed: std::time::Duration,
    },
    /// A redirect that was not followed (to plain HTTP where only HTTPS is
    /// allowed, to another scheme, or one too many).
    #[error("{url}: refused a redirect to {to}: {reason}")]
    RedirectRefused {
        /// The URL.
        url: String,
        /// Where the redirect pointed (without credentials).
        to: String,
        /// Why it was refused.
        reason: String,
    },
    /// A network or object-store failure (connection refused or dropped,
    /// TLS, DNS, credentials).
    #[error("{url}: {message}")]
    Network {
        /// The URL.
        url: String,
        /// What failed, with its cause chain (never credentials).
        message: String,
    },
}

fn status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (access denied: check the credentials, e.g. HF_TOKEN or AWS_ACCESS_KEY_ID)",
        404 => " (not found)",
        412 => " (the file changed while being read)",
        416 => " (range not satisfiable)",
        500..=599 => " (server error)",
        _ => "",
    }
}

impl RemoteError {
    /// The URL the error names (without credentials), as a path (see
    /// [`Error::path`](super::Error::path)).
    pub(crate) fn path(&self) -> &std::path::Path {
        use RemoteError::*;
        match self {
            RangeIgnored { url, .. }
            | BadContentRange { url, .. }
            | ShortBody { url, .. }
            | HttpStatus { url, .. }
            | Timeout { url, .. }
            | RemoteChanged { url, .. }
            | Deadline { url, .. }
            | RedirectRefused { url, .. }
            | Network { url, .. } => std::path::Path::new(url),
        }
    }
}
