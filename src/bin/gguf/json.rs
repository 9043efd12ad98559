//! JSON forms of metadata values, shared by the commands that print them.

use std::io::Write;

use gguf::{ArrayView, Value, ValueType};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::ser::{Formatter, PrettyFormatter};
use serde_json::Value as Json;

/// A metadata value as JSON, written as it is read: an array goes out
/// element by element, never built in memory first. Arrays are lists;
/// the elements of a nested array are objects with their element type
/// (so an empty inner array keeps it) and their value; non-finite floats
/// are strings (`"NaN"`, `"inf"`, `"-inf"`).
#[derive(Clone, Copy)]
pub struct ValueJson<'v>(pub Value<'v>);

impl Serialize for ValueJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::U8(x) => s.serialize_u8(x),
            Value::I8(x) => s.serialize_i8(x),
            Value::U16(x) => s.serialize_u16(x),
            Value::I16(x) => s.serialize_i16(x),
            Value::U32(x) => s.serialize_u32(x),
            Value::I32(x) => s.serialize_i32(x),
            Value::U64(x) => s.serialize_u64(x),
            Value::I64(x) => s.serialize_i64(x),
            Value::F32(x) => float(x.into(), s),
            Value::F64(x) => float(x, s),
            Value::Bool(x) => s.serialize_bool(x),
            Value::String(x) => s.serialize_str(x),
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for e in a.iter() {
                    match e {
                        Value::Array(inner) => {
                            seq.serialize_element(&NestedJson(inner))?;
                        }
                        other => seq.serialize_element(&ValueJson(other))?,
                    }
                }
                seq.end()
            }
        }
    }
}

/// An array inside an array: `{"element_type", "value"}`.
struct NestedJson<'v>(ArrayView<'v>);

impl Serialize for NestedJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("element_type", self.0.element_type().name())?;
        map.serialize_entry("value", &ValueJson(Value::Array(self.0)))?;
        map.end()
    }
}

/// A number that JSON can hold: non-finite floats become strings.
fn float<S: Serializer>(v: f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(v)
    } else {
        s.serialize_str(&v.to_string())
    }
}

/// One metadata entry, `{"key", "type", ["element_type", "len"],
/// "value"}`, written as it is read (see [`ValueJson`]).
#[derive(Clone, Copy)]
pub struct EntryJson<'v> {
    pub key: &'v str,
    pub value: Value<'v>,
}

impl Serialize for EntryJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let array = match self.value {
            Value::Array(a) => Some(a),
            _ => None,
        };
        let mut map = s.serialize_map(Some(if array.is_some() { 5 } else { 3 }))?;
        map.serialize_entry("key", self.key)?;
        map.serialize_entry("type", self.value.value_type().name())?;
        if let Some(a) = array {
            map.serialize_entry("element_type", a.element_type().name())?;
            map.serialize_entry("len", &a.len())?;
        }
        map.serialize_entry("value", &ValueJson(self.value))?;
        map.end()
    }
}

/// The value alone as a JSON tree (see [`ValueJson`]).
pub fn value(v: &Value<'_>) -> Json {
    serde_json::to_value(ValueJson(*v)).unwrap_or(Json::Null)
}

/// One entry as a JSON tree (see [`EntryJson`]).
pub fn entry(key: &str, v: &Value<'_>) -> Json {
    serde_json::to_value(EntryJson { key, value: *v }).unwrap_or(Json::Null)
}

/// Writes `doc` to stdout as pretty JSON (two-space indents, as
/// `serde_json::to_string_pretty`) and a newline, as it is serialized:
/// memory stays that of a small buffer whatever the size of the
/// document. A closed pipe (`gguf inspect f --json | head`) is not an
/// error.
pub fn print_pretty(doc: &impl Serialize) -> Result<(), Box<dyn std::error::Error>> {
    match write_pretty(doc, std::io::stdout().lock()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// [`print_pretty`] to any writer (buffered here).
pub fn write_pretty(doc: &impl Serialize, w: impl Write) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(64 << 10, w);
    let mut ser = serde_json::Serializer::with_formatter(&mut w, TerminalSafe::default());
    doc.serialize(&mut ser)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// serde_json's pretty printer, except that strings also escape DEL and
/// the C1 controls (`\u007f`, `\u009b`): serde_json escapes only C0, and a
/// raw C1 byte reaches the terminal as a control sequence. The document is
/// the same to a JSON parser, and identical to what `print_json` makes of
/// a finished document (see `text::Style::Json`).
#[derive(Default)]
struct TerminalSafe(PrettyFormatter<'static>);

impl Formatter for TerminalSafe {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                write!(w, "\\u{:04x}", u32::from(c))?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    // The layout is the pretty printer's.
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
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
