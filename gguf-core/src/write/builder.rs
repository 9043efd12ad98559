//! [`Builder`]: metadata and tensors in, a GGUF file out.

use std::io::Write;

use indexmap::IndexMap;

use crate::error::{BuildError, CodecError, Error, FormatError, LookupError, Result};
use crate::format::layout::{tensor_nbytes, SizeError};
use crate::format::OwnedValue;
use crate::format::{
    Endian, GgmlType, Scalar, TensorElement, Value, WireFormat, ALIGNMENT_KEY, DEFAULT_ALIGNMENT,
    MAX_DIMS, MAX_TENSOR_NAME,
};
use crate::read::Gguf;
use crate::read::GgufFile;
use crate::write::encode::{value_len, Encoder};
use crate::write::layout::Layout;
use crate::write::source::TensorData;
use crate::write::value::MetaValue;

/// A scalar or string value as a borrowed [`Value`]; `None` for arrays
/// built by the caller.
fn scalar_or_str<'v>(v: &'v MetaValue<'_>) -> Option<Value<'v>> {
    let o = match v {
        MetaValue::Borrowed(v) => return Some(*v),
        MetaValue::Owned(o) => o,
    };
    Some(match o {
        OwnedValue::U8(x) => Value::U8(*x),
        OwnedValue::I8(x) => Value::I8(*x),
        OwnedValue::U16(x) => Value::U16(*x),
        OwnedValue::I16(x) => Value::I16(*x),
        OwnedValue::U32(x) => Value::U32(*x),
        OwnedValue::I32(x) => Value::I32(*x),
        OwnedValue::U64(x) => Value::U64(*x),
        OwnedValue::I64(x) => Value::I64(*x),
        OwnedValue::F32(x) => Value::F32(*x),
        OwnedValue::F64(x) => Value::F64(*x),
        OwnedValue::Bool(x) => Value::Bool(*x),
        OwnedValue::String(x) => Value::String(x),
        OwnedValue::Array(_) => return None,
    })
}

/// A typed getter met another type.
fn type_mismatch(key: &str, expected: &str, found: &MetaValue<'_>) -> Error {
    let found = match found {
        MetaValue::Borrowed(Value::Array(a)) => format!("array of {}", a.element_type()),
        MetaValue::Owned(OwnedValue::Array(a)) => format!("array of {}", a.element_type()),
        v => v.value_type().name().into(),
    };
    Error::Lookup(LookupError::TypeMismatch {
        key: key.into(),
        expected: expected.into(),
        found,
    })
}

/// Checks a source tensor can be decoded to `f32`.
fn check_decodable(t: &crate::read::Tensor<'_>) -> Result<()> {
    t.byte_size()?;
    if !crate::codec::can_dequantize(t.ggml_type()) {
        return Err(Error::Codec(CodecError::TensorCodec {
            tensor: t.name().into(),
            source: Box::new(Error::Codec(CodecError::UnsupportedType {
                ty: t.ggml_type(),
                operation: "dequantize",
            })),
        }));
    }
    Ok(())
}

/// A tensor waiting to be written.
#[derive(Debug)]
pub(crate) struct PendingTensor<'a> {
    pub ty: GgmlType,
    pub shape: Vec<u64>,
    pub nbytes: u64,
    pub data: TensorData<'a>,
}

/// Collects metadata and tensors, then writes a GGUF file in the canonical
/// layout (KVs and tensor infos in insertion order, every tensor padded to
/// the alignment), the same bytes llama.cpp and gguf-py write.
///
/// ```
/// use gguf_core::Gguf;
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::{write::Builder, GgmlType, GgufFile};
/// let weights = vec![0.5f32; 64];
/// let mut b = Builder::new();
/// b.set("general.architecture", "llama")?;
/// b.set("llama.context_length", 4096u32)?;
/// b.set("tokenizer.ggml.tokens", vec!["<s>", "</s>"])?;
/// b.add_tensor_typed("output.weight", &[16, 4], &weights[..])?;
///
/// let mut bytes = Vec::new();
/// b.write(&mut bytes)?;
/// let file = GgufFile::open(&bytes)?;
/// assert_eq!(file.get::<u32>("llama.context_length")?, 4096);
/// assert_eq!(file.tensor("output.weight")?.as_slice::<f32>()?, &weights[..]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Builder<'a> {
    pub(crate) ctx: WireFormat,
    pub(crate) kvs: IndexMap<String, MetaValue<'a>>,
    pub(crate) tensors: IndexMap<String, PendingTensor<'a>>,
    allow_long_names: bool,
}

