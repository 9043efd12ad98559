//! Version-dependent wire primitives: counts and strings.
//!
//! Version 1 stores lengths, counts and dimensions as `u32`; later versions
//! as `u64`. These types carry that rule so wire structs don't repeat it.

use std::io::{Read, Seek, SeekFrom, Write};

use binrw::{BinRead, BinResult, BinWrite};

use crate::format::Ctx;

/// A length, count or dimension: `u32` in version 1, `u64` after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Count(pub u64);

impl BinRead for Count {
    type Args<'a> = Ctx;
    fn read_options<R: Read + Seek>(reader: &mut R, _: binrw::Endian, ctx: Ctx) -> BinResult<Self> {
        let endian = ctx.endian.into();
        Ok(Count(if ctx.version == 1 {
            u32::read_options(reader, endian, ())?.into()
        } else {
            u64::read_options(reader, endian, ())?
        }))
    }
}

impl BinWrite for Count {
    type Args<'a> = Ctx;
    fn write_options<W: Write + Seek>(
        &self,
        writer: &mut W,
        _: binrw::Endian,
        ctx: Ctx,
    ) -> BinResult<()> {
        let endian = ctx.endian.into();
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

/// A length-prefixed UTF-8 string (no NUL).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct GgufString(pub String);

impl BinRead for GgufString {
    type Args<'a> = Ctx;
    fn read_options<R: Read + Seek>(
        reader: &mut R,
        endian: binrw::Endian,
        ctx: Ctx,
    ) -> BinResult<Self> {
        let pos = reader.stream_position()?;
        let len = Count::read_options(reader, endian, ctx)?.0;
        // Check the length against the stream before allocating: binrw's
        // own `count` would reserve `len` bytes up front.
        let here = reader.stream_position()?;
        let end = reader.seek(SeekFrom::End(0))?;
        reader.seek(SeekFrom::Start(here))?;
        if len > end - here {
            return Err(binrw::Error::AssertFail {
                pos,
                message: format!("string length {len} exceeds the {} bytes left", end - here),
            });
        }
        let mut bytes = vec![0u8; len as usize];
        reader.read_exact(&mut bytes)?;
        String::from_utf8(bytes)
            .map(GgufString)
            .map_err(|_| binrw::Error::AssertFail {
                pos,
                message: "string is not valid UTF-8".into(),
            })
    }
}

impl BinWrite for GgufString {
    type Args<'a> = Ctx;
    fn write_options<W: Write + Seek>(
        &self,
        writer: &mut W,
        endian: binrw::Endian,
        ctx: Ctx,
    ) -> BinResult<()> {
        Count(self.0.len() as u64).write_options(writer, endian, ctx)?;
        writer.write_all(self.0.as_bytes())?;
        Ok(())
    }
}
