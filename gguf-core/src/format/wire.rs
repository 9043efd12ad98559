//! Version-dependent wire primitives: counts, strings and dimensions.
//!
//! Version 1 stores lengths, counts and dimensions as `u32`; later versions
//! as `u64`. These types carry that rule so wire structs don't repeat it.
//! Like every wire codec, they take the version from their [`WireFormat`]
//! argument and the byte order from binrw's own `endian` argument.
//!
//! Strings come in three forms, one per use: [`StrSpan`] is what the reader
//! parses (where a validated string lies, so it can borrow it from the
//! file's bytes), [`GgufStr`] is what the writer encodes (a borrowed
//! `&str`, no copy), [`GgufString`] owns its text for standalone decoding.
//! Wire structs are generic over the string form.

use std::io::{Read, Seek, SeekFrom, Write};

use binrw::{BinRead, BinResult, BinWrite};

use crate::error::{Error, FormatError};
use crate::format::{WireFormat, MAX_DIMS};

/// A length, count or dimension: `u32` in version 1, `u64` after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct Count(pub u64);

impl BinRead for Count {
    type Args<'a> = WireFormat;
    #[inline]
    fn read_options<R: Read + Seek>(
        reader: &mut R,
        endian: binrw::Endian,
        ctx: WireFormat,
    ) -> BinResult<Self> {
        Ok(Count(if ctx.version == 1 {
            u32::read_options(reader, endian, ())?.into()
        } else {
            u64::read_options(reader, endian, ())?
        }))
    }
}

impl BinWrite for Count {
    type Args<'a> = WireFormat;
    fn write_options<W: Write + Seek>(
        &self,
        writer: &mut W,
        endian: binrw::Endian,
        ctx: WireFormat,
    ) -> BinResult<()> {
        if ctx.version == 1 {
            let v = u32::try_from(self.0).map_err(|_| binrw::Error::AssertFail {
                pos: writer.stream_position().unwrap_or(0),
                message: format!("count {} does not fit the u32 of GGUF version 1", self.0),
            })?;
            v.write_options(writer, endian, ())
        } else {
            self.0.write_options(writer, endian, ())
        }
    }
}

/// Where a length-prefixed UTF-8 string lies in the stream it was read
/// from: reading checks the length against the bytes left and validates
/// the text, without allocating; the reader then borrows the `&str` from
/// its buffer with [`get`](Self::get).
///
/// Errors are [`binrw::Error::Custom`] carrying a crate [`Error`]:
/// [`FormatError::CountTooLarge`] for a length past the end of the stream,
/// [`FormatError::InvalidUtf8`] for bad text (their `what` left empty for the
/// caller to name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct StrSpan {
    /// Stream offset of the first byte of text (after the length field).
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

impl StrSpan {
    /// The text in `buf`, the bytes of the stream the span was read from;
    /// `None` if the span is not inside `buf` or not UTF-8.
    pub fn get(self, buf: &[u8]) -> Option<&str> {
        let start = usize::try_from(self.offset).ok()?;
        let end = start.checked_add(usize::try_from(self.len).ok()?)?;
        std::str::from_utf8(buf.get(start..end)?).ok()
    }

    /// Stream offset just past the text.
    pub fn end(self) -> u64 {
        self.offset + self.len
    }
}

impl BinRead for StrSpan {
    type Args<'a> = WireFormat;
    fn read_options<R: Read + Seek>(
        reader: &mut R,
        endian: binrw::Endian,
        ctx: WireFormat,
    ) -> BinResult<Self> {
        let len_at = reader.stream_position()?;
        let len = Count::read_options(reader, endian, ctx)?.0;
        let offset = reader.stream_position()?;
        let end = reader.seek(SeekFrom::End(0))?;
        reader.seek(SeekFrom::Start(offset))?;
        let remaining = end.saturating_sub(offset);
        if len > remaining {
            return Err(custom(
                len_at,
                Error::Format(FormatError::CountTooLarge {
                    what: String::new(),
                    offset: len_at,
                    count: len,
                    min_bytes: len,
                    remaining,
                }),
            ));
        }
        // Validate in small pieces through a stack buffer: the length is
        // the file's word, so nothing is allocated for it. A character cut
        // by a piece's end is carried over to the next piece.
        let mut piece = [0u8; 256];
        let (mut carry, mut left) = (0usize, len);
        while left > 0 {
            let n = (piece.len() - carry).min(left as usize);
            reader.read_exact(&mut piece[carry..carry + n])?;
            left -= n as u64;
            let filled = carry + n;
            carry = match std::str::from_utf8(&piece[..filled]) {
                Ok(_) => 0,
                Err(e) if e.error_len().is_none() && left > 0 => {
                    piece.copy_within(e.valid_up_to()..filled, 0);
                    filled - e.valid_up_to()
                }
                Err(_) => {
                    return Err(custom(
                        len_at,
                        Error::Format(FormatError::InvalidUtf8 {
                            what: String::new(),
                            offset,
                        }),
                    ))
                }
            };
        }
        Ok(StrSpan { offset, len })
    }
}

