//! The local Ollama store (`ollama:NAME[:TAG]`): a filesystem lookup,
//! compiled without the `remote` feature. A model is an OCI-like manifest
//! (JSON; its `layers` name blobs by `mediaType` and `digest`) whose layer
//! of media type [`MODEL_MEDIA_TYPE`] is the GGUF file: under
//! `$OLLAMA_MODELS` (default `~/.ollama/models`), the manifest is the file
//! `manifests/REGISTRY/NAMESPACE/MODEL/TAG` and the blob of digest
//! `sha256:HEX` is the file `blobs/sha256-HEX`. Registries
//! (`ollama://HOST/...`, feature `remote`) serve the same manifests.

use crate::error::SourceError;
use std::io::Read;
use std::path::PathBuf;

use crate::error::{Error, Result};

use super::manifest_json::Json;

/// The media type of the layer holding the GGUF file.
pub const MODEL_MEDIA_TYPE: &str = "application/vnd.ollama.image.model";

const DEFAULT_REGISTRY: &str = "registry.ollama.ai";
const DEFAULT_NAMESPACE: &str = "library";
const DEFAULT_TAG: &str = "latest";

/// Manifests are a few hundred bytes; anything past this is not one.
pub(crate) const MANIFEST_LIMIT: u64 = 1 << 20;

/// A model's full name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Name {
    pub registry: String,
    pub namespace: String,
    pub model: String,
    pub tag: String,
}

pub(crate) fn bad(s: &str, reason: impl Into<String>) -> Error {
    Error::Source(SourceError::BadUrl {
        url: super::url::redact_url(s),
        reason: reason.into(),
    })
}

/// Name parts become path components of the store: only characters that
/// cannot climb out of it.
fn valid_part(p: &str, allow_colon: bool) -> bool {
    !p.is_empty()
        && p != "."
        && p != ".."
        && p.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b) || (allow_colon && b == b':'))
}

/// `[[REGISTRY/]NAMESPACE/]MODEL[:TAG]`; `registry_first` makes the
/// registry mandatory (`HOST/[NAMESPACE/]MODEL[:TAG]`).
pub(crate) fn parse_name(s: &str, rest: &str, registry_first: bool) -> Result<Name> {
    let form = if registry_first {
        "expected ollama://HOST/[NAMESPACE/]MODEL[:TAG]"
    } else {
        "expected ollama:[[REGISTRY/]NAMESPACE/]MODEL[:TAG]"
    };
    // The tag follows the last ':' when no '/' comes after it (a
    // registry's port comes before a '/').
    let (path, tag) = match rest.rfind(':') {
        Some(c) if rest.rfind('/').is_none_or(|slash| c > slash) => (&rest[..c], &rest[c + 1..]),
        _ => (rest, DEFAULT_TAG),
    };
    let parts: Vec<&str> = path.split('/').collect();
    let (registry, namespace, model) = match (registry_first, parts.as_slice()) {
        (false, [m]) => (DEFAULT_REGISTRY, DEFAULT_NAMESPACE, *m),
        (false, [n, m]) => (DEFAULT_REGISTRY, *n, *m),
        (_, [r, n, m]) => (*r, *n, *m),
        (true, [r, m]) => (*r, DEFAULT_NAMESPACE, *m),
        _ => return Err(bad(s, form)),
    };
    if !valid_part(registry, true)
        || !valid_part(namespace, false)
        || !valid_part(model, false)
        || !valid_part(tag, false)
    {
        return Err(bad(
            s,
            format!("{form}; names may hold only letters, digits, '.', '_' and '-'"),
        ));
    }
    Ok(Name {
        registry: registry.into(),
        namespace: namespace.into(),
        model: model.into(),
        tag: tag.into(),
    })
}

/// True when `s` names a model of the local Ollama store (`ollama:NAME`,
/// not `ollama://`).
///
/// ```
/// use gguf_core::read::is_ollama_store;
/// assert!(is_ollama_store("ollama:gemma3:270m"));
/// assert!(!is_ollama_store("ollama://registry.ollama.ai/library/gemma3:270m"));
/// assert!(!is_ollama_store("models/ollama:x.gguf"));
/// ```
pub fn is_ollama_store(s: &str) -> bool {
    s.starts_with("ollama:") && !s.starts_with("ollama://")
}

/// The Ollama store's directory: `$OLLAMA_MODELS`, else
/// `~/.ollama/models`.
fn store_dir(s: &str) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("OLLAMA_MODELS").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .ok_or_else(|| bad(s, "neither OLLAMA_MODELS nor HOME is set"))?;
    Ok(PathBuf::from(home).join(".ollama").join("models"))
}

