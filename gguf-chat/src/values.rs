//! Values between JSON and the engine, and the text llama.cpp's engine writes for them:
//! `tojson`'s spacing, floats, Python-style `str()` of lists and objects.

use minijinja::budget;
use minijinja::value::{Value, ValueKind};
use serde_json::Value as Json;

/// A JSON value as an engine value (objects keep their key order; lists can be changed in
/// place by `append`, `pop`, ... as in llama.cpp's engine).
pub(crate) fn from_json(v: &Json) -> Value {
    match v {
        Json::Null => Value::from(()),
        Json::Bool(b) => Value::from(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::from(i),
            (None, Some(u)) => Value::from(u),
            _ => Value::from(n.as_f64().unwrap_or(0.0)),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(a) => minijinja::value::mutable_list(a.iter().map(from_json).collect()),
        Json::Object(o) => Value::from_pairs(
            o.iter()
                .map(|(k, v)| (Value::from(k.as_str()), from_json(v))),
        ),
    }
}

/// A float as llama.cpp's engine prints it: C's `%f`, trailing zeros removed, one kept.
pub(crate) fn float_text(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let mut s = format!("{f:.6}");
    let trimmed = s.trim_end_matches('0').len();
    s.truncate(trimmed);
    if s.ends_with('.') {
        s.push('0');
    }
    s
}

/// A float as C++'s `ostream << double` writes it (`%g`, 6 significant digits): what
/// llama.cpp's `tojson` writes.
pub(crate) fn float_json(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "nan"
        } else if f > 0.0 {
            "inf"
        } else {
            "-inf"
        }
        .into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let exp = f.abs().log10().floor() as i32;
    // %g: the exponent of the value rounded to 6 digits decides the style.
    let sci = format!("{f:.5e}");
    let (mant, e) = sci.split_once('e').unwrap_or((&sci, "0"));
    let e: i32 = e.parse().unwrap_or(exp);
    if (-4..6).contains(&e) {
        let decimals = (5 - e).max(0) as usize;
        let s = format!("{f:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let m = if mant.contains('.') {
            mant.trim_end_matches('0').trim_end_matches('.')
        } else {
            mant
        };
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    }
}

/// How `tojson` lays out a value.
pub(crate) struct JsonStyle<'a> {
    pub indent: Option<usize>,
    pub item_sep: &'a str,
    pub key_sep: &'a str,
}

fn json_string(out: &mut String, s: &str) {
    // A string written whole costs its length (see `items`).
    if budget::spend(s.len().saturating_add(2)) {
        json_string_paid(out, s);
    }
}

fn json_string_paid(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The items (or keys) of a list or object, each paid for from the render's formatting budget:
/// a list that holds one long string many times costs little to build and much to write, so
/// writing stops when the budget is spent (the engine then stops the render with
/// [`Limit::FormatBytes`](crate::Limit::FormatBytes)).
pub(crate) fn items(v: &Value) -> Vec<Value> {
    // An empty list is not iterated: writing it is not reading it (the capability probe's
    // `ProbeList` counts iterations as reads, as llama.cpp's probe does).
    if v.len() == Some(0) {
        return Vec::new();
    }
    let Ok(iter) = v.try_iter() else {
        return Vec::new();
    };
    iter.take_while(|_| budget::spend(budget::ITEM_BYTES))
        .collect()
}

/// llama.cpp's `value_to_json`: `", "` and `": "` without indent, a newline and the indent per
/// level with one; strings escaped as JSON, non-ASCII written as it is.
pub(crate) fn to_json(out: &mut String, v: &Value, style: &JsonStyle<'_>, level: usize) {
    let newline = |out: &mut String| {
        if style.indent.is_some() {
            out.push('\n');
        }
    };
    let pad = |out: &mut String, n: usize| {
        if let Some(i) = style.indent
            && budget::spend(i * n)
        {
            out.extend(std::iter::repeat_n(' ', i * n));
        }
    };
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
        ValueKind::Number => {
            if let Some(i) = v.as_i64() {
                out.push_str(&i.to_string());
            } else if v.is_integer() {
                out.push_str(&v.to_string());
            } else {
                out.push_str(&float_json(f64::try_from(v.clone()).unwrap_or(0.0)));
            }
        }
        ValueKind::String => json_string(out, v.as_str().unwrap_or("")),
        ValueKind::Map => {
            out.push('{');
            let keys = items(v);
            if !keys.is_empty() {
                newline(out);
                for (i, k) in keys.iter().enumerate() {
                    pad(out, level + 1);
                    json_string(out, &plain_text(k));
                    out.push_str(style.key_sep);
                    let item = v.get_item(k).unwrap_or_default();
                    to_json(out, &item, style, level + 1);
                    if i + 1 < keys.len() {
                        out.push_str(style.item_sep);
                    }
                    newline(out);
                }
                pad(out, level);
            }
            out.push('}');
        }
        ValueKind::Seq | ValueKind::Iterable => {
            out.push('[');
            let items = items(v);
            if !items.is_empty() {
                newline(out);
                for (i, item) in items.iter().enumerate() {
                    pad(out, level + 1);
                    to_json(out, item, style, level + 1);
                    if i + 1 < items.len() {
                        out.push_str(style.item_sep);
                    }
                    newline(out);
                }
                pad(out, level);
            }
            out.push(']');
        }
        _ => out.push_str("null"),
    }
}

