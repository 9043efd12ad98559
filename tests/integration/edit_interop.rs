//! gguf-py (PyPI `gguf` 0.19.0, tests/oracles/requirements.txt) reads
//! every kind of edited file: its view of the edited file equals its view
//! of the original with the edit applied, and every tensor's bytes hash
//! the same. The Python side is tests/oracles/dump_edit_view.py.

use std::path::{Path, PathBuf};
use std::process::Command;

use gguf::edit::{Commit, Editor};
use gguf::write::SLACK_KEY;
use gguf::GgufFile;
use serde_json::{json, Value as Json};

use super::edit_fixtures::{model, put, tensor_hashes, Spec};

/// gguf-py's view of each of `paths`, as JSON. Fails loudly when the
/// oracle is missing: the interop tests must not pass by not running.
fn gguf_py_views(paths: &[PathBuf]) -> Vec<Json> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracles/dump_edit_view.py");
    let out = match Command::new("python3").arg(&script).args(paths).output() {
        Ok(out) => out,
        Err(e) => panic!(
            "cannot run python3 ({e}): the editor interop tests need Python 3 with \
             `pip install -r tests/oracles/requirements.txt` (gguf==0.19.0)"
        ),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        if stderr.contains("ModuleNotFoundError") || stderr.contains("No module named") {
            panic!(
                "gguf-py is not installed: `pip install -r tests/oracles/requirements.txt` \
                 (gguf==0.19.0) is required by the editor interop tests\n{stderr}"
            );
        }
        panic!("gguf-py failed to read {paths:?}:\n{stderr}");
    }
    let views: Vec<Json> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("dump_edit_view.py printed invalid JSON"))
        .collect();
    assert_eq!(views.len(), paths.len(), "one view per file");
    views
}

/// One edit as the editor does it and as it should look to gguf-py.
struct Case {
    name: &'static str,
    file: Vec<u8>,
    edit: fn(&mut Editor),
    /// Applies the same edit to gguf-py's view of the original.
    expect: fn(&mut Vec<Json>, &mut Vec<Json>),
    in_place: bool,
}

fn set(meta: &mut Vec<Json>, key: &str, entry: Json) {
    let mut entry = entry;
    entry["key"] = json!(key);
    match meta.iter_mut().find(|e| e["key"] == key) {
        Some(slot) => *slot = entry,
        None => meta.push(entry),
    }
}

fn remove(meta: &mut Vec<Json>, key: &str) {
    let n = meta.len();
    meta.retain(|e| e["key"] != key);
    assert_eq!(meta.len(), n - 1, "{key} was not in gguf-py's view");
}

fn rename(list: &mut [Json], field: &str, old: &str, new: &str) {
    let e = list
        .iter_mut()
        .find(|e| e[field] == old)
        .unwrap_or_else(|| panic!("{old} not in gguf-py's view"));
    e[field] = json!(new);
}

