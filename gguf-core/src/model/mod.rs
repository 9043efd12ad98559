//! [`Model`]: one model, in one file or split into shards
//! (`name-00001-of-00003.gguf`, ...), seen as a whole.
//!
//! A split model is N complete GGUF files. The first holds every metadata
//! entry; each carries `split.no` (u16, its 0-based position),
//! `split.count` (u16, N) and `split.tensors.count` (i32, the model's
//! tensor total), and each holds some of the tensors, with offsets relative
//! to its own data section. [`Model`] maps every shard and presents one
//! model: the first shard's metadata without the split keys (they are
//! reported apart by [`Model::split`]), every tensor in order with O(1)
//! lookup by name, and each tensor's data borrowed from its own shard's
//! map, as the same [`Tensor`] type a single file hands out.
//!
//! Opening validates the set as llama.cpp's loader does, and more: every
//! shard present, each `split.no` equal to the shard's position, the same
//! `split.count` everywhere, tensor names unique across shards, and the
//! tensor total equal to `split.tensors.count`. Each failure is an
//! [`Error`](crate::Error) naming the file.

mod door;
mod open;
mod origin;

pub use origin::Origin;

use indexmap::IndexMap;

use crate::format::{Value, WireFormat};
use crate::read::{Gguf, GgufFile, Tensor};

/// Key of a shard's 0-based position (u16).
pub const SPLIT_NO: &str = "split.no";
/// Key of the number of shards (u16).
pub const SPLIT_COUNT: &str = "split.count";
/// Key of the model's total tensor count (i32).
pub const SPLIT_TENSORS_COUNT: &str = "split.tensors.count";

/// True for the three keys that describe a shard rather than the model.
///
/// ```
/// assert!(gguf_core::model::is_split_key("split.count"));
/// assert!(!gguf_core::model::is_split_key("general.name"));
/// ```
pub fn is_split_key(key: &str) -> bool {
    matches!(key, SPLIT_NO | SPLIT_COUNT | SPLIT_TENSORS_COUNT)
}

/// The split keys of a model's first file, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitInfo {
    /// `split.count`: the number of shards (0 or 1 for a single file that
    /// carries the keys anyway).
    pub count: u16,
    /// `split.tensors.count`, when present.
    pub tensors_count: Option<i32>,
}

/// One file of a [`Model`].
pub struct Shard<'a> {
    origin: Origin,
    file: GgufFile<'a>,
}

impl<'a> Shard<'a> {
    /// Where the file was read from: a path (as given or as derived from
    /// a sibling's name), a URL (redacted), bytes or a stream.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The file itself, split keys included.
    pub fn file(&self) -> &GgufFile<'a> {
        &self.file
    }
}

impl std::fmt::Debug for Shard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shard")
            .field("origin", &self.origin)
            .field("tensor_count", &self.file.tensor_count())
            .field("file_len", &self.file.file_len())
            .finish()
    }
}

/// A model in one file or in shards, seen as one (see the
/// [module docs](self)).
///
/// ```
/// use gguf_core::Gguf;
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::{Model, write::{Builder, SplitOptions}, GgmlType};
/// let dir = tempfile::tempdir()?;
/// let mut b = Builder::new();
/// b.set("general.architecture", "llama")?;
/// for i in 0..3 {
///     b.add_tensor(format!("t{i}"), GgmlType::I8, &[4], vec![i as u8; 4])?;
/// }
/// // One tensor per shard: model-00001-of-00003.gguf ... -00003-of-00003.gguf
/// b.write_split(dir.path().join("model.gguf"), &SplitOptions::default().max_tensors(1))?;
///
/// let model = Model::open(dir.path().join("model-00002-of-00003.gguf"))?; // any shard
/// assert_eq!(model.shard_count(), 3);
/// assert_eq!(model.get_str("general.architecture")?, "llama");
/// assert!(model.value("split.count").is_none()); // reported by split() instead
/// assert_eq!(model.split().map(|s| s.count), Some(3));
/// assert_eq!(model.tensor("t2")?.data()?, &[2, 2, 2, 2]);
/// assert_eq!(model.tensors().map(|t| t.name()).collect::<Vec<_>>(), ["t0", "t1", "t2"]);
/// # Ok(()) }
/// ```
pub struct Model<'a> {
    shards: Vec<Shard<'a>>,
    /// Empty for a model of one file, whose own index answers.
    index: ShardIndex,
    split: Option<SplitInfo>,
}

