//! Remote reading that keeps credentials to itself and gives up in time,
//! against `tests/oracles/range_server.py` on 127.0.0.1 (as `remote.rs`):
//! URLs shown without user info and query values by every command,
//! redirects to another origin (another port here) without `Referer` or
//! credentials, object-store error bodies cleaned, Ollama registries'
//! redirects to plain HTTP refused, `.`/`..` refused in hub URLs, a
//! deadline for a trickling header, and later shards of a split model
//! read at the cost of their own header.
//!
//! The object-store cases point object_store's S3 client
//! (`AWS_ENDPOINT`) at the range server, which serves `HEAD` and ranged
//! `GET` of `BUCKET/KEY` as S3 does for these reads.

use gguf::error::RemoteError;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gguf::read::DEFAULT_CHUNK;
use gguf::write::Builder;
use gguf::OpenOptions;
use gguf::{Error, GgmlType, Gguf, Model};

use super::remote::{gguf, open_remote, open_remote_with, run, Server};
use super::sources;

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/tiny-llama.gguf")
}

/// A directory holding the sample as `tiny-llama.gguf` and as
/// `models/tiny-llama.gguf` (bucket `models` for the S3 cases).
fn served_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(sample(), dir.path().join("tiny-llama.gguf")).unwrap();
    std::fs::create_dir(dir.path().join("models")).unwrap();
    std::fs::copy(sample(), dir.path().join("models/tiny-llama.gguf")).unwrap();
    dir
}

/// The headers each request to `server` carried (names lower-case).
fn headers_seen(server: &Server) -> Vec<serde_json::Map<String, serde_json::Value>> {
    server.get("/_stats")["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_object().unwrap().clone())
        .collect()
}

/// Output of `c` (stdout and stderr together) and whether it succeeded.
fn output(c: &mut Command) -> (String, bool) {
    let out = c.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (text, out.status.success())
}

/// object_store's S3 client pointed at `endpoint`, with a session token.
fn s3_via<'c>(c: &'c mut Command, endpoint: &str) -> &'c mut Command {
    c.env("AWS_ENDPOINT", endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "AKIDTESTING")
        .env("AWS_SECRET_ACCESS_KEY", "secret-access-key-value")
        .env("AWS_SESSION_TOKEN", "session-token-value")
        .env_remove("AWS_PROFILE")
}

const SECRETS: [&str; 3] = ["PASS", "SIG-VALUE", "CRED-VALUE"];

#[track_caller]
fn assert_no_secrets(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} shows {s}: {text}");
    }
}

#[test]
fn every_command_shows_urls_without_credentials() {
    let dir = served_dir();
    let server = Server::http(dir.path());
    let port = server.port;
    let url = format!(
        "http://user:PASS@127.0.0.1:{port}/tiny-llama.gguf?X-Amz-Signature=SIG-VALUE&X-Amz-Credential=CRED-VALUE"
    );
    let shown = format!(
        "http://127.0.0.1:{port}/tiny-llama.gguf?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED"
    );
    let missing = url.replace("tiny-llama", "missing");
    let manifest = dir.path().join("manifest.txt");
    // (command, whether it succeeds, whether the URL must be shown)
    let cases: Vec<(Vec<&str>, bool, bool)> = vec![
        (vec!["inspect", &url, "--verbose"], true, true),
        (vec!["inspect", &url, "--json", "--verbose"], true, true),
        (vec!["inspect", &missing], false, true),
        (vec!["tensor", &url, "no.such.tensor"], false, true),
        (
            vec!["tensor", &url, "output.weight", "--verbose"],
            true,
            true,
        ),
        (vec!["hash", &url, "--algo", "sha256"], true, true),
        (vec!["estimate", &url, "--json", "--verbose"], true, true),
        (vec!["estimate", &missing], false, true),
        // Every reading command reads a URL (`check` names it in its verdict).
        (vec!["check", &url], true, true),
        (vec!["diff", &url, &missing], false, true),
        (vec!["get", &url, "general.name"], true, false),
        (vec!["get", &missing, "general.name"], false, true),
        (vec!["rewrite", &url, "out.gguf"], true, false),
        // An editing command refuses a URL, naming it.
        (vec!["set", &url, "general.name", "x"], false, true),
    ];
    for (args, ok, names_it) in &cases {
        let (text, success) = output(gguf().current_dir(dir.path()).args(args));
        assert_eq!(success, *ok, "gguf {args:?}: {text}");
        assert_no_secrets(&format!("gguf {args:?}"), &text);
        if *names_it {
            let want = if args.contains(&missing.as_str()) {
                shown.replace("tiny-llama", "missing")
            } else {
                shown.clone()
            };
            assert!(
                text.contains(&want),
                "gguf {args:?} does not name {want}: {text}"
            );
        }
    }
    // A split model's shards are named as shown, in text and JSON.
    run(gguf()
        .arg("split")
        .arg(sample())
        .arg(dir.path().join("parts"))
        .args(["--max-tensors", "10"]));
    let split = url.replace("tiny-llama.gguf", "parts-00002-of-00003.gguf");
    for args in [vec!["inspect", &split], vec!["inspect", &split, "--json"]] {
        let (text, _) = run(gguf().args(&args));
        assert_no_secrets(&format!("gguf {args:?}"), &text);
        let third = shown.replace("tiny-llama.gguf", "parts-00003-of-00003.gguf");
        assert!(
            text.contains(&third),
            "gguf {args:?} does not name {third}: {text}"
        );
    }
    // A hash manifest names the URL as shown, and verifies against it.
    let (lines, _) = run(gguf().args(["hash", &url]));
    assert!(
        lines.contains(&format!("{shown}:token_embd.weight")),
        "{lines}"
    );
    std::fs::write(&manifest, &lines).unwrap();
    let (verified, _) = run(gguf().args(["hash", &url, "--check"]).arg(&manifest));
    assert!(verified.contains("- Success"), "{verified}");
    assert_no_secrets("hash --check", &verified);
}