fn string(s: &str) -> Json {
    json!({"type": "STRING", "value": s})
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "same-size scalar",
            file: model(Spec::default()),
            edit: |ed| {
                ed.set("llama.context_length", 8192u32).unwrap();
            },
            expect: |m, _| {
                set(
                    m,
                    "llama.context_length",
                    json!({"type": "UINT32", "value": 8192}),
                )
            },
            in_place: true,
        },
        Case {
            name: "longer string (slack consumed)",
            file: model(Spec::default().slack(1024)),
            edit: |ed| {
                ed.set("general.name", "a much longer model name than before")
                    .unwrap();
            },
            expect: |m, _| {
                set(
                    m,
                    "general.name",
                    string("a much longer model name than before"),
                )
            },
            in_place: true,
        },
        Case {
            name: "slack mostly consumed",
            file: model(Spec::default().slack(1024)),
            edit: |ed| {
                ed.set("tokenizer.chat_template", "T".repeat(1200)).unwrap();
            },
            expect: |m, _| set(m, "tokenizer.chat_template", string(&"T".repeat(1200))),
            in_place: true,
        },
        Case {
            name: "shorter string (the freed room kept as new slack)",
            file: model(Spec::default().name_len(100)),
            edit: |ed| {
                ed.set("general.name", "short").unwrap();
            },
            expect: |m, _| set(m, "general.name", string("short")),
            in_place: true,
        },
        Case {
            name: "shorter string, no slack reserved (rewrite)",
            file: model(Spec::default().name_len(100)),
            edit: |ed| {
                ed.reserve_on_rewrite(0).unwrap();
                ed.set("general.name", "short").unwrap();
            },
            expect: |m, _| set(m, "general.name", string("short")),
            in_place: false,
        },
        Case {
            name: "shorter string with slack",
            file: model(Spec::default().name_len(100).slack(64)),
            edit: |ed| {
                ed.set("general.name", "short").unwrap();
            },
            expect: |m, _| set(m, "general.name", string("short")),
            in_place: true,
        },
        Case {
            name: "new keys (string, false bool, i32 array)",
            file: model(Spec::default().slack(256)),
            edit: |ed| {
                ed.set("general.license", "mit").unwrap();
                ed.set("general.flag", false).unwrap();
                ed.set("general.ids", vec![1i32, -2, 3]).unwrap();
                ed.set("tokenizer.ggml.add_bos_token", false).unwrap();
            },
            expect: |m, _| {
                set(
                    m,
                    "tokenizer.ggml.add_bos_token",
                    json!({"type": "BOOL", "value": false}),
                );
                set(m, "general.license", string("mit"));
                set(m, "general.flag", json!({"type": "BOOL", "value": false}));
                set(
                    m,
                    "general.ids",
                    json!({"type": "ARRAY", "element_type": "INT32", "len": 3, "value": [1, -2, 3]}),
                );
            },
            in_place: true,
        },
        Case {
            name: "removed key",
            file: model(Spec::default().slack(64)),
            edit: |ed| {
                ed.remove("general.parameter_count").unwrap();
                ed.remove("tokenizer.chat_template").unwrap();
            },
            expect: |m, _| {
                remove(m, "general.parameter_count");
                remove(m, "tokenizer.chat_template");
            },
            in_place: true,
        },
        Case {
            name: "removed key without slack, none reserved (rewrite)",
            file: model(Spec::default()),
            edit: |ed| {
                ed.reserve_on_rewrite(0).unwrap();
                ed.remove("tokenizer.chat_template").unwrap();
            },
            expect: |m, _| remove(m, "tokenizer.chat_template"),
            in_place: false,
        },
        Case {
            name: "renamed key and tensor",
            file: model(Spec::default().slack(64)),
            edit: |ed| {
                ed.rename_key("llama.block_count", "llama.n_layer").unwrap();
                ed.rename_tensor("output.weight", "lm_head.weight").unwrap();
            },
            expect: |m, t| {
                rename(m, "key", "llama.block_count", "llama.n_layer");
                rename(t, "name", "output.weight", "lm_head.weight");
            },
            in_place: true,
        },
        Case {
            name: "slack exhausted (rewrite)",
            file: model(Spec::default().slack(64)),
            edit: |ed| {
                ed.set("tokenizer.chat_template", "C".repeat(4096)).unwrap();
            },
            expect: |m, _| set(m, "tokenizer.chat_template", string(&"C".repeat(4096))),
            in_place: false,
        },
        Case {
            name: "big-endian, in place",
            file: model(Spec::default().big_endian().slack(512)),
            edit: |ed| {
                ed.set("general.name", "big-endian renamed").unwrap();
                ed.set("llama.context_length", 2048u32).unwrap();
            },
            expect: |m, _| {
                set(m, "general.name", string("big-endian renamed"));
                set(
                    m,
                    "llama.context_length",
                    json!({"type": "UINT32", "value": 2048}),
                );
            },
            in_place: true,
        },
        Case {
            name: "new long value without slack (rewrite reserving slack)",
            file: model(Spec::default()),
            edit: |ed| {
                ed.set("general.description", "D".repeat(700)).unwrap();
            },
            expect: |m, _| set(m, "general.description", string(&"D".repeat(700))),
            in_place: false,
        },
        Case {
            name: "big-endian, rewritten",
            file: model(Spec::default().big_endian()),
            edit: |ed| {
                ed.set("general.name", "B".repeat(500)).unwrap();
            },
            expect: |m, _| set(m, "general.name", string(&"B".repeat(500))),
            in_place: false,
        },
    ]
}

/// gguf-py's metadata without the slack entry, and the slack entry.
fn split_slack(view: &Json) -> (Vec<Json>, Option<Json>) {
    let mut meta = view["metadata"].as_array().unwrap().clone();
    let slack = meta
        .iter()
        .position(|e| e["key"] == SLACK_KEY)
        .map(|i| meta.remove(i));
    (meta, slack)
}

#[test]
fn gguf_py_reads_every_kind_of_edited_file() {
    let cases = cases();
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| put(dir.path(), &format!("m{i}.gguf"), &c.file))
        .collect();
    let befores = gguf_py_views(&paths);
    let mut commits = Vec::new();
    for (case, path) in cases.iter().zip(&paths) {
        let mut ed = Editor::open(path).unwrap();
        (case.edit)(&mut ed);
        commits.push(ed.commit().unwrap());
    }
    let afters = gguf_py_views(&paths);
    for (((case, before), after), commit) in cases.iter().zip(&befores).zip(&afters).zip(commits) {
        let name = case.name;
        // gguf-py locates the same tensor bytes as we do.
        let ours = GgufFile::open(&case.file).unwrap();
        let py_hashes: Vec<(String, String)> = before["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    t["sha256"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(py_hashes, tensor_hashes(&ours), "{name}: original file");
        assert_eq!(
            matches!(commit, Commit::InPlace { .. }),
            case.in_place,
            "{name}: {commit:?}"
        );

        let (mut expected_meta, slack_before) = split_slack(before);
        let mut expected_tensors = before["tensors"].as_array().unwrap().clone();
        (case.expect)(&mut expected_meta, &mut expected_tensors);
        let (meta, slack_after) = split_slack(after);
        assert_eq!(
            Json::Array(meta),
            Json::Array(expected_meta),
            "{name}: gguf-py's metadata"
        );
        assert_eq!(
            after["tensors"],
            Json::Array(expected_tensors),
            "{name}: gguf-py's tensors (names, types, shapes, sha256 of the bytes)"
        );
        // The slack stays a u8 array when it was there, and is added only
        // by a commit that reports it (a rewrite reserving it, or a header
        // shrunk in place), as a u8 array of the length reported.
        assert_eq!(
            slack_after.is_some(),
            slack_before.is_some() || commit.slack_bytes() > 0,
            "{name}: slack {commit:?}"
        );
        if let Some(s) = slack_after {
            assert_eq!(s["type"], "ARRAY", "{name}");
            assert_eq!(s["element_type"], "UINT8", "{name}");
            assert_eq!(s["len"], commit.slack_bytes(), "{name}");
        }
        for field in ["version", "endian", "alignment"] {
            assert_eq!(after[field], before[field], "{name}: {field}");
        }
        if case.in_place {
            assert_eq!(after["data_offset"], before["data_offset"], "{name}");
        }
    }
}
