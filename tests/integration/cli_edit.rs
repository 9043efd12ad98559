//! `gguf set`, `gguf rm`, `gguf mv`, `gguf rename-tensor` as a user runs them.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::SystemTime;

use gguf::format::{OwnedArray, OwnedValue};
use gguf::Gguf;
use gguf::GgufFile;

use super::edit_fixtures::{metadata, model, put, tensor_hashes, Spec};

use super::util::gguf;

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "gguf failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn failed(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "gguf succeeded but should have failed"
    );
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// A file on disk with its bytes and mtime, to check that refused
/// commands leave it alone.
struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    bytes: Vec<u8>,
    mtime: SystemTime,
}

impl Fixture {
    fn new(spec: Spec) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bytes = model(spec);
        let path = put(dir.path(), "m.gguf", &bytes);
        // An mtime in the past, so that any write would move it.
        let past = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(past)
            .unwrap();
        Fixture {
            _dir: dir,
            mtime: std::fs::metadata(&path).unwrap().modified().unwrap(),
            path,
            bytes,
        }
    }
    fn p(&self) -> &str {
        self.path.to_str().unwrap()
    }
    fn assert_untouched(&self) {
        assert_eq!(
            std::fs::read(&self.path).unwrap(),
            self.bytes,
            "file changed"
        );
        assert_eq!(
            std::fs::metadata(&self.path).unwrap().modified().unwrap(),
            self.mtime,
            "mtime changed"
        );
        assert!(!gguf::edit::journal_path(&self.path).exists());
    }
    fn now(&self) -> Vec<u8> {
        std::fs::read(&self.path).unwrap()
    }
    /// Metadata now, with `key` expected to hold `value` and everything
    /// else (tensors too) as before.
    fn assert_only_changed(&self, key: &str, value: OwnedValue) {
        let now = self.now();
        let new = GgufFile::open(&now).unwrap();
        let old = GgufFile::open(&self.bytes).unwrap();
        assert_eq!(tensor_hashes(&new), tensor_hashes(&old));
        let mut expected = metadata(&old);
        match expected.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => expected.push((key.to_owned(), value)),
        }
        let strip = |m: Vec<(String, OwnedValue)>| {
            m.into_iter()
                .filter(|(k, _)| k != gguf::write::SLACK_KEY)
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(metadata(&new)), strip(expected));
    }
}

#[test]
fn set_takes_the_type_from_the_existing_key() {
    let f = Fixture::new(Spec::default());
    let out = ok(&gguf(&["set", f.p(), "llama.context_length", "8192"]));
    assert!(out.contains("in place"), "{out}");
    f.assert_only_changed("llama.context_length", OwnedValue::U32(8192));
    // f32, bool and u64 keys keep their types too.
    let f = Fixture::new(Spec::default());
    ok(&gguf(&["set", f.p(), "llama.rope.freq_base", "0.25"]));
    ok(&gguf(&[
        "set",
        f.p(),
        "tokenizer.ggml.add_bos_token",
        "false",
    ]));
    ok(&gguf(&[
        "set",
        f.p(),
        "general.parameter_count",
        "18446744073709551615",
    ]));
    // Negative numbers are values, not options.
    ok(&gguf(&[
        "set",
        f.p(),
        "general.offset",
        "-5",
        "--type",
        "i32",
    ]));
    let now = f.now();
    let new = GgufFile::open(&now).unwrap();
    assert_eq!(new.get::<i32>("general.offset").unwrap(), -5);
    assert_eq!(new.get::<f32>("llama.rope.freq_base").unwrap(), 0.25);
    assert!(!new.get::<bool>("tokenizer.ggml.add_bos_token").unwrap());
    assert_eq!(new.get::<u64>("general.parameter_count").unwrap(), u64::MAX);
}

#[test]
fn a_new_key_needs_a_type() {
    let f = Fixture::new(Spec::default().slack(256));
    let err = failed(&gguf(&["set", f.p(), "general.license", "mit"]));
    assert!(err.contains("--type"), "{err}");
    f.assert_untouched();
    ok(&gguf(&[
        "set",
        f.p(),
        "general.license",
        "mit",
        "--type",
        "string",
    ]));
    f.assert_only_changed("general.license", "mit".into());
}

