//! `gguf_rs.Editor(path)`: in-place metadata edits through the library's
//! `Editor` (journaled in place when the header fits, else an atomic
//! rewrite), the edits queued until `commit()`.

use gguf::edit::{Commit, Editor};
use gguf::format::OwnedValue;
use gguf::{Gguf, GgufFile, ValueType};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::to_py;
use crate::values::{to_owned_value, value_type};

/// In-place metadata edits of one file: `set`, `remove`, `rename_key` and
/// `rename_tensor` queue them, `commit()` writes them in place
/// (journaled) when the new header fits, else by an atomic rewrite.
#[pyclass(module = "gguf_rs._native", name = "Editor")]
pub(crate) struct PyEditor {
    /// `None` once committed (the library's commit consumes it).
    editor: Option<Editor>,
}

impl PyEditor {
    fn open_editor(&mut self) -> PyResult<&mut Editor> {
        self.editor
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("this Editor was already committed"))
    }
}

/// `value` as what `key` is set to in `file`: of the GGUF type `type`
/// names, else of the type the key has now (for an array, its elements'),
/// else of the type the Python value implies.
pub(crate) fn edit_value(
    file: &GgufFile<'_>,
    key: &str,
    value: &Bound<'_, PyAny>,
    r#type: Option<&str>,
) -> PyResult<OwnedValue> {
    let ty = match r#type {
        Some(name) => Some(value_type(name)?),
        None => file.value(key).map(|v| match v.as_array() {
            Some(array) if array.element_type() != ValueType::Array => array.element_type(),
            _ => v.value_type(),
        }),
    };
    to_owned_value(value, ty)
}

/// A commit's outcome as a dict: `{"in_place": True, "header_bytes": n,
/// "slack_bytes": k}` or `{"in_place": False, "header_bytes": n,
/// "file_bytes": m, "slack_bytes": k}` (`slack_bytes`: the header slack
/// after the commit, what a rewrite reserved).
pub(crate) fn commit_dict<'py>(py: Python<'py>, commit: Commit) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match commit {
        Commit::InPlace {
            header_bytes,
            slack_bytes,
        } => {
            d.set_item("in_place", true)?;
            d.set_item("header_bytes", header_bytes)?;
            d.set_item("slack_bytes", slack_bytes)?;
        }
        Commit::Rewritten {
            header_bytes,
            file_bytes,
            slack_bytes,
        } => {
            d.set_item("in_place", false)?;
            d.set_item("header_bytes", header_bytes)?;
            d.set_item("file_bytes", file_bytes)?;
            d.set_item("slack_bytes", slack_bytes)?;
        }
    }
    Ok(d)
}

#[pymethods]
impl PyEditor {
    /// Opens `path` for editing (finishing an interrupted earlier edit
    /// first, as the library does). A commit that has to rewrite the file
    /// reserves `reserve_on_rewrite` bytes of header slack (0: none) so
    /// the next edit is in place.
    #[new]
    #[pyo3(signature = (path, *, reserve_on_rewrite=gguf::edit::DEFAULT_RESERVE))]
    fn new(py: Python<'_>, path: std::path::PathBuf, reserve_on_rewrite: u64) -> PyResult<Self> {
        let mut editor = py
            .detach(|| Editor::open(&path))
            .map_err(|e| to_py(py, e))?;
        editor
            .reserve_on_rewrite(reserve_on_rewrite)
            .map_err(|e| to_py(py, e))?;
        Ok(PyEditor {
            editor: Some(editor),
        })
    }

    /// Queues `key = value`. `type` names the GGUF type (`"u32"`, ...; for
    /// a list, its elements' type); without it an existing key keeps its
    /// type and a new one takes the type the Python value implies.
    #[pyo3(signature = (key, value, r#type=None))]
    fn set(
        &mut self,
        py: Python<'_>,
        key: String,
        value: &Bound<'_, PyAny>,
        r#type: Option<&str>,
    ) -> PyResult<()> {
        let editor = self.open_editor()?;
        let owned = edit_value(editor.file(), &key, value, r#type)?;
        editor.set(key, owned).map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Queues the removal of `key` (an error if the file has none).
    fn remove(&mut self, py: Python<'_>, key: String) -> PyResult<()> {
        let editor = self.open_editor()?;
        editor.remove(key).map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Queues renaming key `old` to `new`, keeping its place and value.
    fn rename_key(&mut self, py: Python<'_>, old: String, new: String) -> PyResult<()> {
        let editor = self.open_editor()?;
        editor.rename_key(old, new).map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Queues renaming tensor `old` to `new`.
    fn rename_tensor(&mut self, py: Python<'_>, old: String, new: String) -> PyResult<()> {
        let editor = self.open_editor()?;
        editor.rename_tensor(old, new).map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// What `commit()` would do, without writing: a dict as `commit()`
    /// returns.
    fn plan<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let editor = self.open_editor()?;
        let plan = editor.plan().map_err(|e| to_py(py, e))?;
        commit_dict(py, plan)
    }

    /// Writes the queued edits (GIL released): in place when the new
    /// header fits, else by an atomic rewrite. The editor is spent after.
    fn commit<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let editor = self
            .editor
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this Editor was already committed"))?;
        let commit = py.detach(|| editor.commit()).map_err(|e| to_py(py, e))?;
        commit_dict(py, commit)
    }
}
