//! Split models remotely: the locations of every shard of the model that
//! one shard's URL belongs to.

use crate::error::Result;
use crate::naming::{parse_shard_name, shard_file_name};
use crate::read::GgufFile;

use super::location::Location;

/// Given the first shard's header and the chunk size, the size of the
/// first read of each later shard (the caller, which knows the split
/// keys, guesses from the first shard).
pub(crate) type FirstRead = fn(&GgufFile<'_>, u64) -> u64;

/// Every shard's location, in order, when `first`'s file name is a
/// shard's (`{prefix}-{k:05}-of-{n:05}.gguf`); else just `first`.
pub(crate) fn shard_locations(first: Location) -> Result<Vec<Location>> {
    let name = first.file_name();
    let Some((prefix, pos)) = parse_shard_name(&name) else {
        return Ok(vec![first]);
    };
    (1..=pos.count)
        .map(|k| first.with_file_name(&shard_file_name(prefix, k, pos.count)))
        .collect()
}
