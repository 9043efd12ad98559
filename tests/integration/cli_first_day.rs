//! The rough edges a user meets on the first day (issue 32): types that
//! are no weight types, messages of several lines, the importance
//! matrix's chunk size, every message naming its file once, the units of
//! sizes, and the README naming every command.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use gguf::write::Builder;
use gguf::{GgmlType, Gguf, GgufFile};

use super::util::gguf;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf");

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn os(s: &str) -> &OsStr {
    s.as_ref()
}

/// The sample with its weight matrices re-encoded to `ty` by the library
/// (as an earlier `gguf convert` wrote them), at `dir/name`. Its rows are
/// of 64 or 128 values: `ty` has blocks of 32.
fn sample_as(dir: &Path, name: &str, ty: GgmlType) -> PathBuf {
    let file = GgufFile::open(SAMPLE).unwrap();
    let mut b = Builder::from_file(&file).unwrap();
    let weights: Vec<String> = file
        .tensors()
        .filter(|t| t.shape().len() == 2)
        .map(|t| t.name().to_owned())
        .collect();
    assert!(!weights.is_empty());
    for name in &weights {
        b.requantize_tensor(name, ty).unwrap();
    }
    let path = dir.join(name);
    b.write_to_path(&path).unwrap();
    path
}

/// Q8_1 and Q8_K are the types ggml quantizes activations to: `convert`
/// refuses them as targets (and its help says why), `quantize` refuses
/// them as a tensor's type, and `check` does not call a file with such
/// weights (an earlier version wrote them) loadable.
#[test]
fn activation_types_are_not_weight_types() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.gguf");
    for ty in ["Q8_1", "q8_k"] {
        let run = gguf(&[
            os("convert"),
            os(SAMPLE),
            out.as_os_str(),
            os("--type"),
            os(ty),
        ]);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{ty}: {err}");
        assert!(err.contains("only for activations"), "{ty}: {err}");
        assert!(err.contains("valid types: F32, F16"), "{ty}: {err}");
        assert!(!err.contains("valid types: F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1"));
        assert!(!out.exists(), "{ty}");
    }
    let help = stdout(&gguf(&["convert", "--help"]));
    let targets = help
        .lines()
        .find(|l| l.starts_with("Target types"))
        .unwrap_or_else(|| panic!("{help}"));
    assert!(targets.contains("Q8_0") && !targets.contains("Q8_1") && !targets.contains("Q8_K"));
    assert!(
        help.contains("Not targets: Q8_1, Q8_K (types ggml uses only for activations"),
        "{help}"
    );

    // quantize: a --tensor-type or --output-tensor-type of these types is
    // refused before anything is written (llama-quantize aborts on it).
    for flag in [
        ["--tensor-type", "attn_q=q8_1"],
        ["--output-tensor-type", "q8_k"],
    ] {
        let run = gguf(&[
            os("quantize"),
            os("--allow-requantize"),
            os(flag[0]),
            os(flag[1]),
            os(SAMPLE),
            out.as_os_str(),
            os("Q8_0"),
        ]);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(1), "{flag:?}: {err}");
        assert!(err.contains("only for activations"), "{flag:?}: {err}");
        assert!(!out.exists(), "{flag:?}");
    }

    // check: a file an earlier version wrote (Q8_1 weights).
    let old = sample_as(dir.path(), "old-q8_1.gguf", GgmlType::Q8_1);
    let run = gguf(&[os("check"), old.as_os_str()]);
    let text = stdout(&run);
    assert_eq!(run.status.code(), Some(1), "{text}");
    assert!(!text.contains("loadable by llama.cpp"), "{text}");
    assert!(
        text.contains("llama.cpp: 16 tensors of type Q8_1 (\"token_embd.weight\", "),
        "{text}"
    );
    assert!(text.contains("cannot run the model"), "{text}");
    assert!(
        text.contains("valid GGUF, loaded by llama.cpp but not runnable"),
        "{text}"
    );
    let run = gguf(&[os("check"), old.as_os_str(), os("--json")]);
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(doc["loadable"], false, "{doc}");
    assert_eq!(doc["ok"], false, "{doc}");
    // Q8_K (blocks of 256) in a file the loader rules do not cover fully:
    // named, and nothing is said about loading it.
    let k = dir.path().join("q8_k.gguf");
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    let x: Vec<f32> = (0..512).map(|i| i as f32 / 512.0).collect();
    b.add_tensor_quantized("blk.0.ffn_up.weight", GgmlType::Q8_K, &[256, 2], x)
        .unwrap();
    b.write_to_path(&k).unwrap();
    let run = gguf(&[os("check"), k.as_os_str()]);
    let text = stdout(&run);
    assert_eq!(run.status.code(), Some(1), "{text}");
    assert!(
        text.contains("1 tensor of type Q8_K (\"blk.0.ffn_up.weight\"), a type ggml uses only"),
        "{text}"
    );
    assert!(!text.contains("loaded by llama.cpp"), "{text}");
    // The same sample in Q8_0 is loadable: the verdict is about the type.
    let fine = sample_as(dir.path(), "q8_0.gguf", GgmlType::Q8_0);
    let text = stdout(&gguf(&[os("check"), fine.as_os_str()]));
    assert!(text.contains("loadable by llama.cpp"), "{text}");
}