/// Non-ASCII characters as `\uXXXX` (surrogate pairs above the BMP), the rest unchanged.
pub(crate) fn ensure_ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for u in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// A value as llama.cpp's engine writes it into the output (`{{ v }}`, `v|string`): `None`,
/// `True`/`False`, its float format, lists and objects in Python's style.
pub(crate) fn plain_text(v: &Value) -> String {
    match v.kind() {
        ValueKind::Undefined => String::new(),
        ValueKind::String => v.as_str().unwrap_or("").to_string(),
        _ => {
            let mut out = String::new();
            repr_into(&mut out, v, false);
            out
        }
    }
}

fn repr_into(out: &mut String, v: &Value, nested: bool) {
    match v.kind() {
        ValueKind::Undefined => {
            if nested {
                out.push_str("Undefined");
            }
        }
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if v.is_true() { "True" } else { "False" }),
        ValueKind::Number => {
            if v.is_integer() {
                out.push_str(&v.to_string());
            } else {
                out.push_str(&float_text(f64::try_from(v.clone()).unwrap_or(0.0)));
            }
        }
        ValueKind::String => {
            let s = v.as_str().unwrap_or("");
            if !nested {
                if budget::spend(s.len()) {
                    out.push_str(s);
                }
            } else if !budget::spend(s.len().saturating_add(2)) {
                // Spent: nothing more is written (nor scanned).
            } else if s.contains('\'') {
                json_string_paid(out, s);
            } else {
                out.push('\'');
                out.push_str(s);
                out.push('\'');
            }
        }
        ValueKind::Map => {
            out.push('{');
            for (i, k) in items(v).iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_into(out, k, true);
                out.push_str(": ");
                repr_into(out, &v.get_item(k).unwrap_or_default(), true);
            }
            out.push('}');
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let tuple = v.is_tuple();
            out.push(if tuple { '(' } else { '[' });
            let items = items(v);
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_into(out, x, true);
            }
            if tuple && items.len() == 1 {
                out.push(',');
            }
            out.push(if tuple { ')' } else { ']' });
        }
        _ => out.push_str(&v.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats() {
        assert_eq!(float_text(1.0), "1.0");
        assert_eq!(float_text(0.1), "0.1");
        assert_eq!(float_text(1e-7), "0.0");
        assert_eq!(float_json(1.0), "1");
        assert_eq!(float_json(0.5), "0.5");
        assert_eq!(float_json(123456789.0), "1.23457e+08");
        assert_eq!(float_json(1e-5), "1e-05");
        assert_eq!(float_json(1.234567891), "1.23457");
    }

    #[test]
    fn json_layout() {
        let v = from_json(&serde_json::json!({"a": [1, "x\n"], "b": {}}));
        let mut s = String::new();
        to_json(
            &mut s,
            &v,
            &JsonStyle {
                indent: None,
                item_sep: ", ",
                key_sep: ": ",
            },
            0,
        );
        assert_eq!(s, r#"{"a": [1, "x\n"], "b": {}}"#);
        let mut s = String::new();
        to_json(
            &mut s,
            &v,
            &JsonStyle {
                indent: Some(2),
                item_sep: ",",
                key_sep: ": ",
            },
            0,
        );
        assert_eq!(
            s,
            "{\n  \"a\": [\n    1,\n    \"x\\n\"\n  ],\n  \"b\": {}\n}"
        );
    }
}
