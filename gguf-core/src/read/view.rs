//! [`Gguf`]: the one read-side view of a model's header, whatever holds it.

use crate::error::{Error, LookupError, Result};
use crate::format::{
    ArrayView, Endian, Scalar, StrIter, TypedIter, Value, ValueType, WireFormat, ARCH_KEY,
};

use super::{GgufFile, Tensor};

pub(crate) mod sealed {
    /// Closes [`Gguf`](super::Gguf) to the crate's own views.
    pub trait Sealed {}
}

impl sealed::Sealed for GgufFile<'_> {}

/// What every GGUF header shows: metadata in file order and tensor infos,
/// with the same getters and the same errors for a single file
/// ([`GgufFile`]), a model split into shards ([`Model`](crate::Model)) or
/// a remote model (its `GgufFile` or `Model`), so one function inspects
/// them all.
///
/// A type implements the few required methods (counts, entry and tensor by
/// position, value and tensor position by name); the getters are provided
/// and behave identically everywhere. A [`Model`](crate::Model) shows the
/// model's metadata: the `split.*` keys that each shard carries are not
/// part of it (`model.shards()` shows each file as it is).
///
/// [`write::Builder`](crate::write::Builder) and
/// [`edit::Editor`](crate::edit::Editor) do not implement it themselves: a
/// value here borrows its encoded bytes ([`ArrayView`]) and a [`Tensor`]
/// its file, while a builder holds owned values and tensors that are in no
/// file yet. Their `preview()` ([`Builder::preview`](crate::write::Builder::preview),
/// [`Editor::preview`](crate::edit::Editor::preview)) is the header they
/// would write, read back as a header-only [`GgufFile`], which does.
///
/// Sealed: only this crate's views ([`GgufFile`] and
/// [`Model`](crate::Model)) implement it. A view hands out [`Tensor`]s and
/// [`Value`]s that borrow a file's bytes, which only a `GgufFile` holds, so
/// an outside implementation could only wrap one of these; and the
/// provided getters rely on what the required methods promise (positions
/// and names that agree, lookups in O(1)). Sealing keeps both ours to
/// change: a new required method, or a provided one made required, is not
/// a breaking change for users, who call the trait and take `impl Gguf`.
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// use gguf_core::{Gguf, GgufFile};
///
/// /// Works on a file, a split model, a remote model...
/// fn describe(model: &impl Gguf) -> String {
///     let arch = model.architecture().unwrap_or("?");
///     let params: u64 = model.tensors().map(|t| t.element_count()).sum();
///     format!("{arch}: {} keys, {params} parameters", model.kv_count())
/// }
///
/// let file = GgufFile::open(&bytes)?;
/// assert_eq!(describe(&file), "llama: 4 keys, 48 parameters");
/// # Ok(()) }
/// ```
pub trait Gguf: sealed::Sealed {
    // ---- required ----

    /// Version and byte order of the file (of the first file of a split
    /// model).
    fn wire_format(&self) -> WireFormat;

    /// Number of metadata entries.
    fn kv_count(&self) -> usize;

