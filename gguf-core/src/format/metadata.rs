//! Metadata entry framing: key and type tag, and array headers.
//!
//! Values themselves are variable-length: walked by the reader
//! ([`format::array`](crate::format::array)) and appended by the writer.

use gguf_derive::GgufCodec;

use crate::format::wire::Count;

/// What precedes every metadata value: its key and type tag.
///
/// `S` is the string form: [`StrSpan`](crate::format::StrSpan) when
/// reading, [`GgufStr`](crate::format::GgufStr) when writing,
/// [`GgufString`](crate::format::GgufString) to decode on its own.
#[derive(Debug, Clone, PartialEq, Eq, GgufCodec)]
pub(crate) struct KvHeaderWire<S> {
    /// The key, e.g. `general.architecture`.
    pub key: S,
    /// A [`ValueType`](crate::format::ValueType) id.
    pub value_type: u32,
}

/// What precedes an array's elements.
#[derive(Debug, Clone, PartialEq, Eq, GgufCodec)]
pub(crate) struct ArrayHeaderWire {
    /// A [`ValueType`](crate::format::ValueType) id for every element.
    pub element_type: u32,
    /// Number of elements.
    pub len: Count,
}
