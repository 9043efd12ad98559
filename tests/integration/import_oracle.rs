//! `gguf import` against llama.cpp: its converter followed by llama-quantize,
//! and its logits.
//!
//! The fixtures are the tiny Hugging Face checkpoints of `tests/data/import/`
//! with the converter's F16 output beside each (`<name>.f16.gguf`, written by
//! `scripts/import_oracle.sh`; see that directory's README). A preset's import
//! must give the bytes of `llama-quantize <name>.f16.gguf PRESET`: the
//! recorded sha256 of llama-quantize's outputs
//! (`tests/data/import/llama-quantize.sha256`) are checked in every run;
//! with `GGUF_LLAMA_TOOLS` naming llama.cpp's tools (as for
//! `quantize_oracle`), llama-quantize runs and the files are compared whole,
//! and llama.cpp (llama-cpp-python, in the `venv` beside the tools' `bin`)
//! must compute the same logits from our imports as from the converter's
//! files. Without the tools those tests print a `skipped:` line.
//!
//! Everything runs in the repository root with relative paths, as the
//! converter ran: `general.name` comes from the directory name and
//! `quantize.imatrix.file` records the importance matrix's path as given.
//! `GGUF_BLESS=1` computes a missing importance matrix with llama-imatrix
//! (`tests/data/import/imatrix/`) and rewrites the recorded hashes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::quantize_cases::{file_differences, parse_bytes_golden, sha256_hex, Case};
use super::quantize_oracle::{assert_same_logits_in_pairs, bless, run, tools_bin};

/// The checkpoints under `tests/data/import/` (see its README), each with
/// the pre-tokenizer its BPE hash was registered under in the converter
/// (the converter's list does not know these tokenizers, so `gguf import`
/// is told, with the override the issue gives it) and whether the
/// converter's BF16 output is committed too.
pub const FIXTURES: [(&str, Option<&str>, bool); 26] = [
    ("llama-bpe", Some("llama-bpe"), false),
    ("llama-spm", None, false),
    ("mistral-swa", None, false),
    ("qwen2-bias", Some("qwen2"), false),
    ("gemma3", None, false),
    ("qwen3", Some("qwen2"), true),
    ("qwen3-moe", Some("qwen2"), true),
    ("qwen3-next", Some("qwen2"), true),
    ("mixtral", None, true),
    ("gemma2", None, true),
    ("phi3", None, true),
    ("olmo2", Some("llama-bpe"), true),
    ("smollm3", Some("llama-bpe"), true),
    ("granite", Some("llama-bpe"), true),
    ("granitemoe", Some("qwen2"), true),
    ("glm4", Some("glm4"), true),
    ("glm4-moe", Some("glm4"), true),
    ("deepseek-v3", Some("llama-bpe"), true),
    ("gpt-oss", Some("llama-bpe"), true),
    // Weights published quantized: FP8 with block scales (F32 and BF16
    // scales), gpt-oss's MXFP4 experts.
    ("qwen3-fp8", Some("qwen2"), true),
    ("deepseek-v3-fp8", Some("llama-bpe"), true),
    ("gpt-oss-mxfp4", Some("llama-bpe"), true),
    // The text models of vision-language checkpoints (their projectors:
    // import_mmproj.rs).
    ("gemma3-vl", None, true),
    ("qwen2-vl", Some("qwen2"), true),
    ("qwen2.5-vl", Some("qwen2"), true),
    ("qwen3-vl", Some("qwen2"), true),
];

/// What `llama-quantize.sha256` records for a preset llama-quantize
/// refuses.
const REFUSED: &str = "refused";

/// The fixtures' names.
fn names() -> impl Iterator<Item = &'static str> {
    FIXTURES.iter().map(|f| f.0)
}

/// The pre-tokenizer a fixture is imported with (see [`FIXTURES`]).
pub fn pre_tokenizer(name: &str) -> Option<&'static str> {
    FIXTURES.iter().find(|f| f.0 == name).and_then(|f| f.1)
}

