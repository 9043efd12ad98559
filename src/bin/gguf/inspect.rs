//! `gguf inspect FILE [--json]`: FILE may be any shard of a split model,
//! which is then described whole (every tensor, and a table of shards).

use std::path::PathBuf;

use gguf::summary::{ModelSummary, PerLayer, ProjectorSummary};
use gguf::Gguf;
use gguf::Model;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::json;

use crate::json;
use crate::text::{escape, width};

#[derive(clap::Args)]
pub struct Args {
    /// The model: a path (any shard of a split model describes the whole
    /// model), ollama:NAME[:TAG] (the local Ollama store), or a URL
    /// (http(s)://, hf://OWNER/REPO/FILE[@REVISION], ms://OWNER/REPO/FILE,
    /// ollama://HOST/MODEL[:TAG], s3://, gs://, az://) of which only the
    /// header is read.
    #[arg(value_name = "FILE")]
    path: PathBuf,
    /// Print everything as JSON: every value in full, every tensor.
    #[arg(long)]
    json: bool,
    /// Leave out the tensor table.
    #[arg(long)]
    no_tensors: bool,
    /// Show only the metadata keys matching this glob: `*` matches any
    /// run of characters (dots included), `?` one character; everything
    /// else matches itself. Examples: `general.*`, `*.block_count`,
    /// `tokenizer.ggml.*_token_id`.
    #[arg(long, value_name = "PATTERN")]
    keys: Option<String>,
    /// Show this one file's own header, as gguf-py's gguf-dump does,
    /// instead of the whole model: every key (a shard's split.* keys
    /// included) and only this file's tensors, with their offsets.
    #[arg(long, conflicts_with_all = ["keys", "no_tensors"])]
    file: bool,
    #[command(flatten)]
    source: crate::open::SourceArgs,
}

/// Whether `text` matches the glob `pattern` (`*` any run, `?` any one
/// character). Iterative with one backtrack point, so linear-ish and
/// never exponential.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// What to show.
struct Filter<'p> {
    keys: Option<&'p str>,
    tensors: bool,
}

impl Filter<'_> {
    fn key(&self, key: &str) -> bool {
        self.keys.is_none_or(|p| glob_match(p, key))
    }
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    if args.file {
        let file = crate::open::open_file(&args.path, &args.source)?;
        let origin = crate::open::shown(&args.path);
        if args.json {
            return json::print_pretty(&crate::inspect_file::to_json(&file, &origin));
        }
        return crate::print(&crate::inspect_file::to_text(&file, &origin));
    }
    let model = crate::open::open_model(&args.path, &args.source)?;
    let filter = Filter {
        keys: args.keys.as_deref(),
        tensors: !args.no_tensors,
    };
    if args.json {
        return json::print_pretty(&Document {
            model: &model,
            filter: &filter,
        });
    }
    crate::print(&to_text(&model, &filter))
}

/// The whole model as JSON: header facts of the first file, the model's
/// metadata (split keys apart, under `split`), every tensor of every
/// shard in order (with its shard's index when split), and the shards.
/// Serialized as it is read, entry by entry and tensor by tensor: a
/// 262,144-token vocabulary is never held as a JSON tree.
struct Document<'m> {
    model: &'m Model<'m>,
    filter: &'m Filter<'m>,
}

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let model = self.model;
        let file = model.metadata_file();
        let mut doc = s.serialize_map(None)?;
        doc.serialize_entry("summary", &summary_json(model))?;
        doc.serialize_entry("version", &file.version())?;
        doc.serialize_entry("endian", &file.endian().to_string())?;
        doc.serialize_entry("alignment", &file.alignment())?;
        doc.serialize_entry("data_offset", &file.data_offset())?;
        doc.serialize_entry("file_size", &file.file_len())?;
        doc.serialize_entry("metadata", &MetadataJson(self))?;
        if self.filter.tensors {
            doc.serialize_entry("tensors", &TensorsJson(model))?;
        }
        if let Some(info) = model.split() {
            doc.serialize_entry(
                "split",
                &json!({"count": info.count, "tensors_count": info.tensors_count}),
            )?;
        }
        if model.is_split() {
            let shards: Vec<_> = model
                .shards()
                .iter()
                .map(|s| {
                    json!({
                        "file": s.origin().to_string(),
                        "tensors": s.file().tensor_count(),
                        "bytes": s.file().file_len(),
                    })
                })
                .collect();
            doc.serialize_entry("shards", &shards)?;
        }
        doc.end()
    }
}

