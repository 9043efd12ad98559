//! The native half of the `gguf_rs` Python package: a thin layer over the
//! gguf-kit library. Files are opened through the library's one door
//! (`GgufFile::open`) and read through the `Gguf` trait; the codecs are the
//! library's. What this crate adds is only what Python needs on top: the
//! byte layout of each metadata entry as gguf-py's `GGUFReader` presents it
//! (its `parts`), values converted to Python objects, and the GIL released
//! around the work.

use std::path::Path;

use gguf::error::SplitError;
use gguf::{codec, Endian, GgmlType, Gguf, GgufFile, Value};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyKeyError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyList};

mod buffer;
mod builder;
mod chat;
mod editor;
mod hf_import;
mod imatrix;
mod layout;
mod model;
mod model_editor;
mod model_quantize;
mod progress;
mod summary;
mod tokenizer;
mod values;
mod writer;

use buffer::{input_bytes, F32Buffer};
use layout::{field_layout, value_types};

create_exception!(
    gguf_rs,
    GGUFError,
    PyValueError,
    "A file gguf-kit refuses, or a codec argument it cannot work with: the library's message, \
     with the byte offset (`offset`, or None) where the file is wrong."
);

/// The library's error as a Python exception: an I/O failure as the
/// `OSError` subclass Python itself raises for it (see [`os_error`]), every
/// other error as a [`GGUFError`] carrying the message and offset. An
/// error met in a file opened by path names the file once, in its message
/// (the library's doors attach it).
pub(crate) fn to_py(py: Python<'_>, err: gguf::Error) -> PyErr {
    if let Some(os) = os_error(py, &err) {
        return os;
    }
    to_py_message(py, err.to_string(), err.offset())
}

/// [`to_py`] for gguf-llama's error (a summary, an estimate): gguf-core's
/// errors inside as [`to_py`] raises them, its own as a [`GGUFError`].
pub(crate) fn llama_to_py(py: Python<'_>, err: gguf_llama::Error) -> PyErr {
    match err {
        gguf_llama::Error::Gguf(e) => to_py(py, e),
        other => to_py_message(py, other.to_string(), other.offset()),
    }
}

/// [`to_py`] for gguf-import's error.
pub(crate) fn import_to_py(py: Python<'_>, err: gguf_import::Error) -> PyErr {
    match err {
        gguf_import::Error::Gguf(e) => to_py(py, e),
        gguf_import::Error::Quantize(e) => llama_to_py(py, e),
        other => to_py_message(py, other.to_string(), other.offset()),
    }
}

/// [`to_py`] for gguf-tokenizer's error.
pub(crate) fn tokenizer_to_py(py: Python<'_>, err: gguf_tokenizer::Error) -> PyErr {
    match err {
        gguf_tokenizer::Error::Gguf(e) => to_py(py, e),
        other => to_py_message(py, other.to_string(), other.offset()),
    }
}

/// A [`GGUFError`] with `message`, and the byte offset the error names
/// as its `offset` attribute.
pub(crate) fn to_py_message(py: Python<'_>, message: String, offset: Option<u64>) -> PyErr {
    let py_err = GGUFError::new_err(message);
    // Setting an attribute on a fresh exception instance cannot fail short
    // of memory exhaustion, which Python reports on its own.
    let _ = py_err.value(py).setattr("offset", offset);
    py_err
}

/// The I/O failure inside `err`, with the file it concerns: a file's own,
/// or that of the shard of a model it happened in.
fn io_cause(err: &gguf::Error) -> Option<(Option<&Path>, &std::io::Error)> {
    match err {
        gguf::Error::Io { path, source } => Some((path.as_deref(), source)),
        gguf::Error::File { path, source } => {
            let (inner, io) = io_cause(source)?;
            Some((inner.or(Some(path.as_path())), io))
        }
        _ => None,
    }
}

/// The name of the `errno` value Python's `OSError` picks its subclass
/// by, for an I/O error the operating system did not number itself (the
/// library's own "is a directory" error, for one).
fn errno_name(kind: std::io::ErrorKind) -> Option<&'static str> {
    use std::io::ErrorKind::*;
    Some(match kind {
        NotFound => "ENOENT",
        PermissionDenied => "EACCES",
        IsADirectory => "EISDIR",
        NotADirectory => "ENOTDIR",
        AlreadyExists => "EEXIST",
        _ => return None,
    })
}