impl Default for Builder<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Builder<'a> {
    /// An empty builder for a version 3, little-endian file with alignment 32.
    pub fn new() -> Self {
        Builder {
            ctx: WireFormat::default(),
            kvs: IndexMap::new(),
            tensors: IndexMap::new(),
            allow_long_names: false,
        }
    }

    /// A builder holding everything of `file`: version, byte order, every
    /// metadata entry (borrowed, in order, with its type) and every tensor
    /// (data borrowed from the file, never copied into memory). Writing it
    /// unchanged reproduces a canonically laid out file byte for byte.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::{write::Builder, GgufFile};
    /// let file = GgufFile::open(&bytes)?;
    /// let mut out = Vec::new();
    /// Builder::from_file(&file)?.write(&mut out)?;
    /// assert_eq!(out, bytes);
    /// # Ok(()) }
    /// ```
    pub fn from_file(file: &'a GgufFile<'a>) -> Result<Self> {
        let mut b = Builder::new();
        b.ctx = file.wire_format();
        b.allow_long_names = true;
        for (key, value) in file.metadata() {
            b.kvs.insert(key.to_owned(), MetaValue::Borrowed(value));
        }
        for t in file.tensors() {
            let nbytes = t.byte_size()?;
            b.tensors.insert(
                t.name().to_owned(),
                PendingTensor {
                    ty: t.ggml_type(),
                    shape: t.shape().to_vec(),
                    nbytes,
                    data: TensorData::File(t),
                },
            );
        }
        Ok(b)
    }

    // ---- options ----

    /// Sets the GGUF version (1, 2 or 3; 3 by default).
    pub fn version(&mut self, version: u32) -> Result<&mut Self> {
        if !(1..=3).contains(&version) {
            return Err(Error::Format(FormatError::UnsupportedVersion { version }));
        }
        self.ctx.version = version;
        Ok(self)
    }

    /// Sets the byte order (little-endian by default).
    pub fn endian(&mut self, endian: Endian) -> &mut Self {
        self.ctx.endian = endian;
        self
    }

    /// Sets the data alignment, a power of two. Anything but 32 is stored
    /// as `general.alignment`; 32 removes that key, as it is the default.
    pub fn alignment(&mut self, alignment: u32) -> Result<&mut Self> {
        if alignment == DEFAULT_ALIGNMENT as u32 {
            self.kvs.shift_remove(ALIGNMENT_KEY);
            return Ok(self);
        }
        self.set(ALIGNMENT_KEY, alignment)
    }

    /// Accepts tensor names of 64 bytes or more, which llama.cpp refuses.
    pub fn allow_long_tensor_names(&mut self, allow: bool) -> &mut Self {
        self.allow_long_names = allow;
        self
    }

    /// Version and byte order of the output.
    pub fn wire_format(&self) -> WireFormat {
        self.ctx
    }

    /// The data alignment the output will have.
    pub fn current_alignment(&self) -> u64 {
        match self.kvs.get(ALIGNMENT_KEY).map(MetaValue::to_owned_value) {
            Some(OwnedValue::U32(a)) => a.into(),
            _ => DEFAULT_ALIGNMENT,
        }
    }

    // ---- metadata ----

    /// Sets a metadata value. A new key goes last; an existing key keeps
    /// its position and takes the new value (and type).
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// let mut b = gguf_core::write::Builder::new();
    /// b.set("a", 1u8)?.set("b", "two")?.set("a", 3.0f64)?;
    /// assert_eq!(b.keys().collect::<Vec<_>>(), ["a", "b"]);
    /// assert!(b.set("", 1u8).is_err());
    /// # Ok(()) }
    /// ```
    pub fn set(
        &mut self,
        key: impl Into<String>,
        value: impl Into<MetaValue<'a>>,
    ) -> Result<&mut Self> {
        let key = key.into();
        let value = value.into();
        if key.is_empty() {
            return Err(Error::Build(BuildError::InvalidKey {
                key,
                reason: "keys must not be empty",
            }));
        }
        if key == ALIGNMENT_KEY {
            match value.to_owned_value() {
                OwnedValue::U32(a) if a.is_power_of_two() => {}
                OwnedValue::U32(a) => {
                    return Err(Error::Format(FormatError::InvalidAlignment {
                        offset: 0,
                        alignment: a.into(),
                    }))
                }
                other => {
                    return Err(Error::Format(FormatError::AlignmentType {
                        offset: 0,
                        found: other.value_type(),
                    }))
                }
            }
        }
        match self.kvs.get_mut(&key) {
            Some(slot) => *slot = value,
            None => {
                self.kvs.insert(key, value);
            }
        }
        Ok(self)
    }

    /// Removes a key; later keys move up. An absent key is
    /// [`LookupError::KeyNotFound`] (test with [`value`](Self::value) first when
    /// absence is fine).
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// let mut b = gguf_core::write::Builder::new();
    /// b.set("a", 1u8)?.set("b", 2u8)?.remove("a")?;
    /// assert_eq!(b.keys().collect::<Vec<_>>(), ["b"]);
    /// assert!(b.remove("a").is_err());
    /// # Ok(()) }
    /// ```
    pub fn remove(&mut self, key: &str) -> Result<&mut Self> {
        match self.kvs.shift_remove(key) {
            Some(_) => Ok(self),
            None => Err(Error::Lookup(LookupError::KeyNotFound { key: key.into() })),
        }
    }

    /// Renames a key in place (same position, same value).
    pub fn rename_key(&mut self, old: &str, new: impl Into<String>) -> Result<&mut Self> {
        let new = new.into();
        if new.is_empty() {
            return Err(Error::Build(BuildError::InvalidKey {
                key: new,
                reason: "keys must not be empty",
            }));
        }
        if self.kvs.contains_key(&new) {
            return Err(Error::Build(BuildError::InvalidKey {
                key: new,
                reason: "a key of that name already exists",
            }));
        }
        let Some(index) = self.kvs.get_index_of(old) else {
            return Err(Error::Lookup(LookupError::KeyNotFound { key: old.into() }));
        };
        let (_, value) = self
            .kvs
            .shift_remove_index(index)
            .ok_or_else(|| Error::Lookup(LookupError::KeyNotFound { key: old.into() }))?;
        self.kvs.shift_insert(index, new, value);
        Ok(self)
    }

    /// The value of `key`, or `None` when absent (as
    /// [`Gguf::value`](crate::Gguf::value)).
    pub fn value(&self, key: &str) -> Option<&MetaValue<'a>> {
        self.kvs.get(key)
    }

    /// A scalar of exactly type `T`; errors name the key and both types
    /// (as [`Gguf::get`](crate::Gguf::get)).
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// let mut b = gguf_core::write::Builder::new();
    /// b.set("llama.context_length", 4096u32)?;
    /// assert_eq!(b.get::<u32>("llama.context_length")?, 4096);
    /// assert!(b.get::<u64>("llama.context_length").is_err());
    /// assert!(b.get::<u32>("llama.block_count").is_err());
    /// # Ok(()) }
    /// ```
    pub fn get<T: Scalar>(&self, key: &str) -> Result<T> {
        let v = self.require(key)?;
        scalar_or_str(v)
            .and_then(|x| T::from_value(&x))
            .ok_or_else(|| type_mismatch(key, T::TYPE.name(), v))
    }

    /// A string value (as [`Gguf::get_str`](crate::Gguf::get_str)).
    pub fn get_str(&self, key: &str) -> Result<&str> {
        let v = self.require(key)?;
        v.as_str().ok_or_else(|| type_mismatch(key, "string", v))
    }

    fn require(&self, key: &str) -> Result<&MetaValue<'a>> {
        self.kvs
            .get(key)
            .ok_or_else(|| Error::Lookup(LookupError::KeyNotFound { key: key.into() }))
    }

    /// Keys in write order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.kvs.keys().map(String::as_str)
    }

    // ---- tensors ----

    /// Adds a tensor of type `ty` and shape `shape` (innermost dimension
    /// first, as ggml orders them) with its data from any [`TensorData`]
    /// source: bytes, a borrowed slice, typed numbers, a tensor of another
    /// file, or a closure.
    pub fn add_tensor(
        &mut self,
        name: impl Into<String>,
        ty: GgmlType,
        shape: &[u64],
        data: impl Into<TensorData<'a>>,
    ) -> Result<&mut Self> {
        let name = name.into();
        let data = data.into();
        let nbytes = self.check_tensor(&name, ty, shape)?;
        let supplied = match &data {
            TensorData::Bytes(b) => Some(b.len() as u64),
            TensorData::Native { bytes, .. } => Some(bytes.len() as u64),
            TensorData::File(t) => Some(t.byte_size()?),
            TensorData::Quantize(src) => {
                self.check_encoding(&name, ty, shape, src.len() as u64)?;
                None
            }
            TensorData::Requantize(t) => {
                if t.shape() != shape {
                    return Err(Error::Build(BuildError::InvalidTensor {
                        tensor: name,
                        reason: format!(
                            "shape {shape:?} differs from the shape {:?} of source tensor {:?}",
                            t.shape(),
                            t.name()
                        ),
                    }));
                }
                check_decodable(t)?;
                self.check_encoding(&name, ty, shape, t.element_count())?;
                None
            }
            TensorData::Fn(_) | TensorData::Deferred => None,
        };
        if let Some(actual) = supplied.filter(|&n| n != nbytes) {
            return Err(Error::Build(BuildError::TensorDataSize {
                tensor: name,
                expected: nbytes,
                actual,
            }));
        }
        self.tensors.insert(
            name,
            PendingTensor {
                ty,
                shape: shape.to_vec(),
                nbytes,
                data,
            },
        );
        Ok(self)
    }

    /// Adds a tensor from typed numbers; the type follows from `T`
    /// (`f32` -> F32, `half::f16` -> F16, `i32` -> I32, ...).
    pub fn add_tensor_typed<T: TensorElement>(
        &mut self,
        name: impl Into<String>,
        shape: &[u64],
        data: &'a [T],
    ) -> Result<&mut Self> {
        let data = TensorData::Native {
            bytes: std::borrow::Cow::Borrowed(bytemuck::cast_slice(data)),
            elem_size: std::mem::size_of::<T>(),
        };
        self.add_tensor(name, T::GGML_TYPE, shape, data)
    }

    /// Adds a tensor of type `ty` quantized from `f32` values when its turn
    /// comes to be written ([`TensorData::Quantize`]): F32 is a plain copy,
    /// F16 and BF16 round as ggml does, other types use
    /// [`codec::quantize`](crate::codec::quantize)'s encoders and give
    /// the same bytes. Memory while writing stays bounded by a chunk of
    /// rows; `data` is borrowed or owned.
    ///
    /// Checked here, before anything is written: `ty` has a quantizer
    /// ([`codec::can_quantize`](crate::codec::can_quantize)), the row
    /// length `shape[0]` is a multiple of its block size, `data` holds the
    /// product of `shape` values. Big-endian output gets its blocks
    /// swapped with [`codec::swap_byte_order`](crate::codec::swap_byte_order).
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::{codec, write::Builder, GgmlType, GgufFile};
    /// let x: Vec<f32> = (0..512).map(|i| (i as f32).sin()).collect();
    /// let mut b = Builder::new();
    /// b.add_tensor_quantized("w", GgmlType::Q4_K, &[256, 2], &x[..])?;
    /// assert!(b.add_tensor_quantized("bad", GgmlType::Q4_K, &[128, 4], &x[..]).is_err());
    /// let mut bytes = Vec::new();
    /// b.write(&mut bytes)?;
    /// let file = GgufFile::open(&bytes)?;
    /// assert_eq!(file.tensor("w")?.data()?, codec::quantize(GgmlType::Q4_K, &x, &[256, 2])?);
    /// # Ok(()) }
    /// ```
    pub fn add_tensor_quantized(
        &mut self,
        name: impl Into<String>,
        ty: GgmlType,
        shape: &[u64],
        data: impl Into<std::borrow::Cow<'a, [f32]>>,
    ) -> Result<&mut Self> {
        self.add_tensor(name, ty, shape, TensorData::Quantize(data.into()))
    }

    /// Re-encodes tensor `name`, whose data comes from another file
    /// (as after [`from_file`](Self::from_file)), to type `ty` when its
    /// turn comes ([`TensorData::Requantize`]): decoded and quantized a
    /// chunk of rows at a time, so memory stays bounded whatever the
    /// tensor's size. The tensor keeps its name, shape and position.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::{write::Builder, GgmlType, GgufFile};
    /// let file = GgufFile::open(&bytes)?;
    /// let mut b = Builder::from_file(&file)?;
    /// b.requantize_tensor("token_embd.weight", GgmlType::F16)?;
    /// assert!(b.requantize_tensor("token_embd.weight", GgmlType::Q8_0).is_err()); // 8 % 32 != 0
    /// let mut out = Vec::new();
    /// b.write(&mut out)?;
    /// let t = GgufFile::open(&out)?;
    /// let t = t.tensor("token_embd.weight")?;
    /// assert_eq!(t.ggml_type(), GgmlType::F16);
    /// assert_eq!(t.to_f32()?, file.tensor("token_embd.weight")?.to_f32()?);
    /// # Ok(()) }
    /// ```
    pub fn requantize_tensor(&mut self, name: &str, ty: GgmlType) -> Result<&mut Self> {
        let Some(pending) = self.tensors.get(name) else {
            return Err(Error::Lookup(LookupError::TensorNotFound {
                tensor: name.into(),
            }));
        };
        let source = match &pending.data {
            TensorData::File(t) | TensorData::Requantize(t) => *t,
            other => {
                return Err(Error::Build(BuildError::InvalidTensor {
                    tensor: name.into(),
                    reason: format!(
                        "only tensors read from a file can be re-encoded, its data is {other:?}"
                    ),
                }))
            }
        };
        check_decodable(&source)?;
        let shape = pending.shape.clone();
        let nbytes = self.check_shape(name, ty, &shape)?;
        self.check_encoding(name, ty, &shape, source.element_count())?;
        if let Some(t) = self.tensors.get_mut(name) {
            t.ty = ty;
            t.nbytes = nbytes;
            t.data = TensorData::Requantize(source);
        }
        Ok(self)
    }

    /// Checks `count` values of `shape` can be encoded to `ty` in the
    /// output's byte order.
    fn check_encoding(&self, name: &str, ty: GgmlType, shape: &[u64], count: u64) -> Result<()> {
        crate::write::source::check_encodable(name, ty, self.ctx.endian)?;
        let expected = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        if expected != Some(count) {
            return Err(Error::Codec(CodecError::TensorCodec {
                tensor: name.into(),
                source: Box::new(Error::Codec(CodecError::LengthMismatch {
                    what: format!("f32 values for shape {shape:?}"),
                    expected: expected.unwrap_or(u64::MAX),
                    actual: count,
                })),
            }));
        }
        Ok(())
    }

    /// Adds a tensor whose bytes a closure writes when its turn comes
    /// (memory stays bounded by what the closure holds).
    pub fn add_tensor_fn(
        &mut self,
        name: impl Into<String>,
        ty: GgmlType,
        shape: &[u64],
        f: impl FnMut(&mut dyn std::io::Write) -> std::io::Result<()> + Send + 'a,
    ) -> Result<&mut Self> {
        self.add_tensor(name, ty, shape, TensorData::Fn(Box::new(f)))
    }

    /// Declares a tensor whose data is supplied later, through
    /// [`write_metadata_first`](Builder::write_metadata_first).
    pub fn add_tensor_info(
        &mut self,
        name: impl Into<String>,
        ty: GgmlType,
        shape: &[u64],
    ) -> Result<&mut Self> {
        self.add_tensor(name, ty, shape, TensorData::Deferred)
    }

    /// Renames a tensor in place.
    pub fn rename_tensor(&mut self, old: &str, new: impl Into<String>) -> Result<&mut Self> {
        let new = new.into();
        self.check_name(&new)?;
        let Some(index) = self.tensors.get_index_of(old) else {
            return Err(Error::Lookup(LookupError::TensorNotFound {
                tensor: old.into(),
            }));
        };
        let (_, t) = self
            .tensors
            .shift_remove_index(index)
            .ok_or_else(|| Error::Lookup(LookupError::TensorNotFound { tensor: old.into() }))?;
        self.tensors.shift_insert(index, new, t);
        Ok(self)
    }

    /// Removes a tensor; later tensors move up. An absent tensor is
    /// [`LookupError::TensorNotFound`], as [`remove`](Self::remove) does for keys.
    pub fn remove_tensor(&mut self, name: &str) -> Result<&mut Self> {
        match self.tensors.shift_remove(name) {
            Some(_) => Ok(self),
            None => Err(Error::Lookup(LookupError::TensorNotFound {
                tensor: name.into(),
            })),
        }
    }

    /// Tensor names in write order.
    pub fn tensor_names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }

    fn check_name(&self, name: &str) -> Result<()> {
        if self.tensors.contains_key(name) {
            return Err(Error::Build(BuildError::TensorExists {
                tensor: name.into(),
            }));
        }
        if name.len() > MAX_TENSOR_NAME && !self.allow_long_names {
            return Err(Error::Build(BuildError::InvalidTensor {
                tensor: name.into(),
                reason: format!("name is {} bytes, llama.cpp accepts at most {MAX_TENSOR_NAME} (see Builder::allow_long_tensor_names)", name.len()),
            }));
        }
        Ok(())
    }

    fn check_tensor(&self, name: &str, ty: GgmlType, shape: &[u64]) -> Result<u64> {
        self.check_name(name)?;
        self.check_shape(name, ty, shape)
    }

    /// Checks `shape` suits `ty` and returns the byte size.
    fn check_shape(&self, name: &str, ty: GgmlType, shape: &[u64]) -> Result<u64> {
        let invalid = |reason: String| {
            Error::Build(BuildError::InvalidTensor {
                tensor: name.into(),
                reason,
            })
        };
        if shape.len() > MAX_DIMS {
            return Err(invalid(format!(
                "{} dimensions, at most {MAX_DIMS} allowed",
                shape.len()
            )));
        }
        match tensor_nbytes(ty, shape) {
            Ok(n) => Ok(n),
            Err(SizeError::UnknownType) => Err(invalid(format!("type {ty} has no known size"))),
            Err(SizeError::RowNotBlockMultiple { block }) => {
                Err(Error::Format(FormatError::RowNotBlockMultiple {
                    tensor: name.into(),
                    row: shape.first().copied().unwrap_or(1),
                    ty,
                    block,
                }))
            }
            Err(SizeError::ElementCountOverflow) => Err(invalid(format!(
                "shape {shape:?} overflows the element count"
            ))),
            Err(SizeError::ByteSizeOverflow) => {
                Err(invalid(format!("shape {shape:?} overflows the byte size")))
            }
        }
    }

    // ---- layout and header ----

    /// Computes every offset and padding of the output, without I/O.
    pub fn layout(&self) -> Result<Layout> {
        let w = self.ctx.count_width() as u64;
        let mut len = 4 + 4 + 2 * w;
        for (key, value) in &self.kvs {
            len += w + key.len() as u64 + 4 + value_len(value, self.ctx);
        }
        for (name, t) in &self.tensors {
            len += w + name.len() as u64 + 4 + w * t.shape.len() as u64 + 4 + 8;
        }
        let alignment = self.current_alignment();
        Layout::place(
            self.ctx,
            alignment,
            len,
            self.tensors.iter().map(|(n, t)| (n.clone(), t.nbytes)),
        )
        .ok_or_else(|| {
            Error::Build(BuildError::Encode {
                reason: "the file would be larger than 2^64 bytes".into(),
            })
        })
    }

    /// Encodes header, metadata and tensor infos for `layout`, without the
    /// padding to the data section: that padding is as long as the
    /// alignment allows (a 57-byte header with a 1 GiB alignment pads to
    /// 1 GiB), so it is written from a small zero buffer
    /// ([`write_header`](Self::write_header)), never held in memory.
    pub(crate) fn encode_header(&self, layout: &Layout) -> Result<Vec<u8>> {
        let mut enc = Encoder::new(self.ctx, layout.header_len as usize);
        enc.header(self.tensors.len() as u64, self.kvs.len() as u64)?;
        for (key, value) in &self.kvs {
            enc.kv(key, value)?;
        }
        for ((name, t), slot) in self.tensors.iter().zip(&layout.tensors) {
            enc.tensor_info(name, &t.shape, t.ty.id(), slot.offset)?;
        }
        debug_assert_eq!(
            enc.len() as u64,
            layout.header_len,
            "layout and encoder disagree"
        );
        if enc.len() as u64 != layout.header_len {
            return Err(Error::Build(BuildError::Encode {
                reason: format!(
                    "header is {} bytes, layout computed {}",
                    enc.len(),
                    layout.header_len
                ),
            }));
        }
        Ok(enc.into_bytes())
    }

    /// Writes the header region for `layout`: the encoded header, then
    /// the zero padding up to the data section.
    pub(crate) fn write_header<W: Write + ?Sized>(&self, w: &mut W, layout: &Layout) -> Result<()> {
        w.write_all(&self.encode_header(layout)?)?;
        crate::write::write_zeros(w, layout.header_padding())?;
        Ok(())
    }
}
