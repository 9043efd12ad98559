//! `gguf inspect FILE [--json]`: FILE may be any shard of a split model,
//! which is then described whole (every tensor, and a table of shards).

use std::path::PathBuf;

use gguf::Model;
use serde_json::json;

use crate::json;

#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file, or any shard of a split model.
    file: PathBuf,
    /// Print everything as JSON: every value in full, every tensor.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let model = Model::open(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let out = if args.json {
        to_json(&model)
    } else {
        to_text(&model)
    };
    crate::print(&out)
}

/// The whole model: header facts of the first file, the model's metadata
/// (split keys apart, under `split`), every tensor of every shard in order
/// (with its shard's index when split), and the shards.
fn to_json(model: &Model<'_>) -> String {
    let file = model.metadata_file();
    let split = model.is_split();
    let metadata: Vec<_> = model.metadata().map(|(k, v)| json::entry(k, &v)).collect();
    let tensors: Vec<_> = model
        .tensors_with_shard()
        .map(|(shard, t)| {
            let mut v = json!({
                "name": t.name(),
                "type": t.ggml_type().to_string(),
                "type_id": t.ggml_type().id(),
                "shape": t.shape(),
                "offset": t.offset(),
                "bytes": t.byte_size().ok(),
            });
            if split {
                v["shard"] = json!(shard);
            }
            v
        })
        .collect();
    let mut doc = json!({
        "version": file.version(),
        "endian": file.endian().to_string(),
        "alignment": file.alignment(),
        "data_offset": file.data_offset(),
        "file_size": file.file_len(),
        "metadata": metadata,
        "tensors": tensors,
    });
    if let Some(info) = model.split() {
        doc["split"] = json!({"count": info.count, "tensors_count": info.tensors_count});
    }
    if split {
        doc["shards"] = model
            .shards()
            .iter()
            .map(|s| {
                json!({
                    "file": s.path().display().to_string(),
                    "tensors": s.file().tensor_count(),
                    "bytes": s.file().file_len(),
                })
            })
            .collect();
    }
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

fn to_text(model: &Model<'_>) -> String {
    use std::fmt::Write;
    let file = model.metadata_file();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "GGUF v{}, {}-endian, alignment {}, data offset {}, {} bytes",
        file.version(),
        file.endian(),
        file.alignment(),
        file.data_offset(),
        file.file_len()
    );
    if model.is_split() {
        let _ = writeln!(
            s,
            "\nSplit model: {} shards, {} bytes",
            model.shard_count(),
            model.total_len()
        );
        let width = model
            .shards()
            .iter()
            .map(|sh| sh.path().display().to_string().len())
            .max()
            .unwrap_or(4);
        let _ = writeln!(s, "  {:width$}  {:>8}  {:>14}", "file", "tensors", "bytes");
        for sh in model.shards() {
            let _ = writeln!(
                s,
                "  {:width$}  {:>8}  {:>14}",
                sh.path().display().to_string(),
                sh.file().tensor_count(),
                sh.file().file_len()
            );
        }
    } else if let Some(info) = model.split() {
        let _ = writeln!(s, "split.count {} (a single file)", info.count);
    }
    let _ = writeln!(s, "\nMetadata ({} entries):", model.kv_count());
    let width = model.keys().map(str::len).max().unwrap_or(0);
    for (key, value) in model.metadata() {
        let ty = value.value_type().name();
        let _ = writeln!(s, "  {key:width$}  {ty:6}  {}", json::short(&value, 5));
    }
    let _ = writeln!(s, "\nTensors ({}):", model.tensor_count());
    let width = model
        .tensors()
        .map(|t| t.name().len())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        s,
        "  {:width$}  {:8}  {:24}  {:>12}  {:>12}",
        "name", "type", "shape", "offset", "bytes"
    );
    for t in model.tensors() {
        let shape = format!("{:?}", t.shape());
        let bytes = t
            .byte_size()
            .map(|b| b.to_string())
            .unwrap_or_else(|_| "?".into());
        let _ = writeln!(
            s,
            "  {:width$}  {:8}  {:24}  {:>12}  {:>12}",
            t.name(),
            t.ggml_type().to_string(),
            shape,
            t.offset(),
            bytes
        );
    }
    for sh in model.shards() {
        for issue in sh.file().lint_llama_cpp() {
            let _ = writeln!(s, "note: llama.cpp would refuse this file: {issue}");
        }
    }
    s.pop();
    s
}
