//! Writing a model as shards, and a split model back as one builder.
//!
//! The rules are on [`SplitOptions`].

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::{BuildError, Error, Result};
use crate::format::ALIGNMENT_KEY;
use crate::model::{is_split_key, Model, SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT};
use crate::naming::shard_path;
use crate::read::Gguf;
use crate::write::builder::{Builder, PendingTensor};
use crate::write::layout::Layout;
use crate::write::modes::{Progress, WriteMode, WriteOptions};
use crate::write::source::TensorData;
use crate::write::temp::{persist_all, TempFile};

/// Limits for [`Builder::write_split`]; 0 means no limit.
///
/// The shards are what gguf-py's `GGUFWriter(split_max_tensors=...,
/// split_max_size=..., small_first_shard=...)` writes for the same content,
/// byte for byte:
/// - tensors go to shards in order; a new shard starts when the current one
///   holds `max_tensors` tensors, or when the sum of its tensors' unpadded
///   sizes plus the next tensor's would exceed `max_size` (a shard always
///   takes at least one tensor, so a tensor larger than the limit gets a
///   shard of its own); with `metadata_only_first` the first shard holds no
///   tensor;
/// - the first shard holds every metadata entry, then `split.no` (u16),
///   `split.count` (u16) and `split.tensors.count` (i32); the other shards
///   hold only those three;
/// - shard `k` of `n` of the output `dir/name.gguf` is
///   `dir/name-{k:05}-of-{n:05}.gguf`; when everything fits in one shard,
///   the output is the plain file `dir/name.gguf` without split keys;
/// - each shard is laid out by the builder's own [`Layout`]: header padded
///   to the alignment, every tensor padded, a metadata-only shard padded to
///   the alignment.
///
/// One deliberate difference: with a `general.alignment` other than 32,
/// every shard carries that key (before the split keys). gguf-py writes it
/// in the first shard only but pads the other shards' data to it, so their
/// readers, which assume 32 without the key, misread them.
///
/// ```
/// use gguf_core::write::SplitOptions;
/// let opts = SplitOptions::default().max_size(2_000_000_000).metadata_only_first(true);
/// assert_eq!(opts.max_tensors, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SplitOptions {
    /// Most tensors in one shard (0: no limit).
    pub max_tensors: usize,
    /// Most bytes of tensor data in one shard, counted unpadded (0: no
    /// limit); a single larger tensor still gets a shard of its own.
    pub max_size: u64,
    /// A first shard with the metadata and no tensor.
    pub metadata_only_first: bool,
}

impl SplitOptions {
    /// Sets [`max_tensors`](Self::max_tensors).
    pub fn max_tensors(mut self, n: usize) -> Self {
        self.max_tensors = n;
        self
    }

    /// Sets [`max_size`](Self::max_size) in bytes.
    pub fn max_size(mut self, bytes: u64) -> Self {
        self.max_size = bytes;
        self
    }

    /// Sets [`metadata_only_first`](Self::metadata_only_first).
    pub fn metadata_only_first(mut self, yes: bool) -> Self {
        self.metadata_only_first = yes;
        self
    }
}

/// One output file of a split write: where it goes, which tensors it
/// holds (positions in the builder's order) and its layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardPlan {
    /// The file's path.
    pub path: PathBuf,
    /// Positions of its tensors in the builder's tensor order.
    pub tensors: Range<usize>,
    /// Its layout (size, offsets, padding).
    pub layout: Layout,
}

impl ShardPlan {
    /// Bytes of tensor data, unpadded (what the size limit counts).
    pub fn data_bytes(&self) -> u64 {
        self.layout.tensors.iter().map(|t| t.nbytes).sum()
    }
}

/// The one call from split writing into the builder's file writer.
fn write_shard(
    b: &mut Builder<'_>,
    file: &mut File,
    mode: WriteMode,
    progress: Progress<'_>,
) -> Result<Layout> {
    b.write_file(file, mode, progress, true)
}

