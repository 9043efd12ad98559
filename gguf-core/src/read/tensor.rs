//! [`Tensor`]: one tensor's info and its zero-copy data.

use crate::error::{CodecError, Error, FormatError, LookupError, Result};
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
/// let file = GgufFile::from_bytes(&bytes)?;
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
            // A header-only file, or a window holding another tensor.
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

    /// Streams the data through `f` in chunks, letting the kernel drop each
    /// chunk's pages from a memory map once used, so copying a large
    /// tensor keeps memory flat.
    pub(crate) fn copy_data(
        &self,
        w: &mut dyn std::io::Write,
        mut f: impl FnMut(&[u8], &mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let data = self.data()?;
        // `data` is in memory, so its offset fits in `usize`.
        let start = self.file_offset() as usize;
        let mut done = 0;
        for chunk in data.chunks(crate::write::CHUNK) {
            f(chunk, w)?;
            self.file.release(start + done, chunk.len());
            done += chunk.len();
        }
        Ok(())
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
    /// let file = gguf_core::GgufFile::from_bytes(&bytes)?;
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
