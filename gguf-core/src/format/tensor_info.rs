//! The tensor info: name, shape, type and data offset of one tensor.

use gguf_derive::GgufCodec;

use crate::format::wire::{Count, GgufString};

/// A tensor info as stored.
#[derive(Debug, Clone, PartialEq, Eq, GgufCodec)]
pub struct TensorInfoWire {
    /// Tensor name (llama.cpp limits it to 63 bytes).
    pub name: GgufString,
    /// Number of dimensions, at most 4.
    pub n_dims: u32,
    /// Dimensions, innermost first.
    #[gguf(count = n_dims)]
    pub dims: Vec<Count>,
    /// A [`GgmlType`](crate::GgmlType) id.
    pub ggml_type: u32,
    /// Offset of the data relative to the data section, aligned.
    pub offset: u64,
}
