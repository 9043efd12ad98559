//! Where a tensor's bytes come from when its turn to be written comes.

use std::borrow::Cow;
use std::fmt;
use std::io::Write;

use crate::error::{Error, Result};
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

/// The ggml type that typed data of element type `T` is written as.
pub trait TensorElement: bytemuck::Pod {
    /// The matching ggml type.
    const GGML_TYPE: GgmlType;
}

macro_rules! element {
    ($($ty:ty => $g:ident),*) => {$(
        impl TensorElement for $ty {
            const GGML_TYPE: GgmlType = GgmlType::$g;
        }
    )*};
}

element!(f32 => F32, f64 => F64, half::f16 => F16, half::bf16 => BF16, i8 => I8, i16 => I16, i32 => I32, i64 => I64);

/// Chunk size for copies and byte swaps: large enough to stream at disk
/// speed, small enough to keep memory flat.
pub(crate) const CHUNK: usize = 4 << 20;

impl TensorData<'_> {
    /// Writes the data to `w` in `endian` order, checking it is `nbytes` long.
    pub(crate) fn write_to(
        &mut self,
        name: &str,
        ty: GgmlType,
        nbytes: u64,
        endian: Endian,
        w: &mut dyn Write,
    ) -> Result<()> {
        let size_err = |actual: u64| Error::TensorDataSize {
            tensor: name.into(),
            expected: nbytes,
            actual,
        };
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
                let data = t.data()?;
                if data.len() as u64 != nbytes {
                    return Err(size_err(data.len() as u64));
                }
                let src_endian = t.file_endian();
                if src_endian != endian && !ty.is_plain() && nbytes > 0 {
                    return Err(Error::InvalidTensor {
                        tensor: name.into(),
                        reason: format!("changing the byte order of {ty} data is not supported"),
                    });
                }
                let elem = ty.type_size().unwrap_or(1) as usize;
                t.copy_data(w, |chunk, w| {
                    write_swapped(chunk, elem, src_endian != endian, w)
                })?;
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
            TensorData::Deferred => {
                return Err(Error::MissingTensorData {
                    missing: 1,
                    next: name.into(),
                });
            }
        }
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

/// Copies `len` bytes at `offset` of `src` to the current position of
/// `dst` inside the kernel (`copy_file_range`: no pass through user space,
/// shared extents on filesystems that support them). Returns `false`,
/// having copied nothing, when the kernel cannot copy between these files.
#[cfg(target_os = "linux")]
pub(crate) fn kernel_copy(
    src: &std::fs::File,
    offset: u64,
    len: u64,
    dst: &std::fs::File,
) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut off_in = i64::try_from(offset).map_err(std::io::Error::other)?;
    let mut left = len;
    while left > 0 {
        let want = usize::try_from(left.min(1 << 30)).unwrap_or(1 << 30);
        // SAFETY: both descriptors are open for the duration of the call
        // (borrowed `File`s); `off_in` is a live local the kernel reads and
        // advances; a null `off_out` makes the kernel use and advance
        // `dst`'s own file position, as a `write` would.
        let n = unsafe {
            libc::copy_file_range(
                src.as_raw_fd(),
                &mut off_in,
                dst.as_raw_fd(),
                std::ptr::null_mut(),
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
) -> std::io::Result<bool> {
    Ok(false)
}
