//! The per-file context every wire codec needs: format version and byte order.

use std::fmt;

/// Byte order of a GGUF file. GGUF has no flag for it: a file whose version
/// field reads with its low 16 bits zero in little-endian is big-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Endian {
    /// Little-endian, what nearly every GGUF file uses.
    #[default]
    Little,
    /// Big-endian (s390x and other big-endian hosts).
    Big,
}

impl Endian {
    /// The byte order of the machine this code runs on.
    pub const NATIVE: Endian = if cfg!(target_endian = "big") {
        Endian::Big
    } else {
        Endian::Little
    };
}

impl fmt::Display for Endian {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Endian::Little => "little",
            Endian::Big => "big",
        })
    }
}

impl Endian {
    /// binrw's name for this byte order, the `endian` argument of the wire
    /// codecs. A method of the crate, not a `From` impl, so that no public
    /// item names a binrw type and a binrw release is not a breaking change
    /// of ours.
    pub(crate) fn binrw(self) -> binrw::Endian {
        match self {
            Endian::Little => binrw::Endian::Little,
            Endian::Big => binrw::Endian::Big,
        }
    }
}

/// Version and byte order of a file: what its reader and writer carry.
///
/// Version 1 stores string lengths, array lengths, counts and tensor
/// dimensions as `u32`; versions 2 and 3 store them as `u64`. The wire
/// codecs take a `WireFormat` as their binrw arguments for its version, and their
/// byte order from binrw's own `endian` argument, to which the reader and
/// writer pass `ctx.endian.binrw()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WireFormat {
    /// GGUF version: 1, 2 or 3.
    pub version: u32,
    /// Byte order of everything after the magic.
    pub endian: Endian,
}

impl Default for WireFormat {
    fn default() -> Self {
        WireFormat {
            version: 3,
            endian: Endian::Little,
        }
    }
}

impl WireFormat {
    /// Width in bytes of lengths, counts and dimensions in this version.
    pub const fn count_width(self) -> usize {
        if self.version == 1 {
            4
        } else {
            8
        }
    }
}