/// The presets compared, without and with an importance matrix.
fn cases() -> Vec<Case> {
    [
        ("Q4_K_M", false),
        ("Q6_K", false),
        ("Q4_K_M", true),
        ("IQ4_XS", true),
    ]
    .into_iter()
    .map(|(preset, imatrix)| Case {
        preset,
        imatrix,
        flags: vec![],
    })
    .collect()
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture's importance matrix, relative to the repository root.
fn imatrix(name: &str) -> String {
    format!("tests/data/import/imatrix/{name}.gguf")
}

fn recorded_path() -> PathBuf {
    repo().join("tests/data/import/llama-quantize.sha256")
}

/// How long one import or llama-quantize run of a fixture may take (they
/// take well under a second): a run that hangs fails the test instead.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// Runs `cmd` in the repository root: the file it wrote to `out`, or the
/// last line of its complaint (or that it did not finish in time).
fn output_of(cmd: &mut Command, out: &Path) -> Result<Vec<u8>, String> {
    let _ = std::fs::remove_file(out);
    // Standard error goes to a file, so that waiting with a deadline cannot
    // block on a full pipe.
    let log = out.with_extension("stderr");
    let mut child = cmd
        .current_dir(repo())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{cmd:?} did not finish in {RUN_LIMIT:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !status.success() {
        let err = std::fs::read_to_string(&log).unwrap_or_default();
        let last = err.lines().rev().find(|l| !l.trim().is_empty());
        return Err(format!("{status}: {}", last.unwrap_or("")));
    }
    std::fs::read(out).map_err(|e| format!("no output: {e}"))
}

/// `gguf import tests/data/import/NAME OUT --type TYPE [--pre-tokenizer P] [--imatrix ...]`.
fn import(name: &str, ty: &str, with_imatrix: bool, out: &Path) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gguf"));
    cmd.arg("import")
        .arg(format!("tests/data/import/{name}"))
        .arg(out)
        .args(["--type", ty]);
    if let Some(pre) = pre_tokenizer(name) {
        cmd.args(["--pre-tokenizer", pre]);
    }
    if with_imatrix {
        cmd.args(["--imatrix", &imatrix(name)]);
    }
    output_of(&mut cmd, out)
}

/// `llama-quantize [--imatrix ...] tests/data/import/NAME.f16.gguf OUT PRESET`.
fn llama_quantize(bin: &Path, name: &str, case: &Case, out: &Path) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new(bin.join("llama-quantize"));
    if case.imatrix {
        cmd.args(["--imatrix", &imatrix(name)]);
    }
    cmd.arg(format!("tests/data/import/{name}.f16.gguf"))
        .arg(out)
        .arg(case.preset)
        .arg("2");
    output_of(&mut cmd, out)
}

/// Computes a fixture's importance matrix from the converter's F16 output
/// with llama-imatrix, when it is missing and `GGUF_BLESS` is set.
fn ensure_imatrix(bin: &Path, name: &str) {
    let path = repo().join(imatrix(name));
    if path.exists() {
        return;
    }
    assert!(
        bless(),
        "{} is missing: run with GGUF_BLESS=1 to compute it",
        path.display()
    );
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    run(
        "llama-imatrix",
        Command::new(bin.join("llama-imatrix"))
            .current_dir(repo())
            .arg("-m")
            .arg(format!("tests/data/import/{name}.f16.gguf"))
            .args(["-f", "tests/data/quantize/imatrix-text.txt"])
            .args(["-c", "64", "-b", "64", "-t", "1", "--no-ppl", "-o"])
            .arg(imatrix(name)),
    );
}

/// The preset's name as `gguf import --type` takes it (lower case, as the
/// converter's `--outtype` values are written).
fn import_type(case: &Case) -> String {
    case.preset.to_ascii_lowercase()
}

