//! Redirects, followed here rather than by reqwest: its policy sends a
//! `Referer` (the previous URL with its query: a presigned signature, an
//! Azure SAS) and, on a redirect to another host, drops `Authorization`
//! and cookies but keeps every other header (an `x-amz-security-token`).
//!
//! Here no request carries `Referer`, and a redirect to another origin
//! (scheme, host or port) carries only the headers that describe the read
//! ([`KEPT_ACROSS_ORIGINS`]): whatever authenticated the first request
//! stays with the first origin.

use reqwest::header::{
    HeaderMap, HeaderName, ACCEPT, IF_MATCH, IF_MODIFIED_SINCE, IF_NONE_MATCH, IF_RANGE,
    IF_UNMODIFIED_SINCE, LOCATION, RANGE, USER_AGENT,
};
use reqwest::StatusCode;
use url::Url;

/// Redirects followed for one request before giving up.
pub(crate) const MAX_REDIRECTS: usize = 10;

/// The headers a redirect to another origin keeps.
pub(crate) const KEPT_ACROSS_ORIGINS: [HeaderName; 8] = [
    RANGE,
    IF_MATCH,
    IF_NONE_MATCH,
    IF_MODIFIED_SINCE,
    IF_UNMODIFIED_SINCE,
    IF_RANGE,
    ACCEPT,
    USER_AGENT,
];

/// Which redirects are refused besides too many.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Policy {
    /// Plain HTTP only to a loopback host (Ollama registries): a redirect
    /// to `http://` elsewhere is refused.
    pub(crate) loopback_http_only: bool,
}

/// A redirect that is not followed.
#[derive(Debug)]
pub(crate) struct Refused {
    /// Where it pointed (for messages: redact it).
    pub(crate) to: String,
    /// Why it was refused.
    pub(crate) reason: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refused a redirect to {}: {}",
            crate::read::redact_url(&self.to),
            self.reason
        )
    }
}

impl std::error::Error for Refused {}

/// Same scheme, host and port.
pub(crate) fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// `localhost` or a loopback address.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Drops every header but [`KEPT_ACROSS_ORIGINS`].
pub(crate) fn keep_for_other_origin(headers: &mut HeaderMap) {
    let dropped: Vec<HeaderName> = headers
        .keys()
        .filter(|k| !KEPT_ACROSS_ORIGINS.contains(k))
        .cloned()
        .collect();
    for name in dropped {
        headers.remove(name);
    }
}

/// Where a response sends the request next: `None` when it is not a
/// redirect to follow (a redirect without `Location` is returned to the
/// caller, whose status check reports it); `hops` is how many redirects
/// were followed already.
pub(crate) fn next_hop(
    current: &Url,
    status: StatusCode,
    headers: &HeaderMap,
    hops: usize,
    policy: Policy,
) -> Result<Option<Url>, Refused> {
    let followed = matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    );
    let Some(location) = headers.get(LOCATION).filter(|_| followed) else {
        return Ok(None);
    };
    let shown = String::from_utf8_lossy(location.as_bytes()).into_owned();
    let refuse = |reason: String| Refused {
        to: shown.clone(),
        reason,
    };
    let next = location
        .to_str()
        .ok()
        .and_then(|l| current.join(l).ok())
        .ok_or_else(|| refuse("its Location is not a URL".into()))?;
    if hops >= MAX_REDIRECTS {
        return Err(refuse(format!("more than {MAX_REDIRECTS} redirects")));
    }
    match next.scheme() {
        "https" => {}
        "http" if !policy.loopback_http_only || is_loopback(&next) => {}
        "http" => {
            return Err(refuse(
                "plain HTTP to a host other than this machine (this source is read over HTTPS; \
                 plain HTTP only from a loopback host)"
                    .into(),
            ))
        }
        other => return Err(refuse(format!("unsupported scheme {other:?}"))),
    }
    Ok(Some(next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderValue, AUTHORIZATION, COOKIE, REFERER};

    fn hop(from: &str, to: &str, policy: Policy) -> Result<Option<Url>, Refused> {
        let mut h = HeaderMap::new();
        h.insert(LOCATION, HeaderValue::from_str(to).unwrap());
        next_hop(&Url::parse(from).unwrap(), StatusCode::FOUND, &h, 0, policy)
    }

    #[test]
    fn origins_and_hops() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(same_origin(&u("https://h/a"), &u("https://h:443/b?x")));
        assert!(!same_origin(&u("https://h/a"), &u("http://h/a")));
        assert!(!same_origin(&u("http://h:1/a"), &u("http://h:2/a")));
        assert!(!same_origin(&u("http://h/a"), &u("http://g/a")));
        assert_eq!(
            hop("https://h/a/b", "../c", Policy::default()).unwrap(),
            Some(u("https://h/c"))
        );
        let secure = Policy {
            loopback_http_only: true,
        };
        assert!(hop("https://h/a", "http://cdn.example/a", secure).is_err());
        assert!(hop("https://h/a", "http://0.0.0.0:1/a", secure).is_err());
        assert!(hop("https://h/a", "http://127.0.0.1:1/a", secure).is_ok());
        assert!(hop("https://h/a", "http://cdn.example/a", Policy::default()).is_ok());
        assert!(hop("https://h/a", "file:///etc/passwd", Policy::default()).is_err());
        let mut h = HeaderMap::new();
        h.insert(LOCATION, HeaderValue::from_static("/x"));
        let here = u("https://h/a");
        assert!(next_hop(
            &here,
            StatusCode::FOUND,
            &h,
            MAX_REDIRECTS,
            Policy::default()
        )
        .is_err());
        assert_eq!(
            next_hop(&here, StatusCode::OK, &h, 0, Policy::default()).unwrap(),
            None
        );
    }

    #[test]
    fn other_origins_get_no_credentials() {
        let mut h = HeaderMap::new();
        for (k, v) in [
            (AUTHORIZATION, "Bearer t"),
            (COOKIE, "c=1"),
            (REFERER, "https://h/?sig=1"),
            (RANGE, "bytes=0-9"),
            (IF_MATCH, "\"e\""),
        ] {
            h.insert(k, HeaderValue::from_static(v));
        }
        h.insert("x-amz-security-token", HeaderValue::from_static("s"));
        h.insert("x-ms-version", HeaderValue::from_static("v"));
        keep_for_other_origin(&mut h);
        let mut kept: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        kept.sort_unstable();
        assert_eq!(kept, ["if-match", "range"]);
    }
}
