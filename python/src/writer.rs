//! `gguf_rs._native.WriterCore`: the state and the writing of
//! `gguf_rs.GGUFWriter` (gguf-py's `GGUFWriter` API) on the library's
//! `write::Builder`. Metadata values arrive with gguf-py's value types and
//! are checked as gguf-py's packing would check them, but when added;
//! tensors are declared first and their bytes come at write time, one
//! tensor at a time, either pulled from a Python callback (`write`) or
//! pushed by the caller (`start_stream` + `push`) to a thread writing the
//! files.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use gguf::format::{tensor_nbytes, OwnedArray, OwnedValue};
use gguf::write::{replace_file, Builder, ShardPlan, SplitOptions, WriteOptions};
use gguf::{Endian, GgmlType};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyFloat, PyInt, PyList, PySequence, PyString};

use crate::buffer::input_bytes;
use crate::{to_py, GGUFError};

// gguf-py's GGUFValueType ids (the file format's).
const UINT8: u32 = 0;
const INT8: u32 = 1;
const UINT16: u32 = 2;
const INT16: u32 = 3;
const UINT32: u32 = 4;
const INT32: u32 = 5;
const FLOAT32: u32 = 6;
const BOOL: u32 = 7;
const STRING: u32 = 8;
const ARRAY: u32 = 9;
const UINT64: u32 = 10;
const INT64: u32 = 11;
const FLOAT64: u32 = 12;

/// A `GGUFError` (offset None) with `message`.
fn refuse(py: Python<'_>, message: String) -> PyErr {
    let err = GGUFError::new_err(message);
    let _ = err.value(py).setattr("offset", py.None());
    err
}

/// gguf-py's `GGUFValueType.get_type`: the element type an array's items
/// imply (a `list` nests, a `tuple` does not; `bool` before `int`).
fn implied_type(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    if obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyBytes>()
        || obj.is_instance_of::<PyByteArray>()
    {
        Ok(STRING)
    } else if obj.is_instance_of::<PyList>() {
        Ok(ARRAY)
    } else if obj.is_instance_of::<PyFloat>() {
        Ok(FLOAT32)
    } else if obj.is_instance_of::<PyBool>() {
        Ok(BOOL)
    } else if obj.is_instance_of::<PyInt>() {
        Ok(INT32)
    } else {
        Err(PyValueError::new_err(format!(
            "Unknown type: {}",
            obj.get_type().repr()?
        )))
    }
}

/// An integer of type `T`, as `struct.pack` takes it (anything with
/// `__index__`), or an error naming the type.
fn int<'py, T: FromPyObjectOwned<'py>>(obj: &Bound<'py, PyAny>, ty: &str) -> PyResult<T> {
    obj.extract::<T>().map_err(|_| {
        refuse(
            obj.py(),
            format!(
                "{} is not a {ty}",
                obj.repr().map(|r| r.to_string()).unwrap_or_default()
            ),
        )
    })
}

/// A float rounded to f32 as `struct.pack('f')` rounds it, which refuses
/// finite values beyond f32's range rather than storing infinity.
fn float32(obj: &Bound<'_, PyAny>) -> PyResult<f32> {
    let v = float64(obj)?;
    let f = v as f32;
    if f.is_infinite() && v.is_finite() {
        return Err(refuse(obj.py(), format!("{v} is out of f32's range")));
    }
    Ok(f)
}

fn float64(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    obj.extract::<f64>().map_err(|_| {
        refuse(
            obj.py(),
            format!(
                "{} is not a float",
                obj.repr().map(|r| r.to_string()).unwrap_or_default()
            ),
        )
    })
}

/// A `str` as UTF-8, or `bytes` that already are: the library stores
/// strings as Rust strings, so other bytes are refused.
fn string(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str()?.to_owned());
    }
    let bytes: Vec<u8> = if let Ok(b) = obj.cast::<PyBytes>() {
        b.as_bytes().to_vec()
    } else if let Ok(b) = obj.cast::<PyByteArray>() {
        b.to_vec()
    } else {
        return Err(refuse(
            obj.py(),
            format!(
                "a string value must be str or bytes, got {}",
                obj.get_type().repr()?
            ),
        ));
    };
    String::from_utf8(bytes)
        .map_err(|e| refuse(obj.py(), format!("string bytes are not UTF-8: {e}")))
}