/// The tensors of a split model: name -> (shard, position in that shard),
/// in model order.
type ShardIndex = IndexMap<Box<str>, (u32, u32)>;

impl std::fmt::Debug for Model<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("shards", &self.shards)
            .field("split", &self.split)
            .field("tensor_count", &self.tensor_count())
            .finish()
    }
}

impl<'a> Model<'a> {
    // ---- shards ----

    /// The files of the model, in order (one for an unsplit model).
    pub fn shards(&self) -> &[Shard<'a>] {
        &self.shards
    }

    /// Number of files.
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// True when the model spans more than one file.
    pub fn is_split(&self) -> bool {
        self.shards.len() > 1
    }

    /// The split keys of the first file, when it has `split.count`.
    pub fn split(&self) -> Option<SplitInfo> {
        self.split
    }

    /// The first file: it holds the model's metadata (and the split keys).
    pub fn metadata_file(&self) -> &GgufFile<'a> {
        &self.shards[0].file
    }

    /// Total bytes of all files.
    pub fn total_len(&self) -> u64 {
        self.shards.iter().map(|s| s.file.file_len()).sum()
    }

    /// Index of the shard holding tensor `name`.
    pub fn tensor_shard(&self, name: &str) -> Option<usize> {
        match self.shards.as_slice() {
            [one] => one.file.tensor_index(name).map(|_| 0),
            _ => self.index.get(name).map(|&(shard, _)| shard as usize),
        }
    }
}

impl Model<'_> {
    /// Positions of the split keys in the first file, in file order.
    fn split_key_positions(&self) -> impl Iterator<Item = usize> + '_ {
        let file = self.metadata_file();
        let mut at = [SPLIT_NO, SPLIT_COUNT, SPLIT_TENSORS_COUNT].map(|k| file.key_index(k));
        at.sort_unstable();
        at.into_iter().flatten()
    }
}

/// The model's metadata (the first file's, without the split keys) and
/// every tensor of every shard, in order.
impl crate::read::view::sealed::Sealed for Model<'_> {}

impl Gguf for Model<'_> {
    fn wire_format(&self) -> WireFormat {
        self.metadata_file().wire_format()
    }

    fn kv_count(&self) -> usize {
        self.metadata_file().kv_count() - self.split_key_positions().count()
    }

    fn entry_at(&self, index: usize) -> Option<(&str, Value<'_>)> {
        // The index in the first file: past every split key before it.
        let mut at = index;
        for split_at in self.split_key_positions() {
            if split_at <= at {
                at += 1;
            }
        }
        self.metadata_file().entry_at(at)
    }

    fn value(&self, key: &str) -> Option<Value<'_>> {
        if is_split_key(key) {
            return None;
        }
        self.metadata_file().value(key)
    }

    fn tensor_count(&self) -> usize {
        match self.shards.as_slice() {
            [one] => one.file.tensor_count(),
            _ => self.index.len(),
        }
    }

    fn tensor_at(&self, index: usize) -> Option<Tensor<'_>> {
        match self.shards.as_slice() {
            [one] => one.file.tensor_at(index),
            _ => {
                let (_, &(shard, pos)) = self.index.get_index(index)?;
                self.shards
                    .get(shard as usize)?
                    .file
                    .tensor_at(pos as usize)
            }
        }
    }

    fn tensor_index(&self, name: &str) -> Option<usize> {
        match self.shards.as_slice() {
            [one] => one.file.tensor_index(name),
            _ => self.index.get_index_of(name),
        }
    }

    fn tensors_with_shard(&self) -> impl Iterator<Item = (usize, Tensor<'_>)> + '_ {
        self.shards
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.file.tensors().map(move |t| (i, t)))
    }
}