    /// The metadata entry at position `index` in file order, or `None`
    /// past the end.
    fn entry_at(&self, index: usize) -> Option<(&str, Value<'_>)>;

    /// The value of `key`, or `None` when absent. O(1).
    fn value(&self, key: &str) -> Option<Value<'_>>;

    /// Number of tensors.
    fn tensor_count(&self) -> usize;

    /// The tensor at position `index` in file (info) order, or `None` past
    /// the end.
    fn tensor_at(&self, index: usize) -> Option<Tensor<'_>>;

    /// Position of the tensor named `name` in file order, or `None`. O(1).
    fn tensor_index(&self, name: &str) -> Option<usize>;

    // ---- provided: format ----

    /// GGUF version: 1, 2 or 3.
    fn version(&self) -> u32 {
        self.wire_format().version
    }

    /// Byte order of the file.
    fn endian(&self) -> Endian {
        self.wire_format().endian
    }

    // ---- provided: metadata ----

    /// Metadata entries in file order.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::Gguf;
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let (first_key, first_value) = file.metadata().next().unwrap();
    /// assert_eq!(first_key, "general.architecture");
    /// assert_eq!(first_value.as_str(), Some("llama"));
    /// # Ok(()) }
    /// ```
    fn metadata(&self) -> impl ExactSizeIterator<Item = (&str, Value<'_>)> + '_ {
        Entries {
            view: self,
            next: 0,
            end: self.kv_count(),
        }
    }

    /// Metadata keys in file order.
    fn keys(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.metadata().map(|(k, _)| k)
    }

    /// True when the key is present.
    fn contains_key(&self, key: &str) -> bool {
        self.value(key).is_some()
    }

    /// The value of `key`, or [`LookupError::KeyNotFound`].
    fn require(&self, key: &str) -> Result<Value<'_>> {
        self.value(key)
            .ok_or_else(|| Error::Lookup(LookupError::KeyNotFound { key: key.into() }))
    }

    /// The value type of `key`.
    fn value_type(&self, key: &str) -> Option<ValueType> {
        self.value(key).map(|v| v.value_type())
    }

    /// A scalar of exactly type `T`; errors name the key and both types.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::Gguf;
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// assert_eq!(file.get::<u32>("llama.context_length")?, 4096);
    /// let err = file.get::<u64>("llama.context_length").unwrap_err();
    /// assert!(err.to_string().contains("has type u32, expected u64"));
    /// # Ok(()) }
    /// ```
    fn get<T: Scalar>(&self, key: &str) -> Result<T> {
        let v = self.require(key)?;
        T::from_value(&v).ok_or_else(|| mismatch(key, T::TYPE.name().into(), &v))
    }

    /// A string value.
    fn get_str(&self, key: &str) -> Result<&str> {
        let v = self.require(key)?;
        v.as_str().ok_or_else(|| mismatch(key, "string".into(), &v))
    }

    /// An array value of any element type.
    fn get_array(&self, key: &str) -> Result<ArrayView<'_>> {
        let v = self.require(key)?;
        v.as_array()
            .ok_or_else(|| mismatch(key, "array".into(), &v))
    }

    /// An array of strings, as a lazy iterator of `&str`.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::Gguf;
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let tokens: Vec<&str> = file.get_strings("tokenizer.ggml.tokens")?.collect();
    /// assert_eq!(tokens.len(), 4);
    /// # Ok(()) }
    /// ```
    fn get_strings(&self, key: &str) -> Result<StrIter<'_>> {
        let a = self.get_array(key)?;
        a.strings().ok_or_else(|| array_mismatch(key, "string", &a))
    }

    /// An array of scalars of exactly type `T`, as a lazy iterator.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::Gguf;
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let scores: Vec<f32> = file.get_array_of::<f32>("tokenizer.ggml.scores")?.collect();
    /// assert_eq!(scores.len(), 4);
    /// let err = file.get_array_of::<u32>("tokenizer.ggml.scores").unwrap_err();
    /// assert!(err.to_string().contains("expected array of u32"));
    /// # Ok(()) }
    /// ```
    fn get_array_of<T: Scalar>(&self, key: &str) -> Result<TypedIter<'_, T>> {
        let a = self.get_array(key)?;
        a.typed::<T>()
            .ok_or_else(|| array_mismatch(key, T::TYPE.name(), &a))
    }

    /// `general.architecture` (`llama`, `gemma3`, ...): the prefix of the
    /// model's hyper-parameter keys.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::Gguf;
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// assert_eq!(file.architecture()?, "llama");
    /// # Ok(()) }
    /// ```
    fn architecture(&self) -> Result<&str> {
        self.get_str(ARCH_KEY)
    }

    // ---- provided: tensors ----

    /// Tensors in file (info) order; a split model's in shard order.
    fn tensors(&self) -> impl ExactSizeIterator<Item = Tensor<'_>> + '_ {
        Tensors {
            view: self,
            next: 0,
            end: self.tensor_count(),
        }
    }

    /// The tensor named `name`, or [`LookupError::TensorNotFound`]. O(1).
    fn tensor(&self, name: &str) -> Result<Tensor<'_>> {
        self.tensor_index(name)
            .and_then(|i| self.tensor_at(i))
            .ok_or_else(|| {
                Error::Lookup(LookupError::TensorNotFound {
                    tensor: name.into(),
                })
            })
    }

    /// Every tensor with the index of the file that holds it (always 0
    /// but for a split [`Model`](crate::Model)); a tensor's
    /// [`file_offset`](Tensor::file_offset) is an offset in that file.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::Gguf;
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// assert!(file.tensors_with_shard().all(|(shard, _)| shard == 0));
    /// # Ok(()) }
    /// ```
    fn tensors_with_shard(&self) -> impl Iterator<Item = (usize, Tensor<'_>)> + '_ {
        self.tensors().map(|t| (0, t))
    }
}

