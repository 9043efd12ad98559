//! What may be shown of a URL and of what a server said.
//!
//! A URL keeps its scheme, host, port and path; its user info is dropped
//! and the values of its query replaced, so a presigned URL's signature or
//! an Azure SAS never reaches a message, a manifest or a JSON document.
//! Text from a server (an error body echoed by object_store, a header
//! value) is stripped of anything that looks like a credential, has its
//! control characters escaped and is cut to [`SERVER_TEXT_LIMIT`] bytes.

use url::Url;

use crate::read::redact_url;

/// What replaces a hidden value.
const HIDDEN: &str = "REDACTED";

/// The most bytes of server text an error message carries.
pub(crate) const SERVER_TEXT_LIMIT: usize = 400;

/// [`redact_url`] of a parsed URL.
pub(crate) fn redact(url: &Url) -> String {
    redact_url(url.as_str())
}

/// Values this process sends as credentials, to be cut out of anything a
/// server says back: the token, the URL's password and query values, and
/// the credentials object_store reads from the environment.
#[derive(Clone, Default)]
pub(crate) struct Secrets(Vec<String>);

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} values)", self.0.len())
    }
}

/// Shorter values are too likely to be ordinary words to be cut out
/// everywhere (the name/value rules still hide them).
const MIN_SECRET_LEN: usize = 6;

/// Environment variables whose values are credentials: a cloud or hub
/// prefix and a credential word in the name.
fn is_credential_var(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    let prefixed = [
        "AWS_",
        "AZURE_",
        "GOOGLE_",
        "GCS_",
        "GCP_",
        "HF_",
        "HUGGING",
        "OBJECT_STORE_",
    ]
    .iter()
    .any(|p| name.starts_with(p));
    prefixed
        && [
            "SECRET",
            "TOKEN",
            "KEY",
            "PASSWORD",
            "SAS",
            "CREDENTIAL",
            "SIGNATURE",
        ]
        .iter()
        .any(|w| name.contains(w))
}

impl Secrets {
    /// The credentials of the environment, `url`'s password and query
    /// values, and `token`.
    pub(crate) fn new(url: &Url, token: Option<&str>) -> Self {
        let mut values: Vec<String> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(k, _)| is_credential_var(k))
            .map(|(_, v)| v)
            .collect();
        values.extend(url.password().map(str::to_owned));
        values.extend(url.query_pairs().map(|(_, v)| v.into_owned()));
        values.extend(token.map(str::to_owned));
        values.retain(|v| v.len() >= MIN_SECRET_LEN);
        // Longest first, so a secret containing another is cut whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Secrets(values)
    }
}

/// Text a server sent, made fit for an error message: credentials cut out
/// (the values in `secrets`, and the value after any name that looks like
/// a credential's: `authorization`, `x-amz-security-token`, `sig`,
/// `Signature`, `AccountKey`, a `Bearer` token, ...), control characters
/// escaped, and at most [`SERVER_TEXT_LIMIT`] bytes.
pub(crate) fn server_text(text: &str, secrets: &Secrets) -> String {
    let mut s = text.to_owned();
    for secret in &secrets.0 {
        if s.contains(secret.as_str()) {
            s = s.replace(secret.as_str(), HIDDEN);
        }
    }
    shorten(&escape_controls(&hide_named_values(&s)))
}

/// Control characters (C0, DEL, C1) as escapes: `\n`, `\x1b`, `\u{85}`.
pub(crate) fn escape_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if (0x80..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// At most [`SERVER_TEXT_LIMIT`] bytes, cut at a character boundary, with
/// how much was left out.
fn shorten(s: &str) -> String {
    if s.len() <= SERVER_TEXT_LIMIT {
        return s.to_owned();
    }
    let mut end = SERVER_TEXT_LIMIT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &s[..end], s.len() - end)
}

/// Whether a header, parameter, JSON or XML name names a credential.
fn is_credential_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "sig"
        || (n.ends_with("key") && n != "key")
        || [
            "authorization",
            "token",
            "signature",
            "credential",
            "secret",
            "password",
            "passwd",
            "cookie",
            "sas",
            "api_key",
            "api-key",
        ]
        .iter()
        .any(|w| n.contains(w))
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_-.".contains(&b)
}

