//! `gguf check FILE [--json]`: everything that can be wrong with a file,
//! short of running it.
//!
//! 1. the full validation of opening it (structure, bounds, sizes);
//! 2. what llama.cpp would refuse: its GGUF reader (`lint_llama_cpp`) and
//!    its model loader (`llama_load::LoadReport`: architecture, key types,
//!    tokenizer, tensors and their shapes);
//! 3. NaN or infinity in float tensors, and in the scales of quantized
//!    blocks (`Tensor::non_finite`);
//! 4. metadata llama.cpp relies on (`llama_load::metadata_problems`);
//! 5. the chat templates (`chat::check_templates`): each parses and renders
//!    a plain conversation, uses only statements llama.cpp's engine has, and
//!    reaches for nothing beyond the conversation (the known exploits'
//!    patterns), the whole source scanned.
//!
//! The rules live in the library; this file opens, runs them and prints.
//!
//! Exit status 0 when nothing is wrong, 1 otherwise. Temporary files that
//! an interrupted write left beside the file (`.gguf-*.tmp`) are named in a
//! note, whatever the status.

use std::path::PathBuf;

use gguf::llama_load::LoadReport;
use gguf::read::FiniteUnit;
use gguf::{Gguf, GgufFile, Model, Tensor, Value};
use rayon::prelude::*;
use serde_json::json;

#[derive(clap::Args)]
pub struct Args {
    /// The file: a path, ollama:NAME[:TAG] or a URL (a shard of a split
    /// model is checked with its siblings).
    file: PathBuf,
    /// Print the findings as JSON: `{"file", "ok", "loadable", "notes",
    /// "problems": [{"check", "message"}], "warnings": [message],
    /// "stale_temp_files": [path]}`.
    #[arg(long)]
    json: bool,
}

/// One thing wrong: which check found it, and what; `at_run` for what
/// llama.cpp meets only when it runs a model it loaded.
struct Problem {
    check: &'static str,
    message: String,
    at_run: bool,
}

fn problem(check: &'static str, message: String) -> Problem {
    Problem {
        check,
        message,
        at_run: false,
    }
}