/// The metadata entries the filter keeps, in order.
struct MetadataJson<'d>(&'d Document<'d>);

impl Serialize for MetadataJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Document { model, filter } = self.0;
        let kept = || model.metadata().filter(|(k, _)| filter.key(k));
        let mut seq = s.serialize_seq(Some(kept().count()))?;
        for (key, value) in kept() {
            seq.serialize_element(&json::EntryJson { key, value })?;
        }
        seq.end()
    }
}

/// Every tensor of every shard, in order, each a small object.
struct TensorsJson<'m>(&'m Model<'m>);

impl Serialize for TensorsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let model = self.0;
        let split = model.is_split();
        let mut seq = s.serialize_seq(None)?;
        for (shard, t) in model.tensors_with_shard() {
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
            seq.serialize_element(&v)?;
        }
        seq.end()
    }
}

fn to_text(model: &Model<'_>, filter: &Filter<'_>) -> String {
    use std::fmt::Write;
    let file = model.metadata_file();
    let mut s = String::new();
    summary_text(&mut s, model);
    let _ = writeln!(
        s,
        "GGUF v{}, {}-endian, alignment {}, data offset {}, {} bytes",
        file.version(),
        file.endian(),
        file.alignment(),
        file.data_offset(),
        file.file_len()
    );
    shard_table(&mut s, model);
    match filter.keys {
        Some(p) => {
            let n = model.keys().filter(|k| filter.key(k)).count();
            let _ = writeln!(
                s,
                "\nMetadata ({n} of {} entries match {p:?}):",
                model.kv_count()
            );
        }
        None => {
            let _ = writeln!(s, "\nMetadata ({} entries):", model.kv_count());
        }
    }
    let key_width = model
        .keys()
        .filter(|k| filter.key(k))
        .map(width)
        .max()
        .unwrap_or(0);
    for (key, value) in model.metadata().filter(|(k, _)| filter.key(k)) {
        let ty = value.value_type().name();
        let key = escape(key);
        let _ = writeln!(s, "  {key:key_width$}  {ty:6}  {}", json::short(&value, 5));
    }
    if filter.tensors {
        tensor_table(&mut s, model);
    }
    for sh in model.shards() {
        for issue in sh.file().lint_llama_cpp() {
            let _ = writeln!(s, "note: llama.cpp would refuse this file: {issue}");
        }
    }
    s.pop();
    s
}

/// The files of a split model, or a note on a single file that carries
/// split keys.
fn shard_table(s: &mut String, model: &Model<'_>) {
    use std::fmt::Write;
    if model.is_split() {
        let _ = writeln!(
            s,
            "\nSplit model: {} shards, {} bytes",
            model.shard_count(),
            model.total_len()
        );
        let col = model
            .shards()
            .iter()
            .map(|sh| width(&sh.origin().to_string()))
            .max()
            .unwrap_or(4);
        let _ = writeln!(s, "  {:col$}  {:>8}  {:>14}", "file", "tensors", "bytes");
        for sh in model.shards() {
            let _ = writeln!(
                s,
                "  {:col$}  {:>8}  {:>14}",
                escape(&sh.origin().to_string()),
                sh.file().tensor_count(),
                sh.file().file_len()
            );
        }
    } else if let Some(info) = model.split() {
        let _ = writeln!(s, "split.count {} (a single file)", info.count);
    }
}

