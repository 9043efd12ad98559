//! URLs as text, with no network code: which strings are URLs this crate
//! reads, and what may be shown of one ([`redact_url`]). Compiled without
//! the `remote` feature too, so that a build without remote reading still
//! tells a URL from a path and never shows a credential.

/// Schemes handled by object stores (`object_store`).
pub(crate) const STORE_SCHEMES: &[&str] =
    &["s3", "s3a", "gs", "az", "abfs", "abfss", "adl", "azure"];

/// True when `s` is a URL of a scheme this crate reads (`http(s)://`,
/// `hf://`, `ms://`, `ollama://` or an object-store scheme).
pub(crate) fn is_known_url(s: &str) -> bool {
    match s.split_once("://") {
        Some((scheme, _)) => {
            let scheme = scheme.to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "hf" | "ms" | "ollama")
                || STORE_SCHEMES.contains(&scheme.as_str())
        }
        None => false,
    }
}

/// True when `s` has the form of a URL (`scheme://`, the scheme two
/// characters or more, so that `C://dir` stays a Windows path), supported
/// or not.
pub(crate) fn looks_like_url(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// What replaces a hidden value.
const HIDDEN: &str = "REDACTED";

/// `url` as it may be shown: scheme, host, port and path kept, user info
/// dropped, each query value replaced by `REDACTED` (the names stay, so a
/// reader still sees which parameters were sent), the fragment dropped.
/// Text that is not a URL (`scheme://…`), such as a local path, is
/// returned unchanged.
///
/// Every URL the library and the `gguf` command show (messages,
/// `--verbose` lines, hash manifests, JSON) goes through this function.
///
/// ```
/// use gguf_core::read::redact_url;
/// assert_eq!(
///     redact_url("https://user:pass@host:8443/m.gguf?X-Amz-Signature=abc&flag#frag"),
///     "https://host:8443/m.gguf?X-Amz-Signature=REDACTED&flag"
/// );
/// assert_eq!(redact_url("s3://bucket/dir/m.gguf"), "s3://bucket/dir/m.gguf");
/// assert_eq!(redact_url("models/m.gguf?x=1"), "models/m.gguf?x=1");
/// ```
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !is_scheme {
        return url.to_owned();
    }
    // The authority ends at the first '/', '?' or '#' ('\' too: browsers
    // and the url crate treat it as '/' in http(s) URLs); user info ends
    // at its last '@'.
    let authority_end = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let tail = tail.split_once('#').map_or(tail, |(t, _)| t);
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let mut out = format!("{scheme}://{host}{path}");
    if let Some(query) = query {
        out.push('?');
        let params: Vec<String> = query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((name, _)) => format!("{name}={HIDDEN}"),
                None => p.to_owned(),
            })
            .collect();
        out.push_str(&params.join("&"));
    }
    out
}
