//! Opt-in: the quantization policy against llama-quantize itself.
//!
//! With `GGUF_LLAMA_TOOLS` naming llama.cpp's tools (the directory holding
//! `bin/llama-quantize` and `bin/llama-imatrix`, or that `bin` directory
//! itself), every case of `quantize_cases` runs `llama-quantize --dry-run`
//! on every test model of `quantize_models` and the type of each tensor and
//! the size must equal our `plan`. With `GGUF_GEMMA_MODEL` naming a Gemma 3
//! GGUF (the bundled Q4_K_M), the F16 model `llama-quantize
//! --allow-requantize IN OUT F16` makes of it and its importance matrix
//! (llama-imatrix on the same text) are compared too; both are kept in
//! the target directory's test scratch space. Without the tools each test
//! prints a `skipped:` line.
//!
//! `GGUF_BLESS=1` also rewrites the committed goldens from llama-quantize's
//! answers (`tests/data/quantize/dry-run/`) and computes the committed
//! importance matrices with llama-imatrix when they are missing
//! (`tests/data/quantize/imatrix/`).

use std::path::{Path, PathBuf};
use std::process::Command;

use gguf::{GgmlType, GgufFile};

use super::quantize_cases::{
    byte_cases, bytes_golden_path, cases, differences, file_differences, format_golden,
    golden_path, our_dry_run, parse_bytes_golden, parse_golden, sha256_hex, tensor_bytes, Case,
    DryRun,
};
use super::quantize_models::{ModelSpec, MODELS};

/// The directory of llama.cpp's binaries, or `None` after saying how to
/// run the test.
pub fn tools_bin(what: &str) -> Option<PathBuf> {
    let Ok(dir) = std::env::var("GGUF_LLAMA_TOOLS") else {
        eprintln!("skipped: set GGUF_LLAMA_TOOLS to the llama tools directory to {what}");
        return None;
    };
    let dir = PathBuf::from(dir);
    let bin = dir.join("bin");
    Some(if bin.join("llama-quantize").exists() {
        bin
    } else {
        dir
    })
}

/// `GGUF_ORACLE_FILTER`: only the byte comparisons whose `MODEL CASE`
/// label contains it run (and the recorded hashes are not checked).
fn filter() -> Option<String> {
    std::env::var("GGUF_ORACLE_FILTER").ok()
}

/// True when the goldens are to be rewritten.
pub fn bless() -> bool {
    std::env::var_os("GGUF_BLESS").is_some_and(|v| v != "0")
}

/// The committed importance matrix of test model `name` (llama-imatrix's
/// GGUF format, on `imatrix-text.txt`).
pub fn imatrix_path(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/quantize/imatrix"
    ))
    .join(format!("{name}.gguf"))
}

/// Runs `cmd`; its standard output and error, failing the test with both
/// unless it succeeded.
#[track_caller]
pub fn run(what: &str, cmd: &mut Command) -> (String, String) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{so}\n{se}",
        out.status
    );
    (so, se)
}

/// Computes `spec`'s importance matrix with llama-imatrix into the
/// committed place, when it is missing and `GGUF_BLESS` is set.
fn ensure_imatrix(bin: &Path, spec: &ModelSpec, model: &Path) -> PathBuf {
    let path = imatrix_path(spec.name);
    if path.exists() {
        return path;
    }
    assert!(
        bless(),
        "{} is missing: run with GGUF_BLESS=1 to compute it",
        path.display()
    );
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/quantize");
    // Relative paths, so that the dataset name recorded does not depend on
    // where the repository lives.
    run(
        "llama-imatrix",
        Command::new(bin.join("llama-imatrix"))
            .current_dir(&data)
            .arg("-m")
            .arg(model)
            .args(["-f", "imatrix-text.txt", "-c", "64", "-b", "64", "-t", "1"])
            .args(["--no-ppl", "-o"])
            .arg(format!("imatrix/{}.gguf", spec.name)),
    );
    path
}

