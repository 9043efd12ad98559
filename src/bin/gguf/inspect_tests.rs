//! `inspect --json` is written as it is serialized; these tests hold it
//! byte for byte to the document it printed when it was built as a
//! `serde_json::Value` tree first (kept here as the reference).

use gguf::format::{OwnedArray, OwnedValue};
use gguf::write::{Builder, SplitOptions};
use gguf::{GgmlType, Gguf, Model};
use serde_json::json;

use super::{summary_json, Document, Filter};

/// The document as `serde_json::to_string_pretty` printed it from a tree
/// built whole (the implementation before streaming), plus the newline.
fn tree_document(model: &Model<'_>, filter: &Filter<'_>) -> String {
    let file = model.metadata_file();
    let split = model.is_split();
    let metadata: Vec<_> = model
        .metadata()
        .filter(|(k, _)| filter.key(k))
        .map(|(k, v)| tree_entry(k, &v))
        .collect();
    let mut doc = json!({
        "summary": summary_json(model),
        "version": file.version(),
        "endian": file.endian().to_string(),
        "alignment": file.alignment(),
        "data_offset": file.data_offset(),
        "file_size": file.file_len(),
        "metadata": metadata,
    });
    if filter.tensors {
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
        doc["tensors"] = json!(tensors);
    }
    if let Some(info) = model.split() {
        doc["split"] = json!({"count": info.count, "tensors_count": info.tensors_count});
    }
    if split {
        doc["shards"] = model
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
    }
    // What `print_json` printed of the whole document: DEL and C1 escaped
    // as JSON escapes them.
    let mut out = Vec::new();
    let text = serde_json::to_string_pretty(&doc).unwrap();
    crate::text::write(&mut out, &text, crate::text::Style::Json).unwrap();
    String::from_utf8(out).unwrap() + "\n"
}

fn tree_float(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v)
        .map(serde_json::Value::Number)
        .unwrap_or_else(|| serde_json::Value::String(v.to_string()))
}

fn tree_value(v: &gguf::Value<'_>) -> serde_json::Value {
    use gguf::Value;
    match *v {
        Value::U8(x) => json!(x),
        Value::I8(x) => json!(x),
        Value::U16(x) => json!(x),
        Value::I16(x) => json!(x),
        Value::U32(x) => json!(x),
        Value::I32(x) => json!(x),
        Value::U64(x) => json!(x),
        Value::I64(x) => json!(x),
        Value::F32(x) => tree_float(x.into()),
        Value::F64(x) => tree_float(x),
        Value::Bool(x) => json!(x),
        Value::String(s) => json!(s),
        Value::Array(a) => serde_json::Value::Array(
            a.iter()
                .map(|e| match e {
                    Value::Array(inner) => json!({
                        "element_type": inner.element_type().name(),
                        "value": tree_value(&e),
                    }),
                    other => tree_value(&other),
                })
                .collect(),
        ),
    }
}

fn tree_entry(key: &str, v: &gguf::Value<'_>) -> serde_json::Value {
    let mut obj = serde_json::Map::new();
    obj.insert("key".into(), json!(key));
    obj.insert("type".into(), json!(v.value_type().name()));
    if let gguf::Value::Array(a) = v {
        obj.insert("element_type".into(), json!(a.element_type().name()));
        obj.insert("len".into(), json!(a.len()));
    }
    obj.insert("value".into(), tree_value(v));
    serde_json::Value::Object(obj)
}

/// Text that JSON must escape, and text it must not.
const TRICKY: &str = "quote \" backslash \\ slash / nl \n tab \t cr \r bell \u{7} \
                      nul \u{0} esc \u{1b} del \u{7f} c1 \u{85} ls \u{2028} llama 🦙 é";