impl<'a> Builder<'a> {
    /// Tensor positions of each shard, by gguf-py's rules (module docs).
    fn partition(&self, opts: &SplitOptions) -> Vec<Range<usize>> {
        // The first shard, empty so far.
        let mut shards: Vec<Range<usize>> = Vec::with_capacity(2);
        shards.push(0..0);
        if opts.metadata_only_first {
            shards.push(0..0);
        }
        let mut size = 0u64;
        for (i, t) in self.tensors.values().enumerate() {
            let last = shards.len() - 1;
            let cur = &shards[last];
            let full = !cur.is_empty()
                && ((opts.max_tensors != 0 && cur.len() >= opts.max_tensors)
                    || (opts.max_size != 0 && size.saturating_add(t.nbytes) > opts.max_size));
            if full {
                shards.push(i..i);
                size = 0;
            }
            let last = shards.len() - 1;
            shards[last].end = i + 1;
            size = size.saturating_add(t.nbytes);
        }
        shards
    }

    /// A builder for one shard: metadata as the rules say, and the tensors
    /// of `range` with placeholder data (the caller moves the data in).
    fn shard_builder(&self, k: usize, n: usize, range: &Range<usize>) -> Result<Builder<'a>> {
        let mut b = Builder::new();
        b.ctx = self.ctx;
        b.allow_long_tensor_names(true);
        if n == 1 {
            b.kvs = self.kvs.clone();
        } else {
            for (key, value) in &self.kvs {
                if (k == 0 || key == ALIGNMENT_KEY) && !is_split_key(key) {
                    b.kvs.insert(key.clone(), value.clone());
                }
            }
            let too_many = |what: &str| {
                Error::Build(BuildError::Encode {
                    reason: format!("{what} does not fit the split keys' types"),
                })
            };
            let count = u16::try_from(n).map_err(|_| too_many("the shard count"))?;
            let total =
                i32::try_from(self.tensors.len()).map_err(|_| too_many("the tensor count"))?;
            // k < n <= u16::MAX
            b.set(SPLIT_NO, k as u16)?;
            b.set(SPLIT_COUNT, count)?;
            b.set(SPLIT_TENSORS_COUNT, total)?;
        }
        for i in range.clone() {
            if let Some((name, t)) = self.tensors.get_index(i) {
                b.tensors.insert(
                    name.clone(),
                    PendingTensor {
                        ty: t.ty,
                        shape: t.shape.clone(),
                        nbytes: t.nbytes,
                        data: TensorData::Deferred,
                    },
                );
            }
        }
        Ok(b)
    }

    /// The files [`write_split`](Self::write_split) would write, without
    /// writing anything (a dry run).
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::{write::{Builder, SplitOptions}, GgmlType};
    /// let mut b = Builder::new();
    /// for i in 0..5 {
    ///     b.add_tensor_info(format!("t{i}"), GgmlType::F32, &[256])?; // 1 KiB each
    /// }
    /// let plan = b.plan_split("out/m.gguf", &SplitOptions::default().max_size(2048))?;
    /// assert_eq!(plan.len(), 3);
    /// assert_eq!(plan[2].path, std::path::Path::new("out/m-00003-of-00003.gguf"));
    /// assert_eq!(plan[0].tensors, 0..2);
    /// assert_eq!(plan[2].data_bytes(), 1024);
    /// # Ok(()) }
    /// ```
    pub fn plan_split(
        &self,
        path: impl AsRef<Path>,
        opts: &SplitOptions,
    ) -> Result<Vec<ShardPlan>> {
        let path = path.as_ref();
        let parts = self.partition(opts);
        let n = parts.len();
        parts
            .into_iter()
            .enumerate()
            .map(|(k, tensors)| {
                let layout = self.shard_builder(k, n, &tensors)?.layout()?;
                Ok(ShardPlan {
                    path: output_path(path, k, n),
                    tensors,
                    layout,
                })
            })
            .collect()
    }

    /// Writes the model as shards beside `path` (see the
    /// [`SplitOptions`] for names, limits and metadata), the same bytes
    /// gguf-py writes for the same content and limits. Shards are written
    /// one after the other, each as [`write`](Self::write) would (memory
    /// stays bounded the same way), into temporary files renamed to their
    /// names only once every shard is complete: after an error no file
    /// has appeared under a shard's name. `progress(done, total)` counts
    /// bytes of all shards. Returns the shards written. An error says which
    /// shard ([`Error::File`]).
    ///
    /// An interrupted process (SIGINT, SIGTERM, SIGKILL) leaves the
    /// shards' temporary files, `.gguf-XXXXXX.tmp` in the output's
    /// directory (or the [`WriteOptions::temp_dir`]), though never a
    /// changed shard: the library installs no signal handler. A program
    /// that handles signals calls
    /// [`exit_removing_temp_files`](crate::write::exit_removing_temp_files)
    /// from its handler thread; [`stale_temp_files`](crate::write::stale_temp_files)
    /// finds the files a killed process left. Errors never name a
    /// temporary file.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::{Model, write::{Builder, SplitOptions}, GgmlType};
    /// let dir = tempfile::tempdir()?;
    /// let mut b = Builder::new();
    /// b.set("general.architecture", "llama")?;
    /// b.add_tensor("a", GgmlType::I8, &[3], vec![1u8, 2, 3])?;
    /// b.add_tensor("b", GgmlType::I8, &[2], vec![4u8, 5])?;
    /// let shards = b.write_split(dir.path().join("m.gguf"), &SplitOptions::default().metadata_only_first(true))?;
    /// assert_eq!(shards.len(), 2); // the metadata, then both tensors
    /// let model = Model::open(&shards[1].path)?;
    /// assert_eq!(model.tensor("b")?.data()?, &[4, 5]);
    /// # Ok(()) }
    /// ```
    pub fn write_split(
        &mut self,
        path: impl AsRef<Path>,
        opts: &SplitOptions,
    ) -> Result<Vec<ShardPlan>> {
        self.write_split_with(path, opts, WriteOptions::new())
    }

    /// [`write_split`](Self::write_split) with [`WriteOptions`]: the write
    /// mode of each shard, progress (`done` and `total` count the bytes of
    /// all shards), and the directory of the temporary files (on the
    /// target's file system).
    pub fn write_split_with(
        &mut self,
        path: impl AsRef<Path>,
        opts: &SplitOptions,
        write: WriteOptions<'_>,
    ) -> Result<Vec<ShardPlan>> {
        let (mode, mut progress, temp_dir) = write.into_parts();
        let path = path.as_ref();
        let plan = self.plan_split(path, opts)?;
        for shard in &plan {
            crate::write::check_output(&shard.path)?;
        }
        let total: u64 = plan.iter().map(|s| s.layout.file_len()).sum();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let temp_dir = temp_dir.as_deref().unwrap_or(dir);
        let mut temps = Vec::with_capacity(plan.len());
        let mut done = 0u64;
        // Errors name the shard being written, never its temporary file.
        let named = |shard: &ShardPlan| {
            let path = shard.path.clone();
            move |e: Error| Error::File {
                path,
                source: Box::new(e),
            }
        };
        for (k, shard) in plan.iter().enumerate() {
            let mut tmp = TempFile::new_in(temp_dir).map_err(named(shard))?;
            let mut sub = self.shard_builder(k, plan.len(), &shard.tensors)?;
            self.lend_data(&mut sub, &shard.tensors);
            let base = done;
            let written = write_shard(&mut sub, tmp.file_mut(), mode, &mut |d, _| {
                progress(base + d, total)
            });
            self.take_back_data(&mut sub, &shard.tensors);
            let layout = written.map_err(named(shard))?;
            debug_assert_eq!(layout, shard.layout, "plan and write disagree");
            tmp.file().sync_all().map_err(|e| named(shard)(e.into()))?;
            done += layout.file_len();
            temps.push(tmp);
        }
        persist(temps, &plan)?;
        crate::write::sync_dir(dir)?;
        Ok(plan)
    }

    /// Moves the data of the tensors in `range` into the shard builder.
    fn lend_data(&mut self, sub: &mut Builder<'a>, range: &Range<usize>) {
        for (i, t) in range.clone().zip(sub.tensors.values_mut()) {
            if let Some((_, own)) = self.tensors.get_index_mut(i) {
                t.data = std::mem::replace(&mut own.data, TensorData::Deferred);
            }
        }
    }

    /// Moves the data back, whether the shard was written or not.
    fn take_back_data(&mut self, sub: &mut Builder<'a>, range: &Range<usize>) {
        for (i, t) in range.clone().zip(sub.tensors.values_mut()) {
            if let Some((_, own)) = self.tensors.get_index_mut(i) {
                own.data = std::mem::replace(&mut t.data, TensorData::Deferred);
            }
        }
    }

    /// A builder holding a whole model, one file or split: the first
    /// file's metadata (without the split keys when the model is split),
    /// and every tensor of every shard in order, data borrowed from the
    /// shards' maps. Writing it merges a split model into one file, the
    /// same bytes as writing the same model unsplit; for a model of one
    /// file it is [`from_file`](Self::from_file).
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::{Model, write::{Builder, SplitOptions}, GgmlType};
    /// let dir = tempfile::tempdir()?;
    /// let mut b = Builder::new();
    /// b.set("general.architecture", "llama")?;
    /// b.add_tensor("a", GgmlType::I8, &[3], vec![1u8, 2, 3])?;
    /// b.add_tensor("b", GgmlType::I8, &[2], vec![4u8, 5])?;
    /// let mut unsplit = Vec::new();
    /// b.write(&mut unsplit)?;
    /// b.write_split(dir.path().join("m.gguf"), &SplitOptions::default().max_tensors(1))?;
    ///
    /// let model = Model::open(dir.path().join("m-00001-of-00002.gguf"))?;
    /// let mut merged = Vec::new();
    /// Builder::from_model(&model)?.write(&mut merged)?;
    /// assert_eq!(merged, unsplit);
    /// # Ok(()) }
    /// ```
    pub fn from_model(model: &'a Model<'_>) -> Result<Self> {
        let mut shards = model.shards().iter();
        let Some(first) = shards.next() else {
            return Ok(Builder::new());
        };
        let mut b = Builder::from_file(first.file())?;
        if model.is_split() {
            b.kvs.retain(|k, _| !is_split_key(k));
        }
        for shard in shards {
            for t in shard.file().tensors() {
                b.tensors.insert(
                    t.name().to_owned(),
                    PendingTensor {
                        ty: t.ggml_type(),
                        shape: t.shape().to_vec(),
                        nbytes: t.byte_size()?,
                        data: TensorData::File(t),
                    },
                );
            }
        }
        Ok(b)
    }
}

