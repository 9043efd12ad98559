//! Where a tensor's bytes come from when its turn to be written comes.

use std::borrow::Cow;
use std::fmt;
use std::io::Write;

use crate::error::{BuildError, CodecError, Error, Result};
use crate::format::{Endian, GgmlType};
use crate::read::Tensor;

/// A closure that writes a tensor's bytes (in the output's byte order)
/// when its turn comes.
pub type WriteFn<'a> = Box<dyn FnMut(&mut dyn Write) -> std::io::Result<()> + Send + 'a>;

/// The data of one tensor to be written.
///
/// ```
/// use gguf_core::write::TensorData;
/// let owned = TensorData::from(vec![0u8; 16]);
/// let weights = [1.0f32, 2.0];
/// let typed = TensorData::from(&weights[..]); // encoded in the output's byte order
/// # let _ = (owned, typed);
/// ```
#[non_exhaustive]
pub enum TensorData<'a> {
    /// Bytes exactly as they go in the file (already in its byte order).
    Bytes(Cow<'a, [u8]>),
    /// Native-endian numbers (viewed as bytes) of `elem_size` bytes each,
    /// byte-swapped when the output is of the other byte order.
    Native {
        /// The numbers' bytes in this machine's order.
        bytes: Cow<'a, [u8]>,
        /// Size of one number.
        elem_size: usize,
    },
    /// A tensor of another open file, copied without loading it whole.
    File(Tensor<'a>),
    /// A closure that writes the bytes when the tensor's turn comes.
    Fn(WriteFn<'a>),
    /// `f32` values (rows of `shape[0]`, as ggml orders them) quantized to
    /// the tensor's type when its turn comes, a chunk of rows at a time,
    /// with [`codec::quantize`](crate::codec::quantize)'s encoders; F32
    /// is a plain copy. See [`Builder::add_tensor_quantized`](crate::write::Builder::add_tensor_quantized).
    Quantize(Cow<'a, [f32]>),
    /// A tensor of another open file, decoded and re-encoded to the
    /// tensor's type when its turn comes, a chunk of rows at a time (never
    /// the whole tensor in memory). See
    /// [`Builder::requantize_tensor`](crate::write::Builder::requantize_tensor).
    Requantize(Tensor<'a>),
    /// No data yet: supplied later through metadata-first writing.
    Deferred,
}

impl fmt::Debug for TensorData<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorData::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
            TensorData::Native { bytes, elem_size } => write!(
                f,
                "Native({} bytes, {elem_size}-byte elements)",
                bytes.len()
            ),
            TensorData::File(t) => write!(f, "File({:?})", t.name()),
            TensorData::Fn(_) => write!(f, "Fn"),
            TensorData::Quantize(v) => write!(f, "Quantize({} f32 values)", v.len()),
            TensorData::Requantize(t) => write!(f, "Requantize({:?})", t.name()),
            TensorData::Deferred => write!(f, "Deferred"),
        }
    }
}

impl From<Vec<u8>> for TensorData<'_> {
    fn from(v: Vec<u8>) -> Self {
        TensorData::Bytes(Cow::Owned(v))
    }
}

impl<'a> From<&'a [u8]> for TensorData<'a> {
    fn from(v: &'a [u8]) -> Self {
        TensorData::Bytes(Cow::Borrowed(v))
    }
}

impl<'a> From<Tensor<'a>> for TensorData<'a> {
    fn from(t: Tensor<'a>) -> Self {
        TensorData::File(t)
    }
}

macro_rules! from_typed {
    ($($ty:ty),*) => {$(
        impl<'a> From<&'a [$ty]> for TensorData<'a> {
            fn from(v: &'a [$ty]) -> Self {
                TensorData::Native { bytes: Cow::Borrowed(bytemuck::cast_slice(v)), elem_size: std::mem::size_of::<$ty>() }
            }
        }
        impl From<Vec<$ty>> for TensorData<'_> {
            fn from(v: Vec<$ty>) -> Self {
                TensorData::Native { bytes: Cow::Owned(bytemuck::cast_slice(&v).to_vec()), elem_size: std::mem::size_of::<$ty>() }
            }
        }
    )*};
}