#[test]
fn library_errors_and_debug_never_show_credentials() {
    let dir = served_dir();
    let server = Server::http(dir.path());
    let creds = |path: &str| {
        format!(
            "http://user:PASS@127.0.0.1:{}/{path}?sig=SIG-VALUE&X-Amz-Credential=CRED-VALUE",
            server.port
        )
    };
    let quick = OpenOptions::default()
        .read_timeout(Duration::from_millis(300))
        .header_deadline(Duration::from_secs(20));
    for fault in [
        "missing.gguf",
        "fault/status-500/tiny-llama.gguf",
        "fault/short-body/tiny-llama.gguf",
        "fault/no-content-range/tiny-llama.gguf",
        "fault/wrong-content-range/tiny-llama.gguf",
        "fault/drop/tiny-llama.gguf",
        "fault/stall/tiny-llama.gguf",
    ] {
        let e = open_remote_with(&creds(fault), &quick).unwrap_err();
        assert_no_secrets(fault, &format!("{e} {e:?}"));
        assert!(e.to_string().contains("sig=REDACTED"), "{fault}: {e}");
    }
    let model = Model::open(creds("tiny-llama.gguf")).unwrap();
    let origin = model.shards()[0].origin();
    assert_no_secrets("Debug", &format!("{model:?} {origin}"));
    let e = model.tensor("no.such.tensor").unwrap_err();
    assert_no_secrets("tensor error", &format!("{e} {e:?}"));
    let source = gguf::Source::from(creds("tiny-llama.gguf"));
    assert_no_secrets("Source", &format!("{source} {source:?}"));
    let e = open_remote("ftp://user:PASS@h/m.gguf?sig=SIG-VALUE").unwrap_err();
    assert_no_secrets("BadUrl", &format!("{e} {e:?}"));
}