/// `obj` as a value of gguf-py type id `ty` (arrays with `sub_type` or
/// their items' implied type).
fn value(obj: &Bound<'_, PyAny>, ty: u32, sub_type: Option<u32>) -> PyResult<OwnedValue> {
    Ok(match ty {
        UINT8 => OwnedValue::U8(int(obj, "u8")?),
        INT8 => OwnedValue::I8(int(obj, "i8")?),
        UINT16 => OwnedValue::U16(int(obj, "u16")?),
        INT16 => OwnedValue::I16(int(obj, "i16")?),
        UINT32 => OwnedValue::U32(int(obj, "u32")?),
        INT32 => OwnedValue::I32(int(obj, "i32")?),
        UINT64 => OwnedValue::U64(int(obj, "u64")?),
        INT64 => OwnedValue::I64(int(obj, "i64")?),
        FLOAT32 => OwnedValue::F32(float32(obj)?),
        FLOAT64 => OwnedValue::F64(float64(obj)?),
        BOOL => OwnedValue::Bool(obj.is_truthy()?),
        STRING => OwnedValue::String(string(obj)?),
        ARRAY => OwnedValue::Array(array(obj, sub_type)?),
        other => {
            return Err(PyValueError::new_err(format!(
                "Invalid GGUF metadata value type {other}"
            )))
        }
    })
}

/// An array as gguf-py packs one: a non-empty sequence, `bytes` as u8.
fn array(obj: &Bound<'_, PyAny>, sub_type: Option<u32>) -> PyResult<OwnedArray> {
    let Ok(seq) = obj.cast::<PySequence>() else {
        return Err(PyValueError::new_err(
            "Invalid GGUF metadata array, expecting sequence",
        ));
    };
    if seq.len()? == 0 {
        return Err(PyValueError::new_err(
            "Invalid GGUF metadata array. Empty array",
        ));
    }
    let items: Vec<Bound<'_, PyAny>> = seq.try_iter()?.collect::<PyResult<_>>()?;
    let ty = match sub_type {
        Some(t) => t,
        None if obj.is_instance_of::<PyBytes>() => UINT8,
        None => {
            let t = implied_type(&items[0])?;
            for item in &items[1..] {
                if implied_type(item)? != t {
                    return Err(PyValueError::new_err(
                        "All items in a GGUF array should be of the same type",
                    ));
                }
            }
            t
        }
    };
    fn all<'py, T>(
        items: &[Bound<'py, PyAny>],
        f: impl Fn(&Bound<'py, PyAny>) -> PyResult<T>,
    ) -> PyResult<Vec<T>> {
        items.iter().map(f).collect()
    }
    Ok(match ty {
        UINT8 => OwnedArray::U8(all(&items, |i| int(i, "u8"))?),
        INT8 => OwnedArray::I8(all(&items, |i| int(i, "i8"))?),
        UINT16 => OwnedArray::U16(all(&items, |i| int(i, "u16"))?),
        INT16 => OwnedArray::I16(all(&items, |i| int(i, "i16"))?),
        UINT32 => OwnedArray::U32(all(&items, |i| int(i, "u32"))?),
        INT32 => OwnedArray::I32(all(&items, |i| int(i, "i32"))?),
        UINT64 => OwnedArray::U64(all(&items, |i| int(i, "u64"))?),
        INT64 => OwnedArray::I64(all(&items, |i| int(i, "i64"))?),
        FLOAT32 => OwnedArray::F32(all(&items, float32)?),
        FLOAT64 => OwnedArray::F64(all(&items, float64)?),
        BOOL => OwnedArray::Bool(all(&items, |i| i.is_truthy())?),
        STRING => OwnedArray::String(all(&items, string)?),
        ARRAY => OwnedArray::Array(all(&items, |i| array(i, None))?),
        other => {
            return Err(PyValueError::new_err(format!(
                "Invalid GGUF metadata array element type {other}"
            )))
        }
    })
}

/// An array's items as a Python list, and gguf-py's id of their type.
fn py_array<'py>(py: Python<'py>, a: &OwnedArray) -> PyResult<(Bound<'py, PyAny>, u32)> {
    fn list<'py, T: IntoPyObject<'py> + Clone>(
        py: Python<'py>,
        items: &[T],
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, items.iter().cloned())?.into_any())
    }
    Ok(match a {
        OwnedArray::U8(v) => (list(py, v)?, UINT8),
        OwnedArray::I8(v) => (list(py, v)?, INT8),
        OwnedArray::U16(v) => (list(py, v)?, UINT16),
        OwnedArray::I16(v) => (list(py, v)?, INT16),
        OwnedArray::U32(v) => (list(py, v)?, UINT32),
        OwnedArray::I32(v) => (list(py, v)?, INT32),
        OwnedArray::U64(v) => (list(py, v)?, UINT64),
        OwnedArray::I64(v) => (list(py, v)?, INT64),
        OwnedArray::F32(v) => (list(py, v)?, FLOAT32),
        OwnedArray::F64(v) => (list(py, v)?, FLOAT64),
        OwnedArray::Bool(v) => (list(py, v)?, BOOL),
        OwnedArray::String(v) => (list(py, v)?, STRING),
        OwnedArray::Array(v) => {
            let items = v
                .iter()
                .map(|a| py_array(py, a).map(|(l, _)| l))
                .collect::<PyResult<Vec<_>>>()?;
            (PyList::new(py, items)?.into_any(), ARRAY)
        }
    })
}

