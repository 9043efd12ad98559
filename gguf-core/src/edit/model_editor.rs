//! [`ModelEditor`]: metadata edits and tensor renames of a model in one
//! file or in shards.

use crate::error::{BuildError, LookupError, SplitError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::editor::{Commit, Editor, DEFAULT_RESERVE};
use crate::error::{Error, Result};
use crate::format::OwnedValue;
use crate::model::{is_split_key, Model};
use crate::read::{Gguf, GgufFile};

/// Edits a model through any of its files, with one [`Editor`] per file
/// that changes: metadata edits go to the first shard (which holds the
/// metadata), a tensor rename to the shard holding the tensor. Each file
/// is committed as [`Editor::commit`] does (in place when the header
/// still fits, else by atomic rewrite, which reserves header slack as
/// [`Editor::reserve_on_rewrite`] says, in every file it rewrites); files
/// are committed one after the other, so should one fail, those before it
/// keep their edit.
///
/// The split keys are the split writer's: setting, removing or renaming
/// them is refused.
///
/// ```
/// use gguf_core::Gguf;
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::{edit::ModelEditor, Model, write::{Builder, SplitOptions}, GgmlType};
/// let dir = tempfile::tempdir()?;
/// let mut b = Builder::new();
/// b.set("general.architecture", "llama")?;
/// b.reserve_metadata(256)?; // room for in-place edits
/// b.add_tensor("a", GgmlType::I8, &[2], vec![1u8, 2])?;
/// b.add_tensor("b", GgmlType::I8, &[2], vec![3u8, 4])?;
/// b.write_split(dir.path().join("m.gguf"), &SplitOptions::default().max_tensors(1))?;
///
/// let mut ed = ModelEditor::open(dir.path().join("m-00002-of-00002.gguf"))?;
/// ed.set("general.name", "tiny")?;
/// ed.rename_tensor("b", "output.weight")?; // in the second shard
/// assert!(ed.set("split.count", 5u16).is_err());
/// ed.commit()?;
///
/// let model = Model::open(dir.path().join("m-00001-of-00002.gguf"))?;
/// assert_eq!(model.get_str("general.name")?, "tiny");
/// assert_eq!(model.tensor("output.weight")?.data()?, &[3, 4]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ModelEditor {
    paths: Vec<PathBuf>,
    editors: Vec<Option<Editor>>,
    /// Current tensor names (edits applied) -> shard.
    tensors: HashMap<String, usize>,
    /// What each editor reserves when it rewrites its file.
    reserve: u64,
}

impl ModelEditor {
    /// Opens the model that `path` belongs to (any shard, or a single
    /// file), validating it as [`Model::open`] does.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let model = Model::open(path.as_ref())?;
        // Opened from a path, every shard is a local file.
        let paths: Vec<PathBuf> = model
            .shards()
            .iter()
            .filter_map(|s| s.origin().path().map(Path::to_owned))
            .collect();
        let tensors = model
            .tensors_with_shard()
            .map(|(i, t)| (t.name().to_owned(), i))
            .collect();
        Ok(ModelEditor {
            editors: paths.iter().map(|_| None).collect(),
            paths,
            tensors,
            reserve: DEFAULT_RESERVE,
        })
    }

    /// The slack each file that has to be rewritten gets, as
    /// [`Editor::reserve_on_rewrite`] sets it for one file (0: none).
    pub fn reserve_on_rewrite(&mut self, bytes: u64) -> Result<&mut Self> {
        if bytes > crate::write::MAX_SLACK {
            return Err(crate::write::slack::too_much_slack());
        }
        for e in self.editors.iter_mut().flatten() {
            e.reserve_on_rewrite(bytes)?;
        }
        self.reserve = bytes;
        Ok(self)
    }

    /// The files of the model.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    fn editor(&mut self, shard: usize) -> Result<&mut Editor> {
        let slot = self.editors.get_mut(shard).ok_or_else(|| {
            Error::Split(SplitError::ShardName {
                path: PathBuf::new(),
                reason: format!("no shard {shard}"),
            })
        })?;
        if slot.is_none() {
            let mut e = Editor::open(&self.paths[shard])?;
            e.reserve_on_rewrite(self.reserve)?;
            *slot = Some(e);
        }
        slot.as_mut().ok_or_else(|| {
            Error::Build(BuildError::Encode {
                reason: "editor not opened".into(),
            })
        })
    }

    /// The first file as it is on disk (without the queued edits): the
    /// model's metadata.
    pub fn metadata_file(&mut self) -> Result<&GgufFile<'static>> {
        Ok(self.editor(0)?.file())
    }

    fn model_key(key: &str) -> Result<()> {
        if is_split_key(key) {
            return Err(Error::Build(BuildError::InvalidKey {
                key: key.into(),
                reason: "split keys describe the shards and are written by the split writer",
            }));
        }
        Ok(())
    }

    /// Sets a metadata key (in the first shard).
    pub fn set(
        &mut self,
        key: impl Into<String>,
        value: impl Into<OwnedValue>,
    ) -> Result<&mut Self> {
        let key = key.into();
        Self::model_key(&key)?;
        self.editor(0)?.set(key, value)?;
        Ok(self)
    }

    /// Removes a metadata key (from the first shard).
    pub fn remove(&mut self, key: impl Into<String>) -> Result<&mut Self> {
        let key = key.into();
        Self::model_key(&key)?;
        self.editor(0)?.remove(key)?;
        Ok(self)
    }

    /// Renames a metadata key (in the first shard).
    pub fn rename_key(
        &mut self,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> Result<&mut Self> {
        let (old, new) = (old.into(), new.into());
        Self::model_key(&old)?;
        Self::model_key(&new)?;
        self.editor(0)?.rename_key(old, new)?;
        Ok(self)
    }

    /// Renames a tensor in whichever shard holds it; the new name must be
    /// free in every shard.
    pub fn rename_tensor(
        &mut self,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> Result<&mut Self> {
        let (old, new) = (old.into(), new.into());
        let &shard = self.tensors.get(&old).ok_or_else(|| {
            Error::Lookup(LookupError::TensorNotFound {
                tensor: old.clone(),
            })
        })?;
        if self.tensors.contains_key(&new) {
            return Err(Error::Build(BuildError::TensorExists { tensor: new }));
        }
        self.editor(shard)?
            .rename_tensor(old.clone(), new.clone())?;
        self.tensors.remove(&old);
        self.tensors.insert(new, shard);
        Ok(self)
    }

    /// What [`commit`](Self::commit) would do to each file that changes.
    pub fn plan(&self) -> Result<Vec<(PathBuf, Commit)>> {
        self.editors
            .iter()
            .zip(&self.paths)
            .filter_map(|(e, p)| e.as_ref().map(|e| e.plan().map(|c| (p.clone(), c))))
            .collect()
    }

    /// Commits every changed file, first shard first; returns what was
    /// done to each. An interruption leaves what
    /// [`Editor::commit`] says.
    pub fn commit(self) -> Result<Vec<(PathBuf, Commit)>> {
        let mut done = Vec::new();
        for (editor, path) in self.editors.into_iter().zip(self.paths) {
            if let Some(e) = editor {
                done.push((path, e.commit()?));
            }
        }
        Ok(done)
    }
}
