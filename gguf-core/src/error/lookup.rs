//! Asking a valid file for what it does not have.

/// A valid file does not have what was asked of it: a key, a tensor, a
/// value of the type asked, or tensor data it was opened without.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LookupError {
    /// No key of that name.
    #[error("metadata key {key:?} not found")]
    KeyNotFound {
        /// The key.
        key: String,
    },
    /// No tensor of that name.
    #[error("tensor {tensor:?} not found")]
    TensorNotFound {
        /// The tensor asked for.
        tensor: String,
    },
    /// A typed getter met another type.
    #[error("metadata key {key:?} has type {found}, expected {expected}")]
    TypeMismatch {
        /// The key.
        key: String,
        /// The type asked for.
        expected: String,
        /// The type in the file.
        found: String,
    },
    /// Tensor data was asked of a file opened without its data region.
    #[error("tensor {tensor:?}: its data is not held in memory (read it with Tensor::read)")]
    DataNotLoaded {
        /// The tensor.
        tensor: String,
    },
}
