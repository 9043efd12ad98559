//! Metadata arrays: the lazy [`ArrayView`] and the one function that walks a
//! value, validating it, without allocating.

use std::fmt;
use std::marker::PhantomData;

use crate::error::{Error, FormatError, Result};
use crate::format::cursor::Cursor;
use crate::format::{Endian, Value, ValueType, WireFormat};

/// An array in the metadata, validated when the file was opened and decoded
/// element by element when iterated.
///
/// ```
/// use gguf_core::Gguf;
/// # fn main() -> gguf_core::Result<()> {
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// let file = gguf_core::GgufFile::open(&bytes)?;
/// let tokens = file.get_array("tokenizer.ggml.tokens")?;
/// let first: Vec<&str> = tokens.strings().unwrap().take(2).collect();
/// assert_eq!(first, ["<s>", "</s>"]);
/// # Ok(()) }
/// ```
///
/// Two views are equal when their arrays are: same element type and the
/// same elements (floats bit for bit, nested arrays likewise), whatever
/// file, offset, version or byte order they come from.
#[derive(Clone, Copy)]
pub struct ArrayView<'a> {
    elem: ValueType,
    len: u64,
    /// The elements' bytes, exactly.
    body: &'a [u8],
    /// Absolute offset of `body` in the file, for messages.
    offset: u64,
    ctx: WireFormat,
}

impl fmt::Debug for ArrayView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArrayView")
            .field("elem", &self.elem)
            .field("len", &self.len)
            .field("offset", &self.offset)
            .finish()
    }
}

impl PartialEq for ArrayView<'_> {
    fn eq(&self, other: &Self) -> bool {
        if self.elem != other.elem || self.len != other.len {
            return false;
        }
        // One encoding per context: equal bytes are equal elements.
        if self.ctx == other.ctx {
            return self.body == other.body;
        }
        match self.elem.fixed_size() {
            // Versions differ only in lengths and counts, which fixed-size
            // elements have none of; byte orders reverse each element.
            Some(size) if self.ctx.endian == other.ctx.endian || size == 1 => {
                self.body == other.body
            }
            Some(size) => self
                .body
                .chunks_exact(size)
                .zip(other.body.chunks_exact(size))
                .all(|(a, b)| a.iter().eq(b.iter().rev())),
            None => match (self.strings(), other.strings()) {
                (Some(a), Some(b)) => a.eq(b),
                // Arrays of arrays: element views compare recursively.
                _ => self.iter().eq(other.iter()),
            },
        }
    }
}

impl<'a> ArrayView<'a> {
    /// A view over already validated element bytes.
    pub(crate) fn new(
        elem: ValueType,
        len: u64,
        body: &'a [u8],
        offset: u64,
        ctx: WireFormat,
    ) -> Self {
        ArrayView {
            elem,
            len,
            body,
            offset,
            ctx,
        }
    }

    /// Type of the elements.
    pub fn element_type(&self) -> ValueType {
        self.elem
    }

    /// Number of elements (`usize`, as for every length in the API: the
    /// elements are in memory, each at least a byte, so the count fits).
    pub fn len(&self) -> usize {
        usize::try_from(self.len).unwrap_or(usize::MAX)
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The raw bytes of the elements, as stored (file byte order).
    pub fn raw_bytes(&self) -> &'a [u8] {
        self.body
    }

    /// Version and byte order of the file the array was read from.
    pub fn wire_format(&self) -> WireFormat {
        self.ctx
    }

    /// Absolute file offset of the first element.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Every element as a [`Value`] (nested arrays as views).
    pub fn iter(&self) -> ArrayIter<'a> {
        ArrayIter {
            cur: Cursor::at(self.body, 0, self.ctx),
            elem: self.elem,
            left: self.len,
            base: self.offset,
        }
    }

    /// The elements as `&str`, if this is an array of strings.
    pub fn strings(&self) -> Option<StrIter<'a>> {
        (self.elem == ValueType::String).then(|| StrIter {
            cur: Cursor::at(self.body, 0, self.ctx),
            left: self.len,
        })
    }

    /// The elements as numbers or bools of type `T`, if the element type is
    /// exactly `T`'s.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let scores: Vec<f32> = file.get_array("tokenizer.ggml.scores")?.typed::<f32>().unwrap().collect();
    /// assert_eq!(scores.len(), 4);
    /// # Ok(()) }
    /// ```
    pub fn typed<T: Scalar>(&self) -> Option<TypedIter<'a, T>> {
        (self.elem == T::TYPE).then(|| TypedIter {
            chunks: self.body.chunks_exact(T::SIZE),
            endian: self.ctx.endian,
            _t: PhantomData,
        })
    }
}

impl<'a> IntoIterator for ArrayView<'a> {
    type Item = Value<'a>;
    type IntoIter = ArrayIter<'a>;
    fn into_iter(self) -> ArrayIter<'a> {
        self.iter()
    }
}

