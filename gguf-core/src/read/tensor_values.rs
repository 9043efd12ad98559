//! Decoded values of a [`Tensor`]: `f32` (whole, into a buffer, or one row
//! at a time), `f16` and `bf16`, through the [`codec`](crate::codec)
//! codecs in the file's byte order.

use crate::error::CodecError;
use std::borrow::Cow;

use crate::codec;
use crate::error::{Error, Result};
use crate::format::{Endian, GgmlType};

use super::Tensor;

impl<'f> Tensor<'f> {
    /// Wraps a codec error so that its message names this tensor.
    fn codec_err(&self, source: Error) -> Error {
        Error::Codec(CodecError::TensorCodec {
            tensor: self.name().into(),
            source: Box::new(source),
        })
    }

    /// The data, after checking the type has a size and a decoder
    /// (`UnknownTensorType` for unknown ids, a wrapped `UnsupportedType`
    /// for a sized type without one).
    /// Read through [`read`](Tensor::read): borrowed when held, one
    /// range read otherwise.
    fn decodable(&self) -> Result<Cow<'f, [u8]>> {
        self.check_decodable()?;
        self.read()
    }

    fn check_decodable(&self) -> Result<()> {
        self.byte_size()?;
        if !codec::can_dequantize(self.ggml_type()) {
            return Err(self.codec_err(Error::Codec(CodecError::UnsupportedType {
                ty: self.ggml_type(),
                operation: "dequantize",
            })));
        }
        Ok(())
    }

    /// Every element decoded to `f32` (in file order: rows of `shape()[0]`
    /// elements), for any type with a decoder, in either byte order.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::{write::Builder, GgmlType, GgufFile};
    /// let x: Vec<f32> = (0..64).map(|i| i as f32 / 16.0).collect();
    /// let mut b = Builder::new();
    /// b.add_tensor_quantized("w", GgmlType::Q8_0, &[32, 2], &x[..])?;
    /// let mut bytes = Vec::new();
    /// b.write(&mut bytes)?;
    /// let file = GgufFile::open(&bytes)?;
    /// let y = file.tensor("w")?.to_f32()?;
    /// assert!(x.iter().zip(&y).all(|(a, b)| (a - b).abs() < 0.02));
    /// # Ok(()) }
    /// ```
    pub fn to_f32(&self) -> Result<Vec<f32>> {
        let data = self.decodable()?;
        let n = usize::try_from(self.element_count()).map_err(|_| {
            self.codec_err(Error::Codec(CodecError::LengthMismatch {
                what: "element count".into(),
                expected: usize::MAX as u64,
                actual: self.element_count(),
            }))
        })?;
        let mut out = vec![0f32; n];
        codec::dequantize_par(self.ggml_type(), self.file_endian(), &data, &mut out)
            .map_err(|e| self.codec_err(e))?;
        Ok(out)
    }

    /// [`to_f32`](Self::to_f32) into `out`, which must hold exactly
    /// [`element_count`](Self::element_count) values. Does not allocate.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let t = file.tensor("token_embd.weight")?;
    /// let mut out = vec![0f32; t.element_count() as usize];
    /// t.to_f32_into(&mut out)?;
    /// assert_eq!(out[1], 1.0);
    /// assert!(t.to_f32_into(&mut [0f32; 3]).is_err()); // wrong length
    /// # Ok(()) }
    /// ```
    pub fn to_f32_into(&self, out: &mut [f32]) -> Result<()> {
        let data = self.decodable()?;
        if out.len() as u64 != self.element_count() {
            return Err(self.codec_err(Error::Codec(CodecError::LengthMismatch {
                what: "f32 output buffer".into(),
                expected: self.element_count(),
                actual: out.len() as u64,
            })));
        }
        codec::dequantize_par(self.ggml_type(), self.file_endian(), &data, out)
            .map_err(|e| self.codec_err(e))
    }

    /// Every element decoded, then rounded to IEEE half precision.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let h = file.tensor("token_embd.weight")?.to_f16()?;
    /// assert_eq!(h[1].to_f32(), 1.0);
    /// # Ok(()) }
    /// ```
    pub fn to_f16(&self) -> Result<Vec<half::f16>> {
        let data = self.decodable()?;
        codec::to_f16(self.ggml_type(), self.file_endian(), &data).map_err(|e| self.codec_err(e))
    }

    /// Every element decoded, then rounded to bfloat16.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let h = file.tensor("token_embd.weight")?.to_bf16()?;
    /// assert_eq!(h[1].to_f32(), 1.0);
    /// # Ok(()) }
    /// ```
    pub fn to_bf16(&self) -> Result<Vec<half::bf16>> {
        let data = self.decodable()?;
        codec::to_bf16(self.ggml_type(), self.file_endian(), &data).map_err(|e| self.codec_err(e))
    }

    /// Decodes the tensor one row (`shape()[0]` elements) at a time into a
    /// reused buffer, so memory stays bounded by one row. As an
    /// [`Iterator`] it yields each row as a new `Vec<f32>`;
    /// [`RowIter::next_row`] lends the buffer instead, without allocating.
    ///
    /// A tensor with no elements (a dimension of 0) has no rows, whatever
    /// its other dimensions: `[0, 3]` yields nothing rather than three
    /// empty rows, so that a shape such as `[0, 2^62]`, legal and free to
    /// store, cannot make a caller loop over 2^62 empty rows.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let t = file.tensor("token_embd.weight")?; // shape [8, 4]
    /// let mut rows = t.rows()?;
    /// assert_eq!(rows.len(), 4);
    /// let mut sum = 0.0;
    /// while let Some(row) = rows.next_row() {
    ///     let row = row?;
    ///     assert_eq!(row.len(), 8);
    ///     sum += row.iter().sum::<f32>();
    /// }
    /// assert_eq!(sum, t.to_f32()?.iter().sum::<f32>());
    /// # Ok(()) }
    /// ```
    pub fn rows(&self) -> Result<RowIter<'f>> {
        let data = self.decodable()?;
        let ty = self.ggml_type();
        let shape = self.shape();
        let row_len = shape.first().copied().unwrap_or(1);
        let (bs, ts) = match (ty.block_size(), ty.type_size()) {
            (Some(bs), Some(ts)) => (bs, ts),
            _ => {
                return Err(Error::Codec(CodecError::UnknownTensorType {
                    tensor: self.name().into(),
                    type_id: ty.id(),
                }))
            }
        };
        // Checked at open: the element count and the byte size fit, and
        // rows are whole blocks. A tensor of no elements has no rows.
        let n_rows = match self.element_count() {
            0 => 0,
            n => n / row_len,
        };
        // At most the tensor's byte size when it has rows.
        let row_bytes = (row_len / bs).saturating_mul(ts);
        if n_rows > 0 && row_bytes.checked_mul(n_rows) != Some(data.len() as u64) {
            return Err(self.codec_err(Error::Codec(CodecError::LengthMismatch {
                what: format!("data of {n_rows} rows of {row_len} {ty} elements"),
                expected: row_bytes.saturating_mul(n_rows),
                actual: data.len() as u64,
            })));
        }
        // With rows, one row is part of the data held in memory, so its
        // lengths fit in `usize`; the buffer grows on the first row.
        Ok(RowIter {
            name: self.name(),
            ty,
            endian: self.file_endian(),
            data,
            row_len: usize::try_from(row_len).unwrap_or(usize::MAX),
            row_bytes: if n_rows > 0 { row_bytes as usize } else { 0 },
            buf: Vec::new(),
            next: 0,
            n_rows: n_rows as usize,
        })
    }

    /// Calls `f(row_index, row)` for every row, decoded one at a time into
    /// one reused buffer (see [`rows`](Self::rows)).
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let mut max = f32::NEG_INFINITY;
    /// file.tensor("token_embd.weight")?.for_each_row(|_, row| {
    ///     max = row.iter().copied().fold(max, f32::max);
    /// })?;
    /// assert_eq!(max, 31.0);
    /// # Ok(()) }
    /// ```
    pub fn for_each_row(&self, mut f: impl FnMut(usize, &[f32])) -> Result<()> {
        let mut rows = self.rows()?;
        let mut i = 0;
        while let Some(row) = rows.next_row() {
            f(i, row?);
            i += 1;
        }
        Ok(())
    }
}

