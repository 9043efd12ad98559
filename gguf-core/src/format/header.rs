//! The file header: magic, version, tensor count, metadata count.

use gguf_derive::GgufCodec;

use crate::format::wire::Count;

/// The header as stored. The version field is read in the context's byte
/// order; detecting that order is the reader's job (see
/// [`Endian`](crate::format::Endian)).
#[derive(Debug, Clone, PartialEq, Eq, GgufCodec)]
pub(crate) struct HeaderWire {
    /// `b"GGUF"`, never byte-swapped.
    pub magic: [u8; 4],
    /// 1, 2 or 3.
    pub version: u32,
    /// Number of tensor infos.
    pub tensor_count: Count,
    /// Number of metadata entries.
    pub kv_count: Count,
}
