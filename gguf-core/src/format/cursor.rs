//! A bounds-checked reader over a byte slice, for the parser.
//!
//! It is a `Read + Seek` stream, so the derive-generated wire codecs
//! ([`wire`](Cursor::wire)) parse the header, KV headers and tensor infos
//! straight from the slice; the hand-written reads below walk values and
//! the bodies of large arrays, where per-element overhead shows.
//!
//! Every read checks the remaining bytes first and fails with
//! [`FormatError::Truncated`]; nothing here allocates on behalf of the file.

use std::io::{self, Read, Seek, SeekFrom};

use binrw::BinRead;

use crate::error::{Error, FormatError, Result};
use crate::format::{Endian, WireFormat};

/// Position in a byte slice plus the context needed to decode numbers.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    ctx: WireFormat,
    /// Length of the whole file, which may exceed `buf` when only the header
    /// region is loaded: counts are checked against it, reads against `buf`.
    file_len: u64,
}

macro_rules! read_num {
    ($($name:ident: $ty:ty),*) => {$(
        #[inline]
        pub(crate) fn $name(&mut self, what: impl FnOnce() -> String) -> Result<$ty> {
            let bytes = self.array::<{ std::mem::size_of::<$ty>() }>(what)?;
            Ok(match self.ctx.endian {
                Endian::Little => <$ty>::from_le_bytes(bytes),
                Endian::Big => <$ty>::from_be_bytes(bytes),
            })
        }
    )*};
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8], ctx: WireFormat, file_len: u64) -> Self {
        Cursor {
            buf,
            pos: 0,
            ctx,
            file_len,
        }
    }

    pub(crate) fn at(buf: &'a [u8], pos: usize, ctx: WireFormat) -> Self {
        Cursor {
            buf,
            pos,
            ctx,
            file_len: buf.len() as u64,
        }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The whole buffer.
    pub(crate) fn buf(&self) -> &'a [u8] {
        self.buf
    }

    /// A sub-slice of the buffer between two positions already read.
    pub(crate) fn buf_range(&self, start: usize, end: usize) -> &'a [u8] {
        &self.buf[start..end]
    }

    pub(crate) fn set_ctx(&mut self, ctx: WireFormat) {
        self.ctx = ctx;
    }

    pub(crate) fn wire_format(&self) -> WireFormat {
        self.ctx
    }

    /// Moves to `pos`, a position inside the buffer.
    pub(crate) fn set_pos(&mut self, pos: usize) {
        self.pos = pos.min(self.buf.len());
    }

    /// Reads a derive-generated wire type at the cursor and maps binrw's
    /// errors to ours, the `what` of each left empty for the caller
    /// ([`Error::what`]): a short read is [`FormatError::Truncated`] at the
    /// field that ran out, a crate error carried by
    /// [`binrw::Error::Custom`] is returned as is, except that a length
    /// past the end of the buffer but not of the file (a header-only
    /// buffer) is a truncation rather than [`FormatError::CountTooLarge`].
    #[inline]
    pub(crate) fn wire<T: BinRead>(&mut self, args: T::Args<'_>) -> Result<T> {
        T::read_options(self, self.ctx.endian.binrw(), args).map_err(|e| self.wire_error(e))
    }

    #[cold]
    fn wire_error(&self, e: binrw::Error) -> Error {
        let e = match e {
            binrw::Error::Backtrace(bt) => *bt.error,
            e => e,
        };
        let err = match e {
            binrw::Error::Io(e) if e.get_ref().is_some_and(|i| i.is::<Error>()) => {
                match e.into_inner().map(|i| i.downcast::<Error>()) {
                    Some(Ok(err)) => *err,
                    _ => Error::from(io::Error::from(io::ErrorKind::InvalidData)),
                }
            }
            binrw::Error::Io(e) => Error::from(e),
            binrw::Error::Custom { err, .. } => match err.downcast::<Error>() {
                Ok(err) => *err,
                Err(other) => Error::from(io::Error::new(
                    io::ErrorKind::InvalidData,
                    other.to_string(),
                )),
            },
            other => Error::from(io::Error::new(
                io::ErrorKind::InvalidData,
                other.to_string(),
            )),
        };
        match err {
            Error::Format(FormatError::CountTooLarge {
                what,
                offset,
                count,
                min_bytes,
                remaining,
            }) => {
                let after = offset + self.ctx.count_width() as u64;
                let in_file = self.file_len.saturating_sub(after);
                if min_bytes <= in_file {
                    Error::Format(FormatError::Truncated {
                        what,
                        offset: after,
                        needed: min_bytes - remaining,
                    })
                } else {
                    Error::Format(FormatError::CountTooLarge {
                        what,
                        offset,
                        count,
                        min_bytes,
                        remaining: in_file,
                    })
                }
            }
            other => other,
        }
    }

    /// Bytes of the whole file left after the current position.
    pub(crate) fn remaining_in_file(&self) -> u64 {
        self.file_len.saturating_sub(self.pos as u64)
    }

    #[inline]
    pub(crate) fn take(&mut self, n: u64, what: impl FnOnce() -> String) -> Result<&'a [u8]> {
        let available = self.buf.len() - self.pos;
        if n > available as u64 {
            return Err(Error::Format(FormatError::Truncated {
                what: what(),
                offset: self.pos as u64,
                needed: n - available as u64,
            }));
        }
        let start = self.pos;
        self.pos += n as usize;
        Ok(&self.buf[start..self.pos])
    }

    #[inline]
    pub(crate) fn array<const N: usize>(
        &mut self,
        what: impl FnOnce() -> String,
    ) -> Result<[u8; N]> {
        let bytes = self.take(N as u64, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    read_num!(u8: u8, i8: i8, u16: u16, i16: i16, u32: u32, i32: i32, u64: u64, i64: i64, f32: f32, f64: f64);

    /// A length or count: `u32` in version 1, `u64` after.
    #[inline]
    pub(crate) fn count(&mut self, what: impl FnOnce() -> String) -> Result<u64> {
        if self.ctx.version == 1 {
            self.u32(what).map(u64::from)
        } else {
            self.u64(what)
        }
    }

    /// Checks that `count` items of at least `min_size` bytes each fit in
    /// what remains of the file, before anything is allocated for them.
    pub(crate) fn check_count(
        &self,
        count: u64,
        min_size: u64,
        count_offset: usize,
        what: impl FnOnce() -> String,
    ) -> Result<()> {
        let min_bytes = count.saturating_mul(min_size);
        let remaining = self.remaining_in_file();
        if min_bytes > remaining {
            return Err(Error::Format(FormatError::CountTooLarge {
                what: what(),
                offset: count_offset as u64,
                count,
                min_bytes,
                remaining,
            }));
        }
        Ok(())
    }

    /// The bytes of a length-prefixed string, not validated as UTF-8.
    #[inline]
    fn str_bytes(&mut self, what: &impl Fn() -> String) -> Result<&'a [u8]> {
        let len_at = self.pos;
        let len = self.count(what)?;
        // Fast path: the string lies inside the buffer, hence inside the file.
        if len <= (self.buf.len() - self.pos) as u64 {
            let start = self.pos;
            self.pos += len as usize;
            return Ok(&self.buf[start..self.pos]);
        }
        // Past the buffer: a length the file cannot hold is a lie
        // (CountTooLarge), one it can is a short buffer (Truncated).
        self.check_count(len, 1, len_at, what)?;
        self.take(len, what)
    }

    /// A length-prefixed UTF-8 string.
    #[inline]
    pub(crate) fn str(&mut self, what: impl Fn() -> String) -> Result<&'a str> {
        let bytes = self.str_bytes(&what)?;
        std::str::from_utf8(bytes).map_err(|_| {
            Error::Format(FormatError::InvalidUtf8 {
                what: what(),
                offset: (self.pos - bytes.len()) as u64,
            })
        })
    }

    /// Skips `count` length-prefixed strings without validating their
    /// contents, calling `each(length_field_offset, length)` for each.
    ///
    /// The hot loop of opening a file (vocabularies, merges): lengths are
    /// decoded straight from the buffer; anything unusual (a short buffer,
    /// a length past it) goes through [`str_bytes`](Self::str_bytes) for
    /// the exact error.
    #[inline]
    pub(crate) fn skip_strs(
        &mut self,
        count: u64,
        each: impl FnMut(usize, u64),
        what: impl Fn() -> String,
    ) -> Result<()> {
        // One copy of the loop per length width and byte order, so the
        // loop itself has no branches on them.
        match (self.ctx.version != 1, self.ctx.endian) {
            (true, Endian::Little) => self.skip_strs_as::<8, false>(count, each, what),
            (true, Endian::Big) => self.skip_strs_as::<8, true>(count, each, what),
            (false, Endian::Little) => self.skip_strs_as::<4, false>(count, each, what),
            (false, Endian::Big) => self.skip_strs_as::<4, true>(count, each, what),
        }
    }

    #[inline(always)]
    fn skip_strs_as<const W: usize, const BIG: bool>(
        &mut self,
        count: u64,
        mut each: impl FnMut(usize, u64),
        what: impl Fn() -> String,
    ) -> Result<()> {
        let buf = self.buf;
        // The position lives in a register; the loop is bound by the chain
        // load length -> add -> load next length.
        let mut pos = self.pos;
        for _ in 0..count {
            let len = buf.get(pos..pos + W).map(|field| {
                let mut b = [0u8; 8];
                if BIG {
                    b[8 - W..].copy_from_slice(field);
                    u64::from_be_bytes(b)
                } else {
                    b[..W].copy_from_slice(field);
                    u64::from_le_bytes(b)
                }
            });
            let body = pos + W;
            match len {
                Some(len) if len <= (buf.len() - body) as u64 => {
                    each(pos, len);
                    pos = body + len as usize;
                }
                _ => {
                    // A short buffer or a length past it: the exact error.
                    self.pos = pos;
                    let n = self.str_bytes(&what)?.len() as u64;
                    each(pos, n);
                    pos = self.pos;
                }
            }
        }
        self.pos = pos;
        Ok(())
    }
}

