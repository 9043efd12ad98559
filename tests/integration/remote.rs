//! Remote reading against real servers on 127.0.0.1, started and stopped
//! here: `tests/oracles/range_server.py` (HTTP with Range support, request
//! and byte counts, injected faults) and `tests/oracles/s3_server.py`
//! (moto's S3 server, reached through object_store with a custom
//! endpoint from the environment, as the `gguf` binary reads it).
//!
//! Needs python3 with the packages of tests/oracles/requirements.txt
//! (`GGUF_PYTHON` picks another interpreter).

use gguf::error::{RemoteError, SourceError, SplitError};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use gguf::write::Builder;
use gguf::{read::DEFAULT_CHUNK, OpenOptions, Source};
use gguf::{Error, GgmlType, Gguf, GgufFile, Model};

use super::util::{assert_same_index, raw, tiny_file};

pub(super) fn oracle(script: &str) -> Command {
    let python = std::env::var("GGUF_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut c = Command::new(python);
    c.arg(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/oracles")
            .join(script),
    );
    c
}

/// A server child process; stopped (stdin closed, then killed) on drop.
pub(super) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    pub(super) port: u16,
}

impl Server {
    pub(super) fn start(mut cmd: Command) -> Server {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cannot start python3: pip install -r tests/oracles/requirements.txt");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("server port");
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("server did not start (printed {line:?})"));
        Server {
            child,
            stdin,
            stdout,
            port,
        }
    }

    pub(super) fn http(dir: &Path) -> Server {
        let mut c = oracle("range_server.py");
        c.arg(dir);
        Server::start(c)
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    /// A plain GET on the server's own endpoints (`/_stats`, `/_reset`,
    /// `/_set`).
    pub(super) fn get(&self, path: &str) -> serde_json::Value {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).unwrap();
        let body = resp.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        serde_json::from_str(body).unwrap()
    }

    /// (requests, bytes) served since the last reset, then resets.
    pub(super) fn take_stats(&self) -> (u64, u64) {
        let s = self.get("/_stats");
        self.get("/_reset");
        (
            s["requests"].as_u64().unwrap(),
            s["bytes"].as_u64().unwrap(),
        )
    }

    /// Sends one command line to the server and waits for its answer.
    fn command(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").unwrap();
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).unwrap();
        assert_eq!(answer.trim(), "ok");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A file whose header region is about 6.5 MB (a 270,000-token
/// vocabulary with scores) and `data` bytes of tensor data.
fn big_header_file(data: usize) -> Vec<u8> {
    let tokens = 270_000u64;
    let mut r = raw();
    r.header(2, 2)
        .str("tokenizer.ggml.tokens")
        .u32(9)
        .u32(8)
        .count(tokens);
    for i in 0..tokens {
        r.str(&format!("token-{i:06}"));
    }
    r.str("tokenizer.ggml.scores").u32(9).u32(6).count(tokens);
    for i in 0..tokens {
        r.f32(-(i as f32));
    }
    let half = (data / 2) as u64 / 32 * 32;
    r.tensor_info("a", &[half / 4], 0, 0)
        .tensor_info("b", &[half / 4], 0, half)
        .pad(32);
    let start = r.buf.len();
    r.buf.resize(start + 2 * half as usize, 0);
    for (i, v) in r.buf[start..].chunks_exact_mut(4).enumerate() {
        v.copy_from_slice(&(i as f32).to_le_bytes());
    }
    r.buf
}

/// The test files: the bundled sample, the doc example file, gguf-py's
/// fixtures (every value type, big-endian, alignments 64 and 1) and the
/// 6.5 MB header, written into `dir`; returns their names.
fn test_files(dir: &Path) -> Vec<String> {
    let out = oracle("make_fixtures.py")
        .arg(dir)
        .args(["all_types", "big_endian", "align64", "align1"])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "make_fixtures.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/tiny-llama.gguf");
    std::fs::copy(sample, dir.join("tiny-llama.gguf")).unwrap();
    std::fs::write(dir.join("tiny.gguf"), tiny_file()).unwrap();
    std::fs::write(dir.join("big-header.gguf"), big_header_file(1 << 20)).unwrap();
    [
        "tiny-llama",
        "tiny",
        "all_types",
        "big_endian",
        "align64",
        "align1",
        "big-header",
    ]
    .iter()
    .map(|n| format!("{n}.gguf"))
    .collect()
}

