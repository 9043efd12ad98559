//! The `gguf` command-line tool, run as a child process.

use super::util::{gguf, tiny_file, Raw};

#[test]
fn inspect_json_lists_every_entry_and_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.gguf");
    std::fs::write(&path, tiny_file()).unwrap();
    let out = gguf(&["inspect", path.to_str().unwrap(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["version"], 3);
    assert_eq!(doc["endian"], "little");
    assert_eq!(doc["alignment"], 32);
    let meta = doc["metadata"].as_array().unwrap();
    let keys: Vec<&str> = meta.iter().map(|m| m["key"].as_str().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "general.architecture",
            "llama.context_length",
            "tokenizer.ggml.tokens",
            "tokenizer.ggml.scores"
        ]
    );
    assert_eq!(meta[1]["type"], "u32");
    assert_eq!(meta[1]["value"], 4096);
    assert_eq!(meta[2]["element_type"], "string");
    assert_eq!(
        meta[2]["value"],
        serde_json::json!(["<s>", "</s>", "a", "b"])
    );
    assert_eq!(meta[3]["value"], serde_json::json!([0.0, 0.0, -1.0, -2.0]));
    let tensors = doc["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 2);
    assert_eq!(tensors[1]["name"], "output.weight");
    assert_eq!(tensors[1]["type"], "F32");
    assert_eq!(tensors[1]["type_id"], 0);
    assert_eq!(tensors[1]["shape"], serde_json::json!([8, 2]));
    assert_eq!(tensors[1]["offset"], 128);
    assert_eq!(tensors[1]["bytes"], 64);
}

#[test]
fn inspect_text_abbreviates_long_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vocab.gguf");
    let mut r = Raw::default();
    r.header(0, 1)
        .str("tokenizer.ggml.tokens")
        .u32(9)
        .u32(8)
        .count(1000);
    for i in 0..1000 {
        r.str(&format!("t{i}"));
    }
    std::fs::write(&path, &r.buf).unwrap();
    let out = gguf(&["inspect", path.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("[string; 1000] [\"t0\", \"t1\", \"t2\", \"t3\", \"t4\", ...]"),
        "{text}"
    );
    assert!(
        !text.contains("t999"),
        "long array printed in full:\n{text}"
    );
    // No tensors: nothing to count, and no quantization made up for them.
    assert!(text.contains("\n  no tensors\n"), "{text}");
    assert!(!text.contains("bits per weight"), "{text}");
}

#[test]
fn inspect_of_an_invalid_file_fails_with_the_error_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.gguf");
    let mut bytes = tiny_file();
    bytes[4] = 9; // version 9
    std::fs::write(&path, &bytes).unwrap();
    let out = gguf(&["inspect", path.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unsupported GGUF version 9"), "{err}");
}

#[test]
fn inspect_says_on_stderr_why_it_shows_no_summary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.gguf");
    let mut b = gguf::write::Builder::new();
    b.set("general.architecture", "llama").unwrap();
    // llama.cpp reads it as a u32: no summary can be made.
    b.set("llama.block_count", "2").unwrap();
    std::fs::write(&path, b.to_vec().unwrap()).unwrap();
    for json in [false, true] {
        let mut args = vec!["inspect", path.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let out = gguf(&args);
        assert!(out.status.success(), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("no model summary: metadata key \"llama.block_count\" has type string"),
            "{err}"
        );
        let text = String::from_utf8(out.stdout).unwrap();
        if json {
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert!(doc["summary"].is_null(), "{text}");
        } else {
            assert!(!text.contains("Model:"), "{text}");
        }
    }
}