/// Every value type, extreme and non-finite numbers, escapes in keys and
/// strings, empty and nested arrays (inner arrays of different types,
/// empty ones, arrays three deep), and tensors of several types.
fn every_value_type() -> Builder<'static> {
    let mut b = Builder::new();
    b.set("general.architecture", "llama").unwrap();
    b.set("general.name", TRICKY).unwrap();
    b.set("llama.block_count", 2u32).unwrap();
    b.set("u8", u8::MAX).unwrap();
    b.set("i8", i8::MIN).unwrap();
    b.set("u16", u16::MAX).unwrap();
    b.set("i16", i16::MIN).unwrap();
    b.set("u32", u32::MAX).unwrap();
    b.set("i32", i32::MIN).unwrap();
    b.set("u64", u64::MAX).unwrap();
    b.set("i64", i64::MIN).unwrap();
    b.set("bool.true", true).unwrap();
    b.set("bool.false", false).unwrap();
    b.set("string.empty", "").unwrap();
    b.set(format!("key.{TRICKY}"), 1u8).unwrap();
    let f32s = [
        0.1f32,
        -0.0,
        1.0,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    for (i, x) in f32s.iter().enumerate() {
        b.set(format!("f32.{i}"), *x).unwrap();
    }
    let f64s = [
        0.1f64,
        -0.0,
        1e300,
        5e-324,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for (i, x) in f64s.iter().enumerate() {
        b.set(format!("f64.{i}"), *x).unwrap();
    }
    let arrays = [
        OwnedArray::U8(vec![0, 255]),
        OwnedArray::I8(vec![-128, 127]),
        OwnedArray::U16(vec![]),
        OwnedArray::I16(vec![-1]),
        OwnedArray::U32(vec![u32::MAX]),
        OwnedArray::I32(vec![i32::MIN, 0]),
        OwnedArray::U64(vec![u64::MAX]),
        OwnedArray::I64(vec![i64::MIN]),
        OwnedArray::F32(f32s.to_vec()),
        OwnedArray::F64(f64s.to_vec()),
        OwnedArray::Bool(vec![true, false]),
        OwnedArray::String(vec![String::new(), TRICKY.into(), "<s>".into()]),
        OwnedArray::String(vec![]),
        OwnedArray::Array(vec![]),
        OwnedArray::Array(vec![
            OwnedArray::U8(vec![1, 2]),
            OwnedArray::String(vec![]),
            OwnedArray::String(vec![TRICKY.into()]),
            OwnedArray::F32(vec![f32::NAN, -0.0]),
            OwnedArray::Array(vec![
                OwnedArray::Array(vec![OwnedArray::Bool(vec![true])]),
                OwnedArray::I64(vec![]),
            ]),
        ]),
    ];
    for (i, a) in arrays.into_iter().enumerate() {
        b.set(format!("array.{i}"), OwnedValue::Array(a)).unwrap();
    }
    b.add_tensor("empty", GgmlType::I8, &[0], Vec::<u8>::new())
        .unwrap();
    b.add_tensor_typed(
        "blk.0.attn_norm.weight",
        &[4],
        &[1.0f32, -2.0, 0.5, 0.0][..],
    )
    .unwrap();
    b.add_tensor(
        "blk.0.ffn_up.weight",
        GgmlType::Q4_K,
        &[256, 2],
        vec![0u8; 2 * 144],
    )
    .unwrap();
    b.add_tensor("blk.1.ffn_up.weight", GgmlType::F16, &[2, 3], vec![0u8; 12])
        .unwrap();
    b
}

fn streamed(model: &Model<'_>, filter: &Filter<'_>) -> String {
    let mut out = Vec::new();
    crate::json::write_pretty(&Document { model, filter }, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Every filter `inspect` takes: everything, no tensors, some keys, no key.
fn filters() -> [Filter<'static>; 5] {
    [
        Filter {
            keys: None,
            tensors: true,
        },
        Filter {
            keys: None,
            tensors: false,
        },
        Filter {
            keys: Some("array.*"),
            tensors: true,
        },
        Filter {
            keys: Some("*.\"*"),
            tensors: true,
        },
        Filter {
            keys: Some("no such key"),
            tensors: true,
        },
    ]
}

#[test]
fn streamed_json_is_the_tree_document_for_every_value_type() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crafted \"x\".gguf");
    std::fs::write(&path, every_value_type().to_vec().unwrap()).unwrap();
    let model = Model::open(&path).unwrap();
    for filter in filters() {
        let expected = tree_document(&model, &filter);
        let got = streamed(&model, &filter);
        assert!(got == expected, "keys {:?}: {got}", filter.keys);
    }
    // The escapes really are in the document, as JSON writes them.
    let doc = streamed(&model, &filters()[0]);
    assert!(doc.contains(
        r#"quote \" backslash \\ slash / nl \n tab \t cr \r bell \u0007 nul \u0000 esc \u001b del \u007f c1 \u0085"#
    ));
    assert!(doc.contains("\"NaN\"") && doc.contains("\"-inf\"") && doc.contains("-0.0"));
    assert!(doc.contains("\"element_type\": \"array\""));
}

#[test]
fn streamed_json_is_the_tree_document_for_a_split_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = every_value_type();
    b.write_split(
        dir.path().join("m"),
        &SplitOptions::default().max_tensors(2),
    )
    .unwrap();
    let model = Model::open(dir.path().join("m-00002-of-00002.gguf")).unwrap();
    assert!(model.is_split());
    for filter in filters() {
        let expected = tree_document(&model, &filter);
        let got = streamed(&model, &filter);
        assert!(got == expected, "keys {:?}: {got}", filter.keys);
    }
    assert!(streamed(&model, &filters()[0]).contains("\"shard\": 1"));
}

#[test]
fn streamed_json_is_the_tree_document_for_an_empty_model() {
    let bytes = Builder::new().to_vec().unwrap();
    let model = Model::open(&bytes).unwrap();
    for filter in filters() {
        assert_eq!(
            streamed(&model, &filter),
            tree_document(&model, &filter),
            "keys {:?}",
            filter.keys
        );
    }
    // Empty lists print as `[]`, as the tree printed them.
    assert!(streamed(&model, &filters()[0]).contains("\"metadata\": [],"));
}