/// Replaces the value after every credential-like name: `name: value`
/// (to the end of the line), `name=value` (to `&`, `;`, `,`, a quote or
/// white space), `"name": "value"`, `<Name>value<`, and the token after
/// `Bearer `.
fn hide_named_values(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if !is_name_byte(b[i]) || (i > 0 && is_name_byte(b[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_name_byte(b[i]) {
            i += 1;
        }
        let name = &s[start..i];
        let value = if name.eq_ignore_ascii_case("bearer") {
            bearer_value(b, i)
        } else if is_credential_name(name) {
            named_value(b, start, i)
        } else {
            None
        };
        if let Some((from, to)) = value {
            out.push_str(&s[copied..from]);
            out.push_str(HIDDEN);
            copied = to;
            i = to;
        }
    }
    out.push_str(&s[copied..]);
    out
}

/// The token after `Bearer ` (name ending at `at`).
fn bearer_value(b: &[u8], at: usize) -> Option<(usize, usize)> {
    let mut from = at;
    while from < b.len() && b[from] == b' ' {
        from += 1;
    }
    if from == at {
        return None;
    }
    let to = from + b[from..].iter().take_while(|c| !is_value_end(**c)).count();
    (to > from).then_some((from, to))
}

/// Ends an unquoted value.
fn is_value_end(c: u8) -> bool {
    c.is_ascii_whitespace() || b"&;,\"'<>".contains(&c)
}

/// The value after the credential name `b[start..end]`, if a separator
/// follows it.
fn named_value(b: &[u8], start: usize, end: usize) -> Option<(usize, usize)> {
    // <Name>value</Name>
    if start > 0 && b[start - 1] == b'<' && b.get(end) == Some(&b'>') {
        let from = end + 1;
        let to = from + b[from..].iter().take_while(|c| **c != b'<').count();
        return (to > from).then_some((from, to));
    }
    let mut i = end;
    // A JSON or quoted key: "name": value
    if matches!(b.get(i), Some(b'"' | b'\'')) {
        i += 1;
    }
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    let sep = *b.get(i)?;
    if sep != b':' && sep != b'=' {
        return None;
    }
    i += 1;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    if let Some(&q) = b.get(i).filter(|q| **q == b'"' || **q == b'\'') {
        let from = i + 1;
        let to = from + b[from..].iter().take_while(|c| **c != q).count();
        return (to > from).then_some((from, to));
    }
    let from = i;
    let to = if sep == b':' {
        // A header line: the value runs to the end of the line.
        from + b[from..]
            .iter()
            .take_while(|c| !b"\r\n\"'<".contains(c))
            .count()
    } else {
        from + b[from..].iter().take_while(|c| !is_value_end(**c)).count()
    };
    (to > from).then_some((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_user_info_and_query_values() {
        for (url, shown) in [
            (
                "http://user:PASS@h.example/m.gguf?X-Amz-Signature=SIG&X-Amz-Date=1",
                "http://h.example/m.gguf?X-Amz-Signature=REDACTED&X-Amz-Date=REDACTED",
            ),
            ("https://tok@h/a/b.gguf", "https://h/a/b.gguf"),
            ("https://h/a.gguf#sig=SIG", "https://h/a.gguf"),
            (
                "az://c/m.gguf?sv=1&sig=SIG",
                "az://c/m.gguf?sv=REDACTED&sig=REDACTED",
            ),
            ("ftp://u:PASS@h/x?sig=SIG", "ftp://h/x?sig=REDACTED"),
            ("http://u:p@ss@h:81?x=SIG", "http://h:81?x=REDACTED"),
            ("https://a:PASS@h\\x", "https://h\\x"),
            ("hf://o/r/m.gguf@rev", "hf://o/r/m.gguf@rev"),
            ("ollama:gemma3:270m", "ollama:gemma3:270m"),
            ("/tmp/a?b=c", "/tmp/a?b=c"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
            // Idempotent: a shown URL shows as itself.
            assert_eq!(redact_url(shown), shown, "{shown}");
        }
    }

    #[test]
    fn server_text_hides_credentials() {
        let url = Url::parse("https://u:hunter22@h/m?sig=SASSIGNATURE").unwrap();
        let secrets = Secrets::new(&url, Some("hf_token_value"));
        let body = "GET /m HTTP/1.1\r\nauthorization: AWS4-HMAC-SHA256 Credential=AKID/x, Signature=abc\r\n\
                    x-amz-security-token: SESSION\r\nx-ms-encryption-key: K\r\n\
                    Authorization: Bearer ya29.BEARER\n\
                    {\"access_token\": \"GTOKEN\", \"ok\": 1} <SignatureProvided>SIGP</SignatureProvided>\
                    url https://h/m?sv=1&sig=AZSIG&se=2 auth Bearer ya29.OTHER hunter22 \
                    hf_token_value SASSIGNATURE AccountKey=ACCK;\x1b[31m";
        let shown = server_text(body, &secrets);
        for secret in [
            "AKID",
            "abc",
            "SESSION",
            "GTOKEN",
            "SIGP",
            "AZSIG",
            "ya29",
            "hunter22",
            "hf_token",
            "SASSIGNATURE",
            "ACCK",
            "\x1b",
            "\r",
            "\n",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(
            shown.contains("\\x1b[31m") && shown.contains("\"ok\": 1"),
            "{shown}"
        );
        assert!(shown.contains("x-amz-security-token: REDACTED"), "{shown}");
        let long = server_text(&"é".repeat(1000), &Secrets::default());
        assert!(long.len() < SERVER_TEXT_LIMIT + 40, "{}", long.len());
        assert!(long.ends_with("(1600 more bytes)"), "{long}");
    }
}
