//! Plain HTTP(S) range requests, with reqwest (the client `object_store`
//! already brings).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::header::{HeaderMap, CONTENT_LENGTH, CONTENT_RANGE, ETAG, LAST_MODIFIED, RANGE};
use reqwest::StatusCode;
use url::Url;

use crate::error::{Error, Result};

use super::backend::Identity;
use super::RemoteOptions;

pub(crate) struct HttpSource {
    client: reqwest::Client,
    url: Url,
    token: Option<String>,
    read_timeout: Duration,
    /// Connect and read timeouts, for messages.
    timeouts: (Duration, Duration),
}

impl HttpSource {
    pub(crate) fn new(url: Url, token: Option<String>, options: &RemoteOptions) -> Result<Self> {
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .read_timeout(options.read_timeout)
            // Range responses must arrive as stored, byte for byte.
            .no_gzip()
            .user_agent(concat!("gguf-rs/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Network {
                url: super::location::redact(&url),
                message: format!("cannot create the HTTP client: {}", chain(&e)),
            })?;
        Ok(HttpSource {
            client,
            url,
            token,
            read_timeout: options.read_timeout,
            timeouts: (options.connect_timeout, options.read_timeout),
        })
    }

    /// One `GET` with `Range: bytes=offset-(offset+len-1)`.
    pub(crate) async fn read(
        &self,
        display: &str,
        offset: u64,
        len: u64,
        known: Option<&Identity>,
        received: &AtomicU64,
    ) -> Result<(Vec<u8>, Identity)> {
        let url = || display.to_owned();
        let end = offset.saturating_add(len);
        let mut req = self
            .client
            .get(self.url.clone())
            .header(RANGE, format!("bytes={offset}-{}", end.saturating_sub(1)));
        if let Some(token) = &self.token {
            req = req.bearer_auth(token);
        }
        let timeout = |what| Error::Timeout {
            url: url(),
            what,
            after: self.read_timeout,
        };
        let mut resp = match tokio::time::timeout(self.read_timeout, req.send()).await {
            Err(_) => return Err(timeout("waiting for the response")),
            Ok(Err(e)) => return Err(network(display, e, "request failed", self.timeouts)),
            Ok(Ok(r)) => r,
        };
        let status = resp.status();
        let headers = resp.headers().clone();
        let mut identity = Identity {
            size: 0,
            etag: header(&headers, ETAG),
            last_modified: header(&headers, LAST_MODIFIED),
        };
        // How many body bytes to take, and what to do past them.
        let expected = match status {
            StatusCode::PARTIAL_CONTENT => {
                let found = header(&headers, CONTENT_RANGE);
                let bad = || Error::BadContentRange {
                    url: url(),
                    offset,
                    end,
                    found: found.clone(),
                };
                let (first, last, total) = found
                    .as_deref()
                    .and_then(parse_content_range)
                    .ok_or_else(bad)?;
                // The range asked, clamped to the file's end.
                if first != offset || last + 1 != end.min(total) || last < first {
                    return Err(bad());
                }
                identity.size = total;
                last + 1 - first
            }
            StatusCode::OK => {
                // The server ignored the Range header. Only acceptable when
                // the whole body is no more than what was asked: a file
                // smaller than the first read.
                let total = header(&headers, CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
                if offset != 0 || known.is_some() || total.is_some_and(|n| n > len) {
                    return Err(Error::RangeIgnored {
                        url: url(),
                        offset,
                        end,
                        total,
                    });
                }
                // Read at most one byte more than asked, to tell.
                len.saturating_add(1)
            }
            StatusCode::RANGE_NOT_SATISFIABLE
                if offset == 0
                    && header(&headers, CONTENT_RANGE).as_deref() == Some("bytes */0") =>
            {
                // An empty file: no range of it exists.
                return Ok((Vec::new(), identity));
            }
            s => {
                return Err(Error::HttpStatus {
                    url: url(),
                    status: s.as_u16(),
                })
            }
        };
        let mut body = Vec::new();
        body.try_reserve_exact(expected.min(len) as usize)
            .map_err(|_| Error::HeaderTooLarge {
                needed: expected,
                limit: isize::MAX as u64,
            })?;
        while (body.len() as u64) < expected {
            let chunk = match tokio::time::timeout(self.read_timeout, resp.chunk()).await {
                Err(_) => return Err(timeout("reading the response body")),
                Ok(Err(e)) => {
                    let what = format!(
                        "connection lost after {} of {expected} bytes of the response for bytes {offset}..{end}",
                        body.len()
                    );
                    return Err(network(display, e, &what, self.timeouts));
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(c))) => c,
            };
            received.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            let room = (expected - body.len() as u64) as usize;
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        if status == StatusCode::OK {
            if body.len() as u64 > len {
                return Err(Error::RangeIgnored {
                    url: url(),
                    offset,
                    end,
                    total: None,
                });
            }
            identity.size = body.len() as u64;
            return Ok((body, identity));
        }
        if (body.len() as u64) < expected {
            return Err(Error::ShortBody {
                url: url(),
                offset,
                expected,
                got: body.len() as u64,
            });
        }
        Ok((body, identity))
    }
}

fn header(h: &HeaderMap, name: reqwest::header::HeaderName) -> Option<String> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// `bytes FIRST-LAST/TOTAL` (TOTAL may not be `*`: the size is needed).
fn parse_content_range(v: &str) -> Option<(u64, u64, u64)> {
    let rest = v.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let (first, last) = range.split_once('-')?;
    Some((
        first.trim().parse().ok()?,
        last.trim().parse().ok()?,
        total.trim().parse().ok()?,
    ))
}

/// The error's message with its causes, never the URL's credentials
/// (reqwest's own messages include the URL: it is stripped).
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

fn network(display: &str, e: reqwest::Error, what: &str, timeouts: (Duration, Duration)) -> Error {
    // reqwest's messages name the URL, which may hold user info.
    let e = e.without_url();
    if e.is_timeout() {
        let (what, after) = if e.is_connect() {
            ("connecting", timeouts.0)
        } else {
            ("reading the response", timeouts.1)
        };
        return Error::Timeout {
            url: display.into(),
            what,
            after,
        };
    }
    Error::Network {
        url: display.into(),
        message: format!("{what}: {}", chain(&e)),
    }
}

/// One plain `GET` of a small document (an Ollama manifest): status 200,
/// at most `limit` bytes, within the read timeout.
pub(crate) async fn get_small(
    url: &Url,
    accept: &str,
    limit: u64,
    options: &RemoteOptions,
) -> Result<Vec<u8>> {
    let display = super::location::redact(url);
    let source = HttpSource::new(url.clone(), None, options)?;
    let timeout = |what| Error::Timeout {
        url: display.clone(),
        what,
        after: options.read_timeout,
    };
    let req = source
        .client
        .get(url.clone())
        .header(reqwest::header::ACCEPT, accept);
    let mut resp = match tokio::time::timeout(options.read_timeout, req.send()).await {
        Err(_) => return Err(timeout("waiting for the response")),
        Ok(Err(e)) => return Err(network(&display, e, "request failed", source.timeouts)),
        Ok(Ok(r)) => r,
    };
    if resp.status() != StatusCode::OK {
        return Err(Error::HttpStatus {
            url: display,
            status: resp.status().as_u16(),
        });
    }
    let mut body = Vec::new();
    loop {
        let chunk = match tokio::time::timeout(options.read_timeout, resp.chunk()).await {
            Err(_) => return Err(timeout("reading the response body")),
            Ok(Err(e)) => {
                return Err(network(
                    &display,
                    e,
                    "reading the response",
                    source.timeouts,
                ))
            }
            Ok(Ok(None)) => return Ok(body),
            Ok(Ok(Some(c))) => c,
        };
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(Error::BadManifest {
                source_name: display,
                reason: format!("larger than {limit} bytes: not a manifest"),
            });
        }
        body.extend_from_slice(&chunk);
    }
}
