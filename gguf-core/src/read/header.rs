//! The header: magic, version (which also tells the byte order) and counts.

use crate::error::{Error, FormatError, Result};
use crate::format::cursor::Cursor;
use crate::format::{Endian, HeaderWire, WireFormat, MAGIC};

/// What the header says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    pub ctx: WireFormat,
    pub tensor_count: u64,
    pub kv_count: u64,
    /// Offset of the tensor count field, for messages.
    pub tensor_count_at: usize,
    /// Offset of the KV count field, for messages.
    pub kv_count_at: usize,
}

/// Reads the header with [`HeaderWire`]'s codec, once the magic and the
/// version's raw bytes, peeked first, have told the byte order it needs.
pub(crate) fn read_header(cur: &mut Cursor<'_>) -> Result<Header> {
    let magic = cur.array::<4>(|| "magic".into())?;
    if magic != MAGIC {
        return Err(Error::Format(FormatError::BadMagic { found: magic }));
    }
    let raw = cur.array::<4>(|| "version".into())?;
    let (version, endian) = detect_version(raw);
    if !(1..=3).contains(&version) {
        return Err(Error::Format(FormatError::UnsupportedVersion { version }));
    }
    let ctx = WireFormat { version, endian };
    cur.set_ctx(ctx);
    let tensor_count_at = 8;
    let kv_count_at = tensor_count_at + ctx.count_width();
    cur.set_pos(0);
    let header: HeaderWire = cur.wire(ctx).map_err(|e| match e {
        Error::Format(FormatError::Truncated { offset, .. }) if offset >= kv_count_at as u64 => {
            e.what(|| "metadata count".into())
        }
        e => e.what(|| "tensor count".into()),
    })?;
    Ok(Header {
        ctx,
        tensor_count: header.tensor_count.0,
        kv_count: header.kv_count.0,
        tensor_count_at,
        kv_count_at,
    })
}

/// GGUF has no byte-order flag: versions are small, so a version whose low
/// 16 bits read as zero in little-endian was written big-endian.
pub(crate) fn detect_version(raw: [u8; 4]) -> (u32, Endian) {
    let le = u32::from_le_bytes(raw);
    if le != 0 && le & 0xFFFF == 0 {
        (u32::from_be_bytes(raw), Endian::Big)
    } else {
        (le, Endian::Little)
    }
}
