//! `gguf imatrix convert`.

use std::path::Path;

use super::util::gguf;

/// A legacy importance matrix as llama-imatrix writes it.
fn legacy(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(2i32.to_le_bytes());
    for (name, ncall, vals) in [
        ("blk.0.attn_q.weight", 3i32, [0.1f32, 7.25]),
        ("blk.0.ffn_up.weight", 3, [2.0, 1e-3]),
    ] {
        out.extend((name.len() as i32).to_le_bytes());
        out.extend(name.as_bytes());
        out.extend(ncall.to_le_bytes());
        out.extend(2i32.to_le_bytes());
        for v in vals {
            out.extend(v.to_le_bytes());
        }
    }
    out.extend(3i32.to_le_bytes());
    out.extend(8i32.to_le_bytes());
    out.extend(b"data.txt");
    std::fs::write(path, &out).unwrap();
    out
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn legacy_to_gguf_and_back_gives_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a.dat"),
        dir.path().join("b.gguf"),
        dir.path().join("c.dat"),
    );
    let original = legacy(&a);
    let out = gguf(&["imatrix", "convert", arg(&a), arg(&b)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("(legacy .dat, 2 entries)"), "{text}");
    assert!(text.contains("(GGUF)"), "{text}");
    assert!(out.stderr.is_empty());
    // The GGUF file is what llama-imatrix writes: its keys and tensors.
    let keys = gguf(&["get", arg(&b), "imatrix.chunk_size"]);
    assert_eq!(String::from_utf8(keys.stdout).unwrap(), "512\n");
    let out = gguf(&["imatrix", "convert", arg(&b), arg(&c)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&c).unwrap(), original);
}

#[test]
fn a_file_that_is_no_importance_matrix_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.gguf"));
    std::fs::write(&a, [1, 0, 0, 0, 9, 0]).unwrap();
    let out = gguf(&["imatrix", "convert", arg(&a), arg(&b)]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    // The file named once, first (it used to come after "importance matrix: ").
    assert!(
        err.starts_with(&format!(
            "gguf: {}: importance matrix: legacy file cut at offset 4",
            a.display()
        )),
        "{err}"
    );
    assert_eq!(err.matches("a.dat").count(), 1, "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn an_output_without_a_known_extension_needs_to() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.bin"));
    legacy(&a);
    let out = gguf(&["imatrix", "convert", arg(&a), arg(&b)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!b.exists());
    let out = gguf(&["imatrix", "convert", "--to", "gguf", arg(&a), arg(&b)]);
    assert!(out.status.success());
    assert!(std::fs::read(&b).unwrap().starts_with(b"GGUF"));
}
