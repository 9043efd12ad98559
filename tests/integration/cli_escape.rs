//! Terminal escapes in untrusted text: a file whose key names, string
//! values (array elements included), tensor names, architecture or path
//! carry ESC/BEL sequences, C1 controls, DEL or newlines must not reach
//! the terminal raw through any command's text output or error message.
//! `--json` escapes as JSON does; `get` prints raw bytes (for scripts).

use std::path::{Path, PathBuf};
use std::process::Output;

use gguf::GgmlType;
use gguf::{
    format::{OwnedArray, OwnedValue},
    write::Builder,
};

use super::remote::Server;
use super::util::gguf;

/// Sets the terminal's title.
const TITLE: &str = "\x1b]0;TITLE\x07";
/// Clears the screen.
const CLEAR: &str = "\x1b[2J";
/// C1 CSI (U+009B), then DEL.
const C1_DEL: &str = "\u{9b}\x7f";

/// A key, and tensor names, that escape nowhere the tool looks.
fn hostile_key() -> String {
    format!("x.{CLEAR}key\nforged line")
}

fn hostile_tensor() -> String {
    format!("blk.0.{TITLE}{C1_DEL}.weight")
}

/// A llama-like model whose every untrusted string is hostile: the
/// architecture, the name, a key, string values and array elements,
/// and tensor names (an F32 one with a NaN, so `check` names it, and a
/// Q8_0 one, so `convert` lists it as kept).
fn hostile_file(path: &Path, scale: f32) {
    let mut w: Vec<f32> = (0..64).map(|i| i as f32 * scale).collect();
    w[3] = f32::NAN;
    let mut b = Builder::new();
    b.set("general.architecture", format!("llama{CLEAR}"))
        .unwrap();
    b.set("general.name", format!("{TITLE}name{C1_DEL}"))
        .unwrap();
    b.set("general.type", format!("model\n{CLEAR}")).unwrap();
    b.set(hostile_key(), format!("value{TITLE}")).unwrap();
    b.set(
        "x.list",
        OwnedValue::Array(OwnedArray::String(vec![
            "ok".into(),
            TITLE.into(),
            format!("a\nforged{C1_DEL}"),
        ])),
    )
    .unwrap();
    b.set("tokenizer.ggml.model", format!("gpt2{TITLE}"))
        .unwrap();
    b.add_tensor(hostile_tensor(), GgmlType::F32, &[32, 2], &w[..])
        .unwrap();
    let q: Vec<f32> = (0..64).map(|i| i as f32 * 0.5).collect();
    b.add_tensor_quantized(format!("q{CLEAR}.weight"), GgmlType::Q8_0, &[32, 2], q)
        .unwrap();
    b.write_to_path(path).unwrap();
}

/// The raw control characters found in `text`, newlines excepted.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c != '\n' && (c.is_control() || c == '\x7f'))
        .collect()
}

/// Asserts neither stream of `out` carries a raw control character or a
/// line forged by a newline in the file's strings, and returns both.
#[track_caller]
fn clean(args: &[&std::ffi::OsStr], out: &Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    for (stream, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        assert!(
            raw_controls(text).is_empty(),
            "{args:?}: raw control characters {:?} on {stream}:\n{text}",
            raw_controls(text)
        );
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("forged") || l.starts_with(CLEAR)),
            "{args:?}: a newline from the file started a line on {stream}:\n{text}"
        );
    }
    (stdout, stderr)
}

fn run(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let out = gguf(args);
    let (stdout, stderr) = clean(args, &out);
    (out.status.code(), stdout, stderr)
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

/// Two hostile files (B's tensor values scaled), and the dir holding them.
fn fixtures() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.gguf"), dir.path().join("b.gguf"));
    hostile_file(&a, 1.0);
    hostile_file(&b, 2.0);
    (dir, a, b)
}