/// Shard `k` (0-based) of `n` of the output `path`; `path` itself when
/// there is one shard, as gguf-py does.
fn output_path(path: &Path, k: usize, n: usize) -> PathBuf {
    if n == 1 {
        return path.to_owned();
    }
    shard_path(path, k as u32 + 1, n as u32)
}

/// Renames every complete shard to its name, all or none (see
/// [`persist_all`]). A replaced file keeps its permissions.
fn persist(temps: Vec<TempFile>, plan: &[ShardPlan]) -> Result<()> {
    for (tmp, shard) in temps.iter().zip(plan) {
        if let Ok(meta) = std::fs::metadata(&shard.path) {
            tmp.file()
                .set_permissions(meta.permissions())
                .map_err(|e| Error::File {
                    path: shard.path.clone(),
                    source: Box::new(e.into()),
                })?;
        }
    }
    let paths: Vec<&Path> = plan.iter().map(|s| s.path.as_path()).collect();
    persist_all(temps, &paths).map_err(|(i, e)| Error::File {
        path: paths[i].to_owned(),
        source: Box::new(e.into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::GgmlType;

    fn builder(sizes: &[u64]) -> Builder<'static> {
        let mut b = Builder::new();
        for (i, &n) in sizes.iter().enumerate() {
            b.add_tensor_info(format!("t{i}"), GgmlType::I8, &[n])
                .unwrap();
        }
        b
    }

    fn parts(sizes: &[u64], opts: SplitOptions) -> Vec<Range<usize>> {
        builder(sizes).partition(&opts)
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // lists of shards, some of one
    fn partition_follows_gguf_py() {
        let o = SplitOptions::default();
        assert_eq!(parts(&[1, 2, 3], o), [0..3]);
        assert_eq!(parts(&[], o), [0..0]);
        assert_eq!(parts(&[], o.metadata_only_first(true)), [0..0, 0..0]);
        assert_eq!(parts(&[1, 2, 3], o.max_tensors(1)), [0..1, 1..2, 2..3]);
        assert_eq!(parts(&[1, 2, 3], o.max_tensors(2)), [0..2, 2..3]);
        // The unpadded sum plus the next tensor must not exceed the limit.
        assert_eq!(parts(&[5, 5, 5], o.max_size(10)), [0..2, 2..3]);
        assert_eq!(parts(&[5, 6, 5], o.max_size(10)), [0..1, 1..2, 2..3]);
        // A tensor over the limit still gets a shard.
        assert_eq!(parts(&[50, 1, 1], o.max_size(10)), [0..1, 1..3]);
        assert_eq!(parts(&[1, 50], o.max_size(10)), [0..1, 1..2]);
        assert_eq!(
            parts(&[1, 2, 3], o.max_tensors(2).metadata_only_first(true)),
            [0..0, 0..2, 2..3]
        );
        assert_eq!(
            parts(&[4, 4, 4, 4], o.max_tensors(3).max_size(8)),
            [0..2, 2..4]
        );
    }

    #[test]
    fn split_keys_and_metadata_placement() {
        let mut b = builder(&[4, 4, 4]);
        b.set("general.architecture", "x").unwrap();
        b.alignment(64).unwrap();
        let plan = b
            .plan_split("m.gguf", &SplitOptions::default().max_tensors(2))
            .unwrap();
        assert_eq!(plan.len(), 2);
        let first = b.shard_builder(0, 2, &plan[0].tensors).unwrap();
        assert_eq!(
            first.keys().collect::<Vec<_>>(),
            [
                "general.architecture",
                "general.alignment",
                "split.no",
                "split.count",
                "split.tensors.count"
            ]
        );
        let second = b.shard_builder(1, 2, &plan[1].tensors).unwrap();
        assert_eq!(
            second.keys().collect::<Vec<_>>(),
            [
                "general.alignment",
                "split.no",
                "split.count",
                "split.tensors.count"
            ]
        );
        assert_eq!(second.tensor_names().collect::<Vec<_>>(), ["t2"]);
        assert_eq!(plan[1].layout.alignment, 64);
    }

    #[test]
    fn a_failed_shard_is_named_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = Builder::new();
        for name in ["a", "b"] {
            b.add_tensor(name, GgmlType::I8, &[2], vec![1u8, 2])
                .unwrap();
        }
        let opts = SplitOptions::default().max_tensors(1);
        // The second shard's name is taken by a directory: refused before
        // any shard is written (a failed rename is `persist_all`'s test).
        let second = dir.path().join("m-00002-of-00002.gguf");
        std::fs::create_dir(&second).unwrap();
        let err = b.write_split(dir.path().join("m.gguf"), &opts).unwrap_err();
        assert!(
            matches!(&err, Error::Build(crate::error::BuildError::OutputNotRegular { path, .. }) if *path == second),
            "{err:?}"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["m-00002-of-00002.gguf"]);
    }
}
