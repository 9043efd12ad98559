//! JSON forms of metadata values, shared by the commands that print them.

use gguf::{Value, ValueType};
use serde_json::{json, Value as Json};

/// A number that JSON can hold: non-finite floats become strings.
fn float(v: f64) -> Json {
    serde_json::Number::from_f64(v)
        .map(Json::Number)
        .unwrap_or_else(|| Json::String(v.to_string()))
}

/// The value alone (arrays as lists, nested arrays as objects with their
/// element type so empty inner arrays keep it).
pub fn value(v: &Value<'_>) -> Json {
    match *v {
        Value::U8(x) => json!(x),
        Value::I8(x) => json!(x),
        Value::U16(x) => json!(x),
        Value::I16(x) => json!(x),
        Value::U32(x) => json!(x),
        Value::I32(x) => json!(x),
        Value::U64(x) => json!(x),
        Value::I64(x) => json!(x),
        Value::F32(x) => float(x.into()),
        Value::F64(x) => float(x),
        Value::Bool(x) => json!(x),
        Value::String(s) => json!(s),
        Value::Array(a) => Json::Array(
            a.iter()
                .map(|e| match e {
                    Value::Array(inner) => json!({
                        "element_type": inner.element_type().name(),
                        "value": value(&e),
                    }),
                    other => value(&other),
                })
                .collect(),
        ),
    }
}

/// `{"key", "type", ["element_type", "len"], "value"}` for one entry.
pub fn entry(key: &str, v: &Value<'_>) -> Json {
    let mut obj = serde_json::Map::new();
    obj.insert("key".into(), json!(key));
    obj.insert("type".into(), json!(v.value_type().name()));
    if let Value::Array(a) = v {
        obj.insert("element_type".into(), json!(a.element_type().name()));
        obj.insert("len".into(), json!(a.len()));
    }
    obj.insert("value".into(), value(v));
    Json::Object(obj)
}

/// Short text form for tables: long arrays abbreviated to their type,
/// length and first items.
pub fn short(v: &Value<'_>, max_items: usize) -> String {
    match v {
        Value::Array(a) => {
            let items: Vec<String> = a.iter().take(max_items).map(|e| short(&e, 3)).collect();
            let more = if a.len() > max_items { ", ..." } else { "" };
            let elem = if a.element_type() == ValueType::Array {
                "array".to_string()
            } else {
                a.element_type().to_string()
            };
            format!("[{elem}; {}] [{}{more}]", a.len(), items.join(", "))
        }
        Value::String(s) if s.chars().count() > 60 => {
            let head: String = s.chars().take(57).collect();
            format!("{head:?}... ({} bytes)", s.len())
        }
        other => other.to_string(),
    }
}
