//! Split models whose shards do not fit together.

/// The files of a model split into shards do not fit together. (An error
/// met inside one shard is [`Error::File`](super::Error::File), naming it.)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SplitError {
    /// A shard of a split model is not where its name says it should be.
    #[error("shard {index} of {count} is missing: expected {path}")]
    ShardMissing {
        /// The path the shard should have.
        path: std::path::PathBuf,
        /// Its position, from 1.
        index: u32,
        /// Number of shards.
        count: u32,
    },
    /// A shard's `split.no` is not its position in the model.
    #[error(
        "{path}: split.no is {found}, but the file is shard {expected} (0-based) of the model"
    )]
    ShardNumber {
        /// The shard.
        path: std::path::PathBuf,
        /// Its position (0-based).
        expected: u32,
        /// The `split.no` it carries.
        found: u32,
    },
    /// A shard's `split.count` differs from the first shard's.
    #[error("{path}: split.count is {found}, but the first shard says {expected}")]
    ShardCount {
        /// The shard.
        path: std::path::PathBuf,
        /// The first shard's `split.count` (or the number of files given).
        expected: u32,
        /// The shard's.
        found: u32,
    },
    /// The shards hold another number of tensors than `split.tensors.count`.
    #[error("{path}: split.tensors.count is {expected}, but the shards hold {found} tensors")]
    ShardTensorCount {
        /// The first shard, which carries the count.
        path: std::path::PathBuf,
        /// `split.tensors.count`.
        expected: i64,
        /// Tensors found in all shards.
        found: u64,
    },
    /// The same tensor name is in two shards.
    #[error("tensor {tensor:?} is in two shards: {first} and {second}")]
    ShardDuplicateTensor {
        /// The tensor.
        tensor: String,
        /// The shard that holds it first.
        first: std::path::PathBuf,
        /// The other shard.
        second: std::path::PathBuf,
    },
    /// A shard's name does not let its siblings be found.
    #[error("{path}: {reason}")]
    ShardName {
        /// The shard.
        path: std::path::PathBuf,
        /// Why the name does not fit.
        reason: String,
    },
}

impl SplitError {
    /// The shard the error names (see [`Error::path`](super::Error::path)):
    /// of two shards holding one tensor, the second.
    pub(crate) fn path(&self) -> Option<&std::path::Path> {
        match self {
            SplitError::ShardMissing { path, .. }
            | SplitError::ShardNumber { path, .. }
            | SplitError::ShardCount { path, .. }
            | SplitError::ShardTensorCount { path, .. }
            | SplitError::ShardName { path, .. } => {
                Some(path.as_path()).filter(|p| !p.as_os_str().is_empty())
            }
            SplitError::ShardDuplicateTensor { second, .. } => Some(second),
        }
    }
}