/// `err` as the exception Python raises for the same failure, if it is an
/// I/O failure: `OSError(errno, strerror, filename)`, which Python turns
/// into `FileNotFoundError`, `PermissionError`, `IsADirectoryError`, ...
/// by the errno, as it does for `open()` (and so gguf-py's `GGUFReader`,
/// whose `np.memmap` opens the file). The path is its `filename` and in
/// its message. A shard missing from a split model is a file not found.
fn os_error(py: Python<'_>, err: &gguf::Error) -> Option<PyErr> {
    let errno = |name: &str| -> PyResult<i32> { py.import("errno")?.getattr(name)?.extract() };
    let (number, strerror, path) = match err {
        gguf::Error::Split(SplitError::ShardMissing {
            path, index, count, ..
        }) => (
            errno("ENOENT"),
            format!("shard {index} of {count} of the model is missing"),
            Some(path.as_path()),
        ),
        _ => {
            let (path, io) = io_cause(err)?;
            match io.raw_os_error() {
                Some(n) => {
                    let text = py
                        .import("os")
                        .and_then(|os| os.getattr("strerror")?.call1((n,))?.extract::<String>())
                        .unwrap_or_else(|_| io.to_string());
                    (Ok(n), text, path)
                }
                None => match errno_name(io.kind()) {
                    Some(name) => (errno(name), io.to_string(), path),
                    // No errno to pick a subclass by: OSError with the
                    // library's message (which names the file).
                    None => return Some(PyOSError::new_err(err.to_string())),
                },
            }
        }
    };
    let made = number.and_then(|n| {
        let os_error = py.get_type::<PyOSError>();
        match path {
            Some(p) => os_error.call1((n, strerror, p.as_os_str())),
            None => os_error.call1((n, strerror)),
        }
    });
    Some(match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    })
}

/// A field's parts: offsets, value-type ids and counts (little-endian
/// arrays), and the indices of its data parts.
type Parts<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Vec<u64>,
);

/// A tensor as the Python reader needs it: name, type id, dims, info
/// offset, data offset in the file, byte size, name length in bytes, block
/// size, type size.
type TensorFacts = (String, u32, Vec<u64>, u64, u64, u64, usize, u64, u64);

/// One GGUF file opened by the library, as the Python reader sees it.
#[pyclass(frozen, module = "gguf_rs._native")]
struct NativeFile {
    file: GgufFile<'static>,
}

#[pymethods]
impl NativeFile {
    /// Opens and validates the file at `path` (GIL released while reading).
    #[new]
    fn new(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let file = py
            .detach(|| GgufFile::open(Path::new(&path)))
            .map_err(|e| to_py(py, e))?;
        Ok(NativeFile { file })
    }

    /// `(version, big_endian, alignment or None, header_len, tensor_count, kv_count)`.
    fn header(&self) -> (u32, bool, Option<u64>, u64, usize, usize) {
        let declared = self
            .file
            .value("general.alignment")
            .map(|_| self.file.alignment());
        (
            self.file.version(),
            self.file.endian() == Endian::Big,
            declared,
            self.file.header_len(),
            self.file.tensor_count(),
            self.file.kv_count(),
        )
    }

    /// Width in bytes of lengths and counts (4 in version 1, else 8).
    fn count_width(&self) -> usize {
        self.file.wire_format().count_width()
    }

    /// Every metadata entry in file order: `(key, entry offset, types)`,
    /// `types` as gguf-py lists them (an array's, then its first element's).
    fn fields(&self) -> Vec<(String, u64, Vec<u32>)> {
        self.file
            .metadata()
            .map(|(key, value)| {
                let offset = self.file.entry_range(key).map_or(0, |r| r.start);
                (key.to_owned(), offset, value_types(&value))
            })
            .collect()
    }

