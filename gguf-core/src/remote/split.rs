//! Split models remotely: from one shard's URL, every shard's header,
//! fetched concurrently.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Result;
use crate::read::Gguf;
use crate::read::GgufFile;

use super::backend::Backend;
use super::location::Location;
use super::{AsyncRemoteFile, RemoteOptions};

/// The file names of every shard of the split model that `name` (a file
/// name `{prefix}-{k:05}-of-{n:05}.gguf`) belongs to, in order; `None`
/// when `name` is not a shard's name.
///
/// ```
/// use gguf_core::remote::shard_file_names;
/// assert_eq!(
///     shard_file_names("m-00002-of-00003.gguf").unwrap(),
///     ["m-00001-of-00003.gguf", "m-00002-of-00003.gguf", "m-00003-of-00003.gguf"]
/// );
/// assert_eq!(shard_file_names("m.gguf"), None);
/// ```
pub fn shard_file_names(name: &str) -> Option<Vec<String>> {
    let stem = name.strip_suffix(".gguf")?;
    let (rest, count) = stem.rsplit_once("-of-")?;
    let (prefix, index) = rest.rsplit_once('-')?;
    let digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(count) || !digits(index) {
        return None;
    }
    let n: u32 = count.parse().ok()?;
    let k: u32 = index.parse().ok()?;
    if n == 0 || k == 0 || k > n {
        return None;
    }
    Some(
        (1..=n)
            .map(|i| format!("{prefix}-{i:05}-of-{n:05}.gguf"))
            .collect(),
    )
}

/// Every shard of the split model that the file at `url` belongs to, in
/// shard order, their headers fetched concurrently. A URL whose name is
/// not a shard's gives just that file. The set is checked as
/// [`Model::from_files`](crate::model::Model::from_files) checks shards on
/// disk: a missing, extra or misnumbered shard, a tensor in two shards or
/// a wrong tensor total is an error naming the shard's URL.
pub async fn open_shards_async(url: &str, options: &RemoteOptions) -> Result<Vec<AsyncRemoteFile>> {
    let (first, lookups) = Location::parse(url, options)?.resolve(options).await?;
    let locations = match shard_file_names(&first.file_name()) {
        Some(names) => names
            .iter()
            .map(|n| first.with_file_name(n))
            .collect::<Result<Vec<_>>>()?,
        None => vec![first],
    };
    // The first shard first: what it shows sizes the first read of the
    // others, whose headers are usually a few KB (split keys and their own
    // tensor infos) rather than a whole chunk.
    let first = Arc::new(Backend::new(&locations[0], options)?);
    first.count_metadata_requests(lookups);
    let first = AsyncRemoteFile::open_backend(first, options, None).await?;
    let guess = later_first_read(&first.file, options.read.chunk);
    let rest = locations[1..].iter().map(|l| async move {
        let backend = Arc::new(Backend::new(l, options)?);
        AsyncRemoteFile::open_backend(backend, options, Some(guess)).await
    });
    let mut files = vec![first];
    files.extend(futures::future::try_join_all(rest).await?);
    // The same rules as for shards on disk (`Model::from_files`): every
    // `split.no` in place, `split.count` the number of files, no tensor
    // twice, the tensor total as declared. Errors name the shard's URL.
    let urls: Vec<PathBuf> = files.iter().map(|f| PathBuf::from(f.url())).collect();
    let refs: Vec<(&Path, &GgufFile<'_>)> = urls
        .iter()
        .map(PathBuf::as_path)
        .zip(files.iter().map(|f| &f.file))
        .collect();
    crate::model::check_files(&refs)?;
    Ok(files)
}

/// Room for a later shard's key-value pairs (gguf-py and llama.cpp
/// write only the three `split.*` keys there, about 100 bytes).
const LATER_SHARD_KV_ROOM: u64 = 4096;

/// The bytes of a tensor info with a 63-byte name (llama.cpp's names are
/// shorter than 64 bytes) and four dimensions, the most llama.cpp writes.
const LLAMA_CPP_TENSOR_INFO_LEN: u64 = 8 + 63 + 4 + 4 * 8 + 4 + 8;

/// The first read for the later shards of the split model whose first
/// shard is `first`: room for a few keys and for every tensor the first
/// shard does not hold (`split.tensors.count` less its own), each as long
/// as the first shard's longest tensor info or a llama.cpp-sized one,
/// whichever is longer, plus alignment; at most `chunk`. So a later shard
/// written by gguf-py or llama.cpp costs one read; one with a longer
/// header costs one more.
fn later_first_read(first: &GgufFile<'_>, chunk: u64) -> u64 {
    let total = first
        .value(crate::model::SPLIT_TENSORS_COUNT)
        .and_then(|v| v.as_integer())
        .and_then(|n| u64::try_from(n).ok());
    let Some(total) = total else {
        return chunk;
    };
    let remaining = total.saturating_sub(first.tensor_count() as u64);
    let width = if first.version() == 1 { 4 } else { 8 };
    let info_len = first
        .tensors()
        .map(|t| width + t.name().len() as u64 + 4 + width * t.shape().len() as u64 + 4 + 8)
        .max()
        .unwrap_or(0)
        .max(LLAMA_CPP_TENSOR_INFO_LEN);
    remaining
        .saturating_mul(info_len)
        .saturating_add(LATER_SHARD_KV_ROOM + first.alignment())
        .min(chunk)
}

/// Blocking [`open_shards_async`]: every shard's header, in order.
///
/// ```no_run
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::remote::{open_shards, RemoteOptions};
/// let shards = open_shards("s3://models/big-00001-of-00003.gguf", &RemoteOptions::default())?;
/// assert_eq!(shards.len(), 3);
/// # Ok(()) }
/// ```
pub fn open_shards(url: &str, options: &RemoteOptions) -> Result<Vec<GgufFile<'static>>> {
    let rt = super::runtime()?;
    let files = rt.block_on(open_shards_async(url, options))?;
    Ok(files.into_iter().map(|f| f.file).collect())
}