/// The path of the GGUF blob of `ollama:[[REGISTRY/]NAMESPACE/]MODEL[:TAG]`
/// in the local Ollama store (`$OLLAMA_MODELS`, else `~/.ollama/models`):
/// the manifest `manifests/REGISTRY/NAMESPACE/MODEL/TAG` is read (registry
/// `registry.ollama.ai`, namespace `library` and tag `latest` by default)
/// and its [`MODEL_MEDIA_TYPE`] layer's blob, `blobs/sha256-HEX`, is the
/// model. Open it like any local file.
///
/// ```no_run
/// # fn main() -> gguf_core::Result<()> {
/// let path = gguf_core::read::ollama_model_path("ollama:gemma3:270m")?;
/// let file = gguf_core::GgufFile::open(&path)?;
/// # Ok(()) }
/// ```
pub fn ollama_model_path(s: &str) -> Result<PathBuf> {
    let rest = s
        .strip_prefix("ollama:")
        .filter(|_| is_ollama_store(s))
        .ok_or_else(|| bad(s, "expected ollama:[[REGISTRY/]NAMESPACE/]MODEL[:TAG]"))?;
    let name = parse_name(s, rest, false)?;
    let dir = store_dir(s)?;
    let manifest_path = dir
        .join("manifests")
        .join(&name.registry)
        .join(&name.namespace)
        .join(&name.model)
        .join(&name.tag);
    let shown = manifest_path.display().to_string();
    let manifest = read_limited(&manifest_path).map_err(|e| {
        Error::Source(SourceError::BadManifest {
            source_name: shown.clone(),
            reason: if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "no such model in the Ollama store {} (is it pulled?)",
                    dir.display()
                )
            } else {
                format!("cannot read it: {e}")
            },
        })
    })?;
    let hex = model_digest(&shown, &manifest)?;
    let blob = dir.join("blobs").join(format!("sha256-{hex}"));
    if !blob.is_file() {
        return Err(Error::Source(SourceError::BadManifest {
            source_name: shown,
            reason: format!("its model blob {} is missing", blob.display()),
        }));
    }
    Ok(blob)
}

fn read_limited(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    std::fs::File::open(path)?
        .take(MANIFEST_LIMIT + 1)
        .read_to_end(&mut out)?;
    if out.len() as u64 > MANIFEST_LIMIT {
        return Err(std::io::Error::other(format!(
            "larger than {MANIFEST_LIMIT} bytes: not a manifest"
        )));
    }
    Ok(out)
}

/// The hex digest of the model layer of `manifest` (JSON).
pub(crate) fn model_digest(shown: &str, manifest: &[u8]) -> Result<String> {
    let err = |reason: String| {
        Error::Source(SourceError::BadManifest {
            source_name: shown.into(),
            reason,
        })
    };
    let doc = Json::parse(manifest).map_err(|e| err(format!("not JSON: {e}")))?;
    let layers = doc
        .get("layers")
        .and_then(Json::as_array)
        .ok_or_else(|| err("no \"layers\" array".into()))?;
    let mut models = layers
        .iter()
        .filter(|l| l.get("mediaType").and_then(Json::as_str) == Some(MODEL_MEDIA_TYPE));
    let layer = models
        .next()
        .ok_or_else(|| err(format!("no layer of media type {MODEL_MEDIA_TYPE}")))?;
    if models.next().is_some() {
        return Err(err(format!(
            "several layers of media type {MODEL_MEDIA_TYPE} (a model with adapters or projectors split off is not one GGUF file)"
        )));
    }
    let digest = layer
        .get("digest")
        .and_then(Json::as_str)
        .ok_or_else(|| err("the model layer has no digest".into()))?;
    match digest.strip_prefix("sha256:") {
        Some(hex) if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(hex.to_ascii_lowercase())
        }
        _ => Err(err(format!(
            "the model layer's digest {digest:?} is not sha256:HEX"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Result<Name> {
        let (rest, first) = match s.strip_prefix("ollama://") {
            Some(r) => (r, true),
            None => (&s["ollama:".len()..], false),
        };
        parse_name(s, rest, first)
    }

    #[test]
    fn names_take_ollamas_defaults() {
        let n = name("ollama:gemma3").unwrap();
        assert_eq!(
            (
                n.registry.as_str(),
                n.namespace.as_str(),
                n.model.as_str(),
                n.tag.as_str()
            ),
            ("registry.ollama.ai", "library", "gemma3", "latest")
        );
        let n = name("ollama:me/m:q4").unwrap();
        assert_eq!((n.namespace.as_str(), n.tag.as_str()), ("me", "q4"));
        let n = name("ollama:hf.co/o/m:Q8_0").unwrap();
        assert_eq!(n.registry, "hf.co");
        let n = name("ollama://127.0.0.1:5000/m:1b").unwrap();
        assert_eq!(
            (
                n.registry.as_str(),
                n.namespace.as_str(),
                n.model.as_str(),
                n.tag.as_str()
            ),
            ("127.0.0.1:5000", "library", "m", "1b")
        );
        for bad in [
            "ollama:",
            "ollama:../m",
            "ollama:a/b/c/d",
            "ollama:m:",
            "ollama:m:../x",
            "ollama://host",
            "ollama:a\\b",
        ] {
            assert!(name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn manifest_digest() {
        let hex = "ab".repeat(32);
        let m = format!(
            r#"{{"layers":[{{"mediaType":"application/vnd.ollama.image.license","digest":"sha256:{0}"}},
            {{"mediaType":"{MODEL_MEDIA_TYPE}","digest":"sha256:{0}","size":1}}]}}"#,
            hex
        );
        assert_eq!(model_digest("m", m.as_bytes()).unwrap(), hex);
        for bad in [
            "{}".to_string(),
            "[".to_string(),
            "{\"layers\": [".to_string(),
            "\"\\ud800".to_string(),
            "[".repeat(1000),
            r#"{"layers":[]}"#.to_string(),
            format!(
                r#"{{"layers":[{{"mediaType":"{MODEL_MEDIA_TYPE}","digest":"sha256:../x"}}]}}"#
            ),
        ] {
            assert!(model_digest("m", bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
