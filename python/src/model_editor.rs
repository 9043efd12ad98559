//! `gguf_rs.ModelEditor(path)`: metadata edits and tensor renames of a
//! whole model, one file or split, through the library's `ModelEditor`
//! (metadata edits go to the first shard, a rename to the shard holding
//! the tensor), queued until `commit()`.

use gguf::edit::ModelEditor;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::editor::{commit_dict, edit_value};
use crate::to_py;

/// Metadata edits and tensor renames of a whole model, one file or every
/// shard of a split one, opened through any of its files: metadata edits
/// go to the first shard, a tensor rename to the shard holding the tensor.
/// `commit()` writes each changed file as `Editor.commit()` does (in place
/// when its header fits, else by an atomic rewrite), first shard first.
/// The `split.*` keys are the split writer's and are refused.
#[pyclass(module = "gguf_rs._native", name = "ModelEditor")]
pub(crate) struct PyModelEditor {
    /// `None` once committed (the library's commit consumes it).
    editor: Option<ModelEditor>,
}

impl PyModelEditor {
    fn open_editor(&mut self) -> PyResult<&mut ModelEditor> {
        self.editor
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("this ModelEditor was already committed"))
    }
}

/// What was (or would be) done to each file: a list of `(path, dict)`,
/// the dict as `Editor.commit()` returns it.
fn per_file<'py>(
    py: Python<'py>,
    done: Vec<(std::path::PathBuf, gguf::edit::Commit)>,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for (path, commit) in done {
        list.append((path, commit_dict(py, commit)?))?;
    }
    Ok(list)
}

#[pymethods]
impl PyModelEditor {
    /// Opens the model `path` belongs to (any shard, or a single file);
    /// `reserve_on_rewrite` as `Editor` takes it, for every file rewritten.
    #[new]
    #[pyo3(signature = (path, *, reserve_on_rewrite=gguf::edit::DEFAULT_RESERVE))]
    fn new(py: Python<'_>, path: std::path::PathBuf, reserve_on_rewrite: u64) -> PyResult<Self> {
        let mut editor = py
            .detach(|| ModelEditor::open(&path))
            .map_err(|e| to_py(py, e))?;
        editor
            .reserve_on_rewrite(reserve_on_rewrite)
            .map_err(|e| to_py(py, e))?;
        Ok(PyModelEditor {
            editor: Some(editor),
        })
    }

    /// The model's files, in shard order.
    fn paths(&mut self) -> PyResult<Vec<std::path::PathBuf>> {
        Ok(self.open_editor()?.paths().to_vec())
    }

    /// Queues `key = value` in the first shard; `type` as `Editor.set`
    /// takes it (an existing key keeps its type without it). The split
    /// keys are refused.
    #[pyo3(signature = (key, value, r#type=None))]
    fn set(
        &mut self,
        py: Python<'_>,
        key: String,
        value: &Bound<'_, PyAny>,
        r#type: Option<&str>,
    ) -> PyResult<()> {
        let editor = self.open_editor()?;
        let file = editor.metadata_file().map_err(|e| to_py(py, e))?;
        let owned = edit_value(file, &key, value, r#type)?;
        editor.set(key, owned).map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Queues the removal of `key` from the first shard.
    fn remove(&mut self, py: Python<'_>, key: String) -> PyResult<()> {
        self.open_editor()?.remove(key).map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Queues renaming key `old` to `new` in the first shard.
    fn rename_key(&mut self, py: Python<'_>, old: String, new: String) -> PyResult<()> {
        self.open_editor()?
            .rename_key(old, new)
            .map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Queues renaming tensor `old` to `new` in the shard that holds it
    /// (`new` must be free in every shard).
    fn rename_tensor(&mut self, py: Python<'_>, old: String, new: String) -> PyResult<()> {
        self.open_editor()?
            .rename_tensor(old, new)
            .map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// What `commit()` would do to each file that changes, without
    /// writing.
    fn plan<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let plan = self.open_editor()?.plan().map_err(|e| to_py(py, e))?;
        per_file(py, plan)
    }

    /// Commits every changed file, first shard first (GIL released); the
    /// editor is spent after.
    fn commit<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let editor = self
            .editor
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this ModelEditor was already committed"))?;
        let done = py.detach(|| editor.commit()).map_err(|e| to_py(py, e))?;
        per_file(py, done)
    }
}
