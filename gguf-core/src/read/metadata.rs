//! The metadata section: `kv_count` entries of key, type, value.

use indexmap::IndexMap;

use super::insert_unique;
use crate::error::{Error, FormatError, Result};
use crate::format::array::{read_value, Walk};
use crate::format::cursor::Cursor;
use crate::format::{KvHeaderWire, StrSpan, Value, ValueType, ALIGNMENT_KEY, DEFAULT_ALIGNMENT};

/// Where one metadata entry lives in the file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KvEntry {
    /// Offset of the key's length field (the start of the entry).
    pub entry_offset: usize,
    /// Offset of the value (after the type tag).
    pub value_offset: usize,
    /// End of the value.
    pub value_end: usize,
    pub value_type: ValueType,
    /// For arrays: the view built while validating, so lookups never re-walk
    /// the elements. Stored as (element type, length, body start).
    pub array: Option<(ValueType, u64, usize)>,
}

/// The metadata index, in file order, and the alignment it declares.
pub(crate) struct Metadata {
    pub entries: IndexMap<Box<str>, KvEntry>,
    pub alignment: u64,
}

/// Smallest possible entry: key length, a one-byte key, type tag, a one-byte value.
fn min_entry_size(width: usize) -> u64 {
    width as u64 + 1 + 4 + 1
}

pub(crate) fn read_metadata(
    cur: &mut Cursor<'_>,
    kv_count: u64,
    kv_count_at: usize,
    max_array_depth: u32,
) -> Result<Metadata> {
    let width = cur.wire_format().count_width();
    cur.check_count(kv_count, min_entry_size(width), kv_count_at, || {
        "metadata count".into()
    })?;
    // The check above bounds kv_count by the file size, but an index entry
    // is several times larger than the smallest entry in the file: reserve
    // no more index than the remaining bytes, so a lying count cannot make
    // us allocate more than the file holds. Real entries grow it as read.
    let fits = cur.remaining_in_file() / std::mem::size_of::<(u64, Box<str>, KvEntry)>() as u64;
    let mut entries = IndexMap::with_capacity(kv_count.min(4096).min(fits) as usize);
    let walk = Walk {
        max_depth: max_array_depth,
        check_contents: true,
    };
    let mut alignment = DEFAULT_ALIGNMENT;
    for i in 0..kv_count {
        let entry_offset = cur.pos();
        let kv: KvHeaderWire<StrSpan> = cur
            .wire(cur.wire_format())
            .map_err(|e| kv_header_error(cur, entry_offset, i, e))?;
        let key = borrow(cur, kv.key, || format!("key of metadata entry {i}"))?;
        if key.is_empty() {
            return Err(Error::Format(FormatError::EmptyKey {
                offset: entry_offset as u64,
            }));
        }
        let type_id = kv.value_type;
        let value_type = ValueType::from_id(type_id).ok_or_else(|| {
            Error::Format(FormatError::InvalidValueType {
                offset: kv.key.end(),
                key: key.into(),
                type_id,
            })
        })?;
        let value_offset = cur.pos();
        let value = read_value(cur, value_type, 0, &walk, 0, &|| key.to_owned())?;
        if key == ALIGNMENT_KEY {
            alignment = check_alignment(&value, value_offset)?;
        }
        let array = value
            .as_array()
            .map(|a| (a.element_type(), a.len() as u64, a.offset() as usize));
        let entry = KvEntry {
            entry_offset,
            value_offset,
            value_end: cur.pos(),
            value_type,
            array,
        };
        insert_unique(&mut entries, key, entry, || {
            Error::Format(FormatError::DuplicateKey {
                offset: entry_offset as u64,
                key: key.into(),
            })
        })?;
    }
    Ok(Metadata { entries, alignment })
}

/// The string a span read from `cur` points at, borrowed from its buffer.
pub(super) fn borrow<'a>(
    cur: &Cursor<'a>,
    span: StrSpan,
    what: impl FnOnce() -> String,
) -> Result<&'a str> {
    // The codec validated the span; this only re-slices (and re-checks).
    span.get(cur.buf()).ok_or_else(|| {
        Error::Format(FormatError::InvalidUtf8 {
            what: what(),
            offset: span.offset,
        })
    })
}

/// Names what failed in a KV header: the key, or the type of a key read.
#[cold]
fn kv_header_error(cur: &Cursor<'_>, at: usize, i: u64, e: Error) -> Error {
    let mut key_only = cur.clone();
    key_only.set_pos(at);
    match key_only.wire::<StrSpan>(cur.wire_format()) {
        Err(e) => e.what(|| format!("key of metadata entry {i}")),
        Ok(span) => {
            let key = span.get(cur.buf()).unwrap_or_default();
            e.what(|| format!("type of metadata key {key:?}"))
        }
    }
}

fn check_alignment(value: &Value<'_>, offset: usize) -> Result<u64> {
    let Value::U32(alignment) = *value else {
        return Err(Error::Format(FormatError::AlignmentType {
            offset: offset as u64,
            found: value.value_type(),
        }));
    };
    if !alignment.is_power_of_two() {
        return Err(Error::Format(FormatError::InvalidAlignment {
            offset: offset as u64,
            alignment: alignment.into(),
        }));
    }
    Ok(alignment.into())
}
