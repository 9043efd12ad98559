//! `gguf inspect FILE --file`: one file's own header, as gguf-py's
//! `gguf-dump` shows it: every key-value pair in file order (the
//! `split.*` keys of a shard included, after the three header fields
//! gguf-dump lists as `GGUF.*`), then that file's own tensors with their
//! offsets, for someone debugging one shard of a split model.

use gguf::{Gguf, GgufFile};
use serde_json::json;

use crate::json;
use crate::text::escape;

/// The text dump.
pub fn to_text(file: &GgufFile<'_>, origin: &str) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "* File {} is {}-endian, GGUF v{}, alignment {}, data offset {}, {} bytes",
        escape(origin),
        file.endian(),
        file.version(),
        file.alignment(),
        file.data_offset(),
        file.file_len()
    );
    let _ = writeln!(s, "* Dumping {} key/value pair(s)", file.kv_count() + 3);
    let header = [
        ("UINT32", "GGUF.version", file.version().to_string()),
        (
            "UINT64",
            "GGUF.tensor_count",
            file.tensor_count().to_string(),
        ),
        ("UINT64", "GGUF.kv_count", file.kv_count().to_string()),
    ];
    let mut n = 0;
    for (ty, key, value) in header {
        n += 1;
        let _ = writeln!(s, "{n:7}: {ty:10} | {:8} | {key} = {value}", 1);
    }
    for (key, value) in file.metadata() {
        n += 1;
        let (ty, count) = match &value {
            gguf::Value::Array(a) => ("ARRAY".to_owned(), a.len() as u64),
            v => (v.value_type().name().to_ascii_uppercase(), 1),
        };
        let _ = writeln!(
            s,
            "{n:7}: {ty:10} | {count:8} | {} = {}",
            escape(key),
            json::short(&value, 5)
        );
    }
    let _ = writeln!(s, "* Dumping {} tensor(s)", file.tensor_count());
    for (i, t) in file.tensors().enumerate() {
        let mut dims: Vec<String> = t.shape().iter().map(|d| format!("{d:5}")).collect();
        dims.resize(4, format!("{:5}", 1));
        let _ = writeln!(
            s,
            "{:7}: {:10} | {} | {:7} | {} | offset {} (file offset {})",
            i + 1,
            t.element_count(),
            dims.join(", "),
            t.ggml_type().to_string(),
            escape(t.name()),
            t.offset(),
            t.file_offset()
        );
    }
    s.pop();
    s
}

/// The JSON dump: the header fields, every key-value pair as stored (split
/// keys included), and this file's tensors with their offsets.
pub fn to_json(file: &GgufFile<'_>, origin: &str) -> serde_json::Value {
    let metadata: Vec<_> = file
        .metadata()
        .map(|(key, value)| json::entry(key, &value))
        .collect();
    let tensors: Vec<_> = file
        .tensors()
        .map(|t| {
            json!({
                "name": t.name(),
                "type": t.ggml_type().to_string(),
                "type_id": t.ggml_type().id(),
                "shape": t.shape(),
                "offset": t.offset(),
                "file_offset": t.file_offset(),
                "bytes": t.byte_size().ok(),
            })
        })
        .collect();
    json!({
        "file": origin,
        "version": file.version(),
        "endian": file.endian().to_string(),
        "alignment": file.alignment(),
        "data_offset": file.data_offset(),
        "file_size": file.file_len(),
        "kv_count": file.kv_count(),
        "tensor_count": file.tensor_count(),
        "metadata": metadata,
        "tensors": tensors,
    })
}