/// A value as gguf-py's `GGUFValue` holds it: the Python value, its type
/// id and, for an array, its items' type id.
fn py_value<'py>(
    py: Python<'py>,
    v: &OwnedValue,
) -> PyResult<(Bound<'py, PyAny>, u32, Option<u32>)> {
    let scalar = |o: Bound<'py, PyAny>, t: u32| Ok((o, t, None));
    match v {
        OwnedValue::U8(x) => scalar(x.into_pyobject(py)?.into_any(), UINT8),
        OwnedValue::I8(x) => scalar(x.into_pyobject(py)?.into_any(), INT8),
        OwnedValue::U16(x) => scalar(x.into_pyobject(py)?.into_any(), UINT16),
        OwnedValue::I16(x) => scalar(x.into_pyobject(py)?.into_any(), INT16),
        OwnedValue::U32(x) => scalar(x.into_pyobject(py)?.into_any(), UINT32),
        OwnedValue::I32(x) => scalar(x.into_pyobject(py)?.into_any(), INT32),
        OwnedValue::U64(x) => scalar(x.into_pyobject(py)?.into_any(), UINT64),
        OwnedValue::I64(x) => scalar(x.into_pyobject(py)?.into_any(), INT64),
        OwnedValue::F32(x) => scalar(x.into_pyobject(py)?.into_any(), FLOAT32),
        OwnedValue::F64(x) => scalar(x.into_pyobject(py)?.into_any(), FLOAT64),
        OwnedValue::Bool(x) => scalar(x.into_pyobject(py)?.to_owned().into_any(), BOOL),
        OwnedValue::String(x) => scalar(x.into_pyobject(py)?.into_any(), STRING),
        OwnedValue::Array(a) => {
            let (list, sub) = py_array(py, a)?;
            Ok((list, ARRAY, Some(sub)))
        }
    }
}

/// A tensor as `plan` lists it: name, GGML type id, ggml dims, bytes.
type TensorRow = (String, u32, Vec<u64>, u64);

/// A declared tensor.
struct Declared {
    name: String,
    ty: GgmlType,
    dims: Vec<u64>,
    nbytes: u64,
}

