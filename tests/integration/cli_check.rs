//! `gguf check`: validation, lint, non-finite values and scales, metadata
//! consistency.

use std::path::Path;
use std::process::Command;

use gguf::write::{Builder, OwnedArray, OwnedValue};
use gguf::{GgmlType, Gguf};

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
    assert!(
        text.contains(": ok (valid, loadable by llama.cpp,"),
        "{text}"
    );
    let (_, json) = check(sample, true);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["loadable"], true);
    assert_eq!(doc["notes"], serde_json::json!([]));
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
    assert_eq!(doc["loadable"], false);
    // The five above; the rest is what llama.cpp misses in this bare file.
    let problems = doc["problems"].as_array().unwrap();
    let own = problems
        .iter()
        .filter(|p| p["check"] != "llama.cpp")
        .count();
    assert_eq!(own, 5, "{problems:#?}");
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

/// The sample after `gguf ARGS...` on a copy of it, and `check`'s exit
/// code and text for that copy.
fn check_after(dir: &Path, edits: &[&[&str]]) -> (Option<i32>, String) {
    let sample = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/tiny-llama.gguf"
    ));
    let path = dir.join("m.gguf");
    std::fs::copy(sample, &path).unwrap();
    for args in edits {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gguf"));
        cmd.arg(args[0]).arg(&path).args(&args[1..]);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
    }
    check(&path, false)
}

#[test]
fn a_key_llama_cpp_reads_as_u32_set_to_a_string_is_not_loadable() {
    let dir = tempfile::tempdir().unwrap();
    let edit: &[&str] = &[
        "set",
        "llama.context_length",
        "8192",
        "--type",
        "string",
        "--force",
    ];
    let (code, text) = check_after(dir.path(), &[edit]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains(
            "llama.cpp: key \"llama.context_length\" has type string; llama.cpp reads it as u32"
        ),
        "{text}"
    );
    assert!(
        text.contains(": valid GGUF, not loadable by llama.cpp;"),
        "{text}"
    );
    assert!(!text.contains(": ok"), "{text}");
}

#[test]
fn a_renamed_required_tensor_is_not_loadable() {
    let dir = tempfile::tempdir().unwrap();
    let edit: &[&str] = &[
        "rename-tensor",
        "blk.1.ffn_up.weight",
        "blk.1.ffn_upp.weight",
    ];
    let (code, text) = check_after(dir.path(), &[edit]);
    assert_eq!(code, Some(1), "{text}");
    for needle in [
        "llama.cpp: tensor \"blk.1.ffn_up.weight\" is missing; llama.cpp requires it",
        "llama.cpp: tensor \"blk.1.ffn_upp.weight\" is not one llama.cpp loads",
        ": valid GGUF, not loadable by llama.cpp;",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn an_unknown_architecture_is_not_loadable() {
    let dir = tempfile::tempdir().unwrap();
    let edit: &[&str] = &["set", "general.architecture", "mynet"];
    let (code, text) = check_after(dir.path(), &[edit]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("llama.cpp: architecture \"mynet\" is not one llama.cpp knows"),
        "{text}"
    );
    assert!(text.contains("not loadable by llama.cpp"), "{text}");
}

#[test]
fn a_known_architecture_without_tensor_rules_is_valid_but_not_claimed_loadable() {
    let dir = tempfile::tempdir().unwrap();
    // xverse is llama-shaped and known to llama.cpp; this tool has no
    // tensor rules for it.
    let sample = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/tiny-llama.gguf"
    ));
    let file = gguf::GgufFile::open(sample).unwrap();
    let mut edits: Vec<Vec<String>> = vec![vec![
        "set".into(),
        "general.architecture".into(),
        "xverse".into(),
    ]];
    for key in file.keys().filter(|k| k.starts_with("llama.")) {
        edits.push(vec![
            "mv".into(),
            key.into(),
            key.replacen("llama.", "xverse.", 1),
        ]);
    }
    let edits: Vec<Vec<&str>> = edits
        .iter()
        .map(|e| e.iter().map(String::as_str).collect())
        .collect();
    let edits: Vec<&[&str]> = edits.iter().map(Vec::as_slice).collect();
    let (code, text) = check_after(dir.path(), &edits);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains(": ok (valid GGUF, finite values, consistent metadata;"),
        "{text}"
    );
    assert!(
        text.contains("architecture \"xverse\" is one llama.cpp knows, but its own keys and its tensor layout were not checked"),
        "{text}"
    );
    assert!(!text.contains("loadable by llama.cpp,"), "{text}");
    let (_, json) = check(&dir.path().join("m.gguf"), true);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["loadable"], false);
    assert_eq!(doc["notes"].as_array().unwrap().len(), 1);
}

/// The real Gemma 3 270M must stay "loadable" (opt-in: `GGUF_GEMMA_MODEL`).
#[test]
fn the_real_gemma_model_is_loadable() {
    let Ok(model) = std::env::var("GGUF_GEMMA_MODEL") else {
        eprintln!("skipped: set GGUF_GEMMA_MODEL to a Gemma 3 GGUF to check it");
        return;
    };
    let (code, text) = check(Path::new(&model), false);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains(": ok (valid, loadable by llama.cpp,"),
        "{text}"
    );
}

#[test]
fn a_shard_is_checked_with_its_split_model() {
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/tiny-llama.gguf"
    ));
    let prefix = dir.path().join("m");
    let out = Command::new(env!("CARGO_BIN_EXE_gguf"))
        .args(["split".as_ref(), sample.as_os_str(), prefix.as_os_str()])
        .args(["--max-tensors", "8"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let shard = |k: u32| dir.path().join(format!("m-{k:05}-of-00003.gguf"));
    // No shard alone holds every tensor; the model does.
    for k in 1..=3 {
        let (_, text) = check(&shard(k), false);
        assert!(
            !text.contains("is missing; llama.cpp requires it"),
            "{text}"
        );
        assert!(text.contains("loadable by llama.cpp"), "shard {k}: {text}");
        // llama.cpp is given the first shard; a later one names its model.
        let later = text.contains("loadable by llama.cpp from its first shard");
        assert_eq!(later, k > 1, "shard {k}: {text}");
        assert!(
            !text.contains("architecture is missing"),
            "shard {k}: {text}"
        );
    }
    std::fs::remove_file(shard(3)).unwrap();
    let (code, text) = check(&shard(1), false);
    assert_eq!(code, Some(1));
    assert!(
        text.contains("llama.cpp: the split model does not open: shard 3 of 3 is missing"),
        "{text}"
    );
    assert!(text.contains("not loadable by llama.cpp"), "{text}");
}
