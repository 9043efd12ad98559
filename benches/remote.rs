//! Remote inspect over loopback against opening the same file locally.
//!
//! ```text
//! cargo bench --bench remote
//! ```
//!
//! Writes two files: gguf-py's `llama150k` fixture (a 150,000-token
//! vocabulary with scores, token types and 150,000 merges; needs python3
//! with gguf-py, see tests/oracles/requirements.txt) and a file with a
//! 6 MB header (a 300,000-token vocabulary), serves them with
//! `tests/oracles/range_server.py` on 127.0.0.1, and reports for each the
//! median time of `GgufFile::open` (mmap + parse) and of
//! `GgufFile::open(URL)` (HTTP range reads + parse), with the requests and
//! bytes the remote read took.
//!
//! Run by `cargo test --all-targets` (no `--bench` argument), it only
//! makes a quick smoke run on the bundled sample.

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gguf::testing::Raw;
use gguf::{Ctx, Gguf, GgufFile};

fn median(mut f: impl FnMut() -> Duration, runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs).map(|_| f()).collect();
    times.sort();
    times[runs / 2]
}

fn six_mb_header() -> Vec<u8> {
    let tokens = 300_000u64;
    let mut r = Raw::new(Ctx::default());
    r.header(1, 1)
        .str("tokenizer.ggml.tokens")
        .u32(9)
        .u32(8)
        .count(tokens);
    for i in 0..tokens {
        r.str(&format!("token-{i:06}"));
    }
    r.tensor_info("w", &[1 << 20], 0, 0).pad(32);
    r.buf.resize(r.buf.len() + (4 << 20), 0);
    r.buf
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("temp dir");
    let mut names = vec![];
    if full {
        let status = Command::new("python3")
            .arg(root.join("tests/oracles/make_fixtures.py"))
            .arg(dir.path())
            .arg("llama150k")
            .status()
            .expect("python3");
        assert!(status.success(), "make_fixtures.py failed");
        names.push("llama150k.gguf");
        std::fs::write(dir.path().join("header6mb.gguf"), six_mb_header()).expect("write");
        names.push("header6mb.gguf");
    } else {
        std::fs::copy(
            root.join("samples/tiny-llama.gguf"),
            dir.path().join("tiny-llama.gguf"),
        )
        .expect("copy sample");
        names.push("tiny-llama.gguf");
    }
    let mut server = Command::new("python3")
        .arg(root.join("tests/oracles/range_server.py"))
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("port");
    let port: u16 = line.trim().parse().expect("port");
    let runs = if full { 7 } else { 1 };
    println!(
        "{:<16} {:>10} {:>10} {:>12} {:>9} {:>12} {:>12}",
        "file", "file size", "header", "local open", "requests", "bytes", "remote open"
    );
    for name in names {
        let path = dir.path().join(name);
        let url = format!("http://127.0.0.1:{port}/{name}");
        let local = median(
            || {
                let t = Instant::now();
                let f = GgufFile::open(&path).expect("local open");
                std::hint::black_box(f.tensor_count());
                t.elapsed()
            },
            runs,
        );
        let mut stats = None;
        let mut header = 0;
        let remote = median(
            || {
                let t = Instant::now();
                let r = GgufFile::open(url.as_str()).expect("remote open");
                let e = t.elapsed();
                header = r.header_len();
                stats = r.remote_stats();
                e
            },
            runs,
        );
        let s = stats.expect("ran");
        println!(
            "{:<16} {:>10} {:>10} {:>9.1} ms {:>9} {:>12} {:>9.1} ms",
            name,
            std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
            header,
            local.as_secs_f64() * 1e3,
            s.requests,
            s.bytes,
            remote.as_secs_f64() * 1e3,
        );
    }
    drop(server.stdin.take());
    let _ = server.kill();
    let _ = server.wait();
}
