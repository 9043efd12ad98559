//! Split models whose shards do not fit together.

/// A model split into shards does not fit together, or one of its shards
/// failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SplitError {
    /// A file of a split model could not be opened, read or written;
    /// `source` says why.
    #[error("{}", shard_message(path, source))]
    Shard {
        /// The shard.
        path: std::path::PathBuf,
        /// What went wrong reading it.
        #[source]
        source: Box<super::Error>,
    },
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

/// `path: what went wrong`, without naming the path twice when the
/// error inside is an I/O error that already names it.
fn shard_message(path: &std::path::Path, source: &super::Error) -> String {
    match source {
        super::Error::Io { path: Some(p), .. } if p == path => source.to_string(),
        _ => format!("{}: {source}", path.display()),
    }
}