fn custom(pos: u64, err: Error) -> binrw::Error {
    binrw::Error::Custom {
        pos,
        err: Box::new(err),
    }
}

/// A borrowed string to encode: the writer's side of a wire string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct GgufStr<'a>(pub &'a str);

impl BinWrite for GgufStr<'_> {
    type Args<'a> = WireFormat;
    fn write_options<W: Write + Seek>(
        &self,
        writer: &mut W,
        endian: binrw::Endian,
        ctx: WireFormat,
    ) -> BinResult<()> {
        Count(self.0.len() as u64).write_options(writer, endian, ctx)?;
        writer.write_all(self.0.as_bytes())?;
        Ok(())
    }
}

/// An owned length-prefixed UTF-8 string, for decoding wire structs on
/// their own (tests); the reader uses [`StrSpan`] instead.
#[cfg(any(test, feature = "testing"))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct GgufString(pub String);

#[cfg(any(test, feature = "testing"))]
impl BinRead for GgufString {
    type Args<'a> = WireFormat;
    fn read_options<R: Read + Seek>(
        reader: &mut R,
        endian: binrw::Endian,
        ctx: WireFormat,
    ) -> BinResult<Self> {
        // The span checks the length against the stream before the
        // buffer below is allocated.
        let span = StrSpan::read_options(reader, endian, ctx)?;
        reader.seek(SeekFrom::Start(span.offset))?;
        let mut bytes = vec![0u8; span.len as usize];
        reader.read_exact(&mut bytes)?;
        String::from_utf8(bytes).map(GgufString).map_err(|_| {
            custom(
                span.offset,
                Error::Format(FormatError::InvalidUtf8 {
                    what: String::new(),
                    offset: span.offset,
                }),
            )
        })
    }
}

#[cfg(any(test, feature = "testing"))]
impl BinWrite for GgufString {
    type Args<'a> = WireFormat;
    fn write_options<W: Write + Seek>(
        &self,
        writer: &mut W,
        endian: binrw::Endian,
        ctx: WireFormat,
    ) -> BinResult<()> {
        GgufStr(&self.0).write_options(writer, endian, ctx)
    }
}

/// A tensor's dimensions, innermost first, held inline (at most
/// [`MAX_DIMS`]); unused trailing dimensions are 1, as in ggml.
///
/// Its count is stored apart (`n_dims` in a tensor info), so reading takes
/// `(WireFormat, count)` and fails with [`FormatError::TooManyDims`] (tensor name left
/// empty, `offset` the position of the first dimension) before reading
/// anything when the count exceeds [`MAX_DIMS`]; writing writes only the
/// dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Dims {
    len: u8,
    dims: [u64; MAX_DIMS],
}

impl Dims {
    /// The dimensions of `shape`, or `None` if it has more than [`MAX_DIMS`].
    pub fn new(shape: &[u64]) -> Option<Self> {
        let mut dims = [1u64; MAX_DIMS];
        dims.get_mut(..shape.len())?.copy_from_slice(shape);
        Some(Dims {
            len: shape.len() as u8,
            dims,
        })
    }

    /// The dimensions, `len()` of them.
    pub fn as_slice(&self) -> &[u64] {
        &self.dims[..self.len as usize]
    }

    /// All [`MAX_DIMS`] dimensions, the unused ones 1.
    pub fn padded(&self) -> [u64; MAX_DIMS] {
        self.dims
    }
}

impl BinRead for Dims {
    type Args<'a> = (WireFormat, u64);
    #[inline]
    fn read_options<R: Read + Seek>(
        reader: &mut R,
        endian: binrw::Endian,
        (ctx, count): (WireFormat, u64),
    ) -> BinResult<Self> {
        if count > MAX_DIMS as u64 {
            let pos = reader.stream_position()?;
            return Err(custom(
                pos,
                Error::Format(FormatError::TooManyDims {
                    offset: pos,
                    tensor: String::new(),
                    n_dims: u32::try_from(count).unwrap_or(u32::MAX),
                }),
            ));
        }
        let mut dims = [1u64; MAX_DIMS];
        for d in &mut dims[..count as usize] {
            *d = Count::read_options(reader, endian, ctx)?.0;
        }
        Ok(Dims {
            len: count as u8,
            dims,
        })
    }
}

impl BinWrite for Dims {
    type Args<'a> = WireFormat;
    fn write_options<W: Write + Seek>(
        &self,
        writer: &mut W,
        endian: binrw::Endian,
        ctx: WireFormat,
    ) -> BinResult<()> {
        for &d in self.as_slice() {
            Count(d).write_options(writer, endian, ctx)?;
        }
        Ok(())
    }
}