/// One remote file, through the door.
pub(super) fn open_remote(url: &str) -> gguf::Result<GgufFile<'static>> {
    GgufFile::open(Source::url(url))
}

/// [`open_remote`] with `options`.
pub(super) fn open_remote_with(
    url: &str,
    options: &OpenOptions,
) -> gguf::Result<GgufFile<'static>> {
    GgufFile::open_with(Source::url(url), options)
}

/// Remote header and tensors equal the local ones, at the promised cost.
fn check_against_local(remote: &GgufFile<'static>, local: &GgufFile<'_>, chunk: u64) {
    assert_same_index(local, remote);
    let stats = || remote.remote_stats().unwrap();
    let s = stats();
    assert!(s.requests <= 3, "{} requests", s.requests);
    assert!(
        s.bytes <= local.header_len() + chunk,
        "{} bytes for a header of {}",
        s.bytes,
        local.header_len()
    );
    // One tensor, one request; its bytes, a byte range, rows, and the
    // decoders reading through it.
    let Some(t) = local.tensors().find(|t| t.byte_size().is_ok_and(|n| n > 0)) else {
        return;
    };
    let before = stats().requests;
    let rt = remote.tensor(t.name()).unwrap();
    assert_eq!(&*rt.read().unwrap(), t.data().unwrap());
    assert_eq!(stats().requests, before + 1);
    let n = t.byte_size().unwrap();
    assert_eq!(
        &*rt.read_range(n / 2..n).unwrap(),
        &t.data().unwrap()[n as usize / 2..]
    );
    assert_eq!(stats().requests, before + 2);
    if let Ok(values) = t.to_f32() {
        assert_eq!(rt.to_f32().unwrap(), values);
        assert_eq!(stats().requests, before + 3);
        let rows = t.element_count() / t.shape()[0];
        let got = rt.read_rows_f32(rows - 1..rows).unwrap();
        assert_eq!(got, values[values.len() - t.shape()[0] as usize..]);
    }
    // Data is never held: each read is a request.
    assert!(rt.data().is_err());
}

#[test]
fn http_reads_every_test_file_as_local() {
    let dir = tempfile::tempdir().unwrap();
    let names = test_files(dir.path());
    let server = Server::http(dir.path());
    for name in &names {
        let local = GgufFile::open(dir.path().join(name)).unwrap();
        let remote = open_remote(&server.url(name)).unwrap();
        let (requests, bytes) = server.take_stats();
        let stats = remote.remote_stats().unwrap();
        assert_eq!((requests, bytes), (stats.requests, stats.bytes));
        check_against_local(&remote, &local, DEFAULT_CHUNK);
        server.take_stats();
        // The same with small chunks: more reads, the same result, and
        // never more than the header plus one chunk.
        let chunk = 4096;
        let options = OpenOptions::default().chunk(chunk);
        let remote = open_remote_with(&server.url(name), &options).unwrap();
        assert_same_index(&local, &remote);
        let (_, bytes) = server.take_stats();
        assert!(bytes <= local.header_len() + chunk, "{name}: {bytes} bytes");
    }
}

#[test]
fn a_six_and_a_half_mb_header_costs_three_reads() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = big_header_file(32 << 20);
    std::fs::write(dir.path().join("m.gguf"), &bytes).unwrap();
    let server = Server::http(dir.path());
    let remote = open_remote(&server.url("m.gguf")).unwrap();
    let local = GgufFile::open(&bytes).unwrap();
    let header = local.header_len();
    assert!((6_400_000..6_700_000).contains(&header), "{header}");
    let (requests, served) = server.take_stats();
    assert!(requests <= 3, "{requests} requests");
    assert!(served <= header + DEFAULT_CHUNK, "{served} bytes");
    check_against_local(&remote, &local, DEFAULT_CHUNK);
    let (requests, served) = server.take_stats();
    assert_eq!(requests, 4, "tensor, range, to_f32, rows");
    // Each is the 16 MB tensor "a" (its one row too), half of it for the range.
    assert!(served <= 4 * local.tensor("a").unwrap().byte_size().unwrap());
}

