//! Which backend a URL goes to, and `hf://` to the Hub's resolve URL.

use crate::error::SourceError;
use url::Url;

use crate::error::{Error, Result};

use super::backend::Backend;
use super::http::HttpSource;
use super::redact::redact;
use super::redirect::Policy;
use super::store::StoreSource;
use crate::read::OpenOptions;
use crate::read::STORE_SCHEMES;

/// A parsed remote location. Its `Debug` shows the redacted URL only:
/// it may hold a token.
#[derive(Clone)]
pub(crate) enum Location {
    /// Range requests with reqwest; `token` is sent as a bearer token
    /// (to this origin only: see [`redirect`](super::redirect)), and
    /// `redirects` says which redirects are refused.
    Http {
        url: Url,
        token: Option<String>,
        redirects: Policy,
    },
    /// An object store.
    Store { url: Url },
    /// A model in an Ollama registry, before its manifest is read:
    /// `repo` is `…/v2/NAMESPACE/MODEL/` (see [`Location::resolve`]).
    Ollama { repo: Url, tag: String },
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display())
    }
}

fn bad(url: &str, reason: impl Into<String>) -> Error {
    Error::Source(SourceError::BadUrl {
        url: crate::read::redact_url(url),
        reason: reason.into(),
    })
}

impl Location {
    pub(crate) fn parse(s: &str, options: &OpenOptions) -> Result<Self> {
        let url = Url::parse(s).map_err(|e| bad(s, format!("not a URL: {e}")))?;
        match url.scheme() {
            "http" | "https" => Ok(Location::Http {
                url,
                token: None,
                redirects: Policy::default(),
            }),
            "hf" => hf(s, options),
            "ms" => modelscope(s),
            "ollama" => {
                let (repo, tag) = super::ollama::registry_location(s)?;
                Ok(Location::Ollama { repo, tag })
            }
            scheme if STORE_SCHEMES.contains(&scheme) => Ok(Location::Store { url }),
            scheme => Err(bad(
                s,
                format!(
                    "unsupported scheme {scheme:?} (use http(s)://, hf://, ms://, ollama://, s3://, gs:// or az://)"
                ),
            )),
        }
    }

    /// The location files can be read from: an Ollama model becomes its
    /// blob's URL, by reading its manifest. Also returns the number of
    /// requests that took (0 or 1).
    pub(crate) async fn resolve(self, options: &OpenOptions) -> Result<(Self, u64)> {
        match self {
            Location::Ollama { repo, tag } => {
                let url = super::ollama::resolve_registry(&repo, &tag, options).await?;
                let redirects = super::ollama::REDIRECTS;
                Ok((
                    Location::Http {
                        url,
                        token: None,
                        redirects,
                    },
                    1,
                ))
            }
            other => Ok((other, 0)),
        }
    }

    /// A connection to the file at this location (an Ollama model must be
    /// resolved first, [`resolve`](Self::resolve)).
    pub(crate) fn connect(&self, options: &OpenOptions) -> Result<Backend> {
        let source: Box<dyn super::backend::RangeSource> = match self {
            Location::Http {
                url,
                token,
                redirects,
            } => Box::new(HttpSource::new(
                url.clone(),
                token.clone(),
                *redirects,
                options,
            )?),
            Location::Store { url } => Box::new(StoreSource::new(url, options)?),
            Location::Ollama { .. } => {
                return Err(Error::Source(SourceError::BadUrl {
                    url: self.display(),
                    reason: "the Ollama manifest must be read first (Location::resolve)".into(),
                }))
            }
        };
        Ok(Backend::new(self.display(), source))
    }

    /// The URL as it may be shown ([`redact_url`](super::redact_url)).
    pub(crate) fn display(&self) -> String {
        match self {
            Location::Http { url, .. } | Location::Store { url } => redact(url),
            Location::Ollama { repo, tag } => format!("{}manifests/{tag}", redact(repo)),
        }
    }

