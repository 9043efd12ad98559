//! `gguf rewrite`, run as a child process.

use std::path::Path;
use std::process::Output;

use gguf::{Endian, Gguf, GgufFile};

use super::util::{ctx, gguf, rich, tiny_file, Content, Mode, Src};

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "gguf failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn p(s: &str) -> &Path {
    Path::new(s)
}

/// Content with plain tensor types only, so every option applies.
fn plain(version: u32, endian: Endian, alignment: u32) -> Content {
    let c = rich(ctx(version, endian), alignment);
    Content {
        tensors: c.tensors.into_iter().filter(|t| t.ty.is_plain()).collect(),
        ..c
    }
}

#[test]
fn rewrite_is_byte_identical_in_every_mode_and_silent_when_piped() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let bytes = rich(ctx(3, Endian::Little), 64).write(Mode::Single, Src::Bytes);
    std::fs::write(&input, &bytes).unwrap();
    for mode in ["single", "reserve"] {
        let output = dir.path().join(format!("{mode}.gguf"));
        let out = gguf(&[p("rewrite"), &input, &output, p("--mode"), p(mode)]);
        ok(&out);
        assert!(
            out.stderr.is_empty(),
            "progress drawn on a pipe: {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(std::fs::read(&output).unwrap() == bytes, "{mode}");
        let summary = String::from_utf8(out.stdout).unwrap();
        assert!(
            summary.contains(&format!("{} bytes", bytes.len())),
            "{summary}"
        );
    }
    // The bundled sample too.
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/tiny-llama.gguf");
    let output = dir.path().join("sample.gguf");
    ok(&gguf(&[p("rewrite"), &sample, &output]));
    assert!(std::fs::read(&output).unwrap() == std::fs::read(&sample).unwrap());
}

#[test]
fn alignment_option_changes_the_alignment_and_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let content = rich(ctx(3, Endian::Little), 32);
    std::fs::write(&input, content.write(Mode::Single, Src::Bytes)).unwrap();
    for (alignment, mode) in [("64", "single"), ("1", "reserve"), ("4096", "single")] {
        let output = dir.path().join(format!("a{alignment}.gguf"));
        ok(&gguf(&[
            p("rewrite"),
            &input,
            &output,
            p("--alignment"),
            p(alignment),
            p("--mode"),
            p(mode),
        ]));
        let n: u32 = alignment.parse().unwrap();
        let bytes = std::fs::read(&output).unwrap();
        // Exactly what the builder writes for this content at that alignment.
        let expected = Content {
            alignment: n,
            ..content.clone()
        };
        expected.check_read_back(&bytes);
        let file = GgufFile::open(&bytes).unwrap();
        assert_eq!(file.alignment(), u64::from(n));
        assert_eq!(file.get::<u32>("general.alignment").unwrap(), n);
    }
}

#[test]
fn endian_option_swaps_plain_tensors_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("le.gguf");
    let big = dir.path().join("be.gguf");
    let back = dir.path().join("le2.gguf");
    let le = plain(3, Endian::Little, 32);
    let le_bytes = le.write(Mode::Single, Src::Bytes);
    std::fs::write(&input, &le_bytes).unwrap();
    ok(&gguf(&[
        p("rewrite"),
        &input,
        &big,
        p("--endian"),
        p("big"),
    ]));
    let be_bytes = std::fs::read(&big).unwrap();
    let be = Content {
        ctx: ctx(3, Endian::Big),
        ..le.clone()
    };
    be.check_read_back(&be_bytes);
    assert_eq!(GgufFile::open(&be_bytes).unwrap().endian(), Endian::Big);
    ok(&gguf(&[
        p("rewrite"),
        &big,
        &back,
        p("--endian"),
        p("little"),
        p("--mode"),
        p("reserve"),
    ]));
    assert!(std::fs::read(&back).unwrap() == le_bytes);
}

#[test]
fn version_option_changes_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let content = plain(3, Endian::Little, 32);
    std::fs::write(&input, content.write(Mode::Single, Src::Bytes)).unwrap();
    for version in [1u32, 2, 3] {
        let output = dir.path().join(format!("v{version}.gguf"));
        let v = version.to_string();
        ok(&gguf(&[
            p("rewrite"),
            &input,
            &output,
            p("--version"),
            p(&v),
        ]));
        let bytes = std::fs::read(&output).unwrap();
        Content {
            ctx: ctx(version, Endian::Little),
            ..content.clone()
        }
        .check_read_back(&bytes);
    }
}

