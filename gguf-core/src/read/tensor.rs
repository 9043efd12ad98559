//! [`Tensor`]: one tensor's info and its zero-copy data.

use crate::error::{BuildError, CodecError, FormatError, LookupError, SourceError};
use std::borrow::Cow;
use std::ops::Range;

use crate::error::{Error, Result};
use crate::format::layout::element_count;
use crate::format::{Endian, GgmlType, TensorElement};
use crate::read::Gguf;

use super::tensor_info::TensorEntry;
use super::GgufFile;

/// A tensor of an open [`GgufFile`]: its info and a borrowed view of its data.
///
/// ```
/// use gguf_core::Gguf;
/// # fn main() -> gguf_core::Result<()> {
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// use gguf_core::{GgufFile, GgmlType};
/// let file = GgufFile::open(&bytes)?;
/// let t = file.tensor("token_embd.weight")?;
/// assert_eq!(t.ggml_type(), GgmlType::F32);
/// assert_eq!(t.element_count(), 32);
/// let values: &[f32] = t.as_slice()?;
/// assert_eq!(values[1], 1.0);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct Tensor<'f> {
    file: &'f GgufFile<'f>,
    name: &'f str,
    entry: &'f TensorEntry,
}

impl std::fmt::Debug for Tensor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("name", &self.name)
            .field("type", &self.entry.ty)
            .field("shape", &self.shape())
            .field("offset", &self.entry.offset)
            .finish()
    }
}

impl<'f> Tensor<'f> {
    pub(super) fn new(file: &'f GgufFile<'f>, name: &'f str, entry: &'f TensorEntry) -> Self {
        Tensor { file, name, entry }
    }

