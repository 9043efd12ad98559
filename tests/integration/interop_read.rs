//! Our reader against gguf-py's (PyPI `gguf` 0.19.0, pinned in
//! tests/oracles/requirements.txt): fixtures written by gguf-py's
//! GGUFWriter (`tests/oracles/make_fixtures.py`) are opened by us and
//! compared KV by KV and tensor by tensor with GGUFReader's view
//! (`tests/oracles/dump_gguf.py`), including a sha256 of every tensor's data.
//!
//! Needs python3 with gguf==0.19.0 (set `GGUF_PYTHON` to use another
//! interpreter). When it is missing the test fails: CI installs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gguf::{ArrayView, Endian, GgmlType, Gguf, GgufFile, Value, ValueType};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::util::assert_same_index;

const FIXTURES: [&str; 5] = ["all_types", "big_endian", "align64", "align1", "llama150k"];

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracles")
}

fn python() -> String {
    std::env::var("GGUF_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn python_cmd(script: &str) -> Command {
    let mut c = Command::new(python());
    c.arg(oracle_dir().join(script));
    c
}

#[track_caller]
fn check(what: &str, out: std::io::Result<Output>) -> Output {
    let hint = "the interop tests need python3 with gguf-py: `pip install -r tests/oracles/requirements.txt` (or set GGUF_PYTHON to an interpreter that has it)";
    let out = out.unwrap_or_else(|e| panic!("{what}: cannot run {:?}: {e}\n{hint}", python()));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{hint}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn gguf_py_fixtures_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    check(
        "make_fixtures.py",
        python_cmd("make_fixtures.py").arg(dir.path()).output(),
    );
    // Dump every fixture in parallel: GGUFReader is slow on the big vocabulary.
    let children: Vec<_> = FIXTURES
        .iter()
        .map(|name| {
            let path = dir.path().join(format!("{name}.gguf"));
            let child = python_cmd("dump_gguf.py")
                .arg(&path)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn();
            (name, path, child)
        })
        .collect();
    for (name, path, child) in children {
        let out = check(
            &format!("dump_gguf.py {name}"),
            child.and_then(|c| c.wait_with_output()),
        );
        let dump: Json = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: bad JSON from dump_gguf.py: {e}"));
        let file = GgufFile::open(&path)
            .unwrap_or_else(|e| panic!("{name}: we reject a gguf-py file: {e}"));
        compare(name, &file, &dump);
        // The streaming reader indexes it identically.
        let streamed =
            GgufFile::open(gguf::Source::reader(std::fs::File::open(&path).unwrap())).unwrap();
        assert_same_index(&file, &streamed);
        per_fixture_checks(name, &file);
    }
}

/// What we know of each fixture beyond gguf-py's view.
fn per_fixture_checks(name: &str, file: &GgufFile<'_>) {
    let lint = file.lint_llama_cpp();
    match name {
        "all_types" | "big_endian" => {
            let nested: Vec<_> = lint
                .iter()
                .filter_map(|i| match i {
                    gguf::read::LintIssue::NestedArray { key } => Some(key.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(
                nested,
                [
                    "test.array.nested_u32",
                    "test.array.nested_str",
                    "test.array.nested_mixed",
                    "test.array.nested3"
                ],
                "{name}"
            );
            assert_eq!(
                lint.contains(&gguf::read::LintIssue::BigEndian),
                name == "big_endian",
                "{name}: {lint:?}"
            );
            // Nested structure, from our side (gguf-py flattens it).
            let n = file.get_array("test.array.nested3").unwrap();
            let shape: Vec<Vec<usize>> = n
                .iter()
                .map(|v| {
                    v.as_array()
                        .unwrap()
                        .iter()
                        .map(|w| w.as_array().unwrap().len())
                        .collect()
                })
                .collect();
            assert_eq!(shape, [vec![1, 2], vec![3]], "{name}");
            let mixed: Vec<ValueType> = file
                .get_array("test.array.nested_mixed")
                .unwrap()
                .iter()
                .map(|v| v.as_array().unwrap().element_type())
                .collect();
            assert_eq!(mixed, [ValueType::I32, ValueType::String], "{name}");
            let strs: Vec<&str> = file
                .get_array("test.array.nested_mixed")
                .unwrap()
                .iter()
                .nth(1)
                .unwrap()
                .as_array()
                .unwrap()
                .strings()
                .unwrap()
                .collect();
            assert_eq!(strs, ["m", "n", "o"], "{name}");
        }
        // gguf-py's layout is llama.cpp's: nothing to report.
        _ => assert!(lint.is_empty(), "{name}: {lint:?}"),
    }
    if name == "llama150k" {
        assert_eq!(
            file.get_strings("tokenizer.ggml.tokens").unwrap().len(),
            150_000
        );
        assert_eq!(
            file.get_strings("tokenizer.ggml.merges").unwrap().len(),
            150_000
        );
    }
}

fn compare(name: &str, file: &GgufFile<'_>, dump: &Json) {
    assert_eq!(
        file.version() as u64,
        dump["version"].as_u64().unwrap(),
        "{name}"
    );
    let endian = match file.endian() {
        Endian::Little => "little",
        Endian::Big => "big",
    };
    assert_eq!(endian, dump["endian"], "{name}");
    assert_eq!(
        file.alignment(),
        dump["alignment"].as_u64().unwrap(),
        "{name}"
    );
    assert_eq!(
        file.data_offset(),
        dump["data_offset"].as_u64().unwrap(),
        "{name}"
    );

    let kvs = dump["kvs"].as_array().unwrap();
    let keys: Vec<&str> = kvs.iter().map(|kv| kv["key"].as_str().unwrap()).collect();
    assert_eq!(
        file.keys().collect::<Vec<_>>(),
        keys,
        "{name}: keys and their order"
    );
    for kv in kvs {
        let key = kv["key"].as_str().unwrap();
        let value = file.value(key).unwrap();
        let at = format!("{name}: key {key}");
        let types: Vec<&str> = kv["types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        match value {
            Value::Array(a) => {
                assert_eq!(types[0], "array", "{at}");
                let (chain, leaves) = (type_chain(&a), leaf_count(&a));
                assert_eq!(kv["n_data"].as_u64().unwrap(), leaves, "{at}: leaf count");
                let expected = kv["value"].as_array().unwrap();
                if a.element_type() != ValueType::Array {
                    assert_eq!(types[1..], chain[..], "{at}");
                    assert_eq!(a.len(), expected.len(), "{at}");
                    for (i, (ours, theirs)) in a.iter().zip(expected).enumerate() {
                        assert_value(&ours, theirs, &format!("{at}[{i}]"));
                    }
                } else if is_uniform(&a) {
                    // gguf-py quirk (ORACLES.md "Nested arrays"): GGUFReader
                    // flattens nested arrays, so compare the leaves in order.
                    assert_eq!(types[1..], chain[..], "{at}");
                    let mut ours = Vec::new();
                    flatten(&a, &mut ours);
                    assert_eq!(ours.len(), expected.len(), "{at}");
                    for (i, (o, t)) in ours.iter().zip(expected).enumerate() {
                        assert_value(o, t, &format!("{at} leaf {i}"));
                    }
                }
                // else: gguf-py quirk (ORACLES.md "Nested arrays"): inner
                // arrays of mixed types come back garbled (it types every
                // leaf like the first inner array's); only the leaf count
                // above is comparable.
            }
            v => {
                assert_eq!(types, [gguf_py_type(v.value_type())], "{at}");
                assert_value(&v, &kv["value"], &at);
            }
        }
    }

    let tensors = dump["tensors"].as_array().unwrap();
    assert_eq!(file.tensor_count(), tensors.len(), "{name}");
    for (ours, theirs) in file.tensors().zip(tensors) {
        let at = format!("{name}: tensor {}", ours.name());
        assert_eq!(ours.name(), theirs["name"], "{at}");
        assert_eq!(
            ours.ggml_type().id() as u64,
            theirs["type"].as_u64().unwrap(),
            "{at}"
        );
        assert!(!matches!(ours.ggml_type(), GgmlType::Unknown(_)), "{at}");
        let shape: Vec<u64> = theirs["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(ours.shape(), shape, "{at}");
        assert_eq!(ours.offset(), theirs["offset"].as_u64().unwrap(), "{at}");
        let data = ours.data().unwrap();
        let their_len = theirs["n_bytes"].as_u64().unwrap();
        let their_sha = theirs["sha256"].as_str().unwrap();
        if ours.ggml_type() == GgmlType::Q8_1 {
            // gguf-py quirk (ORACLES.md "Sizes"): GGML_QUANT_SIZES gives Q8_1
            // 40 bytes per block, ggml 36. Its range is a superset of ours
            // at the same offset: hash the file over gguf-py's range and
            // check ours is its prefix.
            let blocks = ours.element_count() / 32;
            assert_eq!(
                (data.len() as u64, their_len),
                (blocks * 36, blocks * 40),
                "{at}"
            );
            let start = ours.offset() as usize;
            let theirs_bytes = &file.data_section().unwrap()[start..start + their_len as usize];
            assert_eq!(sha256(theirs_bytes), their_sha, "{at}");
            assert_eq!(&theirs_bytes[..data.len()], data, "{at}");
        } else {
            assert_eq!(data.len() as u64, their_len, "{at}");
            assert_eq!(sha256(data), their_sha, "{at}: data");
        }
    }
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn gguf_py_type(t: ValueType) -> &'static str {
    match t {
        ValueType::U8 => "uint8",
        ValueType::I8 => "int8",
        ValueType::U16 => "uint16",
        ValueType::I16 => "int16",
        ValueType::U32 => "uint32",
        ValueType::I32 => "int32",
        ValueType::F32 => "float32",
        ValueType::Bool => "bool",
        ValueType::String => "string",
        ValueType::Array => "array",
        ValueType::U64 => "uint64",
        ValueType::I64 => "int64",
        ValueType::F64 => "float64",
    }
}

/// Element types from the outermost array down, following first elements
/// (what gguf-py records in `ReaderField.types`).
fn type_chain(a: &ArrayView<'_>) -> Vec<&'static str> {
    let mut chain = vec![gguf_py_type(a.element_type())];
    if a.element_type() == ValueType::Array
        && let Some(first) = a.iter().next()
    {
        chain.extend(type_chain(&first.as_array().unwrap()));
    }
    chain
}

fn leaf_count(a: &ArrayView<'_>) -> u64 {
    if a.element_type() == ValueType::Array {
        a.iter().map(|v| leaf_count(&v.as_array().unwrap())).sum()
    } else {
        a.len() as u64
    }
}

/// True when every inner array has the same type chain.
fn is_uniform(a: &ArrayView<'_>) -> bool {
    let chains: Vec<_> = a
        .iter()
        .map(|v| type_chain(&v.as_array().unwrap()))
        .collect();
    chains.windows(2).all(|w| w[0] == w[1])
        && a.iter().all(|v| {
            v.as_array()
                .is_none_or(|x| x.element_type() != ValueType::Array || is_uniform(&x))
        })
}

fn flatten<'a>(a: &ArrayView<'a>, out: &mut Vec<Value<'a>>) {
    for v in a.iter() {
        match v {
            Value::Array(inner) => flatten(&inner, out),
            leaf => out.push(leaf),
        }
    }
}

#[track_caller]
fn assert_value(ours: &Value<'_>, theirs: &Json, at: &str) {
    match *ours {
        Value::F32(v) => assert_eq!(
            (v as f64).to_bits(),
            theirs.as_f64().unwrap().to_bits(),
            "{at}: {v} vs {theirs}"
        ),
        Value::F64(v) => assert_eq!(
            v.to_bits(),
            theirs.as_f64().unwrap().to_bits(),
            "{at}: {v} vs {theirs}"
        ),
        Value::Bool(v) => assert_eq!(Some(v), theirs.as_bool(), "{at}"),
        Value::String(s) => assert_eq!(Some(s), theirs.as_str(), "{at}"),
        Value::Array(_) => panic!("{at}: unexpected nested array"),
        ref v => {
            let ours = v.as_integer().unwrap();
            let theirs = theirs
                .as_i64()
                .map(i128::from)
                .or(theirs.as_u64().map(i128::from))
                .unwrap_or_else(|| panic!("{at}: {theirs} is not an integer"));
            assert_eq!(ours, theirs, "{at}");
        }
    }
}
