//! [`Tensor`]: one tensor's info and its zero-copy data.

use crate::error::{Error, Result};
use crate::format::layout::element_count;
use crate::format::{Endian, GgmlType};

use super::tensor_info::TensorEntry;
use super::GgufFile;

/// A tensor of an open [`GgufFile`]: its info and a borrowed view of its data.
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// # let bytes = gguf_core::testing::tiny_file();
/// use gguf_core::{GgufFile, GgmlType};
/// let file = GgufFile::from_bytes(&bytes)?;
/// let t = file.tensor("token_embd.weight")?;
/// assert_eq!(t.ggml_type(), GgmlType::F32);
/// assert_eq!(t.element_count(), 32);
/// let values: &[f32] = t.as_f32()?;
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

    /// Absolute offset of the data in the file.
    pub fn file_offset(&self) -> u64 {
        self.file.data_offset() + self.entry.offset
    }

    /// Offset of this tensor's info in the file.
    pub fn info_offset(&self) -> u64 {
        self.entry.info_offset as u64
    }

    /// Size of the data in bytes; an error for unknown type ids.
    pub fn byte_size(&self) -> Result<u64> {
        self.entry.nbytes.ok_or_else(|| Error::UnknownTensorType {
            tensor: self.name.into(),
            type_id: self.entry.ty.id(),
        })
    }

    /// The data, borrowed from the file (or map) without copying.
    pub fn data(&self) -> Result<&'f [u8]> {
        let nbytes = self.byte_size()?;
        let start = self.file_offset();
        // Bounds were checked at open: a miss means the bytes are not held.
        self.file
            .data_range(start, nbytes)
            .ok_or_else(|| Error::DataNotLoaded {
                tensor: self.name.into(),
            })
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

    /// Streams the data through `f` in chunks, letting the kernel drop each
    /// chunk's pages from a memory map once used, so copying a large
    /// tensor keeps memory flat.
    pub(crate) fn copy_data(
        &self,
        w: &mut dyn std::io::Write,
        mut f: impl FnMut(&[u8], &mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let data = self.data()?;
        let start = self.file_offset() as usize;
        let mut done = 0;
        for chunk in data.chunks(crate::write::CHUNK) {
            f(chunk, w)?;
            self.file.release(start + done, chunk.len());
            done += chunk.len();
        }
        Ok(())
    }

    /// The data as `&[f32]` without copying: needs type F32, a file in the
    /// machine's byte order, and data aligned to 4 bytes in memory.
    pub fn as_f32(&self) -> Result<&'f [f32]> {
        self.view(GgmlType::F32, "f32")
    }

    /// The data as `&[half::f16]` without copying (type F16; see [`as_f32`](Self::as_f32)).
    pub fn as_f16(&self) -> Result<&'f [half::f16]> {
        self.view(GgmlType::F16, "f16")
    }

    /// The data as `&[half::bf16]` without copying (type BF16).
    pub fn as_bf16(&self) -> Result<&'f [half::bf16]> {
        self.view(GgmlType::BF16, "bf16")
    }

    /// The data as `&[f64]` without copying (type F64).
    pub fn as_f64(&self) -> Result<&'f [f64]> {
        self.view(GgmlType::F64, "f64")
    }

    /// The data as `&[i8]` (type I8).
    pub fn as_i8(&self) -> Result<&'f [i8]> {
        self.view(GgmlType::I8, "i8")
    }

    /// The data as `&[i16]` without copying (type I16).
    pub fn as_i16(&self) -> Result<&'f [i16]> {
        self.view(GgmlType::I16, "i16")
    }

    /// The data as `&[i32]` without copying (type I32).
    pub fn as_i32(&self) -> Result<&'f [i32]> {
        self.view(GgmlType::I32, "i32")
    }

    /// The data as `&[i64]` without copying (type I64).
    pub fn as_i64(&self) -> Result<&'f [i64]> {
        self.view(GgmlType::I64, "i64")
    }

    fn view<T: bytemuck::Pod>(&self, ty: GgmlType, requested: &'static str) -> Result<&'f [T]> {
        let unavailable = |reason: String| Error::ViewUnavailable {
            tensor: self.name.into(),
            requested,
            reason,
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
