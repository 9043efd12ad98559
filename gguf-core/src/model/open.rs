//! Finding, opening and validating the shards of a [`Model`].

use crate::error::{LookupError, SplitError};
use std::path::{Path, PathBuf};

use super::origin::Origin;
use super::{Model, Shard, ShardIndex, SplitInfo, SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT};
use crate::error::{Error, Result};
use crate::naming::{parse_shard_name, shard_file_name};
use crate::read::{Gguf, GgufFile, Limits};

/// Names the file an error came from, as every door does
/// ([`Error::in_file`]).
fn at(path: &Path) -> impl FnOnce(Error) -> Error + '_ {
    move |e| e.in_file(path)
}

/// `key` as a u16 when present; a wrong type is an error naming the file.
fn u16_key(file: &GgufFile<'_>, path: &Path, key: &str) -> Result<Option<u16>> {
    if !file.contains_key(key) {
        return Ok(None);
    }
    file.get::<u16>(key).map(Some).map_err(at(path))
}

fn split_info(file: &GgufFile<'_>, path: &Path) -> Result<Option<SplitInfo>> {
    let Some(count) = u16_key(file, path, SPLIT_COUNT)? else {
        return Ok(None);
    };
    let tensors_count = if file.contains_key(SPLIT_TENSORS_COUNT) {
        Some(file.get::<i32>(SPLIT_TENSORS_COUNT).map_err(at(path))?)
    } else {
        None
    };
    Ok(Some(SplitInfo {
        count,
        tensors_count,
    }))
}

impl Model<'static> {
    /// The model of the local file at `path`: a single unsplit file, or
    /// any shard of a split model, whose siblings are then found by name
    /// (`{prefix}-{k:05}-of-{n:05}.gguf`) and mapped.
    pub(crate) fn open_path(path: &Path, limits: &Limits) -> Result<Self> {
        let file = GgufFile::parse_path(path, limits).map_err(at(path))?;
        let count = match split_info(&file, path)? {
            Some(info) if info.count > 1 => info.count,
            _ => return Model::from_files(vec![(Origin::Path(path.to_owned()), file)]),
        };
        let no = u16_key(&file, path, SPLIT_NO)?.ok_or_else(|| {
            at(path)(Error::Lookup(LookupError::KeyNotFound {
                key: SPLIT_NO.into(),
            }))
        })?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some((prefix, pos)) = parse_shard_name(name) else {
            return Err(Error::Split(SplitError::ShardName {
                path: path.to_owned(),
                reason: format!(
                    "the file is shard {} of {count} (split keys) but its name does not end in \
                     -{:05}-of-{count:05}.gguf, so its siblings cannot be found",
                    u32::from(no) + 1,
                    u32::from(no) + 1
                ),
            }));
        };
        if pos.count != u32::from(count) {
            return Err(Error::Split(SplitError::ShardCount {
                path: path.to_owned(),
                expected: pos.count,
                found: count.into(),
            }));
        }
        if pos.index != u32::from(no) + 1 {
            return Err(Error::Split(SplitError::ShardNumber {
                path: path.to_owned(),
                expected: pos.index - 1,
                found: no.into(),
            }));
        }
        let dir = path.parent().unwrap_or(Path::new(""));
        let mut given = Some(file);
        let mut files = Vec::with_capacity(count.into());
        for k in 1..=u32::from(count) {
            let shard_path = dir.join(shard_file_name(prefix, k, count.into()));
            let file = if k == pos.index {
                match given.take() {
                    Some(f) => f,
                    None => continue,
                }
            } else {
                open_shard(&shard_path, k, count.into(), limits)?
            };
            files.push((Origin::Path(shard_path), file));
        }
        Model::from_files(files)
    }
}

fn open_shard(path: &Path, index: u32, count: u32, limits: &Limits) -> Result<GgufFile<'static>> {
    match GgufFile::parse_path(path, limits) {
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Err(Error::Split(SplitError::ShardMissing {
                path: path.to_owned(),
                index,
                count,
            }))
        }
        other => other.map_err(at(path)),
    }
}

impl<'a> Model<'a> {
    /// A model of the given files, in order, each with where it came
    /// from: one file without split keys (or with `split.count` 0 or 1)
    /// is an ordinary model; several are validated as shards of one model
    /// (each `split.no` its position, `split.count` the number of files,
    /// unique tensor names, the tensor total equal to
    /// `split.tensors.count`).
    pub(crate) fn from_files(files: Vec<(Origin, GgufFile<'a>)>) -> Result<Self> {
        let paths: Vec<PathBuf> = files.iter().map(|(o, _)| o.error_path()).collect();
        let refs: Vec<(&Path, &GgufFile<'a>)> = paths
            .iter()
            .map(PathBuf::as_path)
            .zip(files.iter().map(|(_, f)| f))
            .collect();
        let (split, index) = check_files(&refs)?;
        Ok(Model {
            shards: files
                .into_iter()
                .map(|(origin, file)| Shard { origin, file })
                .collect(),
            index,
            split,
        })
    }
}

/// Checks that `files`, in order, make one model (see
/// [`Model::from_files`]) and returns its split keys and, when split, the
/// index of its tensors. Remote shard sets are checked here too, so a set
/// read over the network is held to the same rules as one on disk.
fn check_files(files: &[(&Path, &GgufFile<'_>)]) -> Result<(Option<SplitInfo>, ShardIndex)> {
    let Some(&(first_path, first)) = files.first() else {
        return Err(Error::Split(SplitError::ShardName {
            path: PathBuf::new(),
            reason: "a model needs at least one file".into(),
        }));
    };
    let split = split_info(first, first_path)?;
    let n = files.len();
    if n == 1 && split.is_none_or(|s| s.count <= 1) {
        return Ok((split, ShardIndex::new()));
    }
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    let mut index = ShardIndex::new();
    for (i, &(path, file)) in files.iter().enumerate() {
        let count = u16_key(file, path, SPLIT_COUNT)?.ok_or_else(|| {
            at(path)(Error::Lookup(LookupError::KeyNotFound {
                key: SPLIT_COUNT.into(),
            }))
        })?;
        if u32::from(count) != n32 {
            return Err(Error::Split(SplitError::ShardCount {
                path: path.to_owned(),
                expected: n32,
                found: count.into(),
            }));
        }
        let no = u16_key(file, path, SPLIT_NO)?.ok_or_else(|| {
            at(path)(Error::Lookup(LookupError::KeyNotFound {
                key: SPLIT_NO.into(),
            }))
        })?;
        if usize::from(no) != i {
            return Err(Error::Split(SplitError::ShardNumber {
                path: path.to_owned(),
                expected: i as u32,
                found: no.into(),
            }));
        }
        index.reserve(file.tensor_count());
        for (pos, t) in file.tensors().enumerate() {
            let entry = (i as u32, pos as u32);
            if let Some(&(other, _)) = index.get(t.name()) {
                return Err(Error::Split(SplitError::ShardDuplicateTensor {
                    tensor: t.name().into(),
                    first: files[other as usize].0.to_owned(),
                    second: path.to_owned(),
                }));
            }
            index.insert(t.name().into(), entry);
        }
    }
    let expected = split.and_then(|s| s.tensors_count).ok_or_else(|| {
        at(first_path)(Error::Lookup(LookupError::KeyNotFound {
            key: SPLIT_TENSORS_COUNT.into(),
        }))
    })?;
    if i64::from(expected) != index.len() as i64 {
        return Err(Error::Split(SplitError::ShardTensorCount {
            path: first_path.to_owned(),
            expected: expected.into(),
            found: index.len() as u64,
        }));
    }
    Ok((split, index))
}
