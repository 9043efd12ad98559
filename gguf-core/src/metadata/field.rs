//! [`MetaField`]: how one struct field is read from and written to one entry.

use crate::error::{Error, LookupError, Result};
use crate::format::{ArrayView, Scalar, ValueType};
use crate::format::{OwnedArray, OwnedValue};
use crate::read::Gguf;

/// The value of one metadata entry, as a field of a `#[derive(Metadata)]`
/// struct.
///
/// Implemented for `u8`..`u64`, `i8`..`i64`, `f32`, `f64`, `bool`,
/// `String`, `Vec<T>` of any [`MetaElem`] (arrays, nested arrays as
/// `Vec<Vec<T>>`) and `Option<T>` (an absent key reads as `None`; `None`
/// is not written). Implement it for your own types to store them in
/// metadata.
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// use gguf_core::{metadata::MetaField, format::OwnedValue, GgufFile};
/// let file = GgufFile::open(&bytes)?;
/// assert_eq!(u32::read(&file, "llama.context_length")?, 4096);
/// assert_eq!(Option::<u32>::read(&file, "no.such.key")?, None);
/// assert!(u64::read(&file, "llama.context_length").is_err());
/// assert_eq!(7u32.write(), Some(OwnedValue::U32(7)));
/// assert_eq!(None::<u32>.write(), None);
/// # Ok(()) }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a metadata field",
    label = "not a metadata value type",
    note = "use a number, bool, String, Vec<T> of those, or Option<T>; or implement `MetaField`"
)]
pub trait MetaField: Sized {
    /// Reads the entry `key`: [`LookupError::KeyNotFound`] when it is absent
    /// (unless the type is an `Option`), [`LookupError::TypeMismatch`] when it
    /// has another type.
    fn read(file: &(impl Gguf + ?Sized), key: &str) -> Result<Self>;

    /// The value to write, or `None` to write no entry.
    fn write(&self) -> Option<OwnedValue>;
}

/// An element of an array field (`Vec<T>`): a scalar, a string, or an
/// array itself.
///
/// ```
/// use gguf_core::metadata::MetaElem;
/// assert_eq!(<u32 as MetaElem>::type_name(), "u32");
/// assert_eq!(<Vec<String> as MetaElem>::type_name(), "array of string");
/// ```
pub trait MetaElem: Sized {
    /// The element type name used in error messages ("u32", "array of string").
    fn type_name() -> String;

    /// Decodes every element of `array`, or `None` when the element type
    /// (at any depth) is not this one.
    fn read_array(array: &ArrayView<'_>) -> Option<Vec<Self>>;

    /// Encodes elements as an owned array.
    fn to_array(items: &[Self]) -> OwnedArray;
}

macro_rules! scalar_field {
    ($($ty:ty => $variant:ident),*) => {$(
        impl MetaField for $ty {
            fn read(file: &(impl Gguf + ?Sized), key: &str) -> Result<Self> {
                file.get::<$ty>(key)
            }
            fn write(&self) -> Option<OwnedValue> {
                Some(OwnedValue::$variant(*self))
            }
        }
        impl MetaElem for $ty {
            fn type_name() -> String {
                <$ty as Scalar>::TYPE.name().into()
            }
            fn read_array(array: &ArrayView<'_>) -> Option<Vec<Self>> {
                array.typed::<$ty>().map(Iterator::collect)
            }
            fn to_array(items: &[Self]) -> OwnedArray {
                OwnedArray::$variant(items.to_vec())
            }
        }
    )*};
}

scalar_field!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32,
    u64 => U64, i64 => I64, f32 => F32, f64 => F64, bool => Bool);

impl MetaField for String {
    fn read(file: &(impl Gguf + ?Sized), key: &str) -> Result<Self> {
        file.get_str(key).map(String::from)
    }
    fn write(&self) -> Option<OwnedValue> {
        Some(OwnedValue::String(self.clone()))
    }
}

impl MetaElem for String {
    fn type_name() -> String {
        "string".into()
    }
    fn read_array(array: &ArrayView<'_>) -> Option<Vec<Self>> {
        array.strings().map(|it| it.map(String::from).collect())
    }
    fn to_array(items: &[Self]) -> OwnedArray {
        OwnedArray::String(items.to_vec())
    }
}

impl<T: MetaElem> MetaElem for Vec<T> {
    fn type_name() -> String {
        format!("array of {}", T::type_name())
    }
    fn read_array(array: &ArrayView<'_>) -> Option<Vec<Self>> {
        if array.element_type() != ValueType::Array {
            return None;
        }
        array
            .iter()
            .map(|v| v.as_array().and_then(|inner| T::read_array(&inner)))
            .collect()
    }
    fn to_array(items: &[Self]) -> OwnedArray {
        OwnedArray::Array(items.iter().map(|v| T::to_array(v)).collect())
    }
}

impl<T: MetaElem> MetaField for Vec<T> {
    fn read(file: &(impl Gguf + ?Sized), key: &str) -> Result<Self> {
        let expected = || format!("array of {}", T::type_name());
        let value = file.require(key)?;
        let Some(array) = value.as_array() else {
            return Err(Error::Lookup(LookupError::TypeMismatch {
                key: key.into(),
                expected: expected(),
                found: value.value_type().name().into(),
            }));
        };
        T::read_array(&array).ok_or_else(|| {
            Error::Lookup(LookupError::TypeMismatch {
                key: key.into(),
                expected: expected(),
                found: describe(&array),
            })
        })
    }
    fn write(&self) -> Option<OwnedValue> {
        Some(OwnedValue::Array(T::to_array(self)))
    }
}

impl<T: MetaField> MetaField for Option<T> {
    fn read(file: &(impl Gguf + ?Sized), key: &str) -> Result<Self> {
        if file.contains_key(key) {
            T::read(file, key).map(Some)
        } else {
            Ok(None)
        }
    }
    fn write(&self) -> Option<OwnedValue> {
        self.as_ref().and_then(T::write)
    }
}

/// "array of array of u32": the type of an array, looking into the first
/// element of nested arrays (the one a mismatch is most likely found in).
fn describe(array: &ArrayView<'_>) -> String {
    let inner = match array.element_type() {
        ValueType::Array => match array.iter().next().and_then(|v| v.as_array()) {
            Some(first) => describe(&first),
            None => "array".into(),
        },
        t => t.name().into(),
    };
    format!("array of {inner}")
}
