//! Metadata values on the write side: owned, or borrowed from an open file.

use crate::format::{OwnedValue, Value, ValueType};

/// A value the builder will write: owned, or borrowed from an open file
/// (copied byte for byte when the output has the same version and byte
/// order, re-encoded otherwise).
#[derive(Debug, Clone, PartialEq)]
pub enum MetaValue<'a> {
    /// Built by the caller.
    Owned(OwnedValue),
    /// Borrowed from an open [`GgufFile`](crate::GgufFile).
    Borrowed(Value<'a>),
}

impl MetaValue<'_> {
    /// The type tag.
    pub fn value_type(&self) -> ValueType {
        match self {
            MetaValue::Owned(v) => v.value_type(),
            MetaValue::Borrowed(v) => v.value_type(),
        }
    }

    /// The value as an owned copy.
    pub fn to_owned_value(&self) -> OwnedValue {
        match self {
            MetaValue::Owned(v) => v.clone(),
            MetaValue::Borrowed(v) => OwnedValue::from_value(v),
        }
    }

    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            MetaValue::Owned(OwnedValue::String(s)) => Some(s),
            MetaValue::Borrowed(Value::String(s)) => Some(s),
            _ => None,
        }
    }
}

impl<T: Into<OwnedValue>> From<T> for MetaValue<'_> {
    fn from(v: T) -> Self {
        MetaValue::Owned(v.into())
    }
}

impl<'a> From<Value<'a>> for MetaValue<'a> {
    fn from(v: Value<'a>) -> Self {
        MetaValue::Borrowed(v)
    }
}
