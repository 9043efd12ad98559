//! Metadata slack: reserved room inside the header so later edits fit in
//! place.
//!
//! The room is a metadata entry [`SLACK_KEY`] holding an array of zero
//! `u8`s. llama.cpp and gguf-py read it as an ordinary unknown key and
//! ignore it. The editor grows or shrinks that array so that the header
//! keeps ending exactly where the data section starts.

use crate::write::{Builder, OwnedArray, OwnedValue};

/// The key of the slack entry.
pub const SLACK_KEY: &str = "gguf_rs.metadata_slack";

/// The value of a slack entry of `n` bytes.
pub(crate) fn value(n: u64) -> OwnedValue {
    OwnedValue::Array(OwnedArray::U8(vec![0; n as usize]))
}

impl Builder<'_> {
    /// Reserves `bytes` of room inside the header, as the entry
    /// [`SLACK_KEY`], so that later metadata edits with
    /// `Editor` (in `gguf_core::edit`) land in place instead of
    /// rewriting the file.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// let mut b = gguf_core::write::Builder::new();
    /// b.set("general.name", "x")?;
    /// b.reserve_metadata(4096)?;
    /// let mut out = Vec::new();
    /// b.write(&mut out)?;
    /// let file = gguf_core::GgufFile::open(&out)?;
    /// assert_eq!(file.get_array(gguf_core::write::SLACK_KEY)?.len(), 4096);
    /// # Ok(()) }
    /// ```
    pub fn reserve_metadata(&mut self, bytes: u64) -> crate::error::Result<&mut Self> {
        self.set(SLACK_KEY, value(bytes))
    }
}