/// A write fed by `push`: the thread writing the files, and the channel
/// each tensor's bytes go through (one tensor in flight at most).
struct Stream {
    tx: Option<SyncSender<Vec<u8>>>,
    handle: JoinHandle<(Builder<'static>, gguf::Result<Vec<ShardPlan>>)>,
    next: usize,
}

/// The files of a `GGUFWriter`: metadata and tensor declarations in the
/// library's builder, written as one file or as shards by gguf-py's rules.
#[pyclass(unsendable, module = "gguf_rs._native", name = "WriterCore")]
pub(crate) struct PyWriterCore {
    /// None only while a stream's thread holds it.
    builder: Option<Builder<'static>>,
    tensors: Vec<Declared>,
    stream: Option<Stream>,
}

fn options(max_tensors: usize, max_size: u64, small_first: bool) -> SplitOptions {
    SplitOptions::default()
        .max_tensors(max_tensors)
        .max_size(max_size)
        .metadata_only_first(small_first)
}

impl PyWriterCore {
    fn builder(&mut self, py: Python<'_>) -> PyResult<&mut Builder<'static>> {
        self.builder
            .as_mut()
            .ok_or_else(|| refuse(py, "the writer is busy writing its files".into()))
    }

    /// Gives every declared tensor, in order, the data `source(i)` writes.
    fn bind(
        &mut self,
        py: Python<'_>,
        mut source: impl FnMut(usize, &Declared) -> gguf::write::WriteFn<'static>,
    ) -> PyResult<()> {
        let builder = self
            .builder
            .as_mut()
            .ok_or_else(|| refuse(py, "the writer is busy writing its files".into()))?;
        for (i, t) in self.tensors.iter().enumerate() {
            // Removed and added again, in order: the order is unchanged.
            builder.remove_tensor(&t.name).map_err(|e| to_py(py, e))?;
            builder
                .add_tensor_fn(t.name.clone(), t.ty, &t.dims, source(i, t))
                .map_err(|e| to_py(py, e))?;
        }
        Ok(())
    }

    /// Drops the data sources `bind` gave (the Python objects they hold).
    fn unbind(&mut self) {
        if let Some(builder) = self.builder.as_mut() {
            for t in &self.tensors {
                // Cannot fail: the same declarations were accepted before.
                let _ = builder.remove_tensor(&t.name);
                let _ = builder.add_tensor_info(t.name.clone(), t.ty, &t.dims);
            }
        }
    }
}

/// The first Python error a data callback raised, kept to be raised
/// instead of the I/O error the library reports for it.
type Failure = Arc<Mutex<Option<PyErr>>>;

fn keep(failure: &Failure, err: PyErr) -> std::io::Error {
    if let Ok(mut slot) = failure.lock() {
        slot.get_or_insert(err);
    }
    std::io::Error::other("a tensor's data callback failed")
}

#[pymethods]
impl PyWriterCore {
    #[new]
    fn new(big_endian: bool) -> Self {
        let mut builder = Builder::new();
        builder.endian(if big_endian {
            Endian::Big
        } else {
            Endian::Little
        });
        // gguf-py writes names of any length; llama.cpp's limit is its own.
        builder.allow_long_tensor_names(true);
        PyWriterCore {
            builder: Some(builder),
            tensors: Vec::new(),
            stream: None,
        }
    }

    /// Sets `key` to `value` of gguf-py value type id `vtype` (arrays:
    /// items of `sub_type`, else implied as gguf-py implies them); an
    /// existing key keeps its place. Returns whether the key existed.
    #[pyo3(signature = (key, value, vtype, sub_type=None))]
    fn set(
        &mut self,
        py: Python<'_>,
        key: String,
        value: &Bound<'_, PyAny>,
        vtype: u32,
        sub_type: Option<u32>,
    ) -> PyResult<bool> {
        let v = self::value(value, vtype, sub_type).map_err(|e| {
            let msg = format!("key {key:?}: {}", e.value(py));
            if e.is_instance_of::<GGUFError>(py) {
                refuse(py, msg)
            } else {
                e
            }
        })?;
        let builder = self.builder(py)?;
        let existed = builder.value(&key).is_some();
        builder.set(key, v).map_err(|e| to_py(py, e))?;
        Ok(existed)
    }

    /// Every entry in order: `(key, value, vtype, sub_type)`, gguf-py's
    /// `GGUFValue` fields.
    #[allow(clippy::type_complexity)]
    fn items<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Vec<(String, Bound<'py, PyAny>, u32, Option<u32>)>> {
        let Some(builder) = self.builder.as_ref() else {
            return Err(refuse(py, "the writer is busy writing its files".into()));
        };
        builder
            .keys()
            .filter_map(|k| builder.value(k).map(|v| (k, v.to_owned_value())))
            .map(|(k, v)| {
                let (value, ty, sub) = py_value(py, &v)?;
                Ok((k.to_owned(), value, ty, sub))
            })
            .collect()
    }

    /// Whether `key` is set.
    fn has_key(&self, key: &str) -> bool {
        self.builder
            .as_ref()
            .is_some_and(|b| b.value(key).is_some())
    }

    /// The data alignment the files will have (`general.alignment`, or 32).
    fn alignment(&self) -> u64 {
        self.builder.as_ref().map_or(32, Builder::current_alignment)
    }