/// Metadata entries by position: exact-size without trusting more than
/// [`Gguf::entry_at`] answers.
struct Entries<'g, G: ?Sized> {
    view: &'g G,
    next: usize,
    end: usize,
}

impl<'g, G: Gguf + ?Sized> Iterator for Entries<'g, G> {
    type Item = (&'g str, Value<'g>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let entry = self.view.entry_at(self.next);
        self.next = if entry.is_some() {
            self.next + 1
        } else {
            self.end
        };
        entry
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl<G: Gguf + ?Sized> ExactSizeIterator for Entries<'_, G> {}

/// Tensors by position (as [`Entries`]).
struct Tensors<'g, G: ?Sized> {
    view: &'g G,
    next: usize,
    end: usize,
}

impl<'g, G: Gguf + ?Sized> Iterator for Tensors<'g, G> {
    type Item = Tensor<'g>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let t = self.view.tensor_at(self.next);
        self.next = if t.is_some() { self.next + 1 } else { self.end };
        t
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl<G: Gguf + ?Sized> ExactSizeIterator for Tensors<'_, G> {}

fn mismatch(key: &str, expected: String, found: &Value<'_>) -> Error {
    let found = match found {
        Value::Array(a) => format!("array of {}", a.element_type()),
        v => v.value_type().name().into(),
    };
    Error::Lookup(LookupError::TypeMismatch {
        key: key.into(),
        expected,
        found,
    })
}

fn array_mismatch(key: &str, expected: &str, found: &ArrayView<'_>) -> Error {
    Error::Lookup(LookupError::TypeMismatch {
        key: key.into(),
        expected: format!("array of {expected}"),
        found: format!("array of {}", found.element_type()),
    })
}

impl Gguf for GgufFile<'_> {
    fn wire_format(&self) -> WireFormat {
        self.ctx
    }

    fn kv_count(&self) -> usize {
        self.kvs.len()
    }

    fn entry_at(&self, index: usize) -> Option<(&str, Value<'_>)> {
        self.kvs
            .get_index(index)
            .map(|(k, e)| (&**k, self.decode(e)))
    }

    fn value(&self, key: &str) -> Option<Value<'_>> {
        self.kvs.get(key).map(|e| self.decode(e))
    }

    fn tensor_count(&self) -> usize {
        self.tensors.len()
    }

    fn tensor_at(&self, index: usize) -> Option<Tensor<'_>> {
        self.tensors
            .get_index(index)
            .map(|(n, e)| Tensor::new(self, n, e))
    }

    fn tensor_index(&self, name: &str) -> Option<usize> {
        self.tensors.get_index_of(name)
    }

    // Overridden for speed: no decoding.
    fn keys(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.kvs.keys().map(|k| &**k)
    }

    fn contains_key(&self, key: &str) -> bool {
        self.kvs.contains_key(key)
    }

    fn value_type(&self, key: &str) -> Option<ValueType> {
        self.kvs.get(key).map(|e| e.value_type)
    }
}
