//! `gguf inspect FILE [--json]`.

use std::path::PathBuf;

use gguf::GgufFile;
use serde_json::json;

use crate::json;

#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file: a path, or a URL or object-store path (https://,
    /// hf://OWNER/REPO/FILE[@REVISION], s3://, gs://, az://).
    file: PathBuf,
    /// Print everything as JSON: every value in full, every tensor.
    #[arg(long)]
    json: bool,
    /// For a remote file, print to stderr how it was fetched (requests,
    /// bytes, time).
    #[arg(long, short)]
    verbose: bool,
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let file = crate::open::open(&args.file, None, args.verbose)?;
    let out = if args.json {
        to_json(&file)
    } else {
        to_text(&file)
    };
    crate::print(&out)
}

fn to_json(file: &GgufFile<'_>) -> String {
    let metadata: Vec<_> = file.metadata().map(|(k, v)| json::entry(k, &v)).collect();
    let tensors: Vec<_> = file
        .tensors()
        .map(|t| {
            json!({
                "name": t.name(),
                "type": t.ggml_type().to_string(),
                "type_id": t.ggml_type().id(),
                "shape": t.shape(),
                "offset": t.offset(),
                "bytes": t.byte_size().ok(),
            })
        })
        .collect();
    let doc = json!({
        "version": file.version(),
        "endian": file.endian().to_string(),
        "alignment": file.alignment(),
        "data_offset": file.data_offset(),
        "file_size": file.file_len(),
        "metadata": metadata,
        "tensors": tensors,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

fn to_text(file: &GgufFile<'_>) -> String {
    use std::fmt::Write;
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
    let _ = writeln!(s, "\nMetadata ({} entries):", file.kv_count());
    let width = file.keys().map(str::len).max().unwrap_or(0);
    for (key, value) in file.metadata() {
        let ty = value.value_type().name();
        let _ = writeln!(s, "  {key:width$}  {ty:6}  {}", json::short(&value, 5));
    }
    let _ = writeln!(s, "\nTensors ({}):", file.tensor_count());
    let width = file
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
    for t in file.tensors() {
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
    for issue in file.lint_llama_cpp() {
        let _ = writeln!(s, "note: llama.cpp would refuse this file: {issue}");
    }
    s.pop();
    s
}
