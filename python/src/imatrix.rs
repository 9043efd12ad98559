//! `gguf_rs.imatrix(path)`: an importance matrix (llama-imatrix's GGUF or
//! legacy `.dat` file) read by the library, converted between the two
//! formats as `gguf imatrix convert` does, and handed to `quantize` and
//! `import_hf`.

use std::path::PathBuf;

use gguf_llama::quantize::{Imatrix, ImatrixFormat};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffer::F32Buffer;
use crate::llama_to_py;

/// llama-imatrix's chunk size by default, assumed for a legacy file (as
/// `gguf imatrix convert` assumes it).
const DEFAULT_CHUNK_SIZE: u32 = 512;

/// An importance matrix, with the path it was read from (recorded as
/// `quantize.imatrix.file` by a quantization that uses it).
#[pyclass(frozen, module = "gguf_rs._native", name = "Imatrix")]
pub(crate) struct PyImatrix {
    pub(crate) matrix: Imatrix,
    pub(crate) path: String,
}

fn format_name(f: ImatrixFormat) -> &'static str {
    match f {
        ImatrixFormat::Gguf => "gguf",
        ImatrixFormat::Dat => "dat",
    }
}

fn parse_format(name: &str) -> PyResult<ImatrixFormat> {
    match name {
        "gguf" => Ok(ImatrixFormat::Gguf),
        "dat" => Ok(ImatrixFormat::Dat),
        _ => Err(PyValueError::new_err(format!(
            "unknown importance matrix format {name:?}: \"gguf\" or \"dat\""
        ))),
    }
}

#[pymethods]
impl PyImatrix {
    /// Reads `path` (either format, told apart by content).
    #[staticmethod]
    fn read(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let matrix = py
            .detach(|| Imatrix::read(&path))
            .map_err(|e| llama_to_py(py, e))?;
        Ok(PyImatrix {
            matrix,
            path: path.to_string_lossy().into_owned(),
        })
    }

    /// `"gguf"` or `"dat"`.
    #[getter]
    fn format(&self) -> &'static str {
        format_name(self.matrix.format)
    }

    /// The path it was read from (`""` for a converted matrix).
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// The datasets it was computed on, as the file names them.
    #[getter]
    fn datasets(&self) -> Vec<String> {
        self.matrix.datasets.clone()
    }

    /// The chunks it was computed over.
    #[getter]
    fn chunk_count(&self) -> u32 {
        self.matrix.chunk_count
    }

    /// Tokens per chunk (`imatrix.chunk_size`; None for a legacy file).
    #[getter]
    fn chunk_size(&self) -> Option<u32> {
        self.matrix.chunk_size
    }

    /// The tensor names, in file order.
    fn names(&self) -> Vec<String> {
        self.matrix.entries.iter().map(|e| e.name.clone()).collect()
    }

    /// `(sums, counts)` of tensor `name`: the summed squared activations
    /// (f32) and the token counts (one per expert), or None.
    fn entry(&self, name: &str) -> Option<(F32Buffer, Vec<f64>)> {
        let e = self.matrix.entry(name)?;
        Some((F32Buffer::new(e.sums.clone()), e.counts.clone()))
    }

    /// The importance weights llama-quantize gives tensor `name`'s
    /// quantizer (sums over counts), or None.
    fn weights(&self, name: &str) -> Option<F32Buffer> {
        let e = self.matrix.entry(name)?;
        Some(F32Buffer::new(self.matrix.weights(e)))
    }

    /// The matrix in format `to`; `chunk_size` is the tokens per chunk a
    /// legacy matrix was computed with (512 by default, llama-imatrix's),
    /// ignored for a GGUF matrix, which keeps its own. Returns the matrix
    /// and whether `to` holds every count exactly.
    #[pyo3(signature = (to, chunk_size=None))]
    fn convert(&self, to: &str, chunk_size: Option<u32>) -> PyResult<(Self, bool)> {
        let to = parse_format(to)?;
        let chunk_size = chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
        if chunk_size == 0 {
            return Err(PyValueError::new_err("chunk_size must be above 0"));
        }
        let matrix = match to {
            ImatrixFormat::Gguf => self.matrix.to_gguf(chunk_size),
            ImatrixFormat::Dat => self.matrix.to_dat(),
        };
        let lossless = self.matrix.converts_losslessly(to, chunk_size);
        Ok((
            PyImatrix {
                matrix,
                path: String::new(),
            },
            lossless,
        ))
    }

    /// Writes the matrix to `path` in its format (replaced atomically).
    fn write(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.matrix.write(&path))
            .map_err(|e| llama_to_py(py, e))
    }

    /// The file's bytes in its format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.matrix.to_bytes().map_err(|e| llama_to_py(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn __len__(&self) -> usize {
        self.matrix.entries.len()
    }
}
