//! Exit statuses and messages as the README documents them: invalid
//! option values are usage errors (2), every error names the file it is
//! about first (`gguf: FILE: ...`), and the small things a user trips on
//! (`rename-tensor` onto a taken name, `diff --values` noise, the tensor
//! table with unknown types, the sources `--help` lists).

use std::path::{Path, PathBuf};
use std::process::Output;

use gguf::write::Builder;
use gguf::GgmlType;

use super::util::{gguf, raw};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf");

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A copy of the sample in a fresh directory.
fn sample_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::copy(SAMPLE, &path).unwrap();
    (dir, path)
}

/// A file with a tensor of the unknown type id 1000 between two F32 ones.
fn unknown_type_file(path: &Path) {
    let mut r = raw();
    r.header(3, 0);
    r.tensor_info("before", &[8], 0, 0);
    r.tensor_info("strange", &[32, 2], 1000, 32);
    r.tensor_info("after", &[8], 0, 32);
    r.pad(32);
    for i in 0..16 {
        r.f32(i as f32);
    }
    std::fs::write(path, &r.buf).unwrap();
}

#[test]
fn invalid_option_values_are_usage_errors() {
    let (dir, m) = sample_copy();
    let out = dir.path().join("out.gguf");
    let (m, o) = (m.to_str().unwrap(), out.to_str().unwrap());
    let cases: [(&[&str], &str); 11] = [
        (&["rewrite", m, o, "--alignment", "3"], "--alignment"),
        (&["rewrite", m, o, "--alignment", "0"], "--alignment"),
        (&["rewrite", m, o, "--version", "4"], "--version"),
        (&["rewrite", m, o, "--version", "0"], "--version"),
        (
            &["set", m, "general.name", "x", "--type", "nonsense"],
            "--type",
        ),
        (&["split", m, o], "--max-size"),
        (&["split", m, o, "--max-tensors", "0"], "--max-tensors"),
        (&["estimate", m, "-fa", "maybe"], "--flash-attn"),
        (&["estimate", m, "-ctk", "q9"], "--cache-type-k"),
        (&["estimate", m, "--fit", "lots"], "--fit"),
        (&["convert", m, o, "--type", "Q4_K_M"], "--type"),
    ];
    for (args, option) in cases {
        let out = gguf(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(option), "{args:?}: {err}");
        // The input is not blamed: `--version 4` used to say "reading
        // header: unsupported GGUF version 4" about the input file.
        assert!(
            !err.contains("reading header") && !err.contains(m),
            "{args:?}: {err}"
        );
        assert!(stdout(&out).is_empty(), "{args:?}");
        assert!(!Path::new(o).exists(), "{args:?} wrote {o}");
    }

    // A value that does not fit the key's type, or a new key without a
    // type, is a usage error too; it names the file and the key.
    for (args, expected) in [
        (
            &["set", m, "llama.block_count", "abc"][..],
            format!("gguf: {m}: llama.block_count: \"abc\" is not a valid u32"),
        ),
        (
            &["set", m, "llama.block_count", "-1"],
            format!(
                "gguf: {m}: llama.block_count: \"-1\" is out of range for u32 (0 to 4294967295)"
            ),
        ),
        (
            &["set", m, "tokenizer.ggml.tokens", "[1]"],
            format!("gguf: {m}: tokenizer.ggml.tokens: 1 is not a string"),
        ),
        (
            &["set", m, "new.key", "3"],
            format!("gguf: {m}: new.key: no such key yet: give the new key's type with --type"),
        ),
    ] {
        let out = gguf(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with(&expected), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(m).unwrap(), std::fs::read(SAMPLE).unwrap());
}

/// Every message starts with `gguf: FILE:`, FILE being the file the
/// message is about (the input, the output, the manifest, the source).
#[test]
fn messages_start_with_the_file_they_are_about() {
    let (dir, m) = sample_copy();
    let d = dir.path();
    let strange = d.join("strange.gguf");
    unknown_type_file(&strange);
    let out = d.join("out.gguf");
    let (m, s, o) = (
        m.to_str().unwrap(),
        strange.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let q4 = d.join("q4.gguf");
    let q4 = q4.to_str().unwrap();
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["rewrite", s, o], 1, s),
        (vec!["merge", s, o], 1, s),
        (vec!["split", s, o, "--max-tensors", "1"], 1, s),
        (vec!["convert", s, o, "--type", "Q8_0"], 1, s),
        (vec!["hash", m, "--check", "missing.sha"], 5, "missing.sha"),
        (
            vec!["inspect", "ollama:nothing-here"],
            1,
            "ollama:nothing-here",
        ),
        (
            vec!["rename-tensor", m, "output.weight", "token_embd.weight"],
            1,
            m,
        ),
        (vec!["mv", m, "general.name", "general.type"], 1, m),
        (
            vec!["set", m, "general.name", "--from-file", "missing.txt"],
            1,
            "missing.txt",
        ),
        (vec!["get", m, "no.such.key"], 1, m),
        (vec!["tensor", m, "no.such.tensor"], 1, m),
        (vec!["estimate", m, "-ctv", "q8_0", "-fa", "off"], 1, m),
        // A warning: weights kept as they are.
        (vec!["convert", m, q4, "--type", "Q4_0"], 0, q4),
    ];
    for (args, code, file) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gguf"))
            .args(&args)
            .current_dir(d)
            .env("OLLAMA_MODELS", d)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(!err.is_empty(), "{args:?}: no message");
        for line in err.lines() {
            assert!(
                line.starts_with(&format!("gguf: {file}: ")),
                "{args:?}: {line:?} does not start with \"gguf: {file}: \""
            );
        }
    }
}

