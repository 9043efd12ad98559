//! [`Layout`]: every offset and padding of a file to be written, computed
//! once, with no I/O, from the same functions the reader validates with.

use crate::format::{align_up, WireFormat};

/// Where one tensor's data goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSlot {
    /// The tensor's name.
    pub name: String,
    /// Offset relative to the data section (what the tensor info stores).
    pub offset: u64,
    /// Bytes of data.
    pub nbytes: u64,
    /// Zero bytes written after the data to reach the alignment.
    pub padding: u64,
}

/// The complete layout of a file: header region size, data offset, and
/// each tensor's slot.
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::{write::Builder, GgmlType};
/// let mut b = Builder::new();
/// b.set("general.architecture", "llama")?;
/// b.add_tensor("a", GgmlType::F32, &[3], vec![0u8; 12])?;
/// b.add_tensor("b", GgmlType::F32, &[8], vec![0u8; 32])?;
/// let layout = b.layout()?;
/// assert_eq!(layout.data_offset() % 32, 0);
/// assert_eq!(layout.tensors[1].offset, 32); // "a" padded from 12 to 32 bytes
/// assert_eq!(layout.file_len(), layout.data_offset() + 64);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Version and byte order of the output.
    pub ctx: WireFormat,
    /// Data alignment.
    pub alignment: u64,
    /// Unpadded size of header, metadata and tensor infos.
    pub header_len: u64,
    /// One slot per tensor, in info order.
    pub tensors: Vec<TensorSlot>,
}

impl Layout {
    /// Absolute offset of the data section: the size of the padded header
    /// region (as [`GgufFile::data_offset`](crate::GgufFile::data_offset)
    /// of the file written).
    pub fn data_offset(&self) -> u64 {
        align_up(self.header_len, self.alignment).unwrap_or(u64::MAX)
    }

    /// Size of the data section, every tensor padded.
    pub fn data_len(&self) -> u64 {
        self.tensors.iter().map(|t| t.nbytes + t.padding).sum()
    }

    /// Size of the whole file.
    pub fn file_len(&self) -> u64 {
        self.data_offset() + self.data_len()
    }

    /// Zero bytes between the end of the tensor infos and the data.
    pub fn header_padding(&self) -> u64 {
        self.data_offset() - self.header_len
    }

    /// Assigns contiguous, aligned offsets to tensors of the given sizes, in
    /// order: the layout llama.cpp and gguf-py write and llama.cpp requires.
    pub(crate) fn place(
        ctx: WireFormat,
        alignment: u64,
        header_len: u64,
        sizes: impl Iterator<Item = (String, u64)>,
    ) -> Option<Layout> {
        let mut offset = 0u64;
        let mut tensors = Vec::new();
        for (name, nbytes) in sizes {
            let end = offset.checked_add(nbytes)?;
            let padded = align_up(end, alignment)?;
            tensors.push(TensorSlot {
                name,
                offset,
                nbytes,
                padding: padded - end,
            });
            offset = padded;
        }
        align_up(header_len, alignment)?.checked_add(offset)?;
        Some(Layout {
            ctx,
            alignment,
            header_len,
            tensors,
        })
    }
}
