//! `gguf check`: validation, lint, non-finite values and scales, metadata
//! consistency.

use std::path::Path;
use std::process::Command;

use gguf::write::{Builder, OwnedArray, OwnedValue};
use gguf::GgmlType;

fn check(path: &Path, json: bool) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gguf"));
    cmd.arg("check").arg(path);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().expect("run gguf");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_sample_is_ok() {
    let sample = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/tiny-llama.gguf"
    ));
    let (code, text) = check(sample, false);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains(": ok"), "{text}");
}

#[test]
fn every_kind_of_problem_is_reported_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.gguf");
    let mut w = [0.5f32; 32];
    w[7] = f32::NAN;
    w[9] = f32::INFINITY;
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("llama.block_count", 3u32).unwrap();
    let tokens = OwnedArray::String(vec!["a".into(), "b".into(), "c".into()]);
    b.set("tokenizer.ggml.tokens", OwnedValue::Array(tokens))
        .unwrap();
    b.set(
        "tokenizer.ggml.scores",
        OwnedValue::Array(OwnedArray::F32(vec![0.0, 1.0])),
    )
    .unwrap();
    b.set("tokenizer.ggml.bos_token_id", 10u32).unwrap();
    b.set("tokenizer.ggml.eos_token_id", 2u32).unwrap();
    b.add_tensor("blk.0.w", GgmlType::F32, &[32], &w[..])
        .unwrap();
    // A Q8_0 block whose f16 scale is +inf (0x7c00).
    let mut q = vec![0u8; 34 * 2];
    q[34] = 0x00;
    q[35] = 0x7c;
    b.add_tensor("blk.1.q", GgmlType::Q8_0, &[64], q).unwrap();
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    std::fs::write(&path, out).unwrap();

    let (code, text) = check(&path, false);
    assert_eq!(code, Some(1), "{text}");
    for needle in [
        "tokenizer.ggml.scores has 2 entries, tokenizer.ggml.tokens has 3",
        "tokenizer.ggml.bos_token_id = 10 is outside the vocabulary of 3 tokens",
        "llama.block_count = 3, but the tensors have 2 blk.N layers",
        "tensor \"blk.0.w\" (F32): 2 non-finite values, the first at element 7",
        "tensor \"blk.1.q\" (Q8_0): 1 non-finite block scales, the first at block 1",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    assert!(!text.contains("eos_token_id"), "{text}");

    let (code, json) = check(&path, true);
    assert_eq!(code, Some(1));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["problems"].as_array().unwrap().len(), 5);
}

#[test]
fn an_invalid_file_is_a_problem_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.gguf");
    std::fs::write(&path, b"GGUF\x03\x00\x00\x00").unwrap();
    let (code, json) = check(&path, true);
    assert_eq!(code, Some(1));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["problems"][0]["check"], "format");
}