from_typed!(f32, f64, half::f16, half::bf16, i8, i16, i32, i64);

/// Chunk size for copies and byte swaps: large enough to stream at disk
/// speed, small enough to keep memory flat.
const CHUNK: usize = 4 << 20;

/// Streams `data` (the data of `tensor`) through `f` in chunks, letting
/// the kernel drop each chunk's pages from a memory map once used, so
/// copying a large tensor keeps memory flat.
fn copy_data(
    tensor: &Tensor<'_>,
    data: &[u8],
    w: &mut dyn Write,
    mut f: impl FnMut(&[u8], &mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let mut done = 0u64;
    for chunk in data.chunks(CHUNK) {
        f(chunk, w)?;
        let end = done + chunk.len() as u64;
        tensor.release_pages(done..end);
        done = end;
    }
    Ok(())
}

impl TensorData<'_> {
    /// Writes the data to `w` in `endian` order, checking it is `nbytes`
    /// long (`shape` gives the row length that sources to encode need).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn write_to(
        &mut self,
        name: &str,
        ty: GgmlType,
        shape: &[u64],
        nbytes: u64,
        endian: Endian,
        w: &mut dyn Write,
    ) -> Result<()> {
        let size_err = |actual: u64| {
            Error::Build(BuildError::TensorDataSize {
                tensor: name.into(),
                expected: nbytes,
                actual,
            })
        };
        let row_len = shape.first().map_or(1, |&r| r as usize);
        match self {
            TensorData::Bytes(b) => {
                if b.len() as u64 != nbytes {
                    return Err(size_err(b.len() as u64));
                }
                w.write_all(b)?;
            }
            TensorData::Native { bytes, elem_size } => {
                if bytes.len() as u64 != nbytes {
                    return Err(size_err(bytes.len() as u64));
                }
                write_swapped(bytes, *elem_size, endian != Endian::NATIVE, w)?;
            }
            TensorData::File(t) => {
                // Data not held (a stream, a remote file): one range read.
                let data = t.read()?;
                if data.len() as u64 != nbytes {
                    return Err(size_err(data.len() as u64));
                }
                let swapper = crate::codec::StreamSwapper::new(ty, t.file_endian() != endian)?;
                match (swapper, data) {
                    (None, Cow::Borrowed(held)) => {
                        copy_data(t, held, w, |chunk, w| w.write_all(chunk))?
                    }
                    (Some(mut s), Cow::Borrowed(held)) => {
                        copy_data(t, held, w, |chunk, w| s.write(chunk, w))?
                    }
                    (None, Cow::Owned(bytes)) => w.write_all(&bytes)?,
                    (Some(mut s), Cow::Owned(bytes)) => s.write(&bytes, w)?,
                }
            }
            TensorData::Fn(f) => {
                let mut counter = CountingWriter {
                    inner: w,
                    written: 0,
                };
                f(&mut counter)?;
                if counter.written != nbytes {
                    return Err(size_err(counter.written));
                }
            }
            TensorData::Quantize(src) => {
                let plan = EncodePlan::new(name, ty, nbytes, endian, src.len(), row_len)?;
                let mut out = Vec::new();
                for chunk in src.chunks(plan.chunk_elems()) {
                    plan.write_chunk(chunk, &mut out, w)?;
                }
            }
            TensorData::Requantize(t) => {
                let src_ty = t.ggml_type();
                let data = t.read()?;
                let n = t.element_count() as usize;
                let plan = EncodePlan::new(name, ty, nbytes, endian, n, row_len)?;
                let src_row_bytes = match (src_ty.block_size(), src_ty.type_size()) {
                    // Saturating: a tensor of no elements may declare a
                    // row longer than memory; it has no rows to convert.
                    (Some(bs), Some(ts)) => {
                        (plan.row_len / bs as usize).saturating_mul(ts as usize)
                    }
                    _ => {
                        return Err(Error::Codec(CodecError::UnknownTensorType {
                            tensor: t.name().into(),
                            type_id: src_ty.id(),
                        }))
                    }
                };
                let (mut buf, mut out) = (Vec::new(), Vec::new());
                let rows_per_chunk = plan.chunk_elems() / plan.row_len;
                for bytes in data.chunks(rows_per_chunk.saturating_mul(src_row_bytes).max(1)) {
                    let rows = bytes.len().checked_div(src_row_bytes).unwrap_or(0);
                    buf.resize(rows * plan.row_len, 0.0);
                    crate::codec::dequantize_par(src_ty, t.file_endian(), bytes, &mut buf)
                        .map_err(|e| {
                            Error::Codec(CodecError::TensorCodec {
                                tensor: t.name().into(),
                                source: Box::new(e),
                            })
                        })?;
                    plan.write_chunk(&buf, &mut out, w)?;
                }
            }
            TensorData::Deferred => {
                return Err(Error::Build(BuildError::MissingTensorData {
                    tensor: name.into(),
                    missing: 1,
                }));
            }
        }
        Ok(())
    }
}