#[test]
fn import_presets_match_recorded_llama_quantize_hashes() {
    let text = std::fs::read_to_string(recorded_path()).unwrap();
    let recorded = parse_bytes_golden(&text);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ours.gguf");
    let mut problems = Vec::new();
    for name in names() {
        for case in cases() {
            let key = (name.to_owned(), case.key());
            let Some(want) = recorded.get(&key) else {
                problems.push(format!("{name} {}: not recorded", case.key()));
                continue;
            };
            // A preset llama-quantize refuses (requantizing gpt-oss's MXFP4
            // experts) is recorded as refused, and the import must refuse it.
            let got = import(name, &import_type(&case), case.imatrix, &out)
                .map_or_else(|_| REFUSED.to_owned(), |b| sha256_hex(&b));
            if &got != want {
                problems.push(format!(
                    "{name} {}: gguf import gives {got}, llama-quantize gave {want}",
                    case.key()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn import_presets_match_llama_quantize_of_converter_f16() {
    let Some(bin) = tools_bin("compare gguf import's presets with convert + llama-quantize") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = (dir.path().join("ours.gguf"), dir.path().join("llama.gguf"));
    let mut problems = Vec::new();
    let mut recorded = String::from(
        "# sha256 of `llama-quantize [--imatrix tests/data/import/imatrix/NAME.gguf] \
         tests/data/import/NAME.f16.gguf OUT PRESET`\n\
         # (import_oracle.rs, GGUF_BLESS=1); `gguf import --type PRESET` must give the same bytes.\n",
    );
    for name in names() {
        ensure_imatrix(&bin, name);
        for case in cases() {
            let b = llama_quantize(&bin, name, &case, &theirs);
            let a = import(name, &import_type(&case), case.imatrix, &ours);
            let d = match (&a, &b) {
                (Ok(x), Ok(y)) if x == y => vec![],
                (Err(_), Err(_)) => vec![],
                (Ok(x), Ok(y)) => file_differences(x, y),
                (Err(e), Ok(_)) => vec![format!("gguf import fails: {e}")],
                (_, Err(e)) => vec![format!("llama-quantize fails: {e}")],
            };
            println!(
                "{name} {}: {}",
                case.key(),
                if d.is_empty() { "same" } else { "DIFFERENT" }
            );
            problems.extend(d.into_iter().map(|x| format!("{name} {}: {x}", case.key())));
            let hash = b.map_or(REFUSED.to_owned(), |b| sha256_hex(&b));
            recorded.push_str(&format!("{name} {} = {hash}\n", case.key()));
        }
    }
    if bless() {
        std::fs::write(recorded_path(), &recorded).unwrap();
    } else {
        let committed = std::fs::read_to_string(recorded_path()).unwrap_or_default();
        if parse_bytes_golden(&committed) != parse_bytes_golden(&recorded) {
            problems.push(format!(
                "{} is not llama-quantize's answer (GGUF_BLESS=1 rewrites it)",
                recorded_path().display()
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} differences with convert + llama-quantize:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// llama.cpp loads each import (F16, and Q4_K_M with the importance matrix)
/// and computes, to the bit, the logits it computes from the converter's F16
/// and from llama-quantize's Q4_K_M of it.
#[test]
fn llama_cpp_gives_the_same_logits_with_our_import() {
    let Some(bin) = tools_bin("compare llama.cpp's logits on gguf import's output") else {
        return;
    };
    if !bin.parent().unwrap().join("venv/bin/python").exists() {
        eprintln!("skipped: no venv with llama-cpp-python next to the tools' bin directory");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let q4 = Case {
        preset: "Q4_K_M",
        imatrix: true,
        flags: vec![],
    };
    let mut files = Vec::new();
    for name in names() {
        let ours = dir.path().join(format!("{name}-f16-ours.gguf"));
        import(name, "f16", false, &ours).unwrap_or_else(|e| panic!("{name} f16: {e}"));
        files.push(ours);
        files.push(repo().join(format!("tests/data/import/{name}.f16.gguf")));
        let ours = dir.path().join(format!("{name}-q4_k_m-ours.gguf"));
        let theirs = dir.path().join(format!("{name}-q4_k_m-llama.gguf"));
        match (
            import(name, "q4_k_m", true, &ours),
            llama_quantize(&bin, name, &q4, &theirs),
        ) {
            (Ok(_), Ok(_)) => files.extend([ours, theirs]),
            (Err(_), Err(_)) => {
                println!("note: {name}: Q4_K_M is refused by llama-quantize and by the import alike; its F16 logits are compared")
            }
            (a, b) => panic!(
                "{name} q4_k_m: import {:?}, llama-quantize {:?}",
                a.err(),
                b.err()
            ),
        }
    }
    assert_same_logits_in_pairs(&bin, &files);
}