/// The tool's own messages of several lines print as lines; a line feed
/// in text from a file (or a path) inside such a message stays escaped.
#[test]
fn a_message_of_several_lines_prints_as_lines() {
    let dir = tempfile::tempdir().unwrap();
    // A path with a line feed: `convert` names it on the first line.
    let input = dir.path().join("in\nforged.gguf");
    std::fs::copy(SAMPLE, &input).unwrap();
    let out = dir.path().join("out.gguf");
    // Every weight is Q8_0 or a norm: nothing to convert, and the reasons
    // follow on lines of their own.
    let q8 = sample_as(dir.path(), "q8.gguf", GgmlType::Q8_0);
    std::fs::rename(&q8, &input).unwrap();
    let run = gguf(&[
        os("convert"),
        input.as_os_str(),
        out.as_os_str(),
        os("--type"),
        os("Q8_0"),
    ]);
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.len() >= 3, "{err}");
    assert!(lines[0].starts_with("gguf: "), "{err}");
    assert!(
        lines[0].contains(r"in\nforged.gguf: nothing to convert to Q8_0"),
        "{err}"
    );
    assert!(lines[1].starts_with("  kept "), "{err}");
    assert!(lines[2].starts_with("  kept "), "{err}");
    assert!(!err.contains(r"\n  kept"), "{err}");
    assert!(!lines.iter().any(|l| l.starts_with("forged")), "{err}");
    assert!(!out.exists());
}

/// A GGUF importance matrix computed with 256 tokens per chunk, with
/// counts of whole chunks (so the legacy format holds them exactly).
fn imatrix_256(path: &Path) {
    use gguf::quantize::{Imatrix, ImatrixEntry, ImatrixFormat};
    let entry = |name: &str, v: f32| ImatrixEntry {
        name: name.into(),
        sums: vec![v * 768.0, 2.0 * v * 768.0],
        counts: vec![768.0],
    };
    Imatrix {
        format: ImatrixFormat::Gguf,
        entries: vec![
            entry("blk.0.attn_q.weight", 0.5),
            entry("blk.0.ffn_up.weight", 0.25),
        ],
        datasets: vec!["calibration.txt".into()],
        chunk_count: 3,
        chunk_size: Some(256),
    }
    .write(path)
    .unwrap();
}

