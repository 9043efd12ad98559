//! The keys being built, with the semantics of gguf-py's `GGUFWriter`:
//! setting a key again replaces its value where it first stood (a Python
//! dict), and an empty array is not written at all (`add_array`).

use gguf_core::format::{OwnedArray, OwnedValue};
use gguf_core::write::MetaValue;

#[derive(Debug, Default)]
pub(super) struct Keys {
    entries: Vec<(String, OwnedValue)>,
}

impl Keys {
    /// `add_key_value`: a new key goes last, a known one keeps its place.
    pub(super) fn set(&mut self, key: &str, value: impl Into<OwnedValue>) {
        let value = value.into();
        if let OwnedValue::Array(a) = &value
            && a.is_empty()
        {
            return;
        }
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.entries.push((key.to_owned(), value)),
        }
    }

    /// An array of strings.
    pub(super) fn set_strings(&mut self, key: &str, values: Vec<String>) {
        self.set(key, OwnedValue::Array(OwnedArray::String(values)));
    }

    pub(super) fn into_vec(self) -> Vec<(String, MetaValue<'static>)> {
        self.entries
            .into_iter()
            .map(|(k, v)| (k, MetaValue::Owned(v)))
            .collect()
    }
}