    /// The parts of entry `key` as three little-endian arrays (offset u64,
    /// value-type id u8, element count u64) and the indices of its data
    /// parts: what gguf-py's reader builds, computed here in one pass.
    fn field_parts<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Parts<'py>> {
        let value = self
            .file
            .value(key)
            .ok_or_else(|| PyKeyError::new_err(key.to_owned()))?;
        let range = self.file.entry_range(key).unwrap_or(0..0);
        let width = self.file.wire_format().count_width();
        let lay = py.detach(|| field_layout(key, &value, range.start, width));
        let offsets: Vec<u8> = lay.offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
        let counts: Vec<u8> = lay.counts.iter().flat_map(|c| c.to_le_bytes()).collect();
        Ok((
            PyBytes::new(py, &offsets),
            PyBytes::new(py, &lay.codes),
            PyBytes::new(py, &counts),
            lay.data,
        ))
    }

    /// The value of `key` as Python objects: lists for arrays (nested
    /// arrays nested), `str` for strings; for an array, only its elements
    /// `start..stop` when given.
    #[pyo3(signature = (key, start=None, stop=None))]
    fn contents<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        start: Option<usize>,
        stop: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let value = self
            .file
            .value(key)
            .ok_or_else(|| PyKeyError::new_err(key.to_owned()))?;
        match (value.as_array(), start, stop) {
            (Some(array), Some(start), Some(stop)) => {
                let list = PyList::empty(py);
                let count = stop.saturating_sub(start);
                if let Some(strings) = array.strings() {
                    for s in strings.skip(start).take(count) {
                        list.append(s)?;
                    }
                } else {
                    for element in array.iter().skip(start).take(count) {
                        list.append(to_python(py, &element)?)?;
                    }
                }
                Ok(list.into_any())
            }
            _ => to_python(py, &value),
        }
    }

    /// Number of elements of the array `key`.
    fn length(&self, key: &str) -> PyResult<usize> {
        self.file
            .value(key)
            .and_then(|v| v.as_array())
            .map(|a| a.len())
            .ok_or_else(|| PyKeyError::new_err(key.to_owned()))
    }

    /// Element `index` (negative counts from the end) of the array `key`.
    fn element<'py>(&self, py: Python<'py>, key: &str, index: i64) -> PyResult<Bound<'py, PyAny>> {
        let array = self
            .file
            .value(key)
            .and_then(|v| v.as_array())
            .ok_or_else(|| PyKeyError::new_err(key.to_owned()))?;
        let len = array.len() as i64;
        let at = if index < 0 { index + len } else { index };
        if at < 0 || at >= len {
            return Err(PyIndexError::new_err("list index out of range"));
        }
        match array.iter().nth(at as usize) {
            Some(element) => to_python(py, &element),
            None => Err(PyIndexError::new_err("list index out of range")),
        }
    }

    /// Every tensor in file order: `(name, type id, dims, info offset,
    /// data offset in the file, byte size, name length in bytes,
    /// block size, type size)`.
    fn tensors(&self, py: Python<'_>) -> PyResult<Vec<TensorFacts>> {
        self.file
            .tensors()
            .map(|t| {
                let ty = t.ggml_type();
                let size = t.byte_size().map_err(|e| to_py(py, e))?;
                Ok((
                    t.name().to_owned(),
                    ty.id(),
                    t.shape().to_vec(),
                    t.info_offset(),
                    t.file_offset(),
                    size,
                    t.name().len(),
                    ty.block_size().unwrap_or(0),
                    ty.type_size().unwrap_or(0),
                ))
            })
            .collect()
    }
}

/// A metadata value as the Python object gguf-py's `contents()` returns.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match *value {
        Value::U8(v) => v.into_pyobject(py)?.into_any(),
        Value::I8(v) => v.into_pyobject(py)?.into_any(),
        Value::U16(v) => v.into_pyobject(py)?.into_any(),
        Value::I16(v) => v.into_pyobject(py)?.into_any(),
        Value::U32(v) => v.into_pyobject(py)?.into_any(),
        Value::I32(v) => v.into_pyobject(py)?.into_any(),
        Value::U64(v) => v.into_pyobject(py)?.into_any(),
        Value::I64(v) => v.into_pyobject(py)?.into_any(),
        Value::F32(v) => f64::from(v).into_pyobject(py)?.into_any(),
        Value::F64(v) => v.into_pyobject(py)?.into_any(),
        Value::Bool(v) => PyBool::new(py, v).to_owned().into_any(),
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(array) => {
            let list = PyList::empty(py);
            if let Some(strings) = array.strings() {
                for s in strings {
                    list.append(s)?;
                }
            } else {
                for element in array.iter() {
                    list.append(to_python(py, &element)?)?;
                }
            }
            list.into_any()
        }
    })
}

/// The GGML type with id `qtype`, if the library has a codec for `op`.
fn codec_type(qtype: u32, op: &'static str) -> PyResult<GgmlType> {
    let ty = GgmlType::from_id(qtype);
    let supported = match op {
        "dequantize" => codec::can_dequantize(ty),
        _ => codec::can_quantize(ty),
    };
    if !supported {
        return Err(pyo3::exceptions::PyNotImplementedError::new_err(format!(
            "{} for {ty} is not implemented",
            if op == "dequantize" {
                "Dequantization"
            } else {
                "Quantization"
            }
        )));
    }
    Ok(ty)
}

/// `(block size, type size)` of `qtype`, whose `op` ("dequantize" or
/// "quantize") the library must support (else `NotImplementedError`, as
/// gguf-py raises).
#[pyfunction]
fn block_geometry(qtype: u32, op: &str) -> PyResult<(u64, u64)> {
    let ty = codec_type(
        qtype,
        if op == "dequantize" {
            "dequantize"
        } else {
            "quantize"
        },
    )?;
    match (ty.block_size(), ty.type_size()) {
        (Some(b), Some(s)) => Ok((b, s)),
        _ => Err(GGUFError::new_err(format!("{ty} has no block geometry"))),
    }
}