#[test]
fn rename_tensor_onto_a_taken_name_says_so() {
    let (_dir, m) = sample_copy();
    let m = m.to_str().unwrap();
    let out = gguf(&["rename-tensor", m, "output.weight", "token_embd.weight"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "gguf: {m}: tensor \"output.weight\": cannot rename it to \"token_embd.weight\": \
             the model already has a tensor of that name\n"
        )
    );
    assert_eq!(std::fs::read(m).unwrap(), std::fs::read(SAMPLE).unwrap());
}

/// `diff --values` lists the tensors whose values differ; `--all` every
/// tensor compared.
#[test]
fn diff_values_lists_only_what_differs_unless_all() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, scale: f32| {
        let same: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let scaled: Vec<f32> = (0..64).map(|i| i as f32 * scale).collect();
        let mut b = Builder::new();
        b.add_tensor("same", GgmlType::F32, &[32, 2], &same[..])
            .unwrap();
        b.add_tensor("scaled", GgmlType::F32, &[32, 2], &scaled[..])
            .unwrap();
        let path = dir.path().join(name);
        b.write_to_path(&path).unwrap();
        path
    };
    let (a, b) = (write("a.gguf", 1.0), write("b.gguf", 2.0));
    let run = |extra: &[&str]| {
        let mut args = vec!["diff", a.to_str().unwrap(), b.to_str().unwrap()];
        args.extend(extra);
        let out = gguf(&args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        stdout(&out)
    };
    let text = run(&["--values"]);
    assert!(
        text.contains("values scaled: max_abs_diff 6.3000e1"),
        "{text}"
    );
    assert!(!text.contains("values same"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&run(&["--values", "--json"])).unwrap();
    assert_eq!(json["values"].as_array().unwrap().len(), 1, "{json}");
    let text = run(&["--values", "--all"]);
    assert!(
        text.contains("values same: max_abs_diff 0.0000e0"),
        "{text}"
    );
    assert!(text.contains("values scaled:"), "{text}");

    // Equal files with --values say so, rather than listing every tensor.
    let out = gguf(&["diff", a.to_str().unwrap(), a.to_str().unwrap(), "--values"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("hold the same"), "{}", stdout(&out));
}

/// Column widths follow the widest cell: `unknown(1000)` is longer than
/// any type name.
#[test]
fn inspect_tensor_table_stays_aligned_with_unknown_types() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("strange.gguf");
    unknown_type_file(&path);
    let out = gguf(&["inspect", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Tensors ("))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(table.len(), 4, "{text}");
    assert!(table[2].contains("unknown(1000)"), "{text}");
    // Every column starts at the same place on every row.
    let starts = |line: &str| -> Vec<usize> {
        line.char_indices()
            .filter(|&(i, c)| c != ' ' && line[..i].ends_with("  "))
            .map(|(i, _)| i)
            .collect()
    };
    let header = starts(table[0]);
    let right_edges: Vec<usize> = table.iter().map(|l| l.len()).collect();
    assert!(
        right_edges.iter().all(|&e| e == right_edges[0]),
        "rows end at {right_edges:?}:\n{text}"
    );
    for row in &table[1..] {
        // name, type and shape are left-aligned under their headers.
        assert_eq!(starts(row)[..3], header[..3], "{text}");
    }
}

/// The sources a model can come from, as `--help` and the docs list them.
const SOURCES: [&str; 9] = [
    "http(s)://",
    "hf://",
    "ms://",
    "ollama://",
    "ollama:NAME",
    "s3://",
    "gs://",
    "az://",
    "shard",
];

#[test]
fn help_and_crate_docs_list_every_source() {
    for cmd in ["inspect", "tensor", "hash", "estimate"] {
        let help = stdout(&gguf(&[cmd, "--help"]));
        for source in SOURCES {
            assert!(
                help.contains(source),
                "`{cmd} --help` lacks {source}:\n{help}"
            );
        }
    }
    for doc in ["gguf-core/src/lib.rs", "gguf-core/README.md", "README.md"] {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(doc))
            .unwrap()
            .replace('\n', " ");
        let features = text
            .split("- `remote`")
            .nth(1)
            .unwrap_or_else(|| panic!("{doc} does not describe the remote feature"));
        let features = &features[..features.len().min(400)];
        for source in [
            "http(s)://",
            "hf://",
            "ms://",
            "ollama://",
            "s3://",
            "gs://",
            "az://",
        ] {
            assert!(
                features.contains(source),
                "{doc}'s `remote` feature lacks {source}: {features}"
            );
        }
    }
}

#[test]
fn an_unreadable_file_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.gguf");
    let m = missing.to_str().unwrap();
    for args in [
        vec!["inspect", m],
        vec!["get", m, "general.name"],
        vec!["set", m, "general.name", "x"],
    ] {
        let out = gguf(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("No such file"), "{args:?}: {err}");
        assert_eq!(err.matches(m).count(), 1, "{args:?}: {err}");
    }
}