/// Rows of a [`Tensor`], decoded to `f32` one at a time
/// (from [`Tensor::rows`]).
pub struct RowIter<'f> {
    name: &'f str,
    ty: GgmlType,
    endian: Endian,
    data: Cow<'f, [u8]>,
    row_len: usize,
    row_bytes: usize,
    buf: Vec<f32>,
    next: usize,
    n_rows: usize,
}

impl std::fmt::Debug for RowIter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowIter")
            .field("tensor", &self.name)
            .field("row", &self.next)
            .field("rows", &self.n_rows)
            .finish()
    }
}

impl RowIter<'_> {
    /// Elements per row (`shape()[0]`).
    pub fn row_len(&self) -> usize {
        self.row_len
    }

    /// Decodes the next row into the iterator's buffer and lends it.
    pub fn next_row(&mut self) -> Option<Result<&[f32]>> {
        if self.next >= self.n_rows {
            return None;
        }
        let start = self.next * self.row_bytes;
        self.next += 1;
        let bytes = &self.data[start..start + self.row_bytes];
        self.buf.resize(self.row_len, 0.0);
        Some(
            match codec::dequantize(self.ty, self.endian, bytes, &mut self.buf) {
                Ok(()) => Ok(&self.buf[..]),
                Err(e) => {
                    // An error ends the iteration.
                    self.next = self.n_rows;
                    Err(Error::Codec(CodecError::TensorCodec {
                        tensor: self.name.into(),
                        source: Box::new(e),
                    }))
                }
            },
        )
    }
}

impl Iterator for RowIter<'_> {
    type Item = Result<Vec<f32>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row().map(|r| r.map(<[f32]>::to_vec))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.n_rows - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for RowIter<'_> {}