/// Decodes the little-endian blocks `data` (bytes, or a C-contiguous
/// uint8 numpy array read in place) of type `qtype` to f32 on every core,
/// GIL released; numpy makes the result its array without copying.
#[pyfunction]
fn dequantize(py: Python<'_>, data: &Bound<'_, PyAny>, qtype: u32) -> PyResult<F32Buffer> {
    let ty = codec_type(qtype, "dequantize")?;
    let (block, size) = match (ty.block_size(), ty.type_size()) {
        (Some(b), Some(s)) => (b as usize, s as usize),
        _ => return Err(GGUFError::new_err(format!("{ty} has no block geometry"))),
    };
    let input = input_bytes(data)?;
    if !input.len().is_multiple_of(size) {
        return Err(GGUFError::new_err(format!(
            "dequantize: {} bytes of {ty} are not whole {size}-byte blocks",
            input.len()
        )));
    }
    let values = py
        .detach(|| {
            // Zeroed by the allocator (fresh pages for a large vector), so
            // the decoding threads are the first to touch them.
            let mut values = vec![0f32; input.len() / size * block];
            codec::dequantize_par(ty, Endian::Little, input, &mut values).map(|()| values)
        })
        .map_err(|e| to_py(py, e))?;
    Ok(F32Buffer::new(values))
}

/// Encodes the native f32 values `data` (their bytes: `bytes`, or a
/// C-contiguous uint8 numpy array read in place; rows of `row_len`) as
/// `qtype` blocks on every core, GIL released; returns the bytes.
#[pyfunction]
fn quantize<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    row_len: usize,
    qtype: u32,
) -> PyResult<Bound<'py, PyByteArray>> {
    let ty = codec_type(qtype, "quantize")?;
    let (block, size) = match (ty.block_size(), ty.type_size()) {
        (Some(b), Some(s)) => (b as usize, s as usize),
        _ => return Err(GGUFError::new_err(format!("{ty} has no block geometry"))),
    };
    let bytes = input_bytes(data)?;
    let values: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if row_len == 0 || !row_len.is_multiple_of(block) || !values.len().is_multiple_of(row_len) {
        return Err(GGUFError::new_err(format!(
            "quantize: row length {row_len} is not a multiple of {ty}'s block size {block}"
        )));
    }
    let blocks = values.len() / block;
    let mut result: PyResult<()> = Ok(());
    let out = PyByteArray::new_with(py, blocks * size, |out| {
        result = py
            .detach(|| quantize_par(ty, &values, out, block, size))
            .map_err(|e| to_py(py, e));
        Ok(())
    })?;
    result?;
    Ok(out)
}

/// The library's `quantize_into` over chunks of whole blocks on rayon's
/// pool: every quantizer treats blocks independently.
fn quantize_par(
    ty: GgmlType,
    values: &[f32],
    out: &mut [u8],
    block: usize,
    size: usize,
) -> gguf::Result<()> {
    use rayon::prelude::*;
    let blocks_per_task = (16 * 1024 / block).max(1);
    values
        .par_chunks(blocks_per_task * block)
        .zip(out.par_chunks_mut(blocks_per_task * size))
        .try_for_each(|(src, dst)| codec::quantize_into(ty, src, dst))
}

/// The module `gguf_rs._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeFile>()?;
    m.add_class::<F32Buffer>()?;
    m.add_class::<model::PyModel>()?;
    m.add_class::<editor::PyEditor>()?;
    m.add_class::<model_editor::PyModelEditor>()?;
    m.add_class::<builder::PyBuilder>()?;
    m.add_function(wrap_pyfunction!(builder::ggml_type_id, m)?)?;
    m.add_function(wrap_pyfunction!(dequantize, m)?)?;
    m.add_function(wrap_pyfunction!(quantize, m)?)?;
    m.add_function(wrap_pyfunction!(block_geometry, m)?)?;
    m.add_class::<imatrix::PyImatrix>()?;
    m.add_class::<tokenizer::PyTokenizer>()?;
    m.add_function(wrap_pyfunction!(model_quantize::quantize_model, m)?)?;
    m.add_function(wrap_pyfunction!(model_quantize::max_threads, m)?)?;
    m.add_function(wrap_pyfunction!(hf_import::import_hf, m)?)?;
    m.add_function(wrap_pyfunction!(hf_import::import_architectures, m)?)?;
    m.add("GGUFError", m.py().get_type::<GGUFError>())?;
    m.add_class::<writer::PyWriterCore>()?;
    // The package's version is the crate's (maturin takes the wheel's
    // version from Cargo.toml too).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
