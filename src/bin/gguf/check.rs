//! `gguf check FILE [--json]`: everything that can be wrong with a file,
//! short of running it.
//!
//! 1. the full validation of opening it (structure, bounds, sizes);
//! 2. what llama.cpp would refuse: its GGUF reader (`lint_llama_cpp`) and
//!    its model loader (`llama_load::LoadReport`: architecture, key types,
//!    tokenizer, tensors and their shapes);
//! 3. NaN or infinity in float tensors, and in the scales of quantized
//!    blocks (the f16 `d`/`dmin` fields; types whose scales are packed
//!    otherwise are dequantized and their values checked);
//! 4. metadata llama.cpp relies on: `tokenizer.ggml.tokens`, `scores` and
//!    `token_type` of equal length, every `tokenizer.ggml.*_token_id`
//!    within the vocabulary, and `{arch}.block_count` equal to the number
//!    of `blk.N` layers among the tensors.
//!
//! Exit status 0 when nothing is wrong, 1 otherwise. Temporary files that
//! an interrupted write left beside the file (`.gguf-*.tmp`) are named in a
//! note, whatever the status.

use std::collections::BTreeSet;
use std::path::PathBuf;

use gguf::llama_load::LoadReport;
use gguf::{GgmlType, GgufFile, Model, Tensor, Value};
use rayon::prelude::*;
use serde_json::json;

#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file.
    file: PathBuf,
    /// Print the findings as JSON: `{"file", "ok", "loadable", "notes",
    /// "problems": [{"check", "message"}], "stale_temp_files": [path]}`.
    #[arg(long)]
    json: bool,
}

/// One thing wrong: which check found it, and what.
struct Problem {
    check: &'static str,
    message: String,
}

fn problem(check: &'static str, message: String) -> Problem {
    Problem { check, message }
}