/// Elements encoded per chunk of rows: about 4 Mi values (16 MiB of `f32`).
const ENCODE_CHUNK: usize = 4 << 20;

/// Checks `ty` can be written from `f32`: it needs a quantizer. Either
/// byte order works (big-endian blocks are swapped after quantizing), so
/// `_endian` no longer matters.
pub(crate) fn check_encodable(name: &str, ty: GgmlType, _endian: Endian) -> Result<()> {
    if !crate::codec::can_quantize(ty) {
        return Err(Error::Codec(CodecError::TensorCodec {
            tensor: name.into(),
            source: Box::new(Error::Codec(CodecError::UnsupportedType {
                ty,
                operation: "quantize",
            })),
        }));
    }
    Ok(())
}

/// How `n` `f32` values, rows of `row_len`, are encoded to `ty`: whole
/// rows at a time, on all rayon threads. Quantizers treat blocks
/// independently, so the bytes equal [`crate::codec::quantize`]'s.
struct EncodePlan<'n> {
    name: &'n str,
    ty: GgmlType,
    row_len: usize,
    out_row: usize,
    /// Whether the (little-endian) quantizer output is swapped to big-endian.
    swap: bool,
}

impl<'n> EncodePlan<'n> {
    fn new(
        name: &'n str,
        ty: GgmlType,
        nbytes: u64,
        endian: Endian,
        n: usize,
        row_len: usize,
    ) -> Result<Self> {
        check_encodable(name, ty, endian)?;
        let (bs, ts) = match (ty.block_size(), ty.type_size()) {
            (Some(bs), Some(ts)) => (bs as usize, ts as usize),
            _ => {
                return Err(Error::Codec(CodecError::UnknownTensorType {
                    tensor: name.into(),
                    type_id: ty.id(),
                }))
            }
        };
        if !row_len.is_multiple_of(bs) {
            return Err(Error::Codec(CodecError::TensorCodec {
                tensor: name.into(),
                source: Box::new(Error::Codec(CodecError::PartialBlock {
                    ty,
                    what: "row length",
                    len: row_len as u64,
                    unit: bs as u64,
                })),
            }));
        }
        // A zero-length row (a tensor of no elements) encodes to nothing.
        let row_len = row_len.max(bs);
        let elems = (nbytes / ts as u64).saturating_mul(bs as u64);
        if !n.is_multiple_of(row_len) || elems != n as u64 || !nbytes.is_multiple_of(ts as u64) {
            return Err(Error::Codec(CodecError::TensorCodec {
                tensor: name.into(),
                source: Box::new(Error::Codec(CodecError::LengthMismatch {
                    what: format!("f32 values for {nbytes} bytes of {ty}"),
                    expected: elems,
                    actual: n as u64,
                })),
            }));
        }
        Ok(EncodePlan {
            name,
            ty,
            row_len,
            out_row: row_len / bs * ts,
            swap: endian != Endian::Little,
        })
    }

    /// Elements per chunk: whole rows, at least one.
    fn chunk_elems(&self) -> usize {
        (ENCODE_CHUNK / self.row_len).max(1) * self.row_len
    }

