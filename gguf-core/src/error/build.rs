//! What the writer refuses.

/// The writer (`write::Builder`, the editor's tensor and key changes)
/// refuses a key, a tensor or its data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A wire struct could not be encoded (e.g. a count too large for v1).
    #[error("encoding: {reason}")]
    Encode {
        /// What went wrong.
        reason: String,
    },
    /// A metadata key the builder refuses.
    #[error("metadata key {key:?}: {reason}")]
    InvalidKey {
        /// The key.
        key: String,
        /// Why.
        reason: &'static str,
    },
    /// A key template contains `{arch}` but no architecture was known:
    /// neither a `#[gguf(arch)]` field nor `general.architecture`.
    #[error("metadata key {key:?}: `{{arch}}` has no value (set general.architecture first, or mark a field #[gguf(arch)])")]
    ArchUnknown {
        /// The key template.
        key: String,
    },
    /// A tensor the builder refuses: bad shape, name or type.
    #[error("tensor {tensor:?}: {reason}")]
    InvalidTensor {
        /// The tensor.
        tensor: String,
        /// Why.
        reason: String,
    },
    /// A tensor name was added twice to a builder, or a tensor renamed to
    /// the name of another.
    #[error("a tensor named {tensor:?} already exists")]
    TensorExists {
        /// The name.
        tensor: String,
    },
    /// Tensor data of the wrong length.
    #[error("tensor {tensor:?}: data is {actual} bytes, its shape and type need {expected}")]
    TensorDataSize {
        /// The tensor.
        tensor: String,
        /// Bytes the shape and type require.
        expected: u64,
        /// Bytes supplied.
        actual: u64,
    },
    /// Tensor data supplied out of declared order (metadata-first writing).
    #[error("tensor {tensor:?}: data given out of order, {expected:?} is due")]
    TensorOrder {
        /// The tensor whose data was given.
        tensor: String,
        /// The tensor whose data is due next (empty when all were written).
        expected: String,
    },
    /// A write finished before every tensor's data was supplied.
    #[error("tensor {tensor:?}: no data given ({missing} tensors still need theirs)")]
    MissingTensorData {
        /// The first tensor without data.
        tensor: String,
        /// How many tensors, from it on, have none.
        missing: usize,
    },
    /// The output path holds something other than a regular file (a
    /// device, a FIFO, a directory, a socket): renaming a new file over it
    /// would replace that thing, so the write is refused before it starts.
    #[error("{}: the output is {kind}, not a regular file: refusing to replace it (give the path of a regular file)", path.display())]
    OutputNotRegular {
        /// The output path.
        path: std::path::PathBuf,
        /// What is there ("a FIFO", "a character device", ...).
        kind: &'static str,
    },
    /// The output is one of the files the write reads (the same file, by
    /// device and inode or by canonical path): writing it would destroy
    /// an input.
    #[error("{}: the output is {}, which this command reads{}: give another output path", output.display(), describe_input(output, input), reason)]
    OutputIsInput {
        /// The output path (or the shard of it) as given.
        output: std::path::PathBuf,
        /// The input it is, as given.
        input: std::path::PathBuf,
        /// Why the exception for a write that replaces its own input does
        /// not apply, when it could have ("" otherwise).
        reason: String,
    },
}

/// `the input X`, or `the input itself` when the two paths are spelled alike.
fn describe_input(output: &std::path::Path, input: &std::path::Path) -> String {
    if output == input {
        "the input itself".into()
    } else {
        format!("the input {}", input.display())
    }
}

impl BuildError {
    /// The output the error names (see [`Error::path`](super::Error::path)).
    pub(crate) fn path(&self) -> Option<&std::path::Path> {
        match self {
            BuildError::OutputNotRegular { path, .. } => Some(path),
            BuildError::OutputIsInput { output, .. } => Some(output),
            _ => None,
        }
    }
}
