//! `gguf_rs.Builder`: a new file from values and arrays through the
//! library's `write::Builder`, written in one of its three modes.

use std::borrow::Cow;

use gguf::write::{replace_file, Builder, TensorData, WriteMode, WriteOptions};
use gguf::{Endian, GgmlType, Model};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::values::{to_owned_value, value_type};
use crate::{to_py, GGUFError};

/// A file being built. The library's builder owns all it holds (arrays
/// are copied in), except the tensors of a model it was made from
/// (`from_file`), which it borrows from `_source`, kept here with it.
#[pyclass(unsendable, module = "gguf_rs._native", name = "Builder")]
pub(crate) struct PyBuilder {
    // Declared before `_source`, so dropped first: it borrows from it.
    builder: Builder<'static>,
    _source: Option<Box<Model<'static>>>,
}

/// f32 values from native-order bytes.
fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[pymethods]
impl PyBuilder {
    /// An empty file: `version` 3 (or 1, 2), `big_endian` False,
    /// `alignment` 32 unless given.
    #[new]
    #[pyo3(signature = (version=3, big_endian=false, alignment=None))]
    fn new(
        py: Python<'_>,
        version: u32,
        big_endian: bool,
        alignment: Option<u32>,
    ) -> PyResult<Self> {
        let mut builder = Builder::new();
        builder.version(version).map_err(|e| to_py(py, e))?;
        builder.endian(if big_endian {
            Endian::Big
        } else {
            Endian::Little
        });
        if let Some(a) = alignment {
            builder.alignment(a).map_err(|e| to_py(py, e))?;
        }
        Ok(PyBuilder {
            builder,
            _source: None,
        })
    }