/// The F16 Gemma 3 and its importance matrix, made once from
/// `GGUF_GEMMA_MODEL` with llama-quantize and llama-imatrix; `None` after
/// saying how to include it.
pub fn gemma_f16(bin: &Path) -> Option<(PathBuf, PathBuf)> {
    let Ok(source) = std::env::var("GGUF_GEMMA_MODEL") else {
        eprintln!("skipped: set GGUF_GEMMA_MODEL to a Gemma 3 GGUF to compare an F16 Gemma too");
        return None;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let f16 = dir.join("gemma-3-f16.gguf");
    if !f16.exists() {
        let partial = dir.join("gemma-3-f16.gguf.partial");
        run(
            "llama-quantize F16",
            Command::new(bin.join("llama-quantize"))
                .arg("--allow-requantize")
                .arg(&source)
                .arg(&partial)
                .arg("F16"),
        );
        std::fs::rename(&partial, &f16).unwrap();
    }
    let imatrix = dir.join("gemma-3.imatrix.gguf");
    if !imatrix.exists() {
        let partial = dir.join("gemma-3.imatrix.partial.gguf");
        run(
            "llama-imatrix on Gemma",
            Command::new(bin.join("llama-imatrix"))
                .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/quantize"))
                .arg("-m")
                .arg(&f16)
                .args(["-f", "imatrix-text.txt", "-c", "128", "-b", "128"])
                .args(["--no-ppl", "-o"])
                .arg(&partial),
        );
        std::fs::rename(&partial, &imatrix).unwrap();
    }
    Some((f16, imatrix))
}

/// Parses llama-quantize's `--dry-run` log: each tensor's name and final
/// type, and the size of the tensor data.
fn parse_dry_run(log: &str) -> DryRun {
    let mut tensors = Vec::new();
    let mut size = 0;
    for line in log.lines() {
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let Some((_, rest)) = rest.split_once("] ") else {
            continue;
        };
        let Some((name, rest)) = rest.split_once(" - [") else {
            continue;
        };
        let (shape, rest) = rest.split_once("], type = ").unwrap();
        let shape: Vec<u64> = shape
            .split(',')
            .map(|d| d.trim().parse().unwrap())
            .collect();
        let (source, rest) = rest.split_once(',').unwrap();
        let target = match rest.rsplit_once('(') {
            Some((_, t)) if rest.contains("->") => t.trim_end().trim_end_matches(')'),
            _ => source.trim(),
        };
        let ty = GgmlType::from_name(target).unwrap_or_else(|| panic!("type {target:?}"));
        size += tensor_bytes(&shape, ty);
        tensors.push((name.trim().to_owned(), ty));
    }
    DryRun { tensors, size }
}

/// llama-quantize's dry run of `case` on `model` (`Err` with its message
/// when it refuses).
fn llama_dry_run(
    bin: &Path,
    model: &Path,
    imatrix: Option<&Path>,
    case: &Case,
) -> Result<DryRun, String> {
    let mut cmd = Command::new(bin.join("llama-quantize"));
    cmd.arg("--dry-run");
    if case.imatrix {
        cmd.arg("--imatrix")
            .arg(imatrix.expect("an importance matrix"));
    }
    cmd.args(&case.flags).arg(model).arg(case.preset);
    let out = cmd.output().expect("llama-quantize runs");
    let log = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let reason = log
            .lines()
            .find(|l| l.contains("failed to quantize"))
            .unwrap_or("failed");
        return Err(reason.to_owned());
    }
    let run = parse_dry_run(&log);
    assert!(
        !run.tensors.is_empty(),
        "{}: no tensor in\n{log}",
        case.key()
    );
    Ok(run)
}

/// Each case's key and llama-quantize's dry run (`Err` where it refused).
type Answers = Vec<(String, Result<DryRun, String>)>;

/// Every case on `model`: differences between our plan and llama-quantize,
/// and llama-quantize's answers (for the goldens).
fn compare_model(
    bin: &Path,
    model: &Path,
    imatrix: Option<&Path>,
    cases: &[Case],
) -> (Vec<String>, Answers) {
    let file = GgufFile::open(model).unwrap();
    let mut problems = Vec::new();
    let mut answers = Vec::new();
    for case in cases {
        if case.imatrix && imatrix.is_none() {
            continue;
        }
        let theirs = llama_dry_run(bin, model, imatrix, case);
        let ours = our_dry_run(&file, case);
        for d in differences(&ours, &theirs) {
            problems.push(format!("{}: {}", case.key(), d));
        }
        answers.push((case.key(), theirs));
    }
    (problems, answers)
}