#[test]
fn redirects_to_another_origin_carry_no_credentials() {
    let dir = served_dir();
    let first = Server::http(dir.path());
    let other = Server::http(dir.path());

    // A presigned-looking URL: its query must not follow as a Referer.
    let url = format!(
        "http://127.0.0.1:{}/fault/redirect-{}/tiny-llama.gguf?X-Amz-Signature=SIG-VALUE",
        first.port, other.port
    );
    let remote = open_remote(&url).unwrap();
    assert_eq!(remote.tensor_count(), 21);
    let seen = headers_seen(&other);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(!seen[0].contains_key("referer"), "{seen:?}");

    // The Hub's token: to the Hub and to a redirect on the Hub's own
    // origin, not to another port.
    let sent_token = |s: &Server| {
        headers_seen(s)
            .iter()
            .filter(|h| h.get("authorization").is_some())
            .count()
    };
    for (to, hub_sees, other_sees) in [(other.port, 1, 0), (first.port, 2, 0)] {
        first.take_stats();
        other.take_stats();
        run(gguf()
            .args(["inspect", "--json"])
            .arg(format!("hf://o/r/fault/redirect-{to}/tiny-llama.gguf"))
            .env("HF_ENDPOINT", format!("http://127.0.0.1:{}", first.port))
            .env("HF_TOKEN", "hf_secret_token"));
        assert_eq!(sent_token(&first), hub_sees, "redirect to {to}");
        assert_eq!(sent_token(&other), other_sees, "redirect to {to}");
        for h in headers_seen(&other) {
            assert!(!h.contains_key("referer"), "{h:?}");
        }
    }

    // object_store (S3): neither the signature nor the session token nor
    // a Referer reaches the other origin.
    first.take_stats();
    other.take_stats();
    let endpoint = format!(
        "http://127.0.0.1:{}/fault/redirect-{}",
        first.port, other.port
    );
    let (local, _) = run(gguf().arg("inspect").arg(sample()).arg("--json"));
    let (json, _) = run(s3_via(&mut gguf(), &endpoint).args([
        "inspect",
        "s3://models/tiny-llama.gguf",
        "--json",
    ]));
    assert_eq!(json, local);
    let to_first = headers_seen(&first);
    assert!(
        to_first
            .iter()
            .all(|h| h.contains_key("authorization") && h.contains_key("x-amz-security-token")),
        "the test sends credentials to the first origin: {to_first:?}"
    );
    let to_other = headers_seen(&other);
    assert_eq!(to_other.len(), 2, "HEAD and one range read: {to_other:?}");
    for h in &to_other {
        for name in ["authorization", "x-amz-security-token", "referer", "cookie"] {
            assert!(
                !h.contains_key(name),
                "{name} sent to another origin: {h:?}"
            );
        }
        let values = serde_json::to_string(h).unwrap();
        assert!(!values.contains("session-token-value"), "{values}");
        assert!(!values.contains("AKIDTESTING"), "{values}");
    }
}

#[test]
fn object_store_error_bodies_are_cleaned_and_short() {
    let dir = served_dir();
    let server = Server::http(dir.path());
    let endpoint = format!("http://127.0.0.1:{}/fault/echo-500", server.port);
    let (text, ok) =
        output(s3_via(&mut gguf(), &endpoint).args(["inspect", "s3://models/tiny-llama.gguf"]));
    assert!(!ok, "{text}");
    // The server did echo the credentials (the test is real) ...
    assert!(headers_seen(&server)
        .iter()
        .any(|h| h.contains_key("x-amz-security-token")));
    // ... and none of it is printed.
    for secret in [
        "session-token-value",
        "AKIDTESTING",
        "secret-access-key-value",
        "\x1b",
    ] {
        assert!(!text.contains(secret), "{secret:?} printed: {text}");
    }
    assert!(text.contains("500"), "{text}");
    assert!(
        text.contains("\\x1b[31m"),
        "the escape is shown escaped: {text}"
    );
    assert!(text.len() < 1000, "{} bytes: {text}", text.len());
}

#[test]
fn ollama_refuses_a_redirect_to_plain_http_elsewhere() {
    let store = sources::store();
    let registry = Server::http(store.path());
    let cdn = Server::http(store.path());
    let name = format!("ollama://127.0.0.1:{}/tiny", registry.port);

    // To plain HTTP on this machine's loopback: followed.
    registry.get(&format!(
        "/_set?blob_redirect=http://127.0.0.1:{}",
        cdn.port
    ));
    let (json, _) = run(sources::cli(store.path()).args(["inspect", &name, "--json"]));
    let (local, _) = run(gguf().arg("inspect").arg(sample()).arg("--json"));
    assert_eq!(json, local);
    assert_eq!(cdn.take_stats().0, 1);

    // To plain HTTP on a host that is not loopback (0.0.0.0 reaches this
    // machine, so nothing would leave it): refused before connecting.
    registry.get(&format!("/_set?blob_redirect=http://0.0.0.0:{}", cdn.port));
    let (text, ok) = output(sources::cli(store.path()).args(["inspect", &name]));
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "refused a redirect to http://0.0.0.0:{}/v2/library/tiny/blobs/sha256:",
            cdn.port
        )) && text.contains("plain HTTP"),
        "{text}"
    );
    assert_eq!(cdn.take_stats().0, 0, "the refused host was contacted");
}

#[test]
fn dot_segments_in_hub_urls_are_refused() {
    let dir = served_dir();
    let server = Server::http(dir.path());
    let endpoint = format!("http://127.0.0.1:{}", server.port);
    for (url, part) in [
        ("ms://../../tiny-llama.gguf", "owner"),
        ("ms://o/./tiny-llama.gguf", "repository"),
        ("hf://o/r/tiny-llama.gguf@..", "revision"),
        ("hf://o/r/a/../tiny-llama.gguf", "path"),
    ] {
        let (text, ok) = output(
            gguf()
                .args(["inspect", url])
                .env("MODELSCOPE_ENDPOINT", &endpoint)
                .env("HF_ENDPOINT", &endpoint),
        );
        assert!(!ok, "{url}: {text}");
        assert!(text.contains(&format!("the {part} is")), "{url}: {text}");
    }
    assert_eq!(server.take_stats().0, 0, "a request was sent");
}