/// GGUF -> .dat drops `imatrix.chunk_size`: a warning names the output,
/// the input and the value, and the flag that restores it, with which the
/// round trip gives the same file again.
#[test]
fn imatrix_to_dat_says_which_chunk_size_it_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let (a, dat, back) = (
        dir.path().join("a.gguf"),
        dir.path().join("a.dat"),
        dir.path().join("back.gguf"),
    );
    imatrix_256(&a);
    let run = gguf(&[os("imatrix"), os("convert"), a.as_os_str(), dat.as_os_str()]);
    let err = stderr(&run);
    assert!(run.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert_eq!(
        lines[0],
        format!(
            "gguf: {}: warning: the legacy .dat format has no chunk size: {}'s \
             imatrix.chunk_size 256 was dropped",
            dat.display(),
            a.display()
        )
    );
    assert!(lines[1].contains("--chunk-size 256"), "{err}");
    assert!(!lines[1].contains("the default"), "{err}");

    // Back without the flag: 512 is assumed, and the file differs.
    let run = gguf(&[
        os("imatrix"),
        os("convert"),
        dat.as_os_str(),
        back.as_os_str(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_ne!(std::fs::read(&back).unwrap(), std::fs::read(&a).unwrap());
    // With it, the same file.
    let run = gguf(&[
        os("imatrix"),
        os("convert"),
        dat.as_os_str(),
        back.as_os_str(),
        os("--chunk-size"),
        os("256"),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(stderr(&run).is_empty(), "{}", stderr(&run));
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&a).unwrap());

    // --chunk-size with a GGUF input is not silently ignored.
    let run = gguf(&[
        os("imatrix"),
        os("convert"),
        a.as_os_str(),
        dat.as_os_str(),
        os("--chunk-size"),
        os("128"),
    ]);
    let err = stderr(&run);
    assert!(run.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "gguf: {}: warning: --chunk-size 128 ignored",
            a.display()
        )),
        "{err}"
    );
}

/// Every refusal of an importance matrix names its file once, first,
/// whichever command reads it.
#[test]
fn imatrix_refusals_name_the_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.gguf");
    let cut_dat = dir.path().join("cut.dat");
    std::fs::write(&cut_dat, b"abc").unwrap();
    let cut_gguf = dir.path().join("cut.gguf");
    std::fs::write(&cut_gguf, b"GGUF\x03\x00\x00\x00\x01").unwrap();
    let missing = dir.path().join("missing.dat");
    for bad in [&cut_dat, &cut_gguf, &missing] {
        let shown = bad.display().to_string();
        let name = bad.file_name().unwrap().to_str().unwrap();
        let runs = [
            gguf(&[
                os("imatrix"),
                os("convert"),
                bad.as_os_str(),
                out.as_os_str(),
            ]),
            gguf(&[
                os("quantize"),
                os("--imatrix"),
                bad.as_os_str(),
                os(SAMPLE),
                out.as_os_str(),
                os("Q4_K_M"),
            ]),
        ];
        for run in runs {
            let err = stderr(&run);
            assert_eq!(run.status.code(), Some(1), "{err}");
            assert!(err.starts_with(&format!("gguf: {shown}: ")), "{err}");
            assert_eq!(err.matches(name).count(), 1, "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(!out.exists());
        }
    }
}

/// A failed write of quantize's output names the output alone (it used to
/// be named after the input, `IN: OUT: ...`), and tokenize's text errors
/// name where the text came from.
#[test]
fn write_and_text_errors_name_their_file_once() {
    let dir = tempfile::tempdir().unwrap();
    // No temporary file can be created in /sys, even as root.
    let run = gguf(&[
        "quantize",
        "--allow-requantize",
        SAMPLE,
        "/sys/q.gguf",
        "Q8_0",
    ]);
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.starts_with("gguf: /sys/q.gguf: "), "{err}");
    assert!(!err.contains("tiny-llama"), "{err}");

    let text = dir.path().join("text.txt");
    std::fs::write(&text, b"ok \xff").unwrap();
    let run = gguf(&[
        os("tokenize"),
        os(SAMPLE),
        os("-f"),
        text.as_os_str(),
        os("--no-escape"),
    ]);
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "gguf: {}: the text is not valid UTF-8",
            text.display()
        )),
        "{err}"
    );
}

/// Size options list every unit they accept, in their help and in their
/// error.
#[test]
fn size_options_list_every_unit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.gguf");
    let o = out.to_str().unwrap();
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["split", SAMPLE, o, "--max-size", "5X"],
            &["B (bytes", "K, M or G"],
        ),
        (
            &["rewrite", SAMPLE, o, "--reserve", "5X"],
            &["B (bytes", "K (KB, KiB)", "M (MB, MiB)"],
        ),
        (
            &["estimate", SAMPLE, "--fit", "5X"],
            &["B (bytes)", "K (KB, KiB)", "G (GB, GiB)", "T (TB, TiB)"],
        ),
        (
            &["import", SAMPLE, o, "--split-max-size", "5X"],
            &["B (bytes", "K, M or G"],
        ),
    ];
    for (args, units) in cases {
        let run = gguf(args);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {err}");
        for unit in units {
            assert!(err.contains(unit), "{args:?}: {unit}: {err}");
        }
        let help = stdout(&gguf(&[args[0], "--help"]));
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for unit in units {
            // The help lists them too (`B (bytes, as without a unit)` there).
            let unit = unit.trim_end_matches(')');
            assert!(help.contains(unit), "{} --help: {unit}: {help}", args[0]);
        }
    }
    assert!(!out.exists());
}
