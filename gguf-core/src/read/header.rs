//! The header: magic, version (which also tells the byte order) and counts.

use crate::error::{Error, Result};
use crate::format::cursor::Cursor;
use crate::format::{Ctx, Endian, MAGIC};

/// What the header says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    pub ctx: Ctx,
    pub tensor_count: u64,
    pub kv_count: u64,
    /// Offset of the tensor count field, for messages.
    pub tensor_count_at: usize,
    /// Offset of the KV count field, for messages.
    pub kv_count_at: usize,
}

pub(crate) fn read_header(cur: &mut Cursor<'_>) -> Result<Header> {
    let magic = cur.array::<4>(|| "magic".into())?;
    if magic != MAGIC {
        return Err(Error::BadMagic { found: magic });
    }
    let raw = cur.array::<4>(|| "version".into())?;
    let (version, endian) = detect_version(raw);
    if !(1..=3).contains(&version) {
        return Err(Error::UnsupportedVersion { version });
    }
    cur.set_ctx(Ctx { version, endian });
    let tensor_count_at = cur.pos();
    let tensor_count = cur.count(|| "tensor count".into())?;
    let kv_count_at = cur.pos();
    let kv_count = cur.count(|| "metadata count".into())?;
    Ok(Header {
        ctx: cur.ctx(),
        tensor_count,
        kv_count,
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
