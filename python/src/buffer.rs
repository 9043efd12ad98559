//! Moving bulk numbers between numpy and the library without copying them:
//! the abi3 API of Python 3.10 has no buffer protocol, but numpy's array
//! interface (`__array_interface__`, a plain Python dict) works both ways.
//!
//! - In: the bytes of a C-contiguous uint8 ndarray, read where numpy keeps
//!   them (a tensor's `data` is a view of the file's memory map), instead
//!   of a `tobytes()` copy.
//! - Out: a `Vec<f32>` the library fills, handed to numpy as the memory of
//!   the array it makes (`np.asarray(buffer)`), instead of a zero-filled
//!   `bytearray` written over: the vector is allocated zeroed by the
//!   allocator (fresh pages, no serial memset), so its pages are first
//!   touched by the decoding threads, in parallel.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

/// f32 values owned by Rust, shown to numpy through `__array_interface__`;
/// numpy keeps this object alive as the base of the array it builds.
#[pyclass(frozen, module = "gguf_rs._native")]
pub(crate) struct F32Buffer {
    /// Its elements are never touched here after `new` (only its length
    /// is read): numpy owns their use, through `address`.
    values: Vec<f32>,
    /// `values.as_mut_ptr()`, taken once: a pointer numpy may write
    /// through (one from `as_ptr` is for reading only), valid while
    /// `values` lives unmoved in this object.
    address: usize,
}

impl F32Buffer {
    pub(crate) fn new(mut values: Vec<f32>) -> Self {
        let address = values.as_mut_ptr() as usize;
        F32Buffer { values, address }
    }
}

#[pymethods]
impl F32Buffer {
    /// numpy's array interface (version 3): a read-write, 1-D, native f32
    /// array over the vector.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", (self.values.len(),))?;
        let typestr = if cfg!(target_endian = "little") {
            "<f4"
        } else {
            ">f4"
        };
        d.set_item("typestr", typestr)?;
        // numpy writes through it only where Python code writes into the
        // array, which is then the array's own memory (this object is its
        // base and outlives it).
        d.set_item("data", (self.address, false))?;
        Ok(d)
    }

    /// Number of values.
    fn __len__(&self) -> usize {
        self.values.len()
    }
}

/// The bytes of `data`: a `bytes` object, or a C-contiguous numpy array of
/// uint8, read in place. The slice lives as long as the borrow of `data`,
/// which keeps the array (and whatever holds its memory) alive.
pub(crate) fn input_bytes<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(bytes.as_bytes());
    }
    let py = data.py();
    let ndarray = py.import("numpy")?.getattr("ndarray")?;
    if !data.is_instance(&ndarray)? {
        return Err(PyTypeError::new_err(
            "expected bytes or a numpy array of uint8",
        ));
    }
    // Asked of ndarray's own descriptor, not the object's class, so that
    // a subclass cannot substitute another address.
    let interface = ndarray
        .getattr("__array_interface__")?
        .call_method1("__get__", (data,))?;
    let interface = interface.cast::<PyDict>()?;
    let item = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        interface
            .get_item(key)?
            .ok_or_else(|| PyTypeError::new_err(format!("array interface without {key:?}")))
    };
    let typestr: String = item("typestr")?.extract()?;
    let contiguous = interface.get_item("strides")?.is_none_or(|s| s.is_none());
    if typestr != "|u1" || !contiguous {
        return Err(PyTypeError::new_err(format!(
            "expected a C-contiguous uint8 array, got typestr {typestr:?}{}",
            if contiguous { "" } else { " with strides" }
        )));
    }
    let shape: Vec<usize> = item("shape")?.extract()?;
    let len = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| PyTypeError::new_err("array shape overflows"))?;
    let (address, _read_only): (usize, bool) = item("data")?.cast::<PyTuple>()?.extract()?;
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: numpy's own array interface for `data`, a C-contiguous uint8
    // ndarray (checked above), says its `len` bytes start at `address`.
    // numpy never frees nor moves an array's memory while the array is
    // referenced, and the returned slice borrows `data`, a reference held
    // by the caller for the slice's whole life. Python code in another
    // thread writing into that array while it is decoded with the GIL
    // released is the caveat numpy's own GIL-free loops share (as another
    // program writing a mapped file is every mmap reader's).
    Ok(unsafe { std::slice::from_raw_parts(address as *const u8, len) })
}