#[test]
fn plan_matches_llama_quantize_dry_run() {
    let Some(bin) = tools_bin("compare the quantization plan with llama-quantize --dry-run") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = cases();
    let mut problems = Vec::new();
    for spec in MODELS {
        let model = spec.write_to(dir.path());
        let imatrix = ensure_imatrix(&bin, spec, &model);
        let (p, answers) = compare_model(&bin, &model, Some(&imatrix), &cases);
        println!(
            "{}: {} cases, {} differences",
            spec.name,
            answers.len(),
            p.len()
        );
        problems.extend(p.into_iter().map(|d| format!("{}: {d}", spec.name)));
        let golden = golden_path(spec.name);
        let text = format_golden(
            &format!(
                "llama-quantize --dry-run on the test model {} (tests/integration/quantize_models.rs).\n\
                 Written by quantize_oracle.rs with GGUF_BLESS=1; checked by quantize_goldens.rs.",
                spec.name
            ),
            &answers,
        );
        if bless() {
            std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
            std::fs::write(&golden, text).unwrap();
        } else {
            let committed = std::fs::read_to_string(&golden).unwrap_or_default();
            if parse_golden(&committed) != parse_golden(&text) {
                problems.push(format!(
                    "{}: the committed golden is not llama-quantize's answer (GGUF_BLESS=1 rewrites it)",
                    spec.name
                ));
            }
        }
    }
    if let Some((gemma, imatrix)) = gemma_f16(&bin) {
        let (p, answers) = compare_model(&bin, &gemma, Some(&imatrix), &cases);
        println!("gemma: {} cases, {} differences", answers.len(), p.len());
        problems.extend(p.into_iter().map(|d| format!("gemma: {d}")));
    }
    assert!(
        problems.is_empty(),
        "{} differences with llama-quantize:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Quantizes `model` as `case` says with `program` (llama-quantize or our
/// `gguf quantize`, whose arguments start with `first`) into `out`: the
/// output's bytes, or the tool's complaint. Both run in
/// `tests/data/quantize` and name the importance matrix by the same
/// relative path, so that `quantize.imatrix.file` is the same in both.
pub fn quantize_with(
    program: &Path,
    first: &[&str],
    model: &Path,
    imatrix: &str,
    case: &Case,
    out: &Path,
) -> Result<Vec<u8>, String> {
    let _ = std::fs::remove_file(out);
    let mut cmd = Command::new(program);
    cmd.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/quantize"))
        .args(first);
    if case.imatrix {
        cmd.args(["--imatrix", imatrix]);
    }
    cmd.args(&case.flags)
        .arg(model)
        .arg(out)
        .arg(case.preset)
        .arg("2");
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!("{}: {last}", o.status));
    }
    std::fs::read(out).map_err(|e| format!("no output: {e}"))
}

/// Our `gguf quantize` and llama-quantize on one case: the differences
/// (none when the same bytes or both refuse) and llama-quantize's result.
fn compare_bytes(
    bin: &Path,
    dir: &Path,
    model: &Path,
    imatrix: &str,
    case: &Case,
) -> (Vec<String>, Result<Vec<u8>, String>) {
    let ours = Path::new(env!("CARGO_BIN_EXE_gguf"));
    let a = quantize_with(
        ours,
        &["quantize"],
        model,
        imatrix,
        case,
        &dir.join("ours.gguf"),
    );
    let b = quantize_with(
        &bin.join("llama-quantize"),
        &[],
        model,
        imatrix,
        case,
        &dir.join("llama.gguf"),
    );
    let d = match (&a, &b) {
        (Ok(x), Ok(y)) if x == y => vec![],
        (Ok(x), Ok(y)) => file_differences(x, y),
        (Err(_), Err(_)) => vec![],
        (Ok(_), Err(e)) => vec![format!("llama-quantize refuses ({e}), we do not")],
        (Err(e), Ok(_)) => vec![format!("we refuse ({e}), llama-quantize does not")],
    };
    (d, b)
}