/// One row per tensor; every column as wide as its widest cell, so an
/// unknown type (`unknown(1234)`), a long shape or a long name never
/// shifts the columns after it.
fn tensor_table(s: &mut String, model: &impl Gguf) {
    use std::fmt::Write;
    let _ = writeln!(s, "\nTensors ({}):", model.tensor_count());
    let rows: Vec<[String; 5]> = model
        .tensors()
        .map(|t| {
            let bytes = t
                .byte_size()
                .map(|b| b.to_string())
                .unwrap_or_else(|_| "?".into());
            [
                escape(t.name()).into_owned(),
                t.ggml_type().to_string(),
                format!("{:?}", t.shape()),
                t.offset().to_string(),
                bytes,
            ]
        })
        .collect();
    let header = ["name", "type", "shape", "offset", "bytes"].map(String::from);
    // At least as wide as before columns were measured, so common files
    // keep their layout.
    let mut w = [4, 8, 24, 12, 12];
    for row in rows.iter().chain([&header]) {
        for (w, cell) in w.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for [name, ty, shape, offset, bytes] in [&header].into_iter().chain(&rows) {
        let _ = writeln!(
            s,
            "  {name:w0$}  {ty:w1$}  {shape:w2$}  {offset:>w3$}  {bytes:>w4$}",
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4],
        );
    }
}

/// The model summary, or `None` after saying on stderr why there is none
/// (a key of a type llama.cpp would refuse).
fn summary(model: &Model<'_>) -> Option<ModelSummary> {
    match ModelSummary::of(model) {
        Ok(m) => Some(m),
        Err(e) => {
            // The summary is made from the first shard's metadata.
            let file = model.shards().first().map(|s| s.origin().to_string());
            crate::message(&format!(
                "gguf: {}: warning: no model summary: {e}",
                file.unwrap_or_default()
            ));
            None
        }
    }
}

/// The model summary as JSON (`null` fields where the model has no value).
fn summary_json(model: &Model<'_>) -> serde_json::Value {
    let Some(m) = summary(model) else {
        return serde_json::Value::Null;
    };
    let per_layer = |v: &Option<PerLayer>| match v {
        Some(PerLayer::Scalar(x)) => json!(x),
        Some(PerLayer::Layers(xs)) => json!(xs),
        None => serde_json::Value::Null,
    };
    let types: serde_json::Map<String, serde_json::Value> = m
        .tensor_types
        .iter()
        .map(|(t, n)| (t.to_string(), json!(n)))
        .collect();
    let hp = &m.params;
    let mut doc = json!({
        "architecture": m.architecture,
        "type": m.model_type,
        "name": m.name,
        "parameters": m.parameters,
        "tensor_bytes": m.tensor_bytes,
        "bits_per_weight": m.bits_per_weight,
        "file_type": m.file_type,
        "quantization": m.quantization,
        "tensor_types": types,
        "context_length": m.context_length,
        "block_count": m.block_count,
        "embedding_length": m.embedding_length,
        "feed_forward_length": per_layer(&hp.feed_forward_length),
        "head_count": per_layer(&hp.head_count),
        "head_count_kv": per_layer(&hp.head_count_kv),
        "key_length": hp.key_length,
        "value_length": hp.value_length,
        "sliding_window": hp.sliding_window,
        "expert_count": hp.expert_count,
        "expert_used_count": per_layer(&hp.expert_used_count),
        "vocab_size": m.vocab_size,
        "tokenizer_model": m.tokenizer_model,
    });
    if let Some(p) = ProjectorSummary::of(model) {
        doc["projector"] = json!({
            "projector_type": p.projector_type,
            "family": p.family,
            "known_type": p.known_type,
            "vision": p.vision,
            "audio": p.audio,
            "image_size": p.image_size,
            "patch_size": p.patch_size,
            "embedding_length": p.embedding_length,
            "block_count": p.block_count,
            "projection_dim": p.projection_dim,
        });
    }
    doc
}

