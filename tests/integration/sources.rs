//! Model sources beyond paths and plain URLs: the local Ollama store
//! (`ollama:NAME[:TAG]`, a fake store in a temp dir), an Ollama registry
//! over the OCI distribution API (`ollama://HOST/...`, served by
//! `tests/oracles/range_server.py` from that same store) and ModelScope
//! (`ms://`, its resolve URLs on the same server via
//! `MODELSCOPE_ENDPOINT`). Each gives what the local file gives.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use super::remote::{gguf, run, Server};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/tiny-llama.gguf")
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A fake Ollama store holding the sample as `tiny:latest` and as
/// `me/tiny:q8`, with the other layers a real manifest has.
pub(super) fn store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(sample()).unwrap();
    let model = hex(&bytes);
    let blobs = dir.path().join("blobs");
    std::fs::create_dir_all(&blobs).unwrap();
    std::fs::write(blobs.join(format!("sha256-{model}")), &bytes).unwrap();
    let license = hex(b"license");
    std::fs::write(blobs.join(format!("sha256-{license}")), b"license").unwrap();
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",
"config":{{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:{license}","size":7}},
"layers":[{{"mediaType":"application/vnd.ollama.image.license","digest":"sha256:{license}","size":7}},
{{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:{model}","size":{}}}]}}"#,
        bytes.len()
    );
    for (ns, repo, tag) in [("library", "tiny", "latest"), ("me", "tiny", "q8")] {
        let d = dir
            .path()
            .join("manifests/registry.ollama.ai")
            .join(ns)
            .join(repo);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(tag), &manifest).unwrap();
    }
    let broken = dir
        .path()
        .join("manifests/registry.ollama.ai/library/broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("latest"), r#"{"layers":[]}"#).unwrap();
    dir
}

pub(super) fn cli(store: &Path) -> Command {
    let mut c = gguf();
    c.env("OLLAMA_MODELS", store)
        .env_remove("MODELSCOPE_ENDPOINT");
    c
}

/// `gguf ARGS` on the sample and on `name`: same stdout.
#[track_caller]
fn same_as_local(store: &Path, args: &[&str], name: &str) {
    let local = sample();
    let (want, _) = run(gguf().arg(args[0]).arg(&local).args(&args[1..]));
    let (got, _) = run(cli(store).arg(args[0]).arg(name).args(&args[1..]));
    // `hash` prints the name it was given.
    let got = got.replace(name, &local.to_string_lossy());
    assert_eq!(got, want, "gguf {args:?} on {name}");
}

#[test]
fn the_local_ollama_store_opens_like_the_file() {
    let store = store();
    for name in ["ollama:tiny", "ollama:tiny:latest", "ollama:me/tiny:q8"] {
        same_as_local(store.path(), &["inspect", "--json"], name);
    }
    let name = "ollama:registry.ollama.ai/me/tiny:q8";
    same_as_local(store.path(), &["estimate", "--json", "-c", "256"], name);
    same_as_local(store.path(), &["tensor", "output.weight"], name);
    same_as_local(store.path(), &["hash"], name);

    let fails = |name: &str| {
        let out = cli(store.path()).args(["inspect", name]).output().unwrap();
        assert!(!out.status.success(), "{name}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(fails("ollama:missing").contains("is it pulled"));
    assert!(fails("ollama:broken").contains("no layer of media type"));
    assert!(fails("ollama:../tiny").contains("names may hold only"));
}

#[test]
fn an_ollama_registry_is_read_by_its_manifest_and_range_reads() {
    let store = store();
    let server = Server::http(store.path());
    let name = format!("ollama://127.0.0.1:{}/tiny", server.port);
    same_as_local(store.path(), &["inspect", "--json"], &name);
    let (_, stderr) = run(cli(store.path()).args(["inspect", &name, "--verbose"]));
    assert!(stderr.contains("+ 1 metadata"), "{stderr}");
    server.take_stats();
    run(cli(store.path()).args(["inspect", &name, "--json"]));
    let inspect = server.take_stats().0;
    same_as_local(store.path(), &["estimate", "--json"], &name);
    let estimate = server.take_stats().0;
    assert_eq!(estimate, inspect, "requests: estimate against inspect");
    assert_eq!(
        inspect, 2,
        "the manifest, then one range read of the header"
    );

    let tagged = format!("ollama://127.0.0.1:{}/me/tiny:q8", server.port);
    same_as_local(store.path(), &["tensor", "blk.0.attn_v.weight"], &tagged);
    same_as_local(store.path(), &["hash", "--algo", "sha256"], &tagged);

    let missing = format!("ollama://127.0.0.1:{}/missing", server.port);
    let out = cli(store.path())
        .args(["inspect", &missing])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("404"));
}

#[test]
fn modelscope_urls_are_its_resolve_urls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(sample(), dir.path().join("tiny-llama.gguf")).unwrap();
    let server = Server::http(dir.path());
    let endpoint = format!("http://127.0.0.1:{}", server.port);
    for args in [
        &["inspect", "--json"][..],
        &["estimate", "--json", "--fit", "1G"],
    ] {
        let (want, _) = run(gguf().arg(args[0]).arg(sample()).args(&args[1..]));
        let (got, _) = run(gguf()
            .arg(args[0])
            .arg("ms://owner/repo/tiny-llama.gguf@v1")
            .args(&args[1..])
            .env("MODELSCOPE_ENDPOINT", &endpoint));
        assert_eq!(got, want, "{args:?}");
    }
}
