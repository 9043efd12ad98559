//! Python values to the library's `OwnedValue`: the type named by the
//! caller (`"u32"`, `"f64"`, ...), else the one the Python type implies
//! (gguf-py's choices: `bool`, `int` as i32 (i64, u64 when it does not
//! fit), `float` as f32, `str`, `list` as an array of its first element's
//! type).

use gguf::format::{OwnedArray, OwnedValue};
use gguf::ValueType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};

/// The value type called `name` (`"u32"`, `"string"`, ...), as a Python
/// `ValueError` when there is none.
pub(crate) fn value_type(name: &str) -> PyResult<ValueType> {
    ValueType::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = ValueType::ALL.iter().map(|t| t.name()).collect();
        PyValueError::new_err(format!(
            "unknown value type {name:?}: expected one of {}",
            names.join(", ")
        ))
    })
}

/// The type a Python value implies when no type is named.
fn implied_type(obj: &Bound<'_, PyAny>) -> PyResult<ValueType> {
    let numpy_bool = obj
        .get_type()
        .name()
        .is_ok_and(|n| n == "bool" || n == "bool_");
    if obj.is_instance_of::<PyBool>() || numpy_bool {
        Ok(ValueType::Bool)
    } else if obj.is_instance_of::<PyInt>()
        || obj.hasattr("__index__")? && !obj.is_instance_of::<PyFloat>()
    {
        if obj.extract::<i32>().is_ok() {
            Ok(ValueType::I32)
        } else if obj.extract::<i64>().is_ok() {
            Ok(ValueType::I64)
        } else {
            Ok(ValueType::U64)
        }
    } else if obj.is_instance_of::<PyFloat>()
        || obj.hasattr("__float__")? && !obj.is_instance_of::<PyString>()
    {
        Ok(ValueType::F32)
    } else if obj.is_instance_of::<PyString>() {
        Ok(ValueType::String)
    } else if is_sequence(obj) {
        Ok(ValueType::Array)
    } else {
        Err(PyTypeError::new_err(format!(
            "cannot store a {} as a GGUF value: use bool, int, float, str or a list of them",
            obj.get_type().name()?
        )))
    }
}

/// A numpy array (of one or more dimensions) as a list, with the value
/// type its dtype names (`uint32` -> u32, ...), if it is one.
fn numpy_array<'py>(
    obj: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyAny>, Option<ValueType>)>> {
    if !(obj.hasattr("dtype")? && obj.hasattr("tolist")? && obj.hasattr("ndim")?) {
        return Ok(None);
    }
    if obj.getattr("ndim")?.extract::<usize>()? == 0 {
        return Ok(None);
    }
    let dtype: String = obj.getattr("dtype")?.getattr("name")?.extract()?;
    let ty = match dtype.as_str() {
        "uint8" => Some(ValueType::U8),
        "int8" => Some(ValueType::I8),
        "uint16" => Some(ValueType::U16),
        "int16" => Some(ValueType::I16),
        "uint32" => Some(ValueType::U32),
        "int32" => Some(ValueType::I32),
        "uint64" => Some(ValueType::U64),
        "int64" => Some(ValueType::I64),
        "float32" => Some(ValueType::F32),
        "float64" => Some(ValueType::F64),
        "bool" => Some(ValueType::Bool),
        _ => None,
    };
    Ok(Some((obj.call_method0("tolist")?, ty)))
}

fn is_sequence(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()
}

/// `obj` as a GGUF value of type `ty` (implied when None). For a list,
/// `ty` names its elements' type (or is `"array"`).
pub(crate) fn to_owned_value(
    obj: &Bound<'_, PyAny>,
    ty: Option<ValueType>,
) -> PyResult<OwnedValue> {
    if let Some((items, dtype_type)) = numpy_array(obj)? {
        let element = ty.filter(|t| *t != ValueType::Array).or(dtype_type);
        return Ok(OwnedValue::Array(to_owned_array(&items, element)?));
    }
    if is_sequence(obj) {
        let element = ty.filter(|t| *t != ValueType::Array);
        return Ok(OwnedValue::Array(to_owned_array(obj, element)?));
    }
    let ty = match ty {
        Some(t) => t,
        None => implied_type(obj)?,
    };
    Ok(match ty {
        ValueType::U8 => OwnedValue::U8(obj.extract()?),
        ValueType::I8 => OwnedValue::I8(obj.extract()?),
        ValueType::U16 => OwnedValue::U16(obj.extract()?),
        ValueType::I16 => OwnedValue::I16(obj.extract()?),
        ValueType::U32 => OwnedValue::U32(obj.extract()?),
        ValueType::I32 => OwnedValue::I32(obj.extract()?),
        ValueType::U64 => OwnedValue::U64(obj.extract()?),
        ValueType::I64 => OwnedValue::I64(obj.extract()?),
        ValueType::F32 => OwnedValue::F32(obj.extract::<f64>()? as f32),
        ValueType::F64 => OwnedValue::F64(obj.extract()?),
        ValueType::Bool => OwnedValue::Bool(obj.extract()?),
        ValueType::String => OwnedValue::String(obj.extract()?),
        ValueType::Array => {
            return Err(PyTypeError::new_err(format!(
                "type 'array' needs a list, got a {}",
                obj.get_type().name()?
            )))
        }
    })
}

/// A list (or tuple) as an array whose elements are of type `element`, or
/// of the type its first element implies (i32 for an empty list).
fn to_owned_array(obj: &Bound<'_, PyAny>, element: Option<ValueType>) -> PyResult<OwnedArray> {
    let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
    let element = match (element, items.first()) {
        (Some(t), _) => t,
        (None, Some(first)) => match implied_type(first)? {
            // Ints: the narrowest of i32, i64, u64 that holds them all.
            ValueType::I32 if items.iter().any(|i| i.extract::<i32>().is_err()) => {
                if items.iter().all(|i| i.extract::<i64>().is_ok()) {
                    ValueType::I64
                } else {
                    ValueType::U64
                }
            }
            other => other,
        },
        (None, None) => ValueType::I32,
    };
    fn all<'py, T: FromPyObjectOwned<'py>>(items: &[Bound<'py, PyAny>]) -> PyResult<Vec<T>> {
        items
            .iter()
            .map(|i| i.extract::<T>().map_err(Into::into))
            .collect()
    }
    Ok(match element {
        ValueType::U8 => OwnedArray::U8(all(&items)?),
        ValueType::I8 => OwnedArray::I8(all(&items)?),
        ValueType::U16 => OwnedArray::U16(all(&items)?),
        ValueType::I16 => OwnedArray::I16(all(&items)?),
        ValueType::U32 => OwnedArray::U32(all(&items)?),
        ValueType::I32 => OwnedArray::I32(all(&items)?),
        ValueType::U64 => OwnedArray::U64(all(&items)?),
        ValueType::I64 => OwnedArray::I64(all(&items)?),
        ValueType::F32 => {
            OwnedArray::F32(all::<f64>(&items)?.into_iter().map(|v| v as f32).collect())
        }
        ValueType::F64 => OwnedArray::F64(all(&items)?),
        ValueType::Bool => OwnedArray::Bool(all(&items)?),
        ValueType::String => OwnedArray::String(all(&items)?),
        ValueType::Array => OwnedArray::Array(
            items
                .iter()
                .map(|i| to_owned_array(i, None))
                .collect::<PyResult<_>>()?,
        ),
    })
}