pub fn run(args: Args) -> crate::CliResult {
    let shown = crate::open::shown(&args.file);
    // Set once the file reads as GGUF; then a verdict line follows.
    let mut valid = None;
    let mut verdict: Option<LoadReport> = None;
    // Findings that do not fail the check (the file is valid and loads).
    let mut warnings: Vec<String> = Vec::new();
    let problems = match GgufFile::open(crate::open::source(args.file.as_os_str())) {
        // A file that cannot be read is an error, not a finding.
        Err(e @ (gguf::Error::Io { .. } | gguf::Error::Source(_))) => {
            return Err(unreadable(&args.file, &shown, &e).into())
        }
        // The verdict's header names the file: the finding says what is wrong.
        Err(e) => vec![problem("format", e.detail().to_string())],
        Ok(file) => {
            let mut p: Vec<Problem> = file
                .lint_llama_cpp()
                .into_iter()
                .map(|i| problem("llama.cpp", i.to_string()))
                .collect();
            match load_report(&args.file, &file) {
                Ok(report) => {
                    p.extend(report.problems.iter().map(|i| Problem {
                        at_run: i.found_when_running(),
                        ..problem("llama.cpp", i.to_string())
                    }));
                    verdict = Some(report);
                }
                Err(why) => p.push(problem("llama.cpp", why)),
            }
            warnings.extend(gguf::tokenizer::pre_tokenizer_hint(&file).map(|h| h.to_string()));
            valid = Some(later_shard(&file));
            p.extend(metadata(&file));
            p.extend(templates(&file));
            p.extend(finite(&file));
            p
        }
    };
    let ok = problems.is_empty();
    let stale = stale_temp_files(&args.file);
    let llama_ok = !problems.iter().any(|p| p.check == "llama.cpp");
    let loadable = llama_ok && verdict.as_ref().is_some_and(LoadReport::loadable);
    let note = verdict.as_ref().and_then(LoadReport::note);
    // Whether every loader rule was checked, so that "loaded" can be said.
    let covered = verdict
        .as_ref()
        .is_some_and(|v| v.coverage == gguf::llama_load::Coverage::Full);
    // A multimodal projector is libmtmd's, not the model loader's.
    let projector = verdict
        .as_ref()
        .is_some_and(|v| matches!(v.coverage, gguf::llama_load::Coverage::Projector { .. }));
    if args.json {
        let list: Vec<_> = problems
            .iter()
            .map(|p| json!({"check": p.check, "message": p.message}))
            .collect();
        let stale: Vec<_> = stale.iter().map(|p| p.to_string_lossy()).collect();
        let doc = json!({
            "file": shown,
            "ok": ok,
            "loadable": loadable,
            "notes": note.iter().collect::<Vec<_>>(),
            "problems": list,
            "warnings": warnings,
            "stale_temp_files": stale,
        });
        crate::print_json(&serde_json::to_string_pretty(&doc)?)?;
    } else {
        let mut lines: Vec<String> = problems
            .iter()
            .map(|p| {
                let message = crate::text::escape(&p.message);
                format!("{shown}: {}: {message}", p.check)
            })
            .collect();
        if let Some(later_shard) = valid {
            let loadable = loadable.then_some(if later_shard {
                "loadable by llama.cpp from its first shard"
            } else {
                "loadable by llama.cpp"
            });
            lines.push(format!(
                "{shown}: {}",
                if projector {
                    projector_summary(&problems, note)
                } else {
                    summary(&problems, loadable, covered, note)
                }
            ));
        }
        crate::print(&lines.join("\n"))?;
    }
    if !args.json {
        for w in &warnings {
            crate::print(&format!("{shown}: warning: {w}"))?;
        }
        for path in &stale {
            crate::print(&format!(
                "note: {path:?} is a temporary file left by an interrupted write ({} bytes); \
                 no process is writing it: remove it with rm",
                std::fs::metadata(path).map_or(0, |m| m.len())
            ))?;
        }
    }
    if ok {
        Ok(())
    } else {
        Err(crate::Exit(1).into())
    }
}

/// The error for a file that cannot be read. A missing file beside
/// temporary files of interrupted writes says both: the file does not
/// exist (the write that was to make it never finished), and each leftover
/// is not the file and can be removed.
fn unreadable(file: &std::path::Path, shown: &str, e: &gguf::Error) -> String {
    let missing = e
        .io_error()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound);
    let stale = if missing {
        stale_temp_files(file)
    } else {
        Vec::new()
    };
    if stale.is_empty() {
        return format!("{shown}: {e}");
    }
    let names: Vec<String> = stale
        .iter()
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect();
    format!(
        "{shown}: no such file; beside it, {} {} left by an interrupted write (no process is \
         writing {}): not this file, and safe to remove with rm",
        names.join(", "),
        if stale.len() == 1 {
            "is a temporary file"
        } else {
            "are temporary files"
        },
        if stale.len() == 1 { "it" } else { "them" },
    )
}

/// The `.gguf-*.tmp` files beside `file` that an interrupted write left
/// (a file being written now is locked and not listed). They do not make
/// the file fail the check: they are notes about its directory.
fn stale_temp_files(file: &std::path::Path) -> Vec<PathBuf> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    gguf::write::stale_temp_files(dir).unwrap_or_default()
}

