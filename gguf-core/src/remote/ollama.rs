//! Ollama registries over the OCI distribution API
//! (`ollama://HOST/[NAMESPACE/]MODEL[:TAG]`). They hold a model as the
//! local store does (`read/ollama_store.rs`): an OCI-like manifest whose
//! layer of media type `application/vnd.ollama.image.model` is the GGUF
//! file. A registry serves the manifest at `/v2/NAMESPACE/MODEL/manifests/TAG` and the blob at
//! `/v2/NAMESPACE/MODEL/blobs/sha256:HEX`, which is then read by range
//! requests like any HTTP file.

use url::Url;

use crate::error::Result;
use crate::read::ollama_store::{bad, model_digest, parse_name, MANIFEST_LIMIT};

use super::redact::redact;
use super::redirect::{is_loopback, Policy};
use crate::read::OpenOptions;

/// What a registry is asked for (Ollama's registries answer with this
/// manifest schema).
pub(crate) const MANIFEST_ACCEPT: &str = "application/vnd.docker.distribution.manifest.v2+json";

/// A registry is read over HTTPS, plain HTTP only on this machine; its
/// redirects (a blob's CDN) are held to the same rule.
pub(crate) const REDIRECTS: Policy = Policy {
    loopback_http_only: true,
};

/// `ollama://HOST/[NAMESPACE/]MODEL[:TAG]`: the repository's URL
/// (`…/v2/NAMESPACE/MODEL/`) and the tag. HTTPS, except to a loopback host
/// (a registry on this machine), which is plain HTTP.
pub(crate) fn registry_location(s: &str) -> Result<(Url, String)> {
    let rest = &s["ollama://".len()..];
    let name = parse_name(s, rest, true)?;
    let base = Url::parse(&format!("https://{}/", name.registry))
        .map_err(|e| bad(s, format!("bad registry host: {e}")))?;
    let scheme = if is_loopback(&base) { "http" } else { "https" };
    let repo = Url::parse(&format!(
        "{scheme}://{}/v2/{}/{}/",
        name.registry, name.namespace, name.model
    ))
    .map_err(|e| bad(s, format!("bad registry host: {e}")))?;
    Ok((repo, name.tag))
}

/// The blob URL of the model layer of the manifest at `repo`'s tag `tag`
/// (one GET).
pub(crate) async fn resolve_registry(repo: &Url, tag: &str, options: &OpenOptions) -> Result<Url> {
    let manifest_url = repo
        .join(&format!("manifests/{tag}"))
        .map_err(|e| bad(repo.as_str(), e.to_string()))?;
    let shown = redact(&manifest_url);
    let body = super::http::get_small(
        &manifest_url,
        MANIFEST_ACCEPT,
        MANIFEST_LIMIT,
        REDIRECTS,
        options,
    )
    .await?;
    let hex = model_digest(&shown, &body)?;
    repo.join(&format!("blobs/sha256:{hex}"))
        .map_err(|e| bad(repo.as_str(), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_urls_are_https_except_loopback() {
        let url = |s: &str| {
            let (repo, tag) = registry_location(s).unwrap();
            format!("{repo} {tag}")
        };
        assert_eq!(
            url("ollama://registry.ollama.ai/gemma3:270m"),
            "https://registry.ollama.ai/v2/library/gemma3/ 270m"
        );
        assert_eq!(
            url("ollama://127.0.0.1:8080/me/m"),
            "http://127.0.0.1:8080/v2/me/m/ latest"
        );
    }
}