#[test]
fn values_that_do_not_parse_are_refused_and_the_file_is_untouched() {
    let f = Fixture::new(Spec::default().slack(256));
    for (key, value, ty) in [
        ("llama.context_length", "abc", None),
        ("llama.context_length", "-1", None),
        ("llama.context_length", "4294967296", None),
        ("llama.rope.freq_base", "fast", None),
        ("tokenizer.ggml.add_bos_token", "yes", None),
        ("general.x", "300", Some("u8")),
        ("general.x", "1", Some("u128")),
        ("general.x", "[1,2", Some("[i32]")),
        ("general.x", "[1,\"a\"]", Some("[i32]")),
        ("general.x", "[\"a\",2]", Some("[string]")),
        ("tokenizer.ggml.token_type", "[1.5]", None),
    ] {
        let mut args = vec!["set", f.p(), key, value];
        if let Some(t) = ty {
            args.extend(["--type", t]);
        }
        let out = gguf(&args);
        let err = failed(&out);
        // Usage errors: an unknown --type is clap's, a value that does not
        // fit the key names the file and the key.
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let expected = match ty {
            Some("u128") => "error: invalid value 'u128' for '--type <T>'".to_string(),
            _ => format!("gguf: {}: {key}: ", f.p()),
        };
        assert!(err.starts_with(&expected), "{args:?}: {err}");
        f.assert_untouched();
    }
}

#[test]
fn from_file_sets_a_4_kib_chat_template_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    let mut template = String::new();
    let mut i = 0;
    while template.len() < 4096 {
        template.push_str(&format!(
            "{{% if messages[{i}]['role'] == 'user' %}}<|user|>\n{{{{ messages[{i}]['content'] }}}}\n{{% endif %}}\n"
        ));
        i += 1;
    }
    template.truncate(4096);
    let tpl = dir.path().join("template.jinja");
    std::fs::write(&tpl, &template).unwrap();
    // Without room: rewritten; with 8 KiB of slack: in place.
    for (spec, how) in [
        (Spec::default(), "rewritten"),
        (Spec::default().slack(8192), "in place"),
    ] {
        let f = Fixture::new(spec);
        let out = ok(&gguf(&[
            "set",
            f.p(),
            "tokenizer.chat_template",
            "--from-file",
            tpl.to_str().unwrap(),
        ]));
        assert!(out.contains(how), "expected {how}: {out}");
        f.assert_only_changed("tokenizer.chat_template", template.as_str().into());
    }
}

#[test]
fn arrays_are_given_as_json() {
    let f = Fixture::new(Spec::default().slack(256));
    ok(&gguf(&[
        "set",
        f.p(),
        "general.ids",
        "[1,2,3]",
        "--type",
        "[i32]",
    ]));
    f.assert_only_changed(
        "general.ids",
        OwnedValue::Array(OwnedArray::I32(vec![1, 2, 3])),
    );
    let f = Fixture::new(Spec::default().slack(256));
    ok(&gguf(&[
        "set",
        f.p(),
        "general.tags",
        r#"["a","b"]"#,
        "--type",
        "[string]",
    ]));
    f.assert_only_changed(
        "general.tags",
        OwnedValue::Array(OwnedArray::String(vec!["a".into(), "b".into()])),
    );
    // An existing array keeps its element type.
    let f = Fixture::new(Spec::default().slack(4096));
    ok(&gguf(&[
        "set",
        f.p(),
        "tokenizer.ggml.token_type",
        "[5,-6]",
    ]));
    f.assert_only_changed(
        "tokenizer.ggml.token_type",
        OwnedValue::Array(OwnedArray::I32(vec![5, -6])),
    );
}