/// The error of opening `path` on `server` with `options`.
fn open_err(server: &Server, path: &str, options: &OpenOptions) -> Error {
    open_remote_with(&server.url(path), options).expect_err("a fault went unnoticed")
}

#[test]
fn bad_servers_are_precise_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = big_header_file(32 << 20);
    std::fs::write(dir.path().join("m.gguf"), &bytes).unwrap();
    std::fs::write(dir.path().join("tiny.gguf"), tiny_file()).unwrap();
    let server = Server::http(dir.path());
    let default = OpenOptions::default();

    // A server ignoring Range: stop at once, never download the file.
    let e = open_err(&server, "fault/ignore-range/m.gguf", &default);
    assert!(
        matches!(e, Error::Remote(RemoteError::RangeIgnored { total: Some(n), .. }) if n == bytes.len() as u64),
        "{e}"
    );
    let (_, served) = server.take_stats();
    assert!(
        served < bytes.len() as u64 / 2,
        "{served} bytes sent before stopping"
    );
    // ... but a whole file no longer than the first read is fine.
    let tiny = open_remote(&server.url("fault/ignore-range/tiny.gguf")).unwrap();
    assert_eq!(tiny.tensor_count(), 2);

    let e = open_err(&server, "fault/no-content-range/m.gguf", &default);
    assert!(
        matches!(
            e,
            Error::Remote(RemoteError::BadContentRange { found: None, .. })
        ),
        "{e}"
    );
    let e = open_err(&server, "fault/wrong-content-range/m.gguf", &default);
    assert!(
        matches!(
            e,
            Error::Remote(RemoteError::BadContentRange { found: Some(_), .. })
        ),
        "{e}"
    );
    let e = open_err(&server, "fault/short-body/m.gguf", &default);
    assert!(
        matches!(e, Error::Remote(RemoteError::ShortBody { got, expected, .. }) if got == expected / 2),
        "{e}"
    );
    let e = open_err(&server, "fault/drop/m.gguf", &default);
    assert!(
        matches!(e, Error::Remote(RemoteError::Network { ref message, .. }) if message.contains("connection lost after")),
        "{e}"
    );
    for status in [403u16, 404, 500, 503] {
        let e = open_err(&server, &format!("fault/status-{status}/m.gguf"), &default);
        assert!(
            matches!(e, Error::Remote(RemoteError::HttpStatus { status: s, .. }) if s == status),
            "{e}"
        );
    }
    let e = open_err(&server, "missing.gguf", &default);
    assert!(
        matches!(
            e,
            Error::Remote(RemoteError::HttpStatus { status: 404, .. })
        ),
        "{e}"
    );

    // A stalled server: the read timeout, not a hang.
    let quick = OpenOptions::default().read_timeout(Duration::from_millis(500));
    let e = open_err(&server, "fault/stall/m.gguf", &quick);
    assert!(
        matches!(e, Error::Remote(RemoteError::Timeout { .. })),
        "{e}"
    );
    let e = open_err(&server, "fault/stall-body/m.gguf", &quick);
    assert!(
        matches!(e, Error::Remote(RemoteError::Timeout { .. })),
        "{e}"
    );

    // A file that changes between reads (header over several reads).
    let e = open_err(&server, "fault/changing/m.gguf", &default);
    assert!(
        matches!(
            e,
            Error::Remote(RemoteError::RemoteChanged { what: "ETag", .. })
        ),
        "{e}"
    );
    let e = open_err(&server, "fault/changing-lm/m.gguf", &default);
    assert!(
        matches!(
            e,
            Error::Remote(RemoteError::RemoteChanged {
                what: "Last-Modified",
                ..
            })
        ),
        "{e}"
    );
    // ... or between the header and a tensor.
    let tiny = open_remote(&server.url("fault/changing/tiny.gguf")).unwrap();
    let e = tiny.tensor("output.weight").unwrap().read().unwrap_err();
    assert!(
        matches!(e, Error::Remote(RemoteError::RemoteChanged { .. })),
        "{e}"
    );

    // Nothing listening.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = open_remote(&format!("http://127.0.0.1:{closed}/m.gguf")).unwrap_err();
    assert!(
        matches!(e, Error::Remote(RemoteError::Network { .. })),
        "{e}"
    );
    let e = open_remote("ftp://127.0.0.1/m.gguf").unwrap_err();
    assert!(
        matches!(e, Error::Source(SourceError::BadUrl { .. })),
        "{e}"
    );
}

