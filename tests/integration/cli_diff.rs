//! `gguf diff`: exit status as diff(1), metadata/tensor changes, values.

use std::path::Path;

use gguf::{
    format::{OwnedArray, OwnedValue},
    write::Builder,
};
use gguf::{Endian, GgmlType};

use super::util::gguf;

fn diff(a: &Path, b: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["diff".as_ref(), a.as_os_str(), b.as_os_str()];
    args.extend(extra.iter().map(|s| std::ffi::OsStr::new(*s)));
    let out = gguf(&args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn write(path: &Path, endian: Endian, tokens: &[&str], name: &str, scale: f32) {
    let w: Vec<f32> = (0..64).map(|i| i as f32 * scale).collect();
    let mut b = Builder::new();
    b.endian(endian);
    b.set("general.name", name).unwrap();
    b.set(
        "tokenizer.ggml.tokens",
        OwnedValue::Array(OwnedArray::String(
            tokens.iter().map(|s| s.to_string()).collect(),
        )),
    )
    .unwrap();
    b.add_tensor("w", GgmlType::F32, &[32, 2], &w[..]).unwrap();
    b.add_tensor_quantized("q", GgmlType::Q8_0, &[32, 2], w.clone())
        .unwrap();
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    std::fs::write(path, out).unwrap();
}

#[test]
fn equal_files_exit_0_and_different_ones_1() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, be) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("be"),
    );
    write(&a, Endian::Little, &["x", "y", "z"], "m", 1.0);
    assert_eq!(diff(&a, &a, &[]).0, Some(0));
    // Another byte order only changes the header field.
    write(&be, Endian::Big, &["x", "y", "z"], "m", 1.0);
    let (code, text) = diff(&a, &be, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(text.trim(), "header: endian little -> big");

    write(&b, Endian::Little, &["x", "q", "z", "w"], "n", 1.5);
    let (code, text) = diff(&a, &b, &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("metadata ~ general.name: \"m\" -> \"n\""),
        "{text}"
    );
    assert!(
        text.contains(
            "tokenizer.ggml.tokens: [string; 3] -> [string; 4], first difference at index 1"
        ),
        "{text}"
    );
    assert!(text.contains("tensor ~ w: data differ"), "{text}");

    let (code, json) = diff(&a, &b, &["--json", "--values"]);
    assert_eq!(code, Some(1));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["equal"], false);
    assert_eq!(doc["metadata"]["changed"][1]["first_difference"], 1);
    let values = doc["values"].as_array().unwrap();
    let w = values.iter().find(|v| v["name"] == "w").unwrap();
    // b = 1.5 a: max |a - b| = 0.5 * 63, cosine 1.
    assert_eq!(w["max_abs_diff"], 31.5);
    assert!((w["cosine"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    assert!(w["rmse"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_missing_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    write(&a, Endian::Little, &["x"], "m", 1.0);
    let out = gguf(&[
        "diff".as_ref(),
        a.as_os_str(),
        dir.path().join("nope").as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
}