#[test]
fn quantize_output_matches_llama_quantize_bytes() {
    let Some(bin) = tools_bin("compare gguf quantize's output with llama-quantize's") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut problems = Vec::new();
    let mut recorded = String::from(
        "# sha256 of llama-quantize's output for each test model and case (quantize_oracle.rs, GGUF_BLESS=1);\n\
         # gguf quantize must give the same bytes (quantize_goldens.rs).\n",
    );
    for spec in MODELS {
        let model = spec.write_to(dir.path());
        ensure_imatrix(&bin, spec, &model);
        let imatrix = format!("imatrix/{}.gguf", spec.name);
        let (mut same, mut total) = (0, 0);
        for case in byte_cases() {
            if filter().is_some_and(|f| !format!("{} {}", spec.name, case.key()).contains(&f)) {
                continue;
            }
            let (d, theirs) = compare_bytes(&bin, dir.path(), &model, &imatrix, &case);
            total += 1;
            if d.is_empty() {
                same += 1;
            }
            println!(
                "{} {}: {}",
                spec.name,
                case.key(),
                if d.is_empty() { "same" } else { "DIFFERENT" }
            );
            problems.extend(
                d.into_iter()
                    .map(|x| format!("{} {}: {x}", spec.name, case.key())),
            );
            let hash = theirs.map_or("error".to_owned(), |b| sha256_hex(&b));
            recorded.push_str(&format!("{} {} = {hash}\n", spec.name, case.key()));
        }
        println!("{}: {same} of {total} outputs the same bytes", spec.name);
    }
    if let Some((gemma, imatrix)) = gemma_f16(&bin) {
        let imatrix = imatrix.to_str().unwrap().to_owned();
        for (preset, with) in [
            ("Q4_K_M", false),
            ("Q4_K_M", true),
            ("IQ4_XS", true),
            ("IQ2_XS", true),
        ] {
            let case = Case {
                preset,
                imatrix: with,
                flags: vec![],
            };
            if filter().is_some_and(|f| !format!("gemma {}", case.key()).contains(&f)) {
                continue;
            }
            let (d, _) = compare_bytes(&bin, dir.path(), &gemma, &imatrix, &case);
            println!(
                "gemma {}: {}",
                case.key(),
                if d.is_empty() { "same" } else { "DIFFERENT" }
            );
            problems.extend(d.into_iter().map(|x| format!("gemma {}: {x}", case.key())));
        }
    }
    let golden = bytes_golden_path();
    if filter().is_some() {
        eprintln!("GGUF_ORACLE_FILTER is set: the recorded hashes were not checked");
    } else if bless() {
        std::fs::write(&golden, &recorded).unwrap();
    } else {
        let committed = std::fs::read_to_string(&golden).unwrap_or_default();
        if parse_bytes_golden(&committed) != parse_bytes_golden(&recorded) {
            problems.push(format!(
                "{} is not llama-quantize's answer (GGUF_BLESS=1 rewrites it)",
                golden.display()
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} differences with llama-quantize:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// llama.cpp's logits (tests/oracles/llama_logits.py: one JSON object per
/// model, with the sha256 of the last position's logits) for `prompt`.
fn llama_logits(tools_bin: &Path, prompt: &str, models: &[PathBuf]) -> Vec<serde_json::Value> {
    let venv = tools_bin.parent().unwrap().join("venv/bin/python");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracles/llama_logits.py");
    let (out, _) = run(
        "llama_logits.py",
        Command::new(venv).arg(script).arg(prompt).args(models),
    );
    let v: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v.len(), models.len(), "{out}");
    v
}

/// llama.cpp loads the files `gguf quantize` writes and computes, to the
/// bit, the logits it computes with llama-quantize's files of the same
/// case, for a llama and a Qwen2 model with an importance matrix.
#[test]
fn llama_cpp_gives_the_same_logits_with_our_quantized_files() {
    let Some(bin) = tools_bin("compare llama.cpp's logits on gguf quantize's output") else {
        return;
    };
    if !bin.parent().unwrap().join("venv/bin/python").exists() {
        eprintln!("skipped: no venv with llama-cpp-python next to the tools' bin directory");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ours = Path::new(env!("CARGO_BIN_EXE_gguf"));
    let llama = bin.join("llama-quantize");
    let mut files = Vec::new();
    for spec in MODELS.iter().filter(|m| m.name != "llama-160") {
        let model = spec.write_to(dir.path());
        let imatrix = format!("imatrix/{}.gguf", spec.name);
        for preset in ["Q4_K_M", "IQ2_XS"] {
            let case = Case {
                preset,
                imatrix: true,
                flags: vec![],
            };
            for (who, program, first) in [("ours", ours, &["quantize"][..]), ("llama", &llama, &[])]
            {
                let out = dir
                    .path()
                    .join(format!("{}-{preset}-{who}.gguf", spec.name));
                quantize_with(program, first, &model, &imatrix, &case, &out)
                    .unwrap_or_else(|e| panic!("{who} {} {preset}: {e}", spec.name));
                files.push(out);
            }
        }
    }
    assert_same_logits_in_pairs(&bin, &files);
}

/// Asserts that llama.cpp gives each pair of `files` (ours, theirs) the
/// same tokens and the same logits, and that they are real numbers.
pub fn assert_same_logits_in_pairs(bin: &Path, files: &[PathBuf]) {
    let logits = llama_logits(bin, "The river starts in the hills", files);
    for pair in logits.chunks(2) {
        let (o, l) = (&pair[0], &pair[1]);
        assert_eq!(o["tokens"], l["tokens"], "{} vs {}", o["model"], l["model"]);
        let first: Vec<f64> = o["first"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert!(
            first.iter().all(|x| x.is_finite()) && first.iter().any(|&x| x != 0.0),
            "{}: logits {first:?}",
            o["model"]
        );
        assert_eq!(o["sha256"], l["sha256"], "{} vs {}", o["model"], l["model"]);
        println!("{}: logits {}", o["model"], o["sha256"]);
    }
}
