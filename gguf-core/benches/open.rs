//! Opening and indexing two vocabulary-heavy files, from memory
//! (`GgufFile::open(&bytes)`, the file read once) and through a memory map
//! (`GgufFile::open`):
//!
//! - `open_llama150k`: a llama-shaped file with a 150,000-token vocabulary
//!   (tokens, scores, token types and 150,000 merges), written by gguf-py;
//! - `open_qwen2_header`: a Qwen2-shaped header (151,936 byte-level BPE
//!   tokens, token types, 151,387 merges, 290 tensor infos of 24 layers),
//!   generated here byte by byte, with tiny tensors so the file is mostly
//!   header.
//!
//! Run: `cargo bench -p gguf-core --bench open`
//!
//! The llama fixture is written by gguf-py (`pip install -r tests/oracles/requirements.txt`):
//! `python3 tests/oracles/make_fixtures.py <dir> llama150k`. The bench does
//! that itself into Cargo's target tmp dir when the file is missing (set
//! `GGUF_PYTHON` for another interpreter), or uses `GGUF_BENCH_FILE` if set.
//! Compare with gguf-py's reader: `python3 benches/gguf_py_open.py <file>`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{criterion_group, criterion_main, Criterion};
use gguf_core::Gguf;
use gguf_core::GgufFile;

#[path = "common/qwen2.rs"]
mod qwen2;

use qwen2::qwen2_header;

fn llama_fixture() -> PathBuf {
    if let Ok(path) = std::env::var("GGUF_BENCH_FILE") {
        return path.into();
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("llama150k.gguf");
    if !path.exists() {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/oracles/make_fixtures.py"
        );
        let python = std::env::var("GGUF_PYTHON").unwrap_or_else(|_| "python3".into());
        let status = Command::new(&python)
            .arg(script)
            .arg(&dir)
            .arg("llama150k")
            .status()
            .unwrap_or_else(|e| panic!("cannot run {python}: {e}; install python3 and `pip install -r tests/oracles/requirements.txt`"));
        assert!(
            status.success(),
            "make_fixtures.py failed: pip install -r tests/oracles/requirements.txt"
        );
    }
    path
}

fn bench_file(c: &mut Criterion, group: &str, path: &Path, bytes: &[u8]) {
    let file = GgufFile::open(bytes).unwrap();
    assert!(file.get_strings("tokenizer.ggml.tokens").unwrap().len() >= 150_000);
    eprintln!(
        "{}: {} bytes, header region {} bytes, {} KVs, {} tensors",
        path.display(),
        bytes.len(),
        file.header_len(),
        file.kv_count(),
        file.tensor_count()
    );
    let mut g = c.benchmark_group(group);
    g.bench_function("from_bytes", |b| {
        b.iter(|| GgufFile::open(black_box(bytes)).unwrap().tensor_count())
    });
    g.bench_function("open_mmap", |b| {
        b.iter(|| GgufFile::open(black_box(path)).unwrap().tensor_count())
    });
    g.finish();
}

fn open(c: &mut Criterion) {
    let path = llama_fixture();
    let bytes = std::fs::read(&path).unwrap();
    bench_file(c, "open_llama150k", &path, &bytes);

    let bytes = qwen2_header();
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("qwen2_header.gguf");
    std::fs::write(&path, &bytes).unwrap();
    bench_file(c, "open_qwen2_header", &path, &bytes);
}

criterion_group!(benches, open);
criterion_main!(benches);