    /// The same location with the file name replaced.
    pub(crate) fn with_file_name(&self, name: &str) -> Result<Self> {
        let mut out = self.clone();
        match &mut out {
            Location::Ollama { .. } => {
                return Err(bad(
                    &self.display(),
                    "an Ollama model is not split into files",
                ))
            }
            Location::Http { url, .. } | Location::Store { url } => {
                let mut segments: Vec<String> = url
                    .path_segments()
                    .map(|s| s.map(str::to_owned).collect())
                    .unwrap_or_default();
                match segments.last_mut() {
                    Some(last) => *last = name.to_owned(),
                    None => segments.push(name.to_owned()),
                }
                let shown = url.as_str().to_owned();
                url.path_segments_mut()
                    .map_err(|()| bad(&shown, "the URL has no path"))?
                    .clear()
                    .extend(&segments);
            }
        }
        Ok(out)
    }

    /// The last path segment, decoded.
    pub(crate) fn file_name(&self) -> String {
        let url = match self {
            Location::Http { url, .. } | Location::Store { url } => url,
            Location::Ollama { tag, .. } => return tag.clone(),
        };
        let last = url
            .path_segments()
            .and_then(|mut s| s.next_back())
            .unwrap_or("");
        percent_decode(last)
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A model hub whose files have resolve URLs of the form
/// `{endpoint}{prefix}/OWNER/REPO/resolve/REVISION/PATH`.
struct Hub {
    scheme: &'static str,
    /// Path segment before `OWNER` (`models` on ModelScope), if any.
    prefix: Option<&'static str>,
    endpoint_var: &'static str,
    default_endpoint: &'static str,
    default_revision: &'static str,
}

/// Hugging Face Hub: `hf://OWNER/REPO/PATH[@REVISION]`.
const HF: Hub = Hub {
    scheme: "hf",
    prefix: None,
    endpoint_var: "HF_ENDPOINT",
    default_endpoint: "https://huggingface.co",
    default_revision: "main",
};

/// ModelScope: `ms://OWNER/REPO/PATH[@REVISION]`.
const MODELSCOPE: Hub = Hub {
    scheme: "ms",
    prefix: Some("models"),
    endpoint_var: "MODELSCOPE_ENDPOINT",
    default_endpoint: "https://modelscope.cn",
    default_revision: "master",
};

/// `hf://OWNER/REPO/PATH[@REVISION]` to
/// `{HF_ENDPOINT or https://huggingface.co}/OWNER/REPO/resolve/REVISION/PATH`.
fn hf(s: &str, options: &OpenOptions) -> Result<Location> {
    Ok(Location::Http {
        url: HF.resolve(s)?,
        token: options.hf_token.clone(),
        redirects: Policy::default(),
    })
}

/// `ms://OWNER/REPO/PATH[@REVISION]` to
/// `{MODELSCOPE_ENDPOINT or https://modelscope.cn}/models/OWNER/REPO/resolve/REVISION/PATH`.
fn modelscope(s: &str) -> Result<Location> {
    Ok(Location::Http {
        url: MODELSCOPE.resolve(s)?,
        token: None,
        redirects: Policy::default(),
    })
}

impl Hub {
    fn resolve(&self, s: &str) -> Result<Url> {
        let form = || format!("expected {}://OWNER/REPO/PATH[@REVISION]", self.scheme);
        let rest = &s[self.scheme.len() + "://".len()..];
        // A revision follows the last '@' when no '/' comes after it.
        let (path, revision) = match rest.rfind('@') {
            Some(at) if rest.rfind('/').is_none_or(|slash| at > slash) => {
                (&rest[..at], &rest[at + 1..])
            }
            _ => (rest, self.default_revision),
        };
        let mut parts = path.splitn(3, '/');
        let (Some(owner), Some(repo), Some(file)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad(s, form()));
        };
        if owner.is_empty() || repo.is_empty() || file.is_empty() || revision.is_empty() {
            return Err(bad(s, form()));
        }
        // The url crate resolves `.` and `..` segments away (`ms://../../x`
        // would ask for `/models/resolve/master/x`): refuse them, decoded
        // or not, wherever they are.
        let parts = [
            ("owner", owner),
            ("repository", repo),
            ("revision", revision),
        ];
        let path_parts = file.split('/').map(|p| ("path", p));
        for (part, value) in parts.into_iter().chain(path_parts) {
            let decoded = percent_decode(value);
            if decoded == "." || decoded == ".." {
                return Err(bad(
                    s,
                    format!(
                        "the {part} is {value:?}: `.` and `..` are not names ({})",
                        form()
                    ),
                ));
            }
        }
        let var = self.endpoint_var;
        let endpoint = std::env::var(var)
            .ok()
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| self.default_endpoint.into());
        let mut url = Url::parse(&endpoint)
            .map_err(|e| bad(&endpoint, format!("{var} is not a URL: {e}")))?;
        {
            let mut seg = url
                .path_segments_mut()
                .map_err(|()| bad(&endpoint, format!("{var} cannot have a path")))?;
            seg.pop_if_empty();
            seg.extend(self.prefix);
            seg.push(owner).push(repo).push("resolve").push(revision);
            seg.extend(file.split('/'));
        }
        Ok(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(s: &str) -> String {
        let Location::Http { url, .. } =
            Location::parse(s, &OpenOptions::default().hf_token(None)).unwrap()
        else {
            panic!("not http")
        };
        url.to_string()
    }

    #[test]
    fn hf_urls_map_to_resolve_urls() {
        if std::env::var("HF_ENDPOINT").is_ok() {
            eprintln!("skipped: HF_ENDPOINT is set");
            return;
        }
        assert_eq!(
            resolve("hf://Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf"),
            "https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf"
        );
        assert_eq!(
            resolve("hf://o/r/sub/dir/m.gguf@v1.0"),
            "https://huggingface.co/o/r/resolve/v1.0/sub/dir/m.gguf"
        );
        assert!(Location::parse("hf://o/m.gguf", &OpenOptions::default()).is_err());
    }

    #[test]
    fn ms_urls_map_to_resolve_urls() {
        if std::env::var("MODELSCOPE_ENDPOINT").is_ok() {
            eprintln!("skipped: MODELSCOPE_ENDPOINT is set");
            return;
        }
        assert_eq!(
            resolve("ms://Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf"),
            "https://modelscope.cn/models/Qwen/Qwen3-0.6B-GGUF/resolve/master/Qwen3-0.6B-Q8_0.gguf"
        );
        assert_eq!(
            resolve("ms://o/r/Q8_0/m.gguf@v2"),
            "https://modelscope.cn/models/o/r/resolve/v2/Q8_0/m.gguf"
        );
        assert!(Location::parse("ms://o/m.gguf", &OpenOptions::default()).is_err());
    }

    #[test]
    fn dot_segments_are_refused_by_name() {
        for (url, part) in [
            ("ms://../../x.gguf", "owner"),
            ("ms://o/../x.gguf", "repository"),
            ("hf://./r/x.gguf", "owner"),
            ("hf://o/r/x.gguf@..", "revision"),
            ("hf://o/r/x.gguf@.", "revision"),
            ("hf://o/r/a/../../x.gguf", "path"),
            ("ms://o/%2e%2E/x.gguf", "repository"),
        ] {
            let e = Location::parse(url, &OpenOptions::default()).unwrap_err();
            assert!(
                matches!(&e, Error::Source(SourceError::BadUrl { reason, .. }) if reason.contains(&format!("the {part} is"))),
                "{url}: {e}"
            );
        }
        assert!(Location::parse("hf://o/r/x..y.gguf@v.1", &OpenOptions::default()).is_ok());
    }

    #[test]
    fn messages_never_show_credentials() {
        let l = Location::parse(
            "https://user:secret@h.example/a.gguf?sig=abc",
            &OpenOptions::default(),
        )
        .unwrap();
        assert!(!l.display().contains("secret"));
        assert!(!l.display().contains("abc"));
        let e = Location::parse("ftp://user:secret@h/a", &OpenOptions::default()).unwrap_err();
        assert!(!e.to_string().contains("secret"), "{e}");
    }

    #[test]
    fn sibling_names() {
        let l =
            Location::parse("s3://b/dir/m-00001-of-00002.gguf", &OpenOptions::default()).unwrap();
        assert_eq!(l.file_name(), "m-00001-of-00002.gguf");
        assert_eq!(
            l.with_file_name("m-00002-of-00002.gguf").unwrap().display(),
            "s3://b/dir/m-00002-of-00002.gguf"
        );
    }
}