/// Iterator over an array's elements as [`Value`]s.
#[derive(Debug, Clone)]
pub struct ArrayIter<'a> {
    cur: Cursor<'a>,
    elem: ValueType,
    left: u64,
    base: u64,
}

impl<'a> Iterator for ArrayIter<'a> {
    type Item = Value<'a>;
    fn next(&mut self) -> Option<Value<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // The array was validated when the file was opened, so this cannot
        // fail; stop quietly rather than panic if it somehow does.
        read_value(
            &mut self.cur,
            self.elem,
            self.base,
            &Walk::TRUSTED,
            0,
            &String::new,
        )
        .ok()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.left).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

/// Iterator over an array of strings.
#[derive(Debug, Clone)]
pub struct StrIter<'a> {
    cur: Cursor<'a>,
    left: u64,
}

impl<'a> Iterator for StrIter<'a> {
    type Item = &'a str;
    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Validated at open: see ArrayIter::next.
        self.cur.str(String::new).ok()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.left).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

impl ExactSizeIterator for StrIter<'_> {}

/// Iterator over an array of fixed-size scalars.
#[derive(Debug, Clone)]
pub struct TypedIter<'a, T> {
    chunks: std::slice::ChunksExact<'a, u8>,
    endian: Endian,
    _t: PhantomData<T>,
}

impl<T: Scalar> Iterator for TypedIter<'_, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        self.chunks.next().map(|b| T::decode(b, self.endian))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl<T: Scalar> ExactSizeIterator for TypedIter<'_, T> {}

mod sealed {
    pub trait Sealed {}
}

/// A fixed-size metadata scalar type: `u8`..`u64`, `i8`..`i64`, `f32`, `f64`, `bool`.
pub trait Scalar: sealed::Sealed + Copy + 'static {
    /// Its value type tag.
    const TYPE: ValueType;
    /// Its size in bytes.
    const SIZE: usize;
    /// Decodes from exactly `SIZE` bytes.
    fn decode(bytes: &[u8], endian: Endian) -> Self;
    /// Extracts it from a [`Value`] of exactly this type.
    fn from_value(value: &Value<'_>) -> Option<Self>;
}

macro_rules! scalar {
    ($($ty:ty => $variant:ident),*) => {$(
        impl sealed::Sealed for $ty {}
        impl Scalar for $ty {
            const TYPE: ValueType = ValueType::$variant;
            const SIZE: usize = std::mem::size_of::<$ty>();
            #[inline]
            fn decode(bytes: &[u8], endian: Endian) -> Self {
                let mut a = [0u8; std::mem::size_of::<$ty>()];
                a.copy_from_slice(bytes);
                match endian {
                    Endian::Little => <$ty>::from_le_bytes(a),
                    Endian::Big => <$ty>::from_be_bytes(a),
                }
            }
            fn from_value(value: &Value<'_>) -> Option<Self> {
                match *value {
                    Value::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
    )*};
}

scalar!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, u64 => U64, i64 => I64, f32 => F32, f64 => F64);

impl sealed::Sealed for bool {}
impl Scalar for bool {
    const TYPE: ValueType = ValueType::Bool;
    const SIZE: usize = 1;
    fn decode(bytes: &[u8], _: Endian) -> Self {
        bytes.first().is_some_and(|&b| b != 0)
    }
    fn from_value(value: &Value<'_>) -> Option<Self> {
        match *value {
            Value::Bool(v) => Some(v),
            _ => None,
        }
    }
}

/// How strictly [`read_value`] checks what it walks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Walk {
    /// Maximum nesting depth of arrays (1 = arrays, no nesting).
    pub max_depth: u32,
    /// Validate element contents (UTF-8, bool bytes), not only structure.
    pub check_contents: bool,
}

impl Walk {
    /// For data validated before: structure only, no depth limit worth hitting.
    pub const TRUSTED: Walk = Walk {
        max_depth: u32::MAX,
        check_contents: false,
    };
}

/// Reads one value of type `ty` at the cursor. Scalars and strings are
/// decoded; arrays are walked (validated) and returned as views.
///
/// `base` is the absolute file offset of the cursor's buffer start, so that
/// errors can name file offsets; `key` names the key for messages.
pub(crate) fn read_value<'a>(
    cur: &mut Cursor<'a>,
    ty: ValueType,
    base: u64,
    walk: &Walk,
    depth: u32,
    key: &dyn Fn() -> String,
) -> Result<Value<'a>> {
    let at = cur.pos() as u64 + base;
    let what = || format!("value of metadata key {:?}", key());
    Ok(match ty {
        ValueType::U8 => Value::U8(cur.u8(what)?),
        ValueType::I8 => Value::I8(cur.i8(what)?),
        ValueType::U16 => Value::U16(cur.u16(what)?),
        ValueType::I16 => Value::I16(cur.i16(what)?),
        ValueType::U32 => Value::U32(cur.u32(what)?),
        ValueType::I32 => Value::I32(cur.i32(what)?),
        ValueType::F32 => Value::F32(cur.f32(what)?),
        ValueType::U64 => Value::U64(cur.u64(what)?),
        ValueType::I64 => Value::I64(cur.i64(what)?),
        ValueType::F64 => Value::F64(cur.f64(what)?),
        ValueType::Bool => {
            let byte = cur.u8(what)?;
            if byte > 1 && walk.check_contents {
                return Err(Error::Format(FormatError::InvalidBool {
                    offset: at,
                    key: key(),
                    byte,
                }));
            }
            Value::Bool(byte != 0)
        }
        ValueType::String => {
            Value::String(cur.str(|| format!("string value of metadata key {:?}", key()))?)
        }
        ValueType::Array => Value::Array(read_array(cur, base, walk, depth + 1, key)?),
    })
}

