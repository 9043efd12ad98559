//! `gguf get` and `gguf inspect --no-tensors --keys`.

use super::util::{gguf, stdout};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf");

#[test]
fn get_prints_strings_numbers_and_arrays_raw() {
    assert_eq!(
        stdout(&gguf(&["get", SAMPLE, "general.architecture"])),
        "llama\n"
    );
    assert_eq!(stdout(&gguf(&["get", SAMPLE, "llama.block_count"])), "2\n");
    let scores = stdout(&gguf(&["get", SAMPLE, "tokenizer.ggml.scores"]));
    let v: serde_json::Value = serde_json::from_str(&scores).unwrap();
    assert_eq!(v[1], -1.0);
    // --json quotes strings.
    assert_eq!(
        stdout(&gguf(&["get", SAMPLE, "general.architecture", "--json"])),
        "\"llama\"\n"
    );
}

#[test]
fn get_of_a_missing_key_exits_1_with_a_message() {
    let out = gguf(&["get", SAMPLE, "general.nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no metadata key \"general.nope\""), "{err}");
}

#[test]
fn a_directory_given_as_file_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = gguf(&["get", dir.path().to_str().unwrap(), "k"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("is a directory"), "{err}");
}

#[test]
fn inspect_filters_keys_by_glob_and_drops_tensors() {
    let text = stdout(&gguf(&[
        "inspect",
        SAMPLE,
        "--no-tensors",
        "--keys",
        "tokenizer.ggml.*_token_id",
    ]));
    assert!(text.contains("tokenizer.ggml.bos_token_id"), "{text}");
    assert!(!text.contains("general.architecture"), "{text}");
    assert!(!text.contains("Tensors"), "{text}");
    let json = stdout(&gguf(&[
        "inspect",
        SAMPLE,
        "--json",
        "--no-tensors",
        "--keys",
        "general.?rchitecture",
    ]));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(doc.get("tensors").is_none());
    let meta = doc["metadata"].as_array().unwrap();
    assert_eq!(meta.len(), 1);
    assert_eq!(meta[0]["value"], "llama");
}