#[test]
fn inspect_text_escapes_every_string_from_the_file() {
    let (_dir, a, _) = fixtures();
    let (code, text, _) = run(&[os("inspect"), a.as_os_str()]);
    assert_eq!(code, Some(0), "{text}");
    // Escaped as Rust escapes them, wherever they appear: the summary,
    // the key column, the values, the tensor table.
    assert!(
        text.contains(r"Model: \u{1b}]0;TITLE\u{7}name\u{9b}\u{7f} (llama\u{1b}[2J)"),
        "{text}"
    );
    assert!(text.contains(r"x.\u{1b}[2Jkey\nforged line"), "{text}");
    assert!(text.contains(r#""a\nforged\u{9b}\u{7f}""#), "{text}");
    assert!(
        text.contains(r"blk.0.\u{1b}]0;TITLE\u{7}\u{9b}\u{7f}.weight"),
        "{text}"
    );
    let (code, text, _) = run(&[os("inspect"), a.as_os_str(), os("--keys"), os("x.*")]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains(r"x.\u{1b}[2Jkey\nforged line"), "{text}");

    // JSON escapes as JSON does, and round-trips the exact strings.
    let (code, json, _) = run(&[os("inspect"), a.as_os_str(), os("--json")]);
    assert_eq!(code, Some(0));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(doc["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["key"] == hostile_key().as_str()));
    assert_eq!(doc["tensors"][0]["name"], hostile_tensor().as_str());
}

#[test]
fn every_command_escapes_strings_from_the_file() {
    let (dir, a, b) = fixtures();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/tiny-llama.gguf");
    let out = dir.path().join("out.gguf");
    let tensor = hostile_tensor();
    let key = hostile_key();
    let (a, b, o) = (a.as_os_str(), b.as_os_str(), out.as_os_str());
    let manifest = dir.path().join("a.sha");
    let commands: Vec<Vec<&std::ffi::OsStr>> = vec![
        vec![os("diff"), a, sample.as_os_str()],
        vec![os("diff"), a, b, os("--values")],
        vec![os("diff"), a, b, os("--values"), os("--all")],
        vec![os("check"), a],
        vec![os("hash"), a],
        vec![os("tensor"), a, os(&tensor)],
        vec![os("tensor"), a, os("no\x1b[2Jsuch")],
        vec![os("estimate"), a],
        vec![os("convert"), a, o, os("--type"), os("Q4_0")],
        vec![os("rewrite"), a, o],
        vec![os("set"), o, os(&key), os("new\x1b]0;T\x07")],
        vec![os("mv"), o, os(&key), os("general.name")],
        vec![os("rename-tensor"), o, os(&tensor), os("q\x1b[2J.weight")],
        vec![os("rm"), o, os(&key)],
        vec![os("rm"), o, os(&key)],
        vec![os("get"), o, os("no.such\x1b[2J.key")],
    ];
    let mut seen = String::new();
    for args in &commands {
        let (_, stdout, stderr) = run(args);
        seen.push_str(&stdout);
        seen.push_str(&stderr);
    }
    // The strings did reach the output, escaped.
    for shown in [
        r"x.\u{1b}[2Jkey\nforged line",
        r"blk.0.\u{1b}]0;TITLE\u{7}\u{9b}\u{7f}.weight",
        r"q\u{1b}[2J.weight",
        r"llama\u{1b}[2J",
    ] {
        assert!(seen.contains(shown), "{shown} never shown:\n{seen}");
    }

    // A manifest of hostile names verifies.
    let (code, text, _) = run(&[os("hash"), a]);
    assert_eq!(code, Some(0));
    std::fs::write(&manifest, text).unwrap();
    let (code, text, _) = run(&[os("hash"), a, os("--check"), manifest.as_os_str()]);
    assert_eq!(code, Some(0), "{text}");
}

/// `get` is for scripts: the exact bytes of the value, as its help says.
#[test]
fn get_prints_raw_bytes_and_says_so() {
    let (_dir, a, _) = fixtures();
    let out = gguf(&[os("get"), a.as_os_str(), os("general.name")]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{TITLE}name{C1_DEL}\n")
    );
    let help = String::from_utf8(gguf(&["get", "--help"]).stdout).unwrap();
    assert!(help.contains("raw"), "{help}");
    assert!(help.contains("control characters"), "{help}");
}

/// Whatever text an error carries (here a path with control characters,
/// as a downloaded file may be named), the message is escaped.
#[test]
fn error_messages_escape_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join(format!("{TITLE}{CLEAR}m.gguf"));
    std::fs::write(&bad, "not gguf").unwrap();
    for args in [
        vec![os("inspect"), bad.as_os_str()],
        vec![os("check"), bad.as_os_str()],
        vec![os("diff"), bad.as_os_str(), bad.as_os_str()],
        vec![os("hash"), bad.as_os_str()],
        vec![os("set"), bad.as_os_str(), os("k"), os("v")],
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_ne!(code, Some(0));
        assert!(
            format!("{stdout}{stderr}").contains(r"\u{1b}]0;TITLE\u{7}\u{1b}[2Jm.gguf"),
            "{args:?}: {stdout}{stderr}"
        );
    }
}

/// The same file served over HTTP: the remote text output is escaped
/// the same way.
#[test]
fn remote_files_are_escaped_too() {
    let (dir, a, _) = fixtures();
    let server = Server::http(dir.path());
    let url = server.url("a.gguf");
    let (code, remote, _) = run(&[os("inspect"), os(&url)]);
    assert_eq!(code, Some(0), "{remote}");
    let (_, local, _) = run(&[os("inspect"), a.as_os_str()]);
    assert_eq!(remote, local);
    let (code, _, stderr) = run(&[os("tensor"), os(&url), os("no\x07such")]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains(r"no\u{7}such"), "{stderr}");
}