#[test]
fn dry_run_reports_and_changes_nothing() {
    for (spec, value, how) in [
        (Spec::default().slack(256), "n".repeat(20), "in place"),
        (Spec::default(), "n".repeat(2000), "rewritten"),
    ] {
        let f = Fixture::new(spec);
        let out = ok(&gguf(&["set", f.p(), "general.name", &value, "--dry-run"]));
        assert!(out.contains("would be"), "{out}");
        assert!(out.contains(how), "expected {how}: {out}");
        f.assert_untouched();
        for args in [
            vec!["rm", f.p(), "general.name", "--dry-run"],
            vec!["mv", f.p(), "general.name", "general.title", "--dry-run"],
            vec![
                "rename-tensor",
                f.p(),
                "output.weight",
                "lm_head.weight",
                "--dry-run",
            ],
        ] {
            let out = ok(&gguf(&args));
            assert!(out.contains("would be"), "{args:?}: {out}");
            f.assert_untouched();
        }
        // The real run does what the dry run said.
        let out = ok(&gguf(&["set", f.p(), "general.name", &value]));
        assert!(out.contains(how) && out.contains("was"), "{out}");
        f.assert_only_changed("general.name", value.as_str().into());
    }
}

fn keys(path: &Path) -> Vec<String> {
    let f = GgufFile::open(path).unwrap();
    f.keys().map(str::to_owned).collect()
}

#[test]
fn rm_mv_and_rename_tensor() {
    let f = Fixture::new(Spec::default().slack(256));
    let before = keys(&f.path);

    let out = ok(&gguf(&["rm", f.p(), "general.parameter_count"]));
    assert!(out.contains("in place"), "{out}");
    let mut expected = before.clone();
    expected.retain(|k| k != "general.parameter_count");
    assert_eq!(keys(&f.path), expected);

    ok(&gguf(&["mv", f.p(), "llama.block_count", "llama.n_layer"]));
    let at = expected
        .iter()
        .position(|k| k == "llama.block_count")
        .unwrap();
    expected[at] = "llama.n_layer".into();
    assert_eq!(keys(&f.path), expected);
    let now = f.now();
    let g = GgufFile::open(&now).unwrap();
    assert_eq!(g.get::<u32>("llama.n_layer").unwrap(), 2);

    ok(&gguf(&[
        "rename-tensor",
        f.p(),
        "output.weight",
        "lm_head.weight",
    ]));
    let now = f.now();
    let g = GgufFile::open(&now).unwrap();
    let old = GgufFile::open(&f.bytes).unwrap();
    let names: Vec<&str> = g.tensors().map(|t| t.name()).collect();
    assert_eq!(
        names,
        ["token_embd.weight", "blk.0.attn_q.weight", "lm_head.weight"]
    );
    assert_eq!(
        g.tensor("lm_head.weight").unwrap().data().unwrap(),
        old.tensor("output.weight").unwrap().data().unwrap()
    );

    // Refused: missing key, clashing names. Nothing written.
    let snapshot = f.now();
    let err = failed(&gguf(&["rm", f.p(), "no.such.key"]));
    assert!(err.contains("no.such.key"), "{err}");
    let err = failed(&gguf(&[
        "mv",
        f.p(),
        "general.name",
        "general.architecture",
    ]));
    assert!(err.contains("general.architecture"), "{err}");
    let err = failed(&gguf(&[
        "rename-tensor",
        f.p(),
        "lm_head.weight",
        "token_embd.weight",
    ]));
    assert!(err.contains("token_embd.weight"), "{err}");
    assert_eq!(f.now(), snapshot);
}

#[test]
fn changing_the_type_of_an_existing_key_needs_force() {
    let f = Fixture::new(Spec::default().slack(256));
    for ty in ["string", "u64", "[u32]"] {
        let out = gguf(&["set", f.p(), "llama.context_length", "8192", "--type", ty]);
        let err = failed(&out);
        assert_eq!(out.status.code(), Some(1), "{ty}: {err}");
        assert!(
            err.contains("\"llama.context_length\" is u32")
                && err.contains(&format!("--type {ty} would change its type"))
                && err.contains("--force"),
            "{ty}: {err}"
        );
        f.assert_untouched();
    }
    // The same type under another spelling is no change.
    ok(&gguf(&[
        "set",
        f.p(),
        "llama.context_length",
        "8192",
        "--type",
        "uint32",
    ]));
    f.assert_only_changed("llama.context_length", OwnedValue::U32(8192));
    // With --force the type changes, and the output says so.
    let out = ok(&gguf(&[
        "set",
        f.p(),
        "llama.context_length",
        "8192",
        "--type",
        "string",
        "--force",
    ]));
    assert!(
        out.contains("\"llama.context_length\" changed type from u32 to string (--force)"),
        "{out}"
    );
    f.assert_only_changed("llama.context_length", "8192".into());
}