/// The slice as a stream for the wire codecs. A short read fails with an
/// [`io::ErrorKind::UnexpectedEof`] carrying [`FormatError::Truncated`] (offset
/// and missing bytes of the field), and consumes nothing.
impl Read for Cursor<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }

    #[inline]
    fn read_exact(&mut self, out: &mut [u8]) -> io::Result<()> {
        let available = self.buf.len() - self.pos;
        if out.len() > available {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                Error::Format(FormatError::Truncated {
                    what: String::new(),
                    offset: self.pos as u64,
                    needed: (out.len() - available) as u64,
                }),
            ));
        }
        out.copy_from_slice(&self.buf[self.pos..self.pos + out.len()]);
        self.pos += out.len();
        Ok(())
    }
}

/// Seeking stays inside the slice: positions past its end are refused.
impl Seek for Cursor<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => i128::from(p),
            SeekFrom::End(d) => self.buf.len() as i128 + i128::from(d),
            SeekFrom::Current(d) => self.pos as i128 + i128::from(d),
        };
        if !(0..=self.buf.len() as i128).contains(&target) {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        self.pos = target as usize;
        Ok(self.pos as u64)
    }

    #[inline]
    fn stream_position(&mut self) -> io::Result<u64> {
        Ok(self.pos as u64)
    }
}
