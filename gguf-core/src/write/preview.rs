//! [`Builder::preview`]: the header a builder would write, read back as a
//! header-only [`GgufFile`], so the read-side [`Gguf`](crate::Gguf) getters
//! (and everything that takes them: summary, estimate, llama_load) inspect
//! a file under construction.

use crate::error::Result;
use crate::read::{read_header, GgufFile, ReadAt, ReadOptions};
use crate::write::{Builder, Layout};

impl Builder<'_> {
    /// The file this builder would write now, as far as its header goes:
    /// every metadata entry as set so far, in order, with its type, and
    /// every tensor's info (name, type, shape, offset) as
    /// [`layout`](Self::layout) places it. Tensor data is not part of it:
    /// [`Tensor::data`](crate::Tensor::data) fails with
    /// [`LookupError::DataNotLoaded`](crate::error::LookupError::DataNotLoaded) naming the
    /// tensor. The builder is not changed; the preview is a snapshot
    /// (set more keys, take another one).
    ///
    /// It costs one encoding of the header (as writing does) and a parse
    /// of it (as opening does).
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::{write::Builder, GgmlType, Gguf};
    /// let mut b = Builder::new();
    /// b.set("general.architecture", "llama")?;
    /// b.set("llama.context_length", 4096u32)?;
    /// b.set("tokenizer.ggml.tokens", vec!["<s>", "</s>"])?;
    /// b.add_tensor("output.weight", GgmlType::F32, &[16, 4], vec![0u8; 256])?;
    ///
    /// let preview = b.preview()?;
    /// assert_eq!(preview.get::<u32>("llama.context_length")?, 4096);
    /// assert_eq!(preview.get_strings("tokenizer.ggml.tokens")?.count(), 2);
    /// assert_eq!(preview.tensor("output.weight")?.shape(), &[16, 4]);
    /// assert!(preview.tensor("output.weight")?.data().is_err());
    /// assert_eq!(preview.tensors().map(|t| t.element_count()).sum::<u64>(), 64);
    /// # Ok(()) }
    /// ```
    pub fn preview(&self) -> Result<GgufFile<'static>> {
        self.preview_with(&self.layout()?)
    }

    /// [`preview`](Self::preview) of the header written for `layout`.
    pub(crate) fn preview_with(&self, layout: &Layout) -> Result<GgufFile<'static>> {
        let header = HeaderOnly {
            header: self.encode_header(layout)?,
            file_len: layout.file_len(),
        };
        // One read of the whole header, as it is in memory already.
        let options = ReadOptions::default()
            .chunk(layout.header_len.max(4096))
            .max_header_len(u64::MAX);
        read_header(&header, &options)
    }
}

/// A file of `file_len` bytes of which only the header is known; the rest
/// (the padding before the data, which is zeros, and the data, which the
/// reader of a header never asks for) reads as zeros.
struct HeaderOnly {
    header: Vec<u8>,
    file_len: u64,
}

impl ReadAt for HeaderOnly {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let end = offset.saturating_add(len).min(self.file_len);
        let mut out = self.header.as_slice().read_at(offset, len)?;
        // The parser asks for the header plus a chunk: bounded by what it
        // asks, not by the (possibly huge) data section.
        let want = usize::try_from(end.saturating_sub(offset)).unwrap_or(usize::MAX);
        out.resize(want.max(out.len()), 0);
        Ok(out)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.file_len)
    }
}