/// The high bit of every byte of a `u64`: a length field whose value has
/// none of them set is made of ASCII bytes in either byte order.
const NON_ASCII_BYTES: u64 = 0x8080_8080_8080_8080;

/// Bytes of strings validated at a time: small enough to be in L1/L2 cache
/// still when validated, large enough for the SIMD validator to run fast.
const UTF8_RUN: usize = 4 << 10;

fn read_array<'a>(
    cur: &mut Cursor<'a>,
    base: u64,
    walk: &Walk,
    depth: u32,
    key: &dyn Fn() -> String,
) -> Result<ArrayView<'a>> {
    let header_at = cur.pos() as u64 + base;
    if depth > walk.max_depth {
        return Err(Error::Format(FormatError::ArrayTooDeep {
            offset: header_at,
            key: key(),
            limit: walk.max_depth,
        }));
    }
    let what = || format!("array header of metadata key {:?}", key());
    let type_id = cur.u32(what)?;
    let elem = ValueType::from_id(type_id).ok_or_else(|| {
        Error::Format(FormatError::InvalidValueType {
            offset: header_at,
            key: key(),
            type_id,
        })
    })?;
    let len_at = cur.pos();
    let len = cur.count(what)?;
    // Every element takes at least one byte (strings and arrays more), so a
    // count larger than the rest of the file is a lie we can catch now.
    let min_size = elem.fixed_size().unwrap_or(cur.wire_format().count_width()) as u64;
    cur.check_count(len, min_size, len_at, || {
        format!("array of metadata key {:?}", key())
    })?;
    let start = cur.pos();
    let elements = || format!("array elements of metadata key {:?}", key());
    match elem.fixed_size() {
        Some(size) => {
            let bytes = cur.take(len * size as u64, elements)?;
            if elem == ValueType::Bool
                && walk.check_contents
                && let Some(i) = bytes.iter().position(|&b| b > 1)
            {
                return Err(Error::Format(FormatError::InvalidBool {
                    offset: base + (start + i) as u64,
                    key: key(),
                    byte: bytes[i],
                }));
            }
        }
        None if elem == ValueType::String => {
            // Hot path (a 150K-token vocabulary is 300K strings): skip the
            // strings, then validate UTF-8 over runs of many strings at
            // once instead of one `from_utf8` call per string. A run is cut
            // before every length field that has a non-ASCII byte; inside a
            // run each string is followed by an ASCII length field or the
            // run's end, so each string starts and ends on a character
            // boundary and the run is valid UTF-8 exactly when every string
            // in it is.
            let before = cur.clone();
            let check = walk.check_contents;
            let mut run_start = start;
            let mut valid = true;
            let (all, width) = (cur.buf(), cur.wire_format().count_width());
            cur.skip_strs(
                len,
                |len_at, n| {
                    // Also cut runs that grew long, so each is validated
                    // while its bytes are still in cache from the walk.
                    if check && (n & NON_ASCII_BYTES != 0 || len_at - run_start >= UTF8_RUN) {
                        valid &= simdutf8::basic::from_utf8(&all[run_start..len_at]).is_ok();
                        run_start = len_at + width;
                    }
                },
                elements,
            )?;
            if check
                && !(valid
                    && simdutf8::basic::from_utf8(cur.buf_range(run_start, cur.pos())).is_ok())
            {
                // Find the first invalid string, for an exact offset.
                let mut exact = before;
                for _ in 0..len {
                    exact.str(elements)?;
                }
            }
        }
        None => {
            for _ in 0..len {
                read_array(cur, base, walk, depth + 1, key)?;
            }
        }
    }
    let body = cur.buf_range(start, cur.pos());
    Ok(ArrayView {
        elem,
        len,
        body,
        offset: base + start as u64,
        ctx: cur.wire_format(),
    })
}