    /// Declares tensor `name` of GGML type id `qtype` and ggml dims `dims`
    /// (innermost first), whose data is `nbytes` long; refused when
    /// `nbytes` is not the size type and dims give.
    fn add_tensor(
        &mut self,
        py: Python<'_>,
        name: String,
        qtype: u32,
        dims: Vec<u64>,
        nbytes: u64,
    ) -> PyResult<()> {
        let ty = GgmlType::from_id(qtype);
        self.builder(py)?
            .add_tensor_info(name.clone(), ty, &dims)
            .map_err(|e| to_py(py, e))?;
        let expected = tensor_nbytes(ty, &dims).unwrap_or(u64::MAX);
        if expected != nbytes {
            let _ = self.builder(py)?.remove_tensor(&name);
            return Err(refuse(
                py,
                format!(
                    "tensor {name:?}: {nbytes} bytes given, but {ty} of shape {dims:?} is {expected} bytes"
                ),
            ));
        }
        self.tensors.push(Declared {
            name,
            ty,
            dims,
            nbytes,
        });
        Ok(())
    }

    /// The files a write to `path` makes: `(path, [(name, qtype, dims,
    /// nbytes), ...])` for each, by gguf-py's split rules.
    fn plan(
        &self,
        py: Python<'_>,
        path: PathBuf,
        max_tensors: usize,
        max_size: u64,
        small_first: bool,
    ) -> PyResult<Vec<(PathBuf, Vec<TensorRow>)>> {
        let builder = self
            .builder
            .as_ref()
            .ok_or_else(|| refuse(py, "the writer is busy writing its files".into()))?;
        let plan = builder
            .plan_split(&path, &options(max_tensors, max_size, small_first))
            .map_err(|e| to_py(py, e))?;
        Ok(plan
            .into_iter()
            .map(|shard| {
                let tensors = self.tensors[shard.tensors.clone()]
                    .iter()
                    .map(|t| (t.name.clone(), t.ty.id(), t.dims.clone(), t.nbytes))
                    .collect();
                (shard.path, tensors)
            })
            .collect())
    }

    /// Writes the files, each tensor's bytes as `data(name)` returns them
    /// (bytes, or a C-contiguous uint8 array) when its turn comes, then
    /// `done(name)`; files appear only once all are complete. Returns
    /// their paths.
    #[pyo3(signature = (path, max_tensors, max_size, small_first, data, done=None))]
    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        py: Python<'_>,
        path: PathBuf,
        max_tensors: usize,
        max_size: u64,
        small_first: bool,
        data: Py<PyAny>,
        done: Option<Py<PyAny>>,
    ) -> PyResult<Vec<PathBuf>> {
        let failure: Failure = Arc::default();
        self.bind(py, |_, t| {
            let (name, nbytes) = (t.name.clone(), t.nbytes);
            let (data, done) = (data.clone_ref(py), done.as_ref().map(|d| d.clone_ref(py)));
            let failure = failure.clone();
            Box::new(move |w: &mut dyn Write| {
                Python::attach(|py| {
                    let obj = data
                        .bind(py)
                        .call1((name.as_str(),))
                        .map_err(|e| keep(&failure, e))?;
                    let bytes = input_bytes(&obj).map_err(|e| keep(&failure, e))?;
                    if bytes.len() as u64 != nbytes {
                        let msg = format!(
                            "tensor {name:?}: its data is {} bytes, {nbytes} were declared",
                            bytes.len()
                        );
                        return Err(keep(&failure, refuse(py, msg)));
                    }
                    w.write_all(bytes)?;
                    if let Some(done) = &done {
                        done.bind(py)
                            .call1((name.as_str(),))
                            .map_err(|e| keep(&failure, e))?;
                    }
                    Ok(())
                })
            })
        })?;
        let opts = options(max_tensors, max_size, small_first);
        let builder = self.builder(py)?;
        let written = py.detach(|| builder.write_split_with(&path, &opts, WriteOptions::new()));
        self.unbind();
        if let Some(err) = failure.lock().ok().and_then(|mut f| f.take()) {
            return Err(err);
        }
        let plan = written.map_err(|e| to_py(py, e))?;
        Ok(plan.into_iter().map(|s| s.path).collect())
    }