#[test]
fn remote_shards_are_found_by_name() {
    let dir = tempfile::tempdir().unwrap();
    // `m` is a good set; in `dup` the third shard repeats the second's
    // tensor.
    for (prefix, last) in [("m", "t3"), ("dup", "t2")] {
        for k in 1..=3u16 {
            let mut b = Builder::new();
            b.set("split.no", k - 1).unwrap();
            b.set("split.count", 3u16).unwrap();
            b.set("split.tensors.count", 3i32).unwrap();
            let name = if k == 3 { last.into() } else { format!("t{k}") };
            b.add_tensor(name, GgmlType::F32, &[4], vec![0u8; 16])
                .unwrap();
            let mut bytes = Vec::new();
            b.write(&mut bytes).unwrap();
            let file = format!("{prefix}-{k:05}-of-00003.gguf");
            std::fs::write(dir.path().join(file), bytes).unwrap();
        }
    }
    let server = Server::http(dir.path());
    // A broken set is refused as it would be on disk, through the library
    // and through every command that reads shards remotely.
    let url = server.url("dup-00001-of-00003.gguf");
    let e = Model::open(url.as_str()).unwrap_err();
    assert!(
        matches!(&e, Error::Split(SplitError::ShardDuplicateTensor { tensor, second, .. })
            if &**tensor == "t2" && second.to_string_lossy().ends_with("dup-00003-of-00003.gguf")),
        "{e}"
    );
    for cmd in ["hash", "inspect"] {
        let out = gguf().args([cmd, &url]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {stderr}");
        assert!(
            stderr.contains("t2") && stderr.contains("dup-00003-of-00003.gguf"),
            "{cmd}: {stderr}"
        );
    }
    server.take_stats();
    let model = Model::open(server.url("m-00002-of-00003.gguf")).unwrap();
    let names: Vec<_> = model
        .shards()
        .iter()
        .map(|s| s.file().tensor_at(0).unwrap().name().to_owned())
        .collect();
    assert_eq!(names, ["t1", "t2", "t3"]);
    assert_eq!(server.take_stats().0, 3);
    // Every tensor reads from its own shard, one request each.
    assert_eq!(model.tensor("t3").unwrap().read().unwrap().len(), 16);
    assert_eq!(server.take_stats().0, 1);
}

pub(super) fn gguf() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gguf"));
    c.env_remove("HF_TOKEN").env_remove("HF_ENDPOINT");
    c
}

#[track_caller]
pub(super) fn run(c: &mut Command) -> (String, String) {
    let out = c.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{c:?} failed: {stderr}");
    (stdout, stderr)
}

#[test]
fn hf_urls_send_the_token_to_the_hub_and_nowhere_else() {
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/tiny-llama.gguf");
    std::fs::copy(&sample, dir.path().join("tiny-llama.gguf")).unwrap();
    let hub = Server::http(dir.path());
    let cdn = Server::http(dir.path());
    let (local, _) = run(gguf().arg("inspect").arg(&sample).arg("--json"));
    let url = format!(
        "hf://owner/repo/fault/redirect-{}/tiny-llama.gguf@v1",
        cdn.port
    );
    let (json, stderr) = run(gguf()
        .args(["inspect", &url, "--json", "--verbose"])
        .env("HF_ENDPOINT", format!("http://127.0.0.1:{}", hub.port))
        .env("HF_TOKEN", "hf_secret_token"));
    assert_eq!(json, local);
    assert!(!stderr.contains("hf_secret"), "{stderr}");
    assert!(stderr.contains("1 range requests"), "{stderr}");
    let seen = |s: &Server| s.get("/_stats")["auth"].as_array().unwrap().clone();
    assert_eq!(seen(&hub), [serde_json::json!("Bearer hf_secret_token")]);
    assert_eq!(seen(&cdn), [serde_json::Value::Null]);
}

