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
}
