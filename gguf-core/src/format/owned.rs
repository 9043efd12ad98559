//! Owned metadata values, built by callers to be written, beside the
//! borrowed [`Value`] the reader hands out.

use crate::format::{ArrayView, Value, ValueType};

/// An owned metadata value, built by the caller.
///
/// Conversions exist from every scalar type, `&str`/`String`, and vectors
/// of them, so `builder.set(key, 4096u32)` or `builder.set(key, vec!["a", "b"])`
/// work directly.
///
/// ```
/// use gguf_core::format::{OwnedArray, OwnedValue};
/// assert_eq!(OwnedValue::from(7u32), OwnedValue::U32(7));
/// assert_eq!(OwnedValue::from(vec![1.0f32]), OwnedValue::Array(OwnedArray::F32(vec![1.0])));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum OwnedValue {
    /// `u8`
    U8(u8),
    /// `i8`
    I8(i8),
    /// `u16`
    U16(u16),
    /// `i16`
    I16(i16),
    /// `u32`
    U32(u32),
    /// `i32`
    I32(i32),
    /// `f32`
    F32(f32),
    /// `bool`
    Bool(bool),
    /// UTF-8 string.
    String(String),
    /// Array of one element type.
    Array(OwnedArray),
    /// `u64`
    U64(u64),
    /// `i64`
    I64(i64),
    /// `f64`
    F64(f64),
}

