//! Quantization settings and importance matrices that cannot be used.

/// A preset, type, pattern, model or importance matrix that
/// llama-quantize's policy cannot work with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QuantizeError {
    /// Not a preset name nor number llama-quantize lists.
    #[error("unknown quantization type {name:?} (see `llama-quantize --help` for the list)")]
    UnknownPreset {
        /// What was asked for.
        name: String,
    },
    /// Not a ggml type name.
    #[error("invalid ggml type {name:?}")]
    UnknownType {
        /// What was asked for.
        name: String,
    },
    /// A `--tensor-type NAME=TYPE` argument that cannot be read.
    #[error("tensor type {arg:?}: {reason}")]
    TensorType {
        /// The argument.
        arg: String,
        /// Why.
        reason: String,
    },
    /// A `--override-kv KEY=TYPE:VALUE` argument that cannot be read.
    #[error("metadata override {arg:?}: {reason}")]
    KvOverride {
        /// The argument.
        arg: String,
        /// Why.
        reason: String,
    },
    /// The model lacks what the per-tensor rules need, or a tensor's
    /// layer cannot be told.
    #[error("cannot choose tensor types: {reason}")]
    Model {
        /// Why.
        reason: String,
    },
    /// A tensor's rows are not whole blocks of its type, and
    /// llama-quantize defines no fallback for that type.
    #[error("tensor {tensor:?}: rows of {row} elements are not whole {ty} blocks, and no fallback type is defined for {ty}")]
    NoFallback {
        /// The tensor.
        tensor: String,
        /// Elements per row.
        row: u64,
        /// The type chosen for it.
        ty: crate::format::GgmlType,
    },
    /// An importance matrix file that cannot be read.
    #[error("importance matrix: {reason}")]
    Imatrix {
        /// What is wrong, and where.
        reason: String,
    },
    /// An importance matrix entry that does not fit the model's tensor.
    #[error("importance matrix entry for tensor {tensor:?}: {reason}")]
    ImatrixMismatch {
        /// The tensor.
        tensor: String,
        /// What does not fit.
        reason: String,
    },
}
