//! Plain HTTP(S) range requests, with reqwest (the client `object_store`
//! already brings); redirects are followed by [`redirect`](super::redirect).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::header::{
    HeaderMap, HeaderValue, CONTENT_LENGTH, CONTENT_RANGE, ETAG, LAST_MODIFIED, RANGE,
};
use reqwest::StatusCode;
use url::Url;

use crate::error::{Error, FormatError, RemoteError, Result, SourceError};

use super::backend::{Counters, Identity, RangeSource};
use super::redact::{redact, server_text, Secrets};
use super::redirect::{keep_for_other_origin, next_hop, same_origin, Policy, Refused};
use crate::read::OpenOptions;

pub(crate) struct HttpSource {
    client: reqwest::Client,
    url: Url,
    token: Option<String>,
    redirects: Policy,
    /// What is sent as credentials, cut out of messages.
    secrets: Secrets,
    read_timeout: Duration,
    /// Connect and read timeouts, for messages.
    timeouts: (Duration, Duration),
}

/// Why a request got no response.
enum Failure {
    Http(reqwest::Error),
    Refused(Refused),
}

impl HttpSource {
    pub(crate) fn new(
        url: Url,
        token: Option<String>,
        redirects: Policy,
        options: &OpenOptions,
    ) -> Result<Self> {
        let secrets = Secrets::new(&url, token.as_deref());
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .read_timeout(options.read_timeout)
            // Range responses must arrive as stored, byte for byte.
            .no_gzip()
            .user_agent(concat!("gguf-rs/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .build()
            .map_err(|e| {
                Error::Remote(RemoteError::Network {
                    url: redact(&url),
                    message: format!(
                        "cannot create the HTTP client: {}",
                        server_text(&chain(&e), &secrets)
                    ),
                })
            })?;
        Ok(HttpSource {
            client,
            url,
            token,
            redirects,
            secrets,
            read_timeout: options.read_timeout,
            timeouts: (options.connect_timeout, options.read_timeout),
        })
    }

    /// A `GET` of this source's URL with `headers` (and the token, and the
    /// URL's user info as basic auth, both for this origin only),
    /// following redirects.
    async fn get(&self, mut headers: HeaderMap) -> std::result::Result<reqwest::Response, Failure> {
        // Built by reqwest's builder, which turns user info into basic auth
        // and takes it out of the URL.
        let mut first = self.client.get(self.url.clone());
        if let Some(token) = &self.token {
            first = first.bearer_auth(token);
        }
        let first = first.build().map_err(Failure::Http)?;
        for (k, v) in first.headers() {
            headers.insert(k.clone(), v.clone());
        }
        let mut url = first.url().clone();
        let mut hops = 0;
        loop {
            let mut req = reqwest::Request::new(reqwest::Method::GET, url.clone());
            *req.headers_mut() = headers.clone();
            let resp = self.client.execute(req).await.map_err(Failure::Http)?;
            let next = next_hop(&url, resp.status(), resp.headers(), hops, self.redirects)
                .map_err(Failure::Refused)?;
            let Some(next) = next else {
                return Ok(resp);
            };
            if !same_origin(&url, &next) {
                keep_for_other_origin(&mut headers);
            }
            url = next;
            hops += 1;
        }
    }

    fn failure(&self, display: &str, f: Failure, what: &str) -> Error {
        match f {
            Failure::Http(e) => network(display, e, what, self.timeouts, &self.secrets),
            Failure::Refused(r) => Error::Remote(RemoteError::RedirectRefused {
                url: display.into(),
                to: crate::read::redact_url(&r.to),
                reason: r.reason,
            }),
        }
    }

    /// One `GET` with `Range: bytes=offset-(offset+len-1)`; the
    /// [`RangeSource`] impl counts it.
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
        let mut headers = HeaderMap::new();
        let range = format!("bytes={offset}-{}", end.saturating_sub(1));
        let range = HeaderValue::from_str(&range).map_err(|e| {
            Error::Remote(RemoteError::Network {
                url: url(),
                message: format!("cannot send the range {range:?}: {e}"),
            })
        })?;
        headers.insert(RANGE, range);
        let timeout = |what| {
            Error::Remote(RemoteError::Timeout {
                url: url(),
                what,
                after: self.read_timeout,
            })
        };
        let mut resp = match tokio::time::timeout(self.read_timeout, self.get(headers)).await {
            Err(_) => return Err(timeout("waiting for the response")),
            Ok(Err(f)) => return Err(self.failure(display, f, "request failed")),
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
                let bad = || {
                    Error::Remote(RemoteError::BadContentRange {
                        url: url(),
                        offset,
                        end,
                        found: found.as_deref().map(|f| server_text(f, &self.secrets)),
                    })
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
                    return Err(Error::Remote(RemoteError::RangeIgnored {
                        url: url(),
                        offset,
                        end,
                        total,
                    }));
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
                return Err(Error::Remote(RemoteError::HttpStatus {
                    url: url(),
                    status: s.as_u16(),
                }))
            }
        };
        let mut body = Vec::new();
        body.try_reserve_exact(expected.min(len) as usize)
            .map_err(|_| {
                Error::Format(FormatError::HeaderTooLarge {
                    needed: expected,
                    limit: isize::MAX as u64,
                })
            })?;
        while (body.len() as u64) < expected {
            let chunk = match tokio::time::timeout(self.read_timeout, resp.chunk()).await {
                Err(_) => return Err(timeout("reading the response body")),
                Ok(Err(e)) => {
                    let what = format!(
                        "connection lost after {} of {expected} bytes of the response for bytes {offset}..{end}",
                        body.len()
                    );
                    return Err(self.failure(display, Failure::Http(e), &what));
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
                return Err(Error::Remote(RemoteError::RangeIgnored {
                    url: url(),
                    offset,
                    end,
                    total: None,
                }));
            }
            identity.size = body.len() as u64;
            return Ok((body, identity));
        }
        if (body.len() as u64) < expected {
            return Err(Error::Remote(RemoteError::ShortBody {
                url: url(),
                offset,
                expected,
                got: body.len() as u64,
            }));
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

fn network(
    display: &str,
    e: reqwest::Error,
    what: &str,
    timeouts: (Duration, Duration),
    secrets: &Secrets,
) -> Error {
    // reqwest's messages name the URL, which may hold user info.
    let e = e.without_url();
    if e.is_timeout() {
        let (what, after) = if e.is_connect() {
            ("connecting", timeouts.0)
        } else {
            ("reading the response", timeouts.1)
        };
        return Error::Remote(RemoteError::Timeout {
            url: display.into(),
            what,
            after,
        });
    }
    Error::Remote(RemoteError::Network {
        url: display.into(),
        message: format!("{what}: {}", server_text(&chain(&e), secrets)),
    })
}

/// One plain `GET` of a small document (an Ollama manifest): status 200,
/// at most `limit` bytes, within the read timeout and `options`'
/// header deadline, redirects as `redirects` allows.
pub(crate) async fn get_small(
    url: &Url,
    accept: &str,
    limit: u64,
    redirects: Policy,
    options: &OpenOptions,
) -> Result<Vec<u8>> {
    let display = redact(url);
    let started = std::time::Instant::now();
    let source = HttpSource::new(url.clone(), None, redirects, options)?;
    let received = AtomicU64::new(0);
    let read = source.get_small(&display, accept, limit, &received);
    match tokio::time::timeout(options.header_deadline, read).await {
        Ok(r) => r,
        Err(_) => Err(Error::Remote(RemoteError::Deadline {
            url: display,
            deadline: options.header_deadline,
            received: received.load(Ordering::Relaxed),
            elapsed: started.elapsed(),
        })),
    }
}

impl HttpSource {
    async fn get_small(
        &self,
        display: &str,
        accept: &str,
        limit: u64,
        received: &AtomicU64,
    ) -> Result<Vec<u8>> {
        let timeout = |what| {
            Error::Remote(RemoteError::Timeout {
                url: display.into(),
                what,
                after: self.read_timeout,
            })
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_str(accept).map_err(|e| {
                Error::Source(SourceError::BadUrl {
                    url: display.into(),
                    reason: format!("bad Accept header: {e}"),
                })
            })?,
        );
        let mut resp = match tokio::time::timeout(self.read_timeout, self.get(headers)).await {
            Err(_) => return Err(timeout("waiting for the response")),
            Ok(Err(f)) => return Err(self.failure(display, f, "request failed")),
            Ok(Ok(r)) => r,
        };
        if resp.status() != StatusCode::OK {
            return Err(Error::Remote(RemoteError::HttpStatus {
                url: display.into(),
                status: resp.status().as_u16(),
            }));
        }
        let mut body = Vec::new();
        loop {
            let chunk = match tokio::time::timeout(self.read_timeout, resp.chunk()).await {
                Err(_) => return Err(timeout("reading the response body")),
                Ok(Err(e)) => {
                    return Err(self.failure(display, Failure::Http(e), "reading the response"))
                }
                Ok(Ok(None)) => return Ok(body),
                Ok(Ok(Some(c))) => c,
            };
            received.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            if (body.len() + chunk.len()) as u64 > limit {
                return Err(Error::Source(SourceError::BadManifest {
                    source_name: display.into(),
                    reason: format!("larger than {limit} bytes: not a manifest"),
                }));
            }
            body.extend_from_slice(&chunk);
        }
    }
}

#[async_trait::async_trait]
impl RangeSource for HttpSource {
    async fn read_range(
        &self,
        display: &str,
        offset: u64,
        len: u64,
        known: Option<Identity>,
        counters: &Counters,
    ) -> Result<(Vec<u8>, Identity)> {
        counters.requests.fetch_add(1, Ordering::Relaxed);
        self.read(display, offset, len, known.as_ref(), &counters.bytes)
            .await
    }
}