/// The first lines of a multimodal projector's summary: what it is (its
/// projector type and model family), then the encoder's shape.
fn projector_text(s: &mut String, m: &ModelSummary, p: &ProjectorSummary) {
    use std::fmt::Write;
    let opt = |v: Option<String>| v.map_or_else(|| "-".into(), |v| escape(&v).into_owned());
    let _ = writeln!(
        s,
        "Model: {}, {}",
        opt(m.name.clone()),
        escape(&p.describe())
    );
    let mut shape = Vec::new();
    if let Some(n) = p.image_size {
        shape.push(format!("image {n}x{n} px"));
    }
    if let Some(n) = p.patch_size {
        shape.push(format!("patch {n} px"));
    }
    if let Some(n) = p.embedding_length {
        shape.push(format!("embedding {n}"));
    }
    if let Some(n) = p.block_count {
        shape.push(format!("{n} blocks"));
    }
    if let Some(n) = p.projection_dim {
        shape.push(format!("projects to {n} (the text model's embedding)"));
    }
    let loaded = "loaded by llama.cpp's libmtmd (--mmproj) beside its text model";
    if shape.is_empty() {
        let _ = writeln!(s, "  {loaded}");
    } else {
        let _ = writeln!(s, "  {}; {loaded}", shape.join(", "));
    }
}

/// The model summary as the first lines of `gguf inspect`.
fn summary_text(s: &mut String, model: &Model<'_>) {
    use std::fmt::Write;
    let Some(m) = summary(model) else {
        return;
    };
    let opt = |v: Option<String>| v.map_or_else(|| "-".into(), |v| escape(&v).into_owned());
    let projector = ProjectorSummary::of(model);
    match &projector {
        Some(p) => projector_text(s, &m, p),
        None => {
            let _ = writeln!(
                s,
                "Model: {} ({}), {}",
                opt(m.name.clone()),
                opt(m.architecture.clone()),
                opt(m.model_type.clone())
            );
        }
    }
    if m.tensor_types.is_empty() {
        // Nothing to count, and a quantization guessed from no tensors
        // would be made up.
        let _ = writeln!(s, "  no tensors");
    } else {
        let _ = writeln!(
            s,
            "  {} parameters, {:.2} MiB of tensors, {:.2} bits per weight, {}",
            ModelSummary::format_count(m.parameters),
            m.tensor_bytes as f64 / 1024.0 / 1024.0,
            m.bits_per_weight,
            m.quantization
        );
        let types: Vec<String> = m
            .tensor_types
            .iter()
            .map(|(t, n)| format!("{t} {n}"))
            .collect();
        let _ = writeln!(s, "  tensor types: {}", types.join(", "));
    }
    let hp = &m.params;
    let mut shape = Vec::new();
    let mut push = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            shape.push(format!("{k} {v}"));
        }
    };
    push("context", m.context_length.map(|v| v.to_string()));
    push("blocks", m.block_count.map(|v| v.to_string()));
    push("embedding", m.embedding_length.map(|v| v.to_string()));
    push("heads", hp.head_count.as_ref().map(PerLayer::to_string));
    push(
        "kv heads",
        hp.head_count_kv.as_ref().map(PerLayer::to_string),
    );
    push(
        "key/value length",
        hp.key_length
            .map(|k| format!("{k}/{}", hp.value_length.unwrap_or(k))),
    );
    push("sliding window", hp.sliding_window.map(|v| v.to_string()));
    push(
        "experts",
        hp.expert_count.map(|e| {
            let used = hp
                .expert_used_count
                .as_ref()
                .map(PerLayer::to_string)
                .unwrap_or_default();
            format!("{e} ({used} used)")
        }),
    );
    push("vocab", m.vocab_size.map(|v| v.to_string()));
    push(
        "tokenizer",
        m.tokenizer_model.as_deref().map(|t| escape(t).into_owned()),
    );
    if !shape.is_empty() {
        let _ = writeln!(s, "  {}", shape.join(", "));
    }
    let _ = writeln!(s);
}

#[cfg(test)]
#[path = "inspect_tests.rs"]
mod tests;
