//! Where the pieces of one metadata entry lie in the file, in the order and
//! grouping of gguf-py's `ReaderField.parts`: the key's length and bytes,
//! the type tag, then the value (a string as its length and bytes; an array
//! as its element type, its length and each element's parts in turn). The
//! entry was validated when the library opened the file; this only walks
//! the library's decoded values and adds up their encoded sizes.

use gguf::{Value, ValueType};

/// The parts of one entry: each part's absolute file offset, value-type id
/// (the numpy dtype it is viewed as) and element count, plus the indices of
/// the parts that hold the data.
#[derive(Default)]
pub(crate) struct Layout {
    pub offsets: Vec<u64>,
    pub codes: Vec<u8>,
    pub counts: Vec<u64>,
    pub data: Vec<u64>,
}

impl Layout {
    fn push(&mut self, offset: u64, ty: ValueType, count: u64) -> u64 {
        self.offsets.push(offset);
        self.codes.push(ty.id() as u8);
        self.counts.push(count);
        (self.offsets.len() - 1) as u64
    }
}

/// The value-type id lengths and counts are stored as (u32 in version 1).
fn length_type(width: usize) -> ValueType {
    if width == 4 {
        ValueType::U32
    } else {
        ValueType::U64
    }
}

/// The parts of the entry `key` with value `value` starting at `entry`.
pub(crate) fn field_layout(key: &str, value: &Value<'_>, entry: u64, width: usize) -> Layout {
    let mut lay = Layout::default();
    let w = width as u64;
    lay.push(entry, length_type(width), 1);
    lay.push(entry + w, ValueType::U8, key.len() as u64);
    let tag = entry + w + key.len() as u64;
    lay.push(tag, ValueType::U32, 1);
    value_parts(&mut lay, value, tag + 4, width);
    lay
}

/// Pushes the parts of `value` encoded at `at`; returns its encoded size.
fn value_parts(lay: &mut Layout, value: &Value<'_>, at: u64, width: usize) -> u64 {
    let w = width as u64;
    match value {
        Value::String(s) => {
            lay.push(at, length_type(width), 1);
            let data = lay.push(at + w, ValueType::U8, s.len() as u64);
            lay.data.push(data);
            w + s.len() as u64
        }
        Value::Array(array) => {
            lay.push(at, ValueType::U32, 1);
            lay.push(at + 4, length_type(width), 1);
            let mut pos = at + 4 + w;
            if let Some(strings) = array.strings() {
                // The common big case (vocabularies): no Value per element.
                for s in strings {
                    lay.push(pos, length_type(width), 1);
                    let data = lay.push(pos + w, ValueType::U8, s.len() as u64);
                    lay.data.push(data);
                    pos += w + s.len() as u64;
                }
            } else if let Some(size) = array.element_type().fixed_size() {
                let ty = array.element_type();
                for _ in 0..array.len() {
                    let data = lay.push(pos, ty, 1);
                    lay.data.push(data);
                    pos += size as u64;
                }
            } else {
                for element in array.iter() {
                    pos += value_parts(lay, &element, pos, width);
                }
            }
            pos - at
        }
        scalar => {
            let ty = scalar.value_type();
            let data = lay.push(at, ty, 1);
            lay.data.push(data);
            ty.fixed_size().unwrap_or(0) as u64
        }
    }
}

/// gguf-py's `types` of a value: its type, then for an array the types of
/// its first element (none for an empty array, whose element type gguf-py
/// does not keep).
pub(crate) fn value_types(value: &Value<'_>) -> Vec<u32> {
    let mut types = vec![value.value_type().id()];
    if let Some(array) = value.as_array()
        && let Some(first) = array.iter().next()
    {
        types.extend(value_types(&first));
    }
    types
}