#[test]
fn numbers_out_of_range_of_the_type_are_refused() {
    let f = Fixture::new(Spec::default().slack(256));
    for (key, value, ty, says) in [
        // The existing key is f32: 1e40 would be stored as infinity.
        ("llama.rope.freq_base", "1e40", None, "out of range for f32"),
        (
            "llama.rope.freq_base",
            "-1e39",
            None,
            "out of range for f32",
        ),
        // ... and 1e-50 as zero.
        ("llama.rope.freq_base", "1e-50", None, "too small for f32"),
        ("general.x", "1e40", Some("f32"), "out of range for f32"),
        ("general.x", "1e400", Some("f64"), "out of range for f64"),
        ("general.x", "1e-400", Some("f64"), "too small for f64"),
        (
            "general.x",
            "[1, 1e40]",
            Some("[f32]"),
            "out of range for f32",
        ),
        (
            "general.x",
            "300",
            Some("u8"),
            "out of range for u8 (0 to 255)",
        ),
        ("llama.context_length", "-1", None, "out of range for u32"),
    ] {
        let mut args = vec!["set", f.p(), key, value];
        if let Some(t) = ty {
            args.extend(["--type", t]);
        }
        let err = failed(&gguf(&args));
        assert!(err.contains(says), "{args:?}: {err}");
        f.assert_untouched();
    }
    // Infinity asked for by name is stored; the largest f32 too.
    ok(&gguf(&["set", f.p(), "llama.rope.freq_base", "--", "-inf"]));
    f.assert_only_changed("llama.rope.freq_base", OwnedValue::F32(f32::NEG_INFINITY));
    ok(&gguf(&[
        "set",
        f.p(),
        "llama.rope.freq_base",
        "3.4028235e38",
    ]));
    f.assert_only_changed("llama.rope.freq_base", OwnedValue::F32(f32::MAX));
}

#[test]
fn from_file_sets_a_string() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("v.txt");
    std::fs::write(&text, "12\n").unwrap();
    let text = text.to_str().unwrap();
    let f = Fixture::new(Spec::default().slack(256));
    // A new key needs no --type: it is a string, taken verbatim.
    ok(&gguf(&["set", f.p(), "general.note", "--from-file", text]));
    f.assert_only_changed("general.note", "12\n".into());

    let f = Fixture::new(Spec::default().slack(256));
    // Another type with --from-file is a usage error.
    let out = gguf(&[
        "set",
        f.p(),
        "general.note",
        "--from-file",
        text,
        "--type",
        "u32",
    ]);
    let err = failed(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--from-file sets a string value"), "{err}");
    // Over a u32 key it is a type change: --force.
    let err = failed(&gguf(&[
        "set",
        f.p(),
        "llama.context_length",
        "--from-file",
        text,
    ]));
    assert!(err.contains("is u32") && err.contains("--force"), "{err}");
    f.assert_untouched();
    ok(&gguf(&[
        "set",
        f.p(),
        "llama.context_length",
        "--from-file",
        text,
        "--force",
    ]));
    f.assert_only_changed("llama.context_length", "12\n".into());
}

fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().ino()
}

fn slack_of(path: &Path) -> Option<usize> {
    super::edit_fixtures::slack_len(&GgufFile::open(path).unwrap())
}