#[test]
fn cli_reads_urls_like_local_files() {
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/tiny-llama.gguf");
    let server = Server::http(sample.parent().unwrap());
    let url = server.url("tiny-llama.gguf");
    let (local, _) = run(gguf().arg("inspect").arg(&sample).arg("--json"));
    let (remote, stderr) = run(gguf().args(["inspect", &url, "--json", "--verbose"]));
    assert_eq!(remote, local);
    assert!(
        stderr.contains("requests") && stderr.contains("bytes"),
        "{stderr}"
    );
    let (text_local, _) = run(gguf().arg("inspect").arg(&sample));
    let (text_remote, _) = run(gguf().args(["inspect", &url]));
    assert_eq!(text_local, text_remote);
    let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    run(gguf()
        .arg("tensor")
        .arg(&sample)
        .arg("blk.0.attn_v.weight")
        .arg("--npy")
        .arg(&a));
    server.take_stats();
    run(gguf()
        .args(["tensor", &url, "blk.0.attn_v.weight", "--npy"])
        .arg(&b));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(server.take_stats().0, 2, "header, then the tensor");
    let (s1, _) = run(gguf().arg("tensor").arg(&sample).arg("output.weight"));
    let (s2, _) = run(gguf().args(["tensor", &url, "output.weight"]));
    assert_eq!(s1, s2);
}

/// The environment object_store's S3 builder reads, for moto on `port`.
pub(super) fn s3_env(c: &mut Command, port: u16) -> &mut Command {
    c.env("AWS_ENDPOINT", format!("http://127.0.0.1:{port}"))
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_PROFILE")
}

/// The number before `unit` in the `--verbose` header line ("N range
/// requests", "M bytes").
fn counted(stderr: &str, unit: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.contains(": header "))
        .expect(stderr);
    let words: Vec<&str> = line.split([' ', ',']).filter(|w| !w.is_empty()).collect();
    let at = words
        .iter()
        .rposition(|w| *w == unit)
        .unwrap_or_else(|| panic!("no {unit} in {line}"));
    words[at - 1].parse().unwrap()
}

#[test]
fn s3_reads_every_test_file_as_local() {
    let dir = tempfile::tempdir().unwrap();
    let names = test_files(dir.path());
    let paths: Vec<PathBuf> = names.iter().map(|n| dir.path().join(n)).collect();
    let mut c = oracle("s3_server.py");
    c.arg("models").args(&paths);
    let mut s3 = Server::start(c);
    for (name, path) in names.iter().zip(&paths) {
        let local = GgufFile::open(path).unwrap();
        let url = format!("s3://models/{name}");
        let (json_local, _) = run(gguf().arg("inspect").arg(path).arg("--json"));
        let (json, stderr) =
            run(s3_env(&mut gguf(), s3.port).args(["inspect", &url, "--json", "--verbose"]));
        assert_eq!(json, json_local, "{name}");
        assert!(counted(&stderr, "range") <= 3, "{stderr}");
        assert!(stderr.contains("+ 1 metadata"), "{stderr}");
        assert!(
            counted(&stderr, "bytes") <= local.header_len() + DEFAULT_CHUNK,
            "{stderr}"
        );
        let tensor = local
            .tensors()
            .find(|t| t.byte_size().is_ok_and(|n| n > 0) && t.to_f32().is_ok());
        if let Some(t) = tensor {
            let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
            run(gguf()
                .arg("tensor")
                .arg(path)
                .arg(t.name())
                .arg("--npy")
                .arg(&a));
            let (_, stderr) = run(s3_env(&mut gguf(), s3.port)
                .args(["tensor", &url, t.name(), "--verbose", "--npy"])
                .arg(&b));
            assert_eq!(
                std::fs::read(&a).unwrap(),
                std::fs::read(&b).unwrap(),
                "{name}"
            );
            assert!(stderr.contains("tensor data: 1 range request"), "{stderr}");
        }
    }
    // Missing objects and a file replaced under a reader.
    let out = s3_env(&mut gguf(), s3.port)
        .args(["inspect", "s3://models/missing.gguf"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("404"));
    s3.command(&format!(
        "put tiny.gguf {}",
        dir.path().join("tiny-llama.gguf").display()
    ));
    let (json, _) =
        run(s3_env(&mut gguf(), s3.port).args(["inspect", "s3://models/tiny.gguf", "--json"]));
    let (json_local, _) = run(gguf()
        .arg("inspect")
        .arg(dir.path().join("tiny-llama.gguf"))
        .arg("--json"));
    assert_eq!(json, json_local);
}