/// The verdict line for a valid file: `loadable` (how it is said) only
/// when llama.cpp's rules were all checked and passed; "loaded but not
/// runnable" only when they were all checked (`covered`) and only what
/// llama.cpp meets when running failed.
fn summary(
    problems: &[Problem],
    loadable: Option<&str>,
    covered: bool,
    note: Option<String>,
) -> String {
    let n = problems.len();
    let llama_ok = !problems.iter().any(|p| p.check == "llama.cpp");
    // Every rule was checked, and every llama.cpp problem is one it meets
    // only when running the model.
    let loads = covered
        && problems
            .iter()
            .filter(|p| p.check == "llama.cpp")
            .all(|p| p.at_run);
    match (n, loadable, note) {
        (0, Some(loadable), _) => {
            format!("ok (valid, {loadable}, finite values, consistent metadata)")
        }
        (0, None, Some(note)) => format!(
            "ok (valid GGUF, finite values, consistent metadata; not checked as loadable by \
             llama.cpp: {note})"
        ),
        (_, Some(loadable), _) => format!("valid GGUF, {loadable}; {n} problem(s) above"),
        (_, None, _) if !llama_ok && loads => format!(
            "valid GGUF, loaded by llama.cpp but not runnable (it cannot compute with some \
             tensors' types); {n} problem(s) above"
        ),
        (_, None, _) if !llama_ok => {
            format!("valid GGUF, not loadable by llama.cpp; {n} problem(s) above")
        }
        (_, None, Some(note)) => format!("valid GGUF ({note}); {n} problem(s) above"),
        (_, None, None) => format!("valid GGUF; {n} problem(s) above"),
    }
}

/// The verdict line for a valid multimodal projector (`clip`): llama.cpp
/// loads it with libmtmd, not with its model loader, so it is neither
/// "loadable" nor "not loadable" by the loader's rules; `note` says so.
fn projector_summary(problems: &[Problem], note: Option<String>) -> String {
    let n = problems.len();
    let refused = problems.iter().any(|p| p.check == "llama.cpp");
    match (n, note) {
        (0, Some(note)) => format!("ok (valid GGUF, finite values, consistent metadata; {note})"),
        (0, None) => {
            "ok (valid GGUF, a multimodal projector, finite values, consistent metadata)".to_owned()
        }
        _ if refused => format!(
            "valid GGUF, a multimodal projector that libmtmd (llama.cpp's loader of projectors) \
             refuses; {n} problem(s) above"
        ),
        _ => format!("valid GGUF, a multimodal projector (libmtmd's); {n} problem(s) above"),
    }
}

/// Whether the file is a split model's shard other than the first, from
/// which llama.cpp does not load (it wants the first).
fn later_shard(file: &GgufFile<'_>) -> bool {
    matches!(file.value("split.no"), Some(Value::U16(n)) if n > 0)
}

/// llama.cpp's verdict on the model, or why it refuses it before any
/// rule: a shard of a split model is checked with its siblings, which
/// llama.cpp loads with it, and the set must open as one model.
fn load_report(path: &std::path::Path, file: &GgufFile<'_>) -> Result<LoadReport, String> {
    if !matches!(file.value("split.count"), Some(Value::U16(n)) if n > 1) {
        return Ok(LoadReport::of(file));
    }
    Model::open(crate::open::source(path.as_os_str()))
        .map(|model| LoadReport::of(&model))
        .map_err(|e| format!("the split model does not open: {e}"))
}

fn metadata(file: &impl Gguf) -> Vec<Problem> {
    gguf::llama_load::metadata_problems(file)
        .iter()
        .map(|p| problem("metadata", p.to_string()))
        .collect()
}

fn templates(file: &impl Gguf) -> Vec<Problem> {
    gguf::chat::check_templates(file)
        .iter()
        .map(|f| problem("template", f.to_string()))
        .collect()
}

fn finite(file: &impl Gguf) -> Vec<Problem> {
    let tensors: Vec<_> = file.tensors().collect();
    let results: Vec<_> = tensors.par_iter().map(Tensor::non_finite).collect();
    tensors
        .iter()
        .zip(results)
        .filter_map(|(t, r)| match r {
            Ok(None) => None,
            Ok(Some(found)) => {
                let (what, at) = match found.unit {
                    FiniteUnit::BlockScales => ("block scales", "block"),
                    _ => ("values", "element"),
                };
                Some(problem(
                    "finite",
                    format!(
                        "tensor {:?} ({}): {} non-finite {what}, the first at {at} {}",
                        t.name(),
                        t.ggml_type(),
                        found.count,
                        found.first
                    ),
                ))
            }
            // Opening checked sizes; an unknown type id is already a lint.
            Err(_) => None,
        })
        .collect()
}