/// An owned array: one vector per element type, so an array is always
/// homogeneous and an empty array keeps its element type. Nested arrays
/// may hold inner arrays of different element types, as the format allows.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum OwnedArray {
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    I16(Vec<i16>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    F32(Vec<f32>),
    Bool(Vec<bool>),
    String(Vec<String>),
    Array(Vec<OwnedArray>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
}

impl OwnedArray {
    /// Type of the elements.
    pub fn element_type(&self) -> ValueType {
        match self {
            OwnedArray::U8(_) => ValueType::U8,
            OwnedArray::I8(_) => ValueType::I8,
            OwnedArray::U16(_) => ValueType::U16,
            OwnedArray::I16(_) => ValueType::I16,
            OwnedArray::U32(_) => ValueType::U32,
            OwnedArray::I32(_) => ValueType::I32,
            OwnedArray::F32(_) => ValueType::F32,
            OwnedArray::Bool(_) => ValueType::Bool,
            OwnedArray::String(_) => ValueType::String,
            OwnedArray::Array(_) => ValueType::Array,
            OwnedArray::U64(_) => ValueType::U64,
            OwnedArray::I64(_) => ValueType::I64,
            OwnedArray::F64(_) => ValueType::F64,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            OwnedArray::U8(v) => v.len(),
            OwnedArray::I8(v) => v.len(),
            OwnedArray::U16(v) => v.len(),
            OwnedArray::I16(v) => v.len(),
            OwnedArray::U32(v) => v.len(),
            OwnedArray::I32(v) => v.len(),
            OwnedArray::F32(v) => v.len(),
            OwnedArray::Bool(v) => v.len(),
            OwnedArray::String(v) => v.len(),
            OwnedArray::Array(v) => v.len(),
            OwnedArray::U64(v) => v.len(),
            OwnedArray::I64(v) => v.len(),
            OwnedArray::F64(v) => v.len(),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl OwnedValue {
    /// The type tag.
    pub fn value_type(&self) -> ValueType {
        match self {
            OwnedValue::U8(_) => ValueType::U8,
            OwnedValue::I8(_) => ValueType::I8,
            OwnedValue::U16(_) => ValueType::U16,
            OwnedValue::I16(_) => ValueType::I16,
            OwnedValue::U32(_) => ValueType::U32,
            OwnedValue::I32(_) => ValueType::I32,
            OwnedValue::F32(_) => ValueType::F32,
            OwnedValue::Bool(_) => ValueType::Bool,
            OwnedValue::String(_) => ValueType::String,
            OwnedValue::Array(_) => ValueType::Array,
            OwnedValue::U64(_) => ValueType::U64,
            OwnedValue::I64(_) => ValueType::I64,
            OwnedValue::F64(_) => ValueType::F64,
        }
    }

    /// The value as a borrowed [`Value`], for every type but arrays (a
    /// [`Value::Array`] views encoded bytes, which an owned array is not).
    ///
    /// ```
    /// use gguf_core::{format::OwnedValue, Value};
    /// assert_eq!(OwnedValue::from("llama").as_value(), Some(Value::String("llama")));
    /// assert_eq!(OwnedValue::from(vec![1u8]).as_value(), None);
    /// ```
    pub fn as_value(&self) -> Option<Value<'_>> {
        Some(match *self {
            OwnedValue::U8(x) => Value::U8(x),
            OwnedValue::I8(x) => Value::I8(x),
            OwnedValue::U16(x) => Value::U16(x),
            OwnedValue::I16(x) => Value::I16(x),
            OwnedValue::U32(x) => Value::U32(x),
            OwnedValue::I32(x) => Value::I32(x),
            OwnedValue::F32(x) => Value::F32(x),
            OwnedValue::Bool(x) => Value::Bool(x),
            OwnedValue::String(ref s) => Value::String(s),
            OwnedValue::U64(x) => Value::U64(x),
            OwnedValue::I64(x) => Value::I64(x),
            OwnedValue::F64(x) => Value::F64(x),
            OwnedValue::Array(_) => return None,
        })
    }

    /// Copies a borrowed value into an owned one (arrays decoded).
    pub fn from_value(v: &Value<'_>) -> Self {
        match *v {
            Value::U8(x) => OwnedValue::U8(x),
            Value::I8(x) => OwnedValue::I8(x),
            Value::U16(x) => OwnedValue::U16(x),
            Value::I16(x) => OwnedValue::I16(x),
            Value::U32(x) => OwnedValue::U32(x),
            Value::I32(x) => OwnedValue::I32(x),
            Value::F32(x) => OwnedValue::F32(x),
            Value::Bool(x) => OwnedValue::Bool(x),
            Value::String(s) => OwnedValue::String(s.into()),
            Value::U64(x) => OwnedValue::U64(x),
            Value::I64(x) => OwnedValue::I64(x),
            Value::F64(x) => OwnedValue::F64(x),
            Value::Array(a) => OwnedValue::Array(owned_array(&a)),
        }
    }
}

fn owned_array(a: &ArrayView<'_>) -> OwnedArray {
    macro_rules! typed {
        ($variant:ident) => {
            OwnedArray::$variant(a.typed().map(|it| it.collect()).unwrap_or_default())
        };
    }
    match a.element_type() {
        ValueType::U8 => typed!(U8),
        ValueType::I8 => typed!(I8),
        ValueType::U16 => typed!(U16),
        ValueType::I16 => typed!(I16),
        ValueType::U32 => typed!(U32),
        ValueType::I32 => typed!(I32),
        ValueType::F32 => typed!(F32),
        ValueType::Bool => typed!(Bool),
        ValueType::U64 => typed!(U64),
        ValueType::I64 => typed!(I64),
        ValueType::F64 => typed!(F64),
        ValueType::String => OwnedArray::String(
            a.strings()
                .map(|it| it.map(String::from).collect())
                .unwrap_or_default(),
        ),
        ValueType::Array => OwnedArray::Array(
            a.iter()
                .filter_map(|v| v.as_array())
                .map(|inner| owned_array(&inner))
                .collect(),
        ),
    }
}

macro_rules! from_scalar {
    ($($ty:ty => $variant:ident),*) => {$(
        impl From<$ty> for OwnedValue {
            fn from(v: $ty) -> Self { OwnedValue::$variant(v) }
        }
        impl From<Vec<$ty>> for OwnedValue {
            fn from(v: Vec<$ty>) -> Self { OwnedValue::Array(OwnedArray::$variant(v)) }
        }
        impl From<&[$ty]> for OwnedValue {
            fn from(v: &[$ty]) -> Self { OwnedValue::Array(OwnedArray::$variant(v.to_vec())) }
        }
        impl From<Vec<$ty>> for OwnedArray {
            fn from(v: Vec<$ty>) -> Self { OwnedArray::$variant(v) }
        }
    )*};
}

from_scalar!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32, bool => Bool, u64 => U64, i64 => I64, f64 => F64, String => String);

impl From<&str> for OwnedValue {
    fn from(v: &str) -> Self {
        OwnedValue::String(v.into())
    }
}

impl From<Vec<&str>> for OwnedValue {
    fn from(v: Vec<&str>) -> Self {
        OwnedValue::Array(OwnedArray::String(
            v.into_iter().map(String::from).collect(),
        ))
    }
}

impl From<&[&str]> for OwnedValue {
    fn from(v: &[&str]) -> Self {
        OwnedValue::Array(OwnedArray::String(
            v.iter().map(|s| String::from(*s)).collect(),
        ))
    }
}

impl From<OwnedArray> for OwnedValue {
    fn from(v: OwnedArray) -> Self {
        OwnedValue::Array(v)
    }
}

impl From<Vec<OwnedArray>> for OwnedValue {
    fn from(v: Vec<OwnedArray>) -> Self {
        OwnedValue::Array(OwnedArray::Array(v))
    }
}
