//! Metadata entry framing: key and type tag, and array headers.
//!
//! Values themselves are variable-length and decoded by
//! [`read_value`](crate::format::array) or encoded by the writer.

use gguf_derive::GgufCodec;

use crate::format::wire::{Count, GgufString};

/// What precedes every metadata value: its key and type tag.
#[derive(Debug, Clone, PartialEq, Eq, GgufCodec)]
pub struct KvHeaderWire {
    /// The key, e.g. `general.architecture`.
    pub key: GgufString,
    /// A [`ValueType`](crate::format::ValueType) id.
    pub value_type: u32,
}

/// What precedes an array's elements.
#[derive(Debug, Clone, PartialEq, Eq, GgufCodec)]
pub struct ArrayHeaderWire {
    /// A [`ValueType`](crate::format::ValueType) id for every element.
    pub element_type: u32,
    /// Number of elements.
    pub len: Count,
}
