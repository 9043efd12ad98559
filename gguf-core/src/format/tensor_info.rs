//! The tensor info: name, shape, type and data offset of one tensor.

use gguf_derive::GgufCodec;

use crate::format::wire::Dims;

/// A tensor info as stored. `S` is the string form of the name, as for
/// [`KvHeaderWire`](crate::format::KvHeaderWire).
#[derive(Debug, Clone, PartialEq, Eq, GgufCodec)]
pub(crate) struct TensorInfoWire<S> {
    /// Tensor name (llama.cpp limits it to 63 bytes).
    pub name: S,
    /// Number of dimensions, at most 4.
    pub n_dims: u32,
    /// Dimensions, innermost first.
    #[gguf(count = n_dims)]
    pub dims: Dims,
    /// A [`GgmlType`](crate::GgmlType) id.
    pub ggml_type: u32,
    /// Offset of the data relative to the data section, aligned.
    pub offset: u64,
}
