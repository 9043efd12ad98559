//! Errors of the tensor codecs and typed views.

use crate::format::GgmlType;

/// Decoding, encoding or viewing tensor data (the `tensor` codecs and typed
/// views).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// A codec error while decoding or encoding a named tensor's data.
    #[error("tensor {tensor:?}: {source}")]
    TensorCodec {
        /// The tensor.
        tensor: String,
        /// What the codec reported.
        #[source]
        source: Box<super::Error>,
    },
    /// The operation is not available for this tensor type.
    #[error("{operation} is not supported for tensor type {ty}")]
    UnsupportedType {
        /// The tensor type.
        ty: GgmlType,
        /// What was asked, e.g. "quantize".
        operation: &'static str,
    },
    /// A buffer does not have the length the type and element count require.
    #[error("{what}: expected {expected} bytes or elements, got {actual}")]
    LengthMismatch {
        /// What was being checked.
        what: String,
        /// Required length.
        expected: u64,
        /// Actual length.
        actual: u64,
    },
    /// A length is not a whole number of blocks (or block elements).
    #[error("{what}: {len} is not a multiple of {unit} (the block unit of {ty})")]
    PartialBlock {
        /// The tensor type.
        ty: GgmlType,
        /// What was measured, e.g. "row length" or "tensor data bytes".
        what: &'static str,
        /// The offending length.
        len: u64,
        /// The block size (elements) or type size (bytes) it must divide by.
        unit: u64,
    },
    /// The type's quantizer needs importance weights (an imatrix) and none
    /// were given.
    #[error("quantizing to {ty} needs an importance matrix (imatrix): at so few bits per weight the result without one is garbage, so ggml and llama-quantize refuse it; compute one with llama-imatrix and pass its weights")]
    ImatrixRequired {
        /// The tensor type.
        ty: GgmlType,
    },
    /// A size-dependent operation on a tensor whose type id has no known size.
    #[error("tensor {tensor:?}: type id {type_id} is unknown or removed from ggml, its size is not known")]
    UnknownTensorType {
        /// The tensor.
        tensor: String,
        /// The raw type id.
        type_id: u32,
    },
    /// A typed tensor view was asked for a tensor whose type, alignment or
    /// byte order does not allow it.
    #[error("tensor {tensor:?}: cannot view as {requested}: {reason}")]
    ViewUnavailable {
        /// The tensor.
        tensor: String,
        /// The view asked for.
        requested: &'static str,
        /// Why not.
        reason: String,
    },
}