#[test]
fn a_trickling_header_meets_the_deadline() {
    let dir = served_dir();
    let server = Server::http(dir.path());
    let url = server.url("fault/trickle/tiny-llama.gguf");
    let started = Instant::now();
    let options = OpenOptions::default().header_deadline(Duration::from_millis(1500));
    let e = open_remote_with(&url, &options).unwrap_err();
    assert!(
        matches!(e, Error::Remote(RemoteError::Deadline { received, elapsed, .. })
            if (1..100).contains(&received) && elapsed >= Duration::from_millis(1500)),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    for cmd in ["inspect", "estimate", "tensor", "hash", "report"] {
        let mut c = gguf();
        c.args([cmd, &url, "--remote-deadline", "0.5"]);
        if cmd == "tensor" {
            c.arg("output.weight");
        }
        let (text, ok) = output(&mut c);
        assert!(!ok, "{cmd}: {text}");
        assert!(
            text.contains("deadline of 0.5 s") && text.contains("bytes arrived in"),
            "{cmd}: {text}"
        );
    }
    let (text, ok) = output(gguf().args(["inspect", &url, "--remote-deadline", "0"]));
    assert!(!ok && text.contains("positive number of seconds"), "{text}");
}

/// Writes a split model of `n` shards into `dir`, each with one tensor of
/// `tensor_bytes`; shard `big_kv` (if any) also holds a string of
/// `kv_bytes`.
fn write_split(dir: &Path, n: u16, tensor_bytes: usize, big_kv: Option<(u16, usize)>) {
    for k in 1..=n {
        let mut b = Builder::new();
        b.set("split.no", k - 1).unwrap();
        b.set("split.count", n).unwrap();
        b.set("split.tensors.count", i32::from(n)).unwrap();
        if let Some((_, len)) = big_kv.filter(|(s, _)| *s == k) {
            b.set("x.padding", "p".repeat(len)).unwrap();
        }
        b.add_tensor(
            format!("blk.{k}.ffn_down.weight"),
            GgmlType::F32,
            &[tensor_bytes as u64 / 4],
            vec![0u8; tensor_bytes],
        )
        .unwrap();
        let mut bytes = Vec::new();
        b.write(&mut bytes).unwrap();
        std::fs::write(dir.join(format!("m-{k:05}-of-{n:05}.gguf")), bytes).unwrap();
    }
}

#[test]
fn later_shards_cost_their_header_not_a_chunk() {
    let dir = tempfile::tempdir().unwrap();
    write_split(dir.path(), 3, 4 << 20, None);
    let server = Server::http(dir.path());
    let model = Model::open(server.url("m-00002-of-00003.gguf")).unwrap();
    let shards: Vec<_> = model.shards().iter().map(|s| s.file()).collect();
    let stats: Vec<_> = shards.iter().map(|s| s.remote_stats().unwrap()).collect();
    assert_eq!(stats[0].bytes, DEFAULT_CHUNK, "the first shard: one chunk");
    for (k, s) in stats.iter().enumerate().skip(1) {
        let header = shards[k].header_len();
        assert_eq!(s.requests, 1, "shard {k}");
        assert!(
            s.bytes < 8 << 10,
            "shard {k}: {} bytes for a header of {header}",
            s.bytes
        );
    }
    let (requests, bytes) = server.take_stats();
    assert_eq!(requests, 3);
    assert!(bytes < DEFAULT_CHUNK + (16 << 10), "{bytes} bytes in all");

    // A later shard with a header longer than the guess: one more read,
    // within the promise (3 reads, the header plus one chunk).
    let dir = tempfile::tempdir().unwrap();
    write_split(dir.path(), 3, 4 << 20, Some((3, 300_000)));
    let server = Server::http(dir.path());
    let model = Model::open(server.url("m-00001-of-00003.gguf")).unwrap();
    let last = model.shards()[2].file();
    let header = last.header_len();
    let stats = last.remote_stats().unwrap();
    assert!(header > 300_000, "{header}");
    assert!(stats.requests <= 3, "{stats:?}");
    assert!(stats.bytes <= header + DEFAULT_CHUNK, "{stats:?}");
}
