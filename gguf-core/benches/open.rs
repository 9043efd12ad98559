//! Opening and indexing a llama-shaped file with a 150,000-token vocabulary
//! (tokens, scores, token types and 150,000 merges), from memory
//! (`GgufFile::from_bytes`, the file read once) and through a memory map
//! (`GgufFile::open`).
//!
//! Run: `cargo bench -p gguf-core --bench open`
//!
//! The fixture is written by gguf-py (`pip install -r tests/oracles/requirements.txt`):
//! `python3 tests/oracles/make_fixtures.py <dir> llama150k`. The bench does
//! that itself into Cargo's target tmp dir when the file is missing (set
//! `GGUF_PYTHON` for another interpreter), or uses `GGUF_BENCH_FILE` if set.
//! Compare with gguf-py's reader: `python3 benches/gguf_py_open.py <file>`.

use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;

use criterion::{criterion_group, criterion_main, Criterion};
use gguf_core::GgufFile;

fn fixture() -> PathBuf {
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

fn open(c: &mut Criterion) {
    let path = fixture();
    let bytes = std::fs::read(&path).unwrap();
    let file = GgufFile::from_bytes(&bytes).unwrap();
    assert_eq!(
        file.get_strings("tokenizer.ggml.tokens").unwrap().len(),
        150_000
    );
    eprintln!(
        "{}: {} bytes, header region {} bytes, {} KVs, {} tensors",
        path.display(),
        bytes.len(),
        file.header_len(),
        file.kv_count(),
        file.tensor_count()
    );

    let mut g = c.benchmark_group("open_llama150k");
    g.bench_function("from_bytes", |b| {
        b.iter(|| {
            GgufFile::from_bytes(black_box(&bytes))
                .unwrap()
                .tensor_count()
        })
    });
    g.bench_function("open_mmap", |b| {
        b.iter(|| GgufFile::open(black_box(&path)).unwrap().tensor_count())
    });
    g.finish();
}

criterion_group!(benches, open);
criterion_main!(benches);