    /// Writes `path` with metadata and no tensor, unpadded, as gguf-py
    /// leaves a file closed before any tensor data (a vocabulary-only
    /// model).
    fn write_metadata_only(&mut self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        if let Some(t) = self.tensors.first() {
            return Err(refuse(
                py,
                format!(
                    "tensor {:?} was declared but its data never written",
                    t.name
                ),
            ));
        }
        let builder = self.builder(py)?;
        py.detach(|| {
            replace_file(&path, |file| {
                let mut out = std::io::BufWriter::new(&mut *file);
                let layout = builder.write(&mut out)?;
                out.flush()?;
                drop(out);
                file.set_len(layout.header_len)?;
                Ok(())
            })
        })
        .map_err(|e| to_py(py, e))
    }

    /// Starts writing the files on a thread, each tensor's bytes to be
    /// given in order by `push`.
    fn start_stream(
        &mut self,
        py: Python<'_>,
        path: PathBuf,
        max_tensors: usize,
        max_size: u64,
        small_first: bool,
    ) -> PyResult<()> {
        if self.stream.is_some() {
            return Err(refuse(py, "the writer is already writing".into()));
        }
        let (tx, rx) = sync_channel::<Vec<u8>>(1);
        // Emptied by the thread when it ends, so that a push after a failed
        // write fails instead of waiting for a reader that is gone.
        let rx: Arc<Mutex<Option<Receiver<Vec<u8>>>>> = Arc::new(Mutex::new(Some(rx)));
        let rx_end = rx.clone();
        self.bind(py, |_, t| {
            let rx = rx.clone();
            let name = t.name.clone();
            Box::new(move |w: &mut dyn Write| {
                let bytes = rx
                    .lock()
                    .map_err(|_| std::io::Error::other("the data channel is broken"))?
                    .as_ref()
                    .ok_or_else(|| std::io::Error::other("the data channel is closed"))?
                    .recv()
                    .map_err(|_| {
                        std::io::Error::other(format!(
                            "the writer was closed before tensor {name:?}'s data was written"
                        ))
                    })?;
                w.write_all(&bytes)
            })
        })?;
        let mut builder = self
            .builder
            .take()
            .ok_or_else(|| refuse(py, "the writer is busy writing its files".into()))?;
        let opts = options(max_tensors, max_size, small_first);
        let handle = std::thread::spawn(move || {
            let written = builder.write_split_with(&path, &opts, WriteOptions::new());
            if let Ok(mut rx) = rx_end.lock() {
                *rx = None;
            }
            (builder, written)
        });
        self.stream = Some(Stream {
            tx: Some(tx),
            handle,
            next: 0,
        });
        Ok(())
    }

    /// Gives the next tensor's bytes to the stream; after the last one,
    /// waits for the files to be complete.
    fn push(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let Some(stream) = self.stream.as_mut() else {
            return Err(refuse(py, "no write in progress".into()));
        };
        let Some(t) = self.tensors.get(stream.next) else {
            return Err(refuse(py, "every tensor's data was already written".into()));
        };
        let bytes = input_bytes(data)?;
        if bytes.len() as u64 != t.nbytes {
            return Err(refuse(
                py,
                format!(
                    "tensor {:?}: its data is {} bytes, {} were declared",
                    t.name,
                    bytes.len(),
                    t.nbytes
                ),
            ));
        }
        let bytes = bytes.to_vec();
        stream.next += 1;
        let last = stream.next == self.tensors.len();
        let sent = match &stream.tx {
            Some(tx) => py.detach(|| tx.send(bytes).is_ok()),
            None => false,
        };
        if !sent || last {
            return self.finish(py);
        }
        Ok(())
    }

    /// Ends the stream: waits for the thread and reports its error (a
    /// tensor never given is one: no file is then written).
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(mut stream) = self.stream.take() else {
            return Ok(());
        };
        stream.tx = None;
        let joined = py.detach(|| stream.handle.join());
        let Ok((builder, written)) = joined else {
            return Err(refuse(py, "the writing thread panicked".into()));
        };
        self.builder = Some(builder);
        self.unbind();
        if let Some(t) = self.tensors.get(stream.next) {
            // The library's error is the I/O error of the channel closed
            // before that tensor: say what the caller left out instead.
            return Err(refuse(
                py,
                format!(
                    "the writer was closed before tensor {:?}'s data was written (write_tensor_data): no file was written",
                    t.name
                ),
            ));
        }
        written.map(|_| ()).map_err(|e| to_py(py, e))
    }

    /// Whether a stream is being written.
    fn streaming(&self) -> bool {
        self.stream.is_some()
    }
}
