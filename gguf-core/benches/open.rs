//! Opening and indexing two vocabulary-heavy files, from memory
//! (`GgufFile::from_bytes`, the file read once) and through a memory map
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
use gguf_core::GgufFile;

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

/// Little-endian GGUF v3 fields, appended to a buffer.
#[derive(Default)]
struct Bytes(Vec<u8>);

impl Bytes {
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    /// Key and type tag of a metadata entry.
    fn key(&mut self, key: &str, ty: u32) -> &mut Self {
        self.str(key).u32(ty)
    }
}

/// A Qwen2-shaped file: the metadata and tensor infos of Qwen2-0.5B
/// (vocabulary and merge counts, 24 layers with q/k/v biases), with 32-element
/// F32 tensors. Tokens are byte-level BPE strings: `Ġ`-prefixed words and,
/// one in eight, CJK characters, so UTF-8 validation sees real input.
fn qwen2_header() -> Vec<u8> {
    const N_VOCAB: u64 = 151_936;
    const N_MERGES: u64 = 151_387;
    const LAYERS: usize = 24;
    const WORDS: [&str; 8] = ["the", "ing", "tion", "er", "and", "ment", "ous", "ly"];
    const CJK: [&str; 8] = ["的", "一", "是", "不", "了", "人", "我", "在"];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };

    let mut names = vec!["token_embd.weight".to_string()];
    for l in 0..LAYERS {
        for t in [
            "attn_norm.weight",
            "attn_q.weight",
            "attn_q.bias",
            "attn_k.weight",
            "attn_k.bias",
            "attn_v.weight",
            "attn_v.bias",
            "attn_output.weight",
            "ffn_norm.weight",
            "ffn_gate.weight",
            "ffn_up.weight",
            "ffn_down.weight",
        ] {
            names.push(format!("blk.{l}.{t}"));
        }
    }
    names.push("output_norm.weight".into());

    let mut b = Bytes::default();
    b.0.extend_from_slice(b"GGUF");
    b.u32(3).u64(names.len() as u64).u64(13);
    b.key("general.architecture", 8).str("qwen2");
    b.key("general.name", 8).str("Qwen2-shaped bench header");
    b.key("qwen2.block_count", 4).u32(LAYERS as u32);
    b.key("qwen2.context_length", 4).u32(32768);
    b.key("qwen2.embedding_length", 4).u32(896);
    b.key("qwen2.feed_forward_length", 4).u32(4864);
    b.key("qwen2.attention.head_count", 4).u32(14);
    b.key("general.file_type", 4).u32(1);
    b.key("tokenizer.ggml.model", 8).str("gpt2");
    b.key("tokenizer.ggml.pre", 8).str("qwen2");
    b.key("tokenizer.ggml.tokens", 9).u32(8).u64(N_VOCAB);
    for i in 0..N_VOCAB {
        let r = next();
        let tok = if r % 8 == 0 {
            let n = 1 + (r >> 8) as usize % 3;
            (0..n)
                .map(|k| CJK[(r >> (16 + 3 * k)) as usize % 8])
                .collect()
        } else {
            let w = WORDS[(r >> 8) as usize % 8];
            if r % 3 == 0 {
                format!("Ġ{w}{i}")
            } else {
                format!("{w}{}", i % 1000)
            }
        };
        b.str(&tok);
    }
    b.key("tokenizer.ggml.token_type", 9).u32(5).u64(N_VOCAB);
    for i in 0..N_VOCAB {
        b.u32(if i < 151_643 { 1 } else { 3 });
    }
    b.key("tokenizer.ggml.merges", 9).u32(8).u64(N_MERGES);
    for i in 0..N_MERGES {
        let r = next();
        let (x, y) = (WORDS[r as usize % 8], WORDS[(r >> 3) as usize % 8]);
        b.str(&format!("Ġ{x} {y}{}", i % 500));
    }
    const ELEMS: u64 = 32;
    for (i, name) in names.iter().enumerate() {
        b.str(name)
            .u32(1)
            .u64(ELEMS)
            .u32(0)
            .u64(i as u64 * ELEMS * 4);
    }
    while !b.0.len().is_multiple_of(32) {
        b.0.push(0);
    }
    b.0.resize(b.0.len() + names.len() * ELEMS as usize * 4, 0);
    b.0
}

fn bench_file(c: &mut Criterion, group: &str, path: &Path, bytes: &[u8]) {
    let file = GgufFile::from_bytes(bytes).unwrap();
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
        b.iter(|| {
            GgufFile::from_bytes(black_box(bytes))
                .unwrap()
                .tensor_count()
        })
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