#[test]
fn rewriting_a_file_onto_itself_is_safe() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.gguf");
    let content = plain(3, Endian::Little, 32);
    let original = content.write(Mode::Single, Src::Bytes);
    std::fs::write(&path, &original).unwrap();
    ok(&gguf(&[
        p("rewrite"),
        &path,
        &path,
        p("--alignment"),
        p("256"),
    ]));
    let changed = std::fs::read(&path).unwrap();
    Content {
        alignment: 256,
        ..content.clone()
    }
    .check_read_back(&changed);
    ok(&gguf(&[
        p("rewrite"),
        &path,
        &path,
        p("--alignment"),
        p("32"),
    ]));
    assert!(std::fs::read(&path).unwrap() == original);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temp file left"
    );
}

#[test]
fn invalid_input_or_option_fails_with_the_error_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.gguf");
    let mut bytes = tiny_file();
    bytes[0] = b'X';
    std::fs::write(&bad, &bytes).unwrap();
    let output = dir.path().join("out.gguf");
    let out = gguf(&[p("rewrite"), &bad, &output]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad magic") && err.contains("bad.gguf"),
        "{err}"
    );
    assert!(!output.exists());

    let good = dir.path().join("good.gguf");
    std::fs::write(&good, tiny_file()).unwrap();
    // Bad option values are usage errors (see cli_messages.rs).
    let out = gguf(&[p("rewrite"), &good, &output, p("--alignment"), p("48")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("not a power of two"), "{err}");
    let out = gguf(&[p("rewrite"), &good, &output, p("--version"), p("4")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("'--version <N>': 4 is not in 1..=3"), "{err}");
    assert!(!output.exists());

    // Quantized data changes byte order too (block fields swapped; see
    // tests/integration/endian.rs for the byte-level checks).
    let q = dir.path().join("q.gguf");
    std::fs::write(
        &q,
        rich(ctx(3, Endian::Little), 32).write(Mode::Single, Src::Bytes),
    )
    .unwrap();
    let out = gguf(&[p("rewrite"), &q, &output, p("--endian"), p("big")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let be = gguf::GgufFile::open(&output).unwrap();
    assert_eq!(be.endian(), Endian::Big);
    assert_eq!(be.tensor("q4_k").unwrap().ggml_type(), gguf::GgmlType::Q4_K);
}

#[test]
fn rewrite_reserve_adds_slack_that_lets_a_longer_edit_land_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let output = dir.path().join("out.gguf");
    std::fs::write(&input, super::util::tiny_file()).unwrap();
    let gguf = env!("CARGO_BIN_EXE_gguf");
    let out = std::process::Command::new(gguf)
        .args(["rewrite"])
        .arg(&input)
        .arg(&output)
        .args(["--reserve", "4K"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = std::fs::read(&output).unwrap();
    let padding_before = {
        let file = gguf::GgufFile::open(&before).unwrap();
        assert_eq!(file.get_array(gguf::write::SLACK_KEY).unwrap().len(), 4096);
        file.data_offset() - file.header_len()
    };
    // A name of 1000 bytes crosses many 32-byte blocks: only the slack
    // lets it land in place.
    let name = "n".repeat(1000);
    let out = std::process::Command::new(gguf)
        .arg("set")
        .arg(&output)
        .args(["general.name", &name, "--type", "string"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("in place"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let after = std::fs::read(&output).unwrap();
    assert_eq!(after.len(), before.len());
    let file = gguf::GgufFile::open(&after).unwrap();
    assert_eq!(file.get_str("general.name").unwrap(), name);
    // The new entry (key length, key, type, string length, string) comes
    // out of the slack and the old padding; the header now ends exactly
    // at the data.
    let entry = 8 + "general.name".len() as u64 + 4 + 8 + 1000;
    assert_eq!(
        file.get_array(gguf::write::SLACK_KEY).unwrap().len() as u64,
        4096 - (entry - padding_before)
    );
    assert_eq!(file.header_len(), file.data_offset());
    let data = file.data_offset() as usize;
    assert_eq!(after[data..], before[data..], "tensor data changed");
}

#[test]
fn rewrite_reserve_rejects_bad_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    std::fs::write(&input, super::util::tiny_file()).unwrap();
    for bad in ["12Q", "x", "2048M"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gguf"))
            .arg("rewrite")
            .arg(&input)
            .arg(dir.path().join("o.gguf"))
            .args(["--reserve", bad])
            .output()
            .unwrap();
        assert!(!out.status.success(), "--reserve {bad} accepted");
        assert!(!dir.path().join("o.gguf").exists());
    }
}