    /// The tensor's name.
    pub fn name(&self) -> &'f str {
        self.name
    }

    /// Its element type (possibly [`GgmlType::Unknown`]).
    pub fn ggml_type(&self) -> GgmlType {
        self.entry.ty
    }

    /// Dimensions, innermost (row length) first, as ggml orders them.
    pub fn shape(&self) -> &'f [u64] {
        self.entry.shape()
    }

    /// Number of dimensions stored in the info.
    pub fn n_dims(&self) -> u32 {
        self.entry.n_dims
    }

    /// Number of elements (the product of the shape).
    pub fn element_count(&self) -> u64 {
        // Checked when the file was opened.
        element_count(self.shape()).unwrap_or(0)
    }

    /// Offset of the data relative to the data section.
    pub fn offset(&self) -> u64 {
        self.entry.offset
    }

    /// Absolute offset of the data in the file (at most the file's length,
    /// or the data section's start for an empty tensor of a file whose
    /// header is not padded: checked at open).
    pub fn file_offset(&self) -> u64 {
        self.file.data_offset().saturating_add(self.entry.offset)
    }

    /// Offset of this tensor's info in the file.
    pub fn info_offset(&self) -> u64 {
        self.entry.info_offset as u64
    }

    /// Size of the data in bytes; an error for unknown type ids.
    pub fn byte_size(&self) -> Result<u64> {
        self.entry.nbytes.ok_or_else(|| {
            Error::Codec(CodecError::UnknownTensorType {
                tensor: self.name.into(),
                type_id: self.entry.ty.id(),
            })
        })
    }

    /// The data, borrowed from the file (or map) without copying.
    pub fn data(&self) -> Result<&'f [u8]> {
        let nbytes = self.byte_size()?;
        let start = self.file_offset();
        let held = usize::try_from(start)
            .ok()
            .zip(usize::try_from(nbytes).ok())
            .and_then(|(s, n)| self.file.range(s, n));
        if nbytes == 0 && self.file.has_data() {
            return Ok(&[]);
        }
        match held {
            Some(bytes) if nbytes > 0 => Ok(bytes),
            // A header-only file (a stream, a remote file: see `read`).
            _ if !self.file.has_data() => Err(Error::Lookup(LookupError::DataNotLoaded {
                tensor: self.name.into(),
            })),
            // Bounds were checked at open; checked again, without overflow.
            _ => Err(Error::Format(FormatError::TensorOutOfBounds {
                tensor: self.name.into(),
                offset: start,
                end: start.saturating_add(nbytes),
                file_len: self.file.file_len(),
            })),
        }
    }

    /// The data: borrowed when the file holds it (a memory map, the
    /// caller's bytes), else read from its source by one range read (a
    /// stream, a remote file: one request).
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let t = file.tensor("token_embd.weight")?;
    /// assert!(matches!(t.read()?, std::borrow::Cow::Borrowed(_)));
    /// assert_eq!(&*t.read()?, t.data()?);
    /// # Ok(()) }
    /// ```
    pub fn read(&self) -> Result<Cow<'f, [u8]>> {
        let size = self.byte_size()?;
        self.read_range(0..size)
    }

    /// Bytes `range` of the data (relative to its start): borrowed when
    /// held, else one range read.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::{Source, GgufFile};
    /// let file = GgufFile::open(Source::reader(std::io::Cursor::new(bytes)))?;
    /// let t = file.tensor("token_embd.weight")?;
    /// assert_eq!(t.read_range(4..8)?.as_ref(), 1f32.to_le_bytes());
    /// assert!(t.read_range(0..1000).is_err()); // past its 128 bytes
    /// # Ok(()) }
    /// ```
    pub fn read_range(&self, range: Range<u64>) -> Result<Cow<'f, [u8]>> {
        let (offset, len) = self.check_range(&range)?;
        if len == 0 {
            // Nothing to read, whether the data is held or not (an empty
            // tensor at the very end of a stream's file, say).
            return Ok(Cow::Borrowed(&[]));
        }
        match self.file.reader() {
            Some(reader) if len > 0 => {
                let bytes = reader.read_range(offset, len)?;
                self.check_read(reader.name(), offset, len, bytes)
                    .map(Cow::Owned)
            }
            _ => Ok(Cow::Borrowed(self.held_range(&range)?)),
        }
    }

    /// Rows `rows` of the tensor (rows of `shape()[0]` elements) decoded
    /// to `f32`: one range read when the data is not held.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let t = file.tensor("token_embd.weight")?; // 4 rows of 8
    /// assert_eq!(t.read_rows_f32(1..2)?, &t.to_f32()?[8..16]);
    /// # Ok(()) }
    /// ```
    pub fn read_rows_f32(&self, rows: Range<u64>) -> Result<Vec<f32>> {
        let (range, count) = self.row_bytes(&rows)?;
        let bytes = self.read_range(range)?;
        self.decode_rows(&bytes, count)
    }

    /// [`read`](Self::read) for async code: a remote tensor is fetched
    /// without blocking the thread (cargo feature `remote`).
    #[cfg(feature = "remote")]
    pub async fn read_async(&self) -> Result<Cow<'f, [u8]>> {
        let size = self.byte_size()?;
        self.read_range_async(0..size).await
    }

    /// [`read_range`](Self::read_range) for async code.
    #[cfg(feature = "remote")]
    pub async fn read_range_async(&self, range: Range<u64>) -> Result<Cow<'f, [u8]>> {
        let (offset, len) = self.check_range(&range)?;
        if len == 0 {
            // Nothing to read, whether the data is held or not (an empty
            // tensor at the very end of a stream's file, say).
            return Ok(Cow::Borrowed(&[]));
        }
        match self.file.reader() {
            Some(reader) if len > 0 => {
                let bytes = reader.read_range_async(offset, len).await?;
                self.check_read(reader.name(), offset, len, bytes)
                    .map(Cow::Owned)
            }
            _ => Ok(Cow::Borrowed(self.held_range(&range)?)),
        }
    }

    /// [`read_rows_f32`](Self::read_rows_f32) for async code.
    #[cfg(feature = "remote")]
    pub async fn read_rows_f32_async(&self, rows: Range<u64>) -> Result<Vec<f32>> {
        let (range, count) = self.row_bytes(&rows)?;
        let bytes = self.read_range_async(range).await?;
        self.decode_rows(&bytes, count)
    }

    /// The absolute file range of `range` of the data, checked against
    /// the tensor's size.
    fn check_range(&self, range: &Range<u64>) -> Result<(u64, u64)> {
        let size = self.byte_size()?;
        if range.start > range.end || range.end > size {
            return Err(Error::Build(BuildError::InvalidTensor {
                tensor: self.name.into(),
                reason: format!(
                    "byte range {}..{} is outside its {size} bytes",
                    range.start, range.end
                ),
            }));
        }
        Ok((self.file_offset() + range.start, range.end - range.start))
    }

    /// `range` of the data held in memory.
    fn held_range(&self, range: &Range<u64>) -> Result<&'f [u8]> {
        let data = self.data()?;
        // Checked against the size, which `data` has.
        Ok(&data[range.start as usize..range.end as usize])
    }

    /// A range read's bytes, when they are all there.
    fn check_read(
        &self,
        source: Option<&str>,
        offset: u64,
        len: u64,
        bytes: Vec<u8>,
    ) -> Result<Vec<u8>> {
        if bytes.len() as u64 != len {
            return Err(Error::Source(SourceError::ShortRead {
                source_name: source.unwrap_or("stream").into(),
                offset,
                expected: len,
                got: bytes.len() as u64,
            }));
        }
        Ok(bytes)
    }

    /// The byte range and element count of rows `rows`.
    fn row_bytes(&self, rows: &Range<u64>) -> Result<(Range<u64>, usize)> {
        let size = self.byte_size()?;
        let row_len = self.shape().first().copied().unwrap_or(1);
        let n_rows = self.element_count().checked_div(row_len).unwrap_or(0);
        if rows.start > rows.end || rows.end > n_rows {
            return Err(Error::Build(BuildError::InvalidTensor {
                tensor: self.name.into(),
                reason: format!(
                    "rows {}..{} are outside its {n_rows} rows",
                    rows.start, rows.end
                ),
            }));
        }
        let row_size = size.checked_div(n_rows).unwrap_or(0);
        let count = (rows.end - rows.start)
            .checked_mul(row_len)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                Error::Build(BuildError::InvalidTensor {
                    tensor: self.name.into(),
                    reason: "too many elements for this machine".into(),
                })
            })?;
        Ok((rows.start * row_size..rows.end * row_size, count))
    }

    fn decode_rows(&self, bytes: &[u8], count: usize) -> Result<Vec<f32>> {
        let mut out = vec![0f32; count];
        crate::codec::dequantize_par(self.ggml_type(), self.file_endian(), bytes, &mut out)
            .map_err(|e| {
                Error::Codec(CodecError::TensorCodec {
                    tensor: self.name.into(),
                    source: Box::new(e),
                })
            })?;
        Ok(out)
    }

    /// Byte order of the file the tensor belongs to.
    pub fn file_endian(&self) -> Endian {
        self.file.endian()
    }

    /// The mapped file holding the data and the data's absolute offset in
    /// it, when the tensor's file was opened with [`GgufFile::open`].
    pub(crate) fn mapped_file(&self) -> Option<(&'f std::fs::File, u64)> {
        self.file.mapped_file().map(|f| (f, self.file_offset()))
    }

    /// Tells the system that the data bytes in `range` (offsets into
    /// [`data`](Self::data), clamped to it) will not be needed again soon.
    /// For a file opened with [`GgufFile::open`] their pages leave this
    /// process's resident memory: they stay in the page cache, and reading
    /// them again maps them back with the same bytes, so every slice
    /// already handed out stays valid and unchanged. Data held in memory
    /// (a buffer, a remote tensor) is not affected.
    ///
    /// Reading a large model once, front to back, and releasing each piece
    /// behind the cursor keeps the process's memory at the size of the
    /// pieces in flight instead of growing to the whole model (memory
    /// monitors count mapped pages that were read).
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf");
    /// let file = gguf_core::GgufFile::open(path)?;
    /// let t = file.tensor("token_embd.weight")?;
    /// let data = t.data()?;
    /// let sum: u32 = data.iter().map(|&b| u32::from(b)).sum();
    /// t.release_pages(0..data.len() as u64);
    /// assert_eq!(data.iter().map(|&b| u32::from(b)).sum::<u32>(), sum);
    /// # Ok(()) }
    /// ```
    pub fn release_pages(&self, range: std::ops::Range<u64>) {
        let Ok(nbytes) = self.byte_size() else {
            return;
        };
        let (start, end) = (range.start.min(nbytes), range.end.min(nbytes));
        if start >= end {
            return;
        }
        let at = self
            .file_offset()
            .checked_add(start)
            .and_then(|at| usize::try_from(at).ok());
        if let (Some(at), Ok(len)) = (at, usize::try_from(end - start)) {
            self.file.release(at, len);
        }
    }

    /// The `len` file bytes from `at` bytes after the start of the data
    /// (past its end too, into the padding and the tensors after it),
    /// when held: a writer copying tensors back to back reads the padding
    /// between them, and the first bytes of a run it copies.
    pub(crate) fn file_bytes(&self, at: u64, len: u64) -> Option<&'f [u8]> {
        let start = self.file_offset().checked_add(at)?;
        self.file
            .range(usize::try_from(start).ok()?, usize::try_from(len).ok()?)
    }

    /// The data as a slice of `T` without copying: `f32`, `half::f16`,
    /// `half::bf16`, `f64`, `i8`, `i16`, `i32` or `i64` (see
    /// [`TensorElement`]). Needs the tensor's type to be `T`'s
    /// ([`TensorElement::GGML_TYPE`]), a file in this machine's byte order
    /// (for elements wider than a byte) and data aligned for `T` in memory;
    /// otherwise [`CodecError::ViewUnavailable`] says which. Other types decode
    /// with [`to_f32`](Self::to_f32).
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let t = file.tensor("token_embd.weight")?;
    /// let values: &[f32] = t.as_slice()?;
    /// assert_eq!(values.len(), 32);
    /// assert!(t.as_slice::<half::f16>().is_err()); // an F32 tensor
    /// # Ok(()) }
    /// ```
    pub fn as_slice<T: TensorElement>(&self) -> Result<&'f [T]> {
        self.view(
            T::GGML_TYPE,
            <T as crate::format::element::sealed::Sealed>::NAME,
        )
    }

    fn view<T: bytemuck::Pod>(&self, ty: GgmlType, requested: &'static str) -> Result<&'f [T]> {
        let unavailable = |reason: String| {
            Error::Codec(CodecError::ViewUnavailable {
                tensor: self.name.into(),
                requested,
                reason,
            })
        };
        if self.entry.ty != ty {
            return Err(unavailable(format!("its type is {}", self.entry.ty)));
        }
        if std::mem::size_of::<T>() > 1 && self.file.endian() != Endian::NATIVE {
            return Err(unavailable(format!(
                "the file is {}-endian",
                self.file.endian()
            )));
        }
        bytemuck::try_cast_slice(self.data()?).map_err(|e| unavailable(format!("{e:?}")))
    }
}
