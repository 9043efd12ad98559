//! The one error type of the crate.

use crate::format::GgmlType;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong reading, writing, editing or decoding GGUF.
///
/// Each variant says what is wrong and where: a byte `offset` from the start
/// of the file, and the key or tensor name when there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error from the operating system.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),

    // ---- tensor codecs ----
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
}
