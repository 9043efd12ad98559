//! Small fixes found by trying the tool as a new user would: gguf-py's
//! type names in `gguf set`, shell completions.

use std::process::Output;

use super::util::gguf;

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn set_accepts_gguf_py_type_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf"),
        &path,
    )
    .unwrap();
    let p = path.to_str().unwrap();
    for (key, ty, value, json_type) in [
        ("a.s", "str", "hi there", "string"),
        ("a.i", "int", "-3", "i32"),
        ("a.f", "float", "0.5", "f32"),
        ("a.u", "UINT32", "7", "u32"),
        ("a.d", "float64", "2.25", "f64"),
        ("a.l", "[uint16]", "[1, 2]", "array"),
    ] {
        ok(gguf(&["set", p, key, value, "--type", ty]));
        let doc: serde_json::Value = serde_json::from_str(&ok(gguf(&[
            "inspect",
            p,
            "--json",
            "--no-tensors",
            "--keys",
            key,
        ])))
        .unwrap();
        assert_eq!(doc["metadata"][0]["type"], json_type, "{ty}");
    }
    assert_eq!(ok(gguf(&["get", p, "a.s"])), "hi there\n");
    assert_eq!(ok(gguf(&["get", p, "a.l"])), "[1,2]\n");
    let out = gguf(&["set", p, "a.x", "1", "--type", "nonsense"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown type \"nonsense\""));
}

#[test]
fn completions_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let script = ok(gguf(&["completions", shell]));
        for cmd in [
            "inspect", "get", "hash", "diff", "check", "rewrite", "convert",
        ] {
            assert!(script.contains(cmd), "{shell} completions lack {cmd}");
        }
    }
    assert!(!gguf(&["completions", "nosuchshell"]).status.success());
}