    /// Encodes `src` (whole rows) into `out` and writes it.
    fn write_chunk(&self, src: &[f32], out: &mut Vec<u8>, w: &mut dyn Write) -> Result<()> {
        let rows = src.len() / self.row_len;
        out.resize(rows * self.out_row, 0);
        // Rows on every core with the `parallel` feature; the same bytes
        // either way.
        #[cfg(feature = "parallel")]
        let encoded = {
            use rayon::prelude::*;
            src.par_chunks(self.row_len)
                .zip(out.par_chunks_mut(self.out_row))
                .try_for_each(|(s, o)| crate::codec::quantize_into(self.ty, s, o))
        };
        #[cfg(not(feature = "parallel"))]
        let encoded = src
            .chunks(self.row_len)
            .zip(out.chunks_mut(self.out_row))
            .try_for_each(|(s, o)| crate::codec::quantize_into(self.ty, s, o));
        encoded.map_err(|e| {
            Error::Codec(CodecError::TensorCodec {
                tensor: self.name.into(),
                source: Box::new(e),
            })
        })?;
        if self.swap {
            crate::codec::swap_byte_order(self.ty, out)?;
        }
        w.write_all(out)?;
        Ok(())
    }
}

fn write_swapped(
    bytes: &[u8],
    elem_size: usize,
    swap: bool,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    if !swap || elem_size <= 1 {
        return w.write_all(bytes);
    }
    let mut buf = Vec::with_capacity(CHUNK.min(bytes.len()));
    for chunk in bytes.chunks(CHUNK - CHUNK % elem_size) {
        buf.clear();
        buf.extend_from_slice(chunk);
        for e in buf.chunks_exact_mut(elem_size) {
            e.reverse();
        }
        w.write_all(&buf)?;
    }
    Ok(())
}

/// Counts what a closure writes, so its length can be checked.
pub(crate) struct CountingWriter<'w> {
    pub inner: &'w mut dyn Write,
    pub written: u64,
}

impl Write for CountingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Copies `len` bytes at `offset` of `src` to `dst` at `to` inside the
/// kernel (`copy_file_range`: no pass through user space, shared extents
/// on filesystems that support them), in calls of up to `piece` bytes (and
/// at most 1 GiB), telling `copied` the bytes copied so far after each;
/// `dst`'s file position is left alone. Returns `false`, having copied
/// nothing, when the kernel cannot copy between these files.
#[cfg(target_os = "linux")]
pub(crate) fn kernel_copy(
    src: &std::fs::File,
    offset: u64,
    len: u64,
    dst: &std::fs::File,
    to: u64,
    piece: u64,
    copied: &mut dyn FnMut(u64),
) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut off_in = i64::try_from(offset).map_err(std::io::Error::other)?;
    let mut off_out = i64::try_from(to).map_err(std::io::Error::other)?;
    let mut left = len;
    while left > 0 {
        let want = usize::try_from(left.min(piece).min(1 << 30)).unwrap_or(1 << 30);
        // SAFETY: both descriptors are open for the duration of the call
        // (borrowed `File`s); `off_in` and `off_out` are live locals the
        // kernel reads and advances.
        #[allow(unsafe_code)]
        let n = unsafe {
            libc::copy_file_range(
                src.as_raw_fd(),
                &mut off_in,
                dst.as_raw_fd(),
                &mut off_out,
                want,
                0,
            )
        };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            let unsupported = matches!(
                err.raw_os_error(),
                Some(libc::EXDEV | libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL | libc::EBADF)
            );
            if unsupported && left == len {
                return Ok(false);
            }
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        left -= n as u64;
        copied(len - left);
    }
    Ok(true)
}

/// No kernel-side copy on this system: always falls back to a plain copy.
#[cfg(not(target_os = "linux"))]
pub(crate) fn kernel_copy(
    _src: &std::fs::File,
    _offset: u64,
    _len: u64,
    _dst: &std::fs::File,
    _to: u64,
    _piece: u64,
    _copied: &mut dyn FnMut(u64),
) -> std::io::Result<bool> {
    Ok(false)
}