/// A file without slack (as downloaded) is rewritten by an edit that does
/// not fit; the rewrite reserves header slack and says so, and the next
/// edit lands in place. `--no-slack` reserves none.
#[test]
fn a_rewrite_reserves_slack_says_so_and_the_next_edit_is_in_place() {
    let f = Fixture::new(Spec::default());
    let dry = ok(&gguf(&[
        "set",
        f.p(),
        "general.name",
        &"n".repeat(600),
        "--dry-run",
    ]));
    assert!(
        dry.contains("would be rewritten") && dry.contains("; would reserve "),
        "{dry}"
    );
    f.assert_untouched();
    let out = ok(&gguf(&["set", f.p(), "general.name", &"n".repeat(600)]));
    let slack = slack_of(&f.path).expect("the rewrite reserved slack");
    assert!(slack >= 4096, "{slack}");
    let size = std::fs::metadata(&f.path).unwrap().len();
    assert_eq!(
        out.trim_end(),
        format!(
            "{}: file was rewritten ({size} bytes): the new header does not fit in place; \
             reserved {slack} bytes of header slack so the next edit is in place",
            f.p()
        )
    );
    assert_eq!(
        dry.replace("would be", "was")
            .replace("would reserve", "reserved"),
        out
    );
    f.assert_only_changed("general.name", "n".repeat(600).as_str().into());

    // 2000 bytes more: in place, the same file.
    let ino = inode(&f.path);
    let out = ok(&gguf(&["set", f.p(), "general.name", &"n".repeat(2600)]));
    assert!(out.contains("made in place"), "{out}");
    assert!(!out.contains("reserved"), "{out}");
    assert_eq!(inode(&f.path), ino, "the file was replaced");
    assert_eq!(std::fs::metadata(&f.path).unwrap().len(), size);
    assert_eq!(slack_of(&f.path), Some(slack - 2000));
    f.assert_only_changed("general.name", "n".repeat(2600).as_str().into());

    // --no-slack: a plain rewrite, as before.
    let g = Fixture::new(Spec::default());
    let out = ok(&gguf(&[
        "set",
        g.p(),
        "general.name",
        &"n".repeat(600),
        "--no-slack",
    ]));
    assert!(out.contains("rewritten") && !out.contains("slack"), "{out}");
    assert_eq!(slack_of(&g.path), None);
    g.assert_only_changed("general.name", "n".repeat(600).as_str().into());
}

/// `rm`, `mv` and `rename-tensor` reserve slack the same way, take
/// `--no-slack`, and a removal that shrinks the header out of its block
/// keeps the room as slack in place and says so.
#[test]
fn rm_mv_and_rename_tensor_reserve_slack_too() {
    let f = Fixture::new(Spec::default());
    let ino = inode(&f.path);
    let out = ok(&gguf(&["rm", f.p(), "tokenizer.chat_template"]));
    let slack = slack_of(&f.path).expect("the freed room became slack");
    assert_eq!(
        out.trim_end(),
        format!(
            "{}: edit was made in place ({} header bytes, tensor data untouched); the room the \
             header freed is kept as {slack} bytes of header slack for later edits",
            f.p(),
            GgufFile::open(&f.bytes).unwrap().data_offset()
        )
    );
    assert_eq!(inode(&f.path), ino);
    assert_eq!(f.now().len(), f.bytes.len());

    for (args, reserved) in [
        (vec!["rename-tensor", "output.weight", "o"], true),
        (vec!["mv", "general.name", "general.n"], true),
        (
            vec!["rename-tensor", "output.weight", "o", "--no-slack"],
            false,
        ),
        (vec!["mv", "general.name", "general.n", "--no-slack"], false),
    ] {
        let g = Fixture::new(Spec::default());
        // Names long enough that the header leaves its block.
        let long = "x".repeat(300);
        let mut argv: Vec<&str> = vec![args[0], g.p(), args[1]];
        let new = format!("{}{long}", args[2]);
        argv.push(&new);
        argv.extend(&args[3..]);
        let out = ok(&gguf(&argv));
        assert!(out.contains("rewritten"), "{argv:?}: {out}");
        assert_eq!(out.contains("reserved"), reserved, "{argv:?}: {out}");
        assert_eq!(slack_of(&g.path).is_some(), reserved, "{argv:?}");
    }
}