pub fn run(args: Args) -> crate::CliResult {
    let shown = crate::open::shown(&args.file);
    // Set once the file reads as GGUF; then a verdict line follows.
    let mut valid = None;
    let mut verdict: Option<LoadReport> = None;
    let problems = match GgufFile::open(&args.file) {
        // A file that cannot be read is an error, not a finding.
        Err(e @ gguf::Error::Io { .. }) => return Err(format!("{shown}: {e}").into()),
        Err(e) => vec![problem("format", e.to_string())],
        Ok(file) => {
            let mut p: Vec<Problem> = file
                .lint_llama_cpp()
                .into_iter()
                .map(|i| problem("llama.cpp", i.to_string()))
                .collect();
            match load_report(&args.file, &file) {
                Ok(report) => {
                    p.extend(
                        report
                            .problems
                            .iter()
                            .map(|i| problem("llama.cpp", i.to_string())),
                    );
                    verdict = Some(report);
                }
                Err(why) => p.push(problem("llama.cpp", why)),
            }
            valid = Some(later_shard(&file));
            p.extend(metadata(&file));
            p.extend(finite(&file));
            p
        }
    };
    let ok = problems.is_empty();
    let stale = stale_temp_files(&args.file);
    let llama_ok = !problems.iter().any(|p| p.check == "llama.cpp");
    let loadable = llama_ok && verdict.as_ref().is_some_and(LoadReport::loadable);
    let note = verdict.as_ref().and_then(LoadReport::note);
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
            lines.push(format!("{shown}: {}", summary(&problems, loadable, note)));
        }
        crate::print(&lines.join("\n"))?;
    }
    if !args.json {
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
/// when llama.cpp's rules were all checked and passed.
fn summary(problems: &[Problem], loadable: Option<&str>, note: Option<String>) -> String {
    let n = problems.len();
    let llama_ok = !problems.iter().any(|p| p.check == "llama.cpp");
    match (n, loadable, note) {
        (0, Some(loadable), _) => {
            format!("ok (valid, {loadable}, finite values, consistent metadata)")
        }
        (0, None, Some(note)) => format!(
            "ok (valid GGUF, finite values, consistent metadata; not checked as loadable by \
             llama.cpp: {note})"
        ),
        (_, Some(loadable), _) => format!("valid GGUF, {loadable}; {n} problem(s) above"),
        (_, None, _) if !llama_ok => {
            format!("valid GGUF, not loadable by llama.cpp; {n} problem(s) above")
        }
        (_, None, Some(note)) => format!("valid GGUF ({note}); {n} problem(s) above"),
        (_, None, None) => format!("valid GGUF; {n} problem(s) above"),
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
    Model::open(path)
        .map(|model| LoadReport::of(&model))
        .map_err(|e| format!("the split model does not open: {e}"))
}

/// Length of an array entry, if the key holds an array.
fn array_len(file: &GgufFile<'_>, key: &str) -> Option<usize> {
    match file.value(key)? {
        Value::Array(a) => Some(a.len()),
        _ => None,
    }
}

fn metadata(file: &GgufFile<'_>) -> Vec<Problem> {
    let mut out = Vec::new();
    let check = "metadata";
    let tokens = array_len(file, "tokenizer.ggml.tokens");
    if let Some(n) = tokens {
        for key in ["tokenizer.ggml.scores", "tokenizer.ggml.token_type"] {
            match array_len(file, key) {
                Some(m) if m != n => out.push(problem(
                    check,
                    format!("{key} has {m} entries, tokenizer.ggml.tokens has {n}"),
                )),
                _ => {}
            }
        }
        for (key, value) in file.metadata() {
            let is_id = key.starts_with("tokenizer.ggml.") && key.ends_with("_token_id");
            if !is_id {
                continue;
            }
            let id = match value {
                Value::U32(v) => i128::from(v),
                Value::I32(v) => i128::from(v),
                Value::U64(v) => i128::from(v),
                Value::I64(v) => i128::from(v),
                Value::U16(v) => i128::from(v),
                Value::I16(v) => i128::from(v),
                Value::U8(v) => i128::from(v),
                Value::I8(v) => i128::from(v),
                other => {
                    out.push(problem(
                        check,
                        format!("{key} is a {}, not an integer", other.value_type()),
                    ));
                    continue;
                }
            };
            // llama.cpp treats -1 as "no such token".
            if id != -1 && !(0..n as i128).contains(&id) {
                out.push(problem(
                    check,
                    format!("{key} = {id} is outside the vocabulary of {n} tokens"),
                ));
            }
        }
    }
    if let Ok(arch) = file.get_str("general.architecture") {
        let key = format!("{arch}.block_count");
        let layers: BTreeSet<u64> = file
            .tensors()
            .filter_map(|t| {
                t.name()
                    .strip_prefix("blk.")?
                    .split('.')
                    .next()?
                    .parse()
                    .ok()
            })
            .collect();
        let declared = file.value(&key).and_then(|v| match v {
            Value::U32(n) => Some(u64::from(n)),
            Value::U64(n) => Some(n),
            Value::I32(n) => u64::try_from(n).ok(),
            _ => None,
        });
        match (declared, layers.last()) {
            (Some(n), Some(&max)) if n != layers.len() as u64 || max + 1 != n => out.push(problem(
                check,
                format!(
                    "{key} = {n}, but the tensors have {} blk.N layers (highest blk.{max})",
                    layers.len()
                ),
            )),
            (None, Some(_)) => out.push(problem(
                check,
                format!("{key} is missing (or not an integer) but the file has blk.N tensors"),
            )),
            _ => {}
        }
    }
    // A missing architecture is llama.cpp's problem (`llama_load`), which
    // knows that a split model names it in its first shard only.
    out
}

/// Offsets of the f16 scale fields (`d`, `dmin`/`m`) in one block, for the
/// types that have plain f16 scales (ggml-common.h's `block_*` structs).
fn f16_scales(ty: GgmlType) -> Option<&'static [usize]> {
    use GgmlType as T;
    Some(match ty {
        T::Q4_0 | T::Q5_0 | T::Q8_0 | T::Q1_0 | T::Q2_0 => &[0],
        T::IQ2_XXS | T::IQ2_XS | T::IQ2_S | T::IQ3_XXS | T::IQ3_S => &[0],
        T::IQ1_S | T::IQ4_NL | T::IQ4_XS => &[0],
        T::Q4_1 | T::Q5_1 | T::Q8_1 | T::Q4_K | T::Q5_K => &[0, 2],
        T::Q2_K => &[80, 82],
        T::Q3_K => &[108],
        T::Q6_K => &[208],
        T::TQ1_0 => &[52],
        T::TQ2_0 => &[64],
        _ => return None,
    })
}

/// Counts non-finite values (float tensors) or block scales (quantized),
/// with the index of the first.
fn scan(t: &Tensor<'_>) -> gguf::Result<Option<(u64, u64, &'static str)>> {
    let ty = t.ggml_type();
    let data = t.data()?;
    let endian = t.file_endian();
    let (mut count, mut first) = (0u64, None);
    let mut note = |i: usize| {
        count += 1;
        first.get_or_insert(i as u64);
    };
    let what = match (ty, f16_scales(ty)) {
        (GgmlType::I8 | GgmlType::I16 | GgmlType::I32 | GgmlType::I64, _) => return Ok(None),
        (_, Some(offsets)) => {
            let ts = ty.type_size().unwrap_or(1) as usize;
            for (i, block) in data.chunks_exact(ts).enumerate() {
                for &at in offsets {
                    let b = [block[at], block[at + 1]];
                    let bits = match endian {
                        gguf::Endian::Big => u16::from_be_bytes(b),
                        gguf::Endian::Little => u16::from_le_bytes(b),
                    };
                    // f16 exponent all ones: infinity or NaN.
                    if bits & 0x7c00 == 0x7c00 {
                        note(i);
                        break;
                    }
                }
            }
            "block scales"
        }
        _ => {
            // Floats, and quantized types whose scales are packed in other
            // ways (Q8_K's f32, IQ1_M, MXFP4, NVFP4): check the values.
            let mut row_start = 0usize;
            let mut rows = t.rows()?;
            while let Some(row) = rows.next_row() {
                let row = row?;
                for (i, x) in row.iter().enumerate() {
                    if !x.is_finite() {
                        note(row_start + i);
                    }
                }
                row_start += row.len();
            }
            "values"
        }
    };
    Ok(first.map(|f| (count, f, what)))
}

fn finite(file: &GgufFile<'_>) -> Vec<Problem> {
    let tensors: Vec<_> = file.tensors().collect();
    let results: Vec<_> = tensors.par_iter().map(scan).collect();
    tensors
        .iter()
        .zip(results)
        .filter_map(|(t, r)| match r {
            Ok(None) => None,
            Ok(Some((count, first, what))) => Some(problem(
                "finite",
                format!(
                    "tensor {:?} ({}): {count} non-finite {what}, the first at {} {first}",
                    t.name(),
                    t.ggml_type(),
                    if what == "values" { "element" } else { "block" }
                ),
            )),
            // Opening checked sizes; an unknown type id is already a lint.
            Err(_) => None,
        })
        .collect()
}