    /// A builder holding the whole model at `path` (any shard of a split
    /// model: the model merged, its split keys dropped), as the library's
    /// `Builder::from_model` makes it: every metadata entry with its type,
    /// every tensor, its data read from the file only when written.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let model = Box::new(
            py.detach(|| Model::open(path.as_path()))
                .map_err(|e| to_py(py, e))?,
        );
        // SAFETY: the builder borrows the model for as long as this
        // PyBuilder lives. The model sits in a Box whose heap address never
        // changes, is never mutated nor handed out, and is dropped only
        // after the builder (field order above); nothing else can see the
        // 'static lifetime, which stands for "as long as `_source`".
        let model_ref: &'static Model<'static> =
            unsafe { &*(model.as_ref() as *const Model<'static>) };
        let builder = Builder::from_model(model_ref).map_err(|e| to_py(py, e))?;
        Ok(PyBuilder {
            builder,
            _source: Some(model),
        })
    }

    /// Renames key `old` to `new` in place.
    fn rename_key(&mut self, py: Python<'_>, old: &str, new: String) -> PyResult<()> {
        self.builder
            .rename_key(old, new)
            .map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Removes tensor `name` (an error when absent).
    fn remove_tensor(&mut self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.builder.remove_tensor(name).map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Renames tensor `old` to `new` in place.
    fn rename_tensor(&mut self, py: Python<'_>, old: &str, new: String) -> PyResult<()> {
        self.builder
            .rename_tensor(old, new)
            .map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Re-encodes tensor `name` of a model read with `from_file` to GGML
    /// type `qtype` when written (a chunk of rows at a time).
    fn requantize_tensor(&mut self, py: Python<'_>, name: &str, qtype: u32) -> PyResult<()> {
        self.builder
            .requantize_tensor(name, GgmlType::from_id(qtype))
            .map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Sets `key` (`type` as `Editor.set` takes it; else implied by the
    /// Python value). A new key goes last, an existing one keeps its place.
    #[pyo3(signature = (key, value, r#type=None))]
    fn set(
        &mut self,
        py: Python<'_>,
        key: String,
        value: &Bound<'_, PyAny>,
        r#type: Option<&str>,
    ) -> PyResult<()> {
        let ty = r#type.map(value_type).transpose()?;
        let owned = to_owned_value(value, ty)?;
        self.builder.set(key, owned).map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Removes `key` (an error when absent).
    fn remove(&mut self, py: Python<'_>, key: &str) -> PyResult<()> {
        self.builder.remove(key).map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Adds tensor `name` of GGML type id `qtype` and ggml dims `dims`
    /// from native-order numbers of `elem_size` bytes (byte-swapped for a
    /// big-endian file).
    fn add_native(
        &mut self,
        py: Python<'_>,
        name: String,
        qtype: u32,
        dims: Vec<u64>,
        data: &Bound<'_, PyBytes>,
        elem_size: usize,
    ) -> PyResult<()> {
        let data = TensorData::Native {
            bytes: Cow::Owned(data.as_bytes().to_vec()),
            elem_size,
        };
        self.builder
            .add_tensor(name, GgmlType::from_id(qtype), &dims, data)
            .map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Adds tensor `name` from `data`, bytes exactly as they go in the
    /// file (quantized blocks, in the file's byte order).
    fn add_raw(
        &mut self,
        py: Python<'_>,
        name: String,
        qtype: u32,
        dims: Vec<u64>,
        data: &Bound<'_, PyBytes>,
    ) -> PyResult<()> {
        self.builder
            .add_tensor(
                name,
                GgmlType::from_id(qtype),
                &dims,
                data.as_bytes().to_vec(),
            )
            .map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Adds tensor `name` of type `qtype` quantized by the library, when
    /// written, from native f32 bytes `data`.
    fn add_quantized(
        &mut self,
        py: Python<'_>,
        name: String,
        qtype: u32,
        dims: Vec<u64>,
        data: &Bound<'_, PyBytes>,
    ) -> PyResult<()> {
        self.builder
            .add_tensor_quantized(
                name,
                GgmlType::from_id(qtype),
                &dims,
                floats(data.as_bytes()),
            )
            .map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Adds tensor `name` without data: `write_metadata_first` asks for
    /// it when its turn comes.
    fn add_info(
        &mut self,
        py: Python<'_>,
        name: String,
        qtype: u32,
        dims: Vec<u64>,
    ) -> PyResult<()> {
        self.builder
            .add_tensor_info(name, GgmlType::from_id(qtype), &dims)
            .map_err(|e| to_py(py, e))?;
        Ok(())
    }

    /// Metadata keys in order.
    fn keys(&self) -> Vec<String> {
        self.builder.keys().map(str::to_owned).collect()
    }

    /// Tensor names in order.
    fn tensor_names(&self) -> Vec<String> {
        self.builder.tensor_names().map(str::to_owned).collect()
    }

    /// The whole file as bytes.
    #[pyo3(name = "to_bytes")]
    fn file_bytes<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let builder = &mut self.builder;
        let bytes = py.detach(|| builder.to_vec()).map_err(|e| to_py(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Writes the file to `path` atomically (a temporary file renamed
    /// over it) in `mode` `"single"` (one forward pass) or `"reserve"`
    /// (data first, header last); returns the file's length.
    #[pyo3(signature = (path, mode="single"))]
    fn write(&mut self, py: Python<'_>, path: std::path::PathBuf, mode: &str) -> PyResult<u64> {
        let mode = match mode {
            "single" => WriteMode::Single,
            "reserve" => WriteMode::Reserve,
            other => {
                return Err(PyValueError::new_err(format!(
                    "mode: expected 'single' or 'reserve' (metadata first is write_metadata_first), got {other:?}"
                )))
            }
        };
        // Quantizing and writing can take long: let other threads run.
        let builder = &mut self.builder;
        let layout = py
            .detach(|| builder.write_to_path_with(&path, WriteOptions::new().mode(mode)))
            .map_err(|e| to_py(py, e))?;
        Ok(layout.file_len())
    }

    /// Writes the header to `path` first, then each tensor's bytes in file
    /// order: from the data given to `add_*`, or for a tensor declared
    /// with `add_info` as `data(name)` returns them (bytes exactly as
    /// stored); atomic like `write`. Returns the file's length.
    fn write_metadata_first(
        &mut self,
        py: Python<'_>,
        path: std::path::PathBuf,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<u64> {
        let mut failure: Option<PyErr> = None;
        let written = replace_file(&path, |file| {
            let mut w = self
                .builder
                .write_metadata_first(std::io::BufWriter::new(file))?;
            loop {
                // Tensors given with data go out from it; the callback is
                // asked only for those declared without.
                w.write_from_sources()?;
                let Some(name) = w.next_tensor().map(str::to_owned) else {
                    break;
                };
                let bytes: Vec<u8> = match data.call1((name.as_str(),)).and_then(|b| b.extract()) {
                    Ok(b) => b,
                    Err(e) => {
                        failure = Some(e);
                        return Err(gguf::Error::from(std::io::Error::other(format!(
                            "the data callback failed for tensor {name:?}"
                        ))));
                    }
                };
                w.write_tensor(&name, &bytes)?;
            }
            let layout_len = w.layout().file_len();
            let mut out = w.finish()?;
            std::io::Write::flush(&mut out)?;
            Ok(layout_len)
        });
        match (written, failure) {
            (_, Some(e)) => Err(e),
            (Ok(len), None) => Ok(len),
            (Err(e), None) => Err(to_py(py, e)),
        }
    }
}

/// A GGML type id from its name (`"Q4_K"`, any case).
#[pyfunction]
pub(crate) fn ggml_type_id(name: &str) -> PyResult<u32> {
    GgmlType::from_name(name)
        .map(GgmlType::id)
        .ok_or_else(|| GGUFError::new_err(format!("unknown GGML type {name:?}")))
}
