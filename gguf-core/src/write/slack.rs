//! Metadata slack: reserved room inside the header so later edits fit in
//! place.
//!
//! The room is a metadata entry [`SLACK_KEY`] holding an array of zero
//! `u8`s. llama.cpp and gguf-py read it as an ordinary unknown key and
//! ignore it. The editor grows or shrinks that array so that the header
//! keeps ending exactly where the data section starts.

use crate::error::{BuildError, Error, Result};
use crate::format::{align_up, OwnedArray, OwnedValue, Value};
use crate::write::{Builder, MetaValue};

/// The key of the slack entry.
pub const SLACK_KEY: &str = "gguf_rs.metadata_slack";

/// The largest slack entry llama.cpp reads: its reader refuses arrays of
/// more than 2^30 elements (`GGUF_MAX_ARRAY_ELEMENTS` in `gguf.cpp`).
pub const MAX_SLACK: u64 = 1 << 30;

/// The value of a slack entry of `n` bytes.
pub(crate) fn value(n: u64) -> OwnedValue {
    OwnedValue::Array(OwnedArray::U8(vec![0; n as usize]))
}

/// Elements of a slack entry (its bytes, for the `u8` array this module
/// writes); 0 when there is none or it is not an array.
pub(crate) fn len(v: Option<&MetaValue<'_>>) -> u64 {
    match v {
        Some(MetaValue::Owned(OwnedValue::Array(a))) => a.len() as u64,
        Some(MetaValue::Borrowed(Value::Array(a))) => a.len() as u64,
        _ => 0,
    }
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

    /// Sets the slack entry to at least `bytes` (at most [`MAX_SLACK`]),
    /// rounded up so that the header ends exactly on the alignment: the
    /// padding the writer would put before the data becomes slack too, and
    /// the next edit may grow the header by the whole entry. Returns the
    /// entry's length.
    pub(crate) fn reserve_metadata_aligned(&mut self, bytes: u64) -> Result<u64> {
        if bytes > MAX_SLACK {
            return Err(too_much_slack());
        }
        self.set(SLACK_KEY, value(0))?;
        let layout = self.layout()?;
        let base = layout.header_len;
        let n = base
            .checked_add(bytes)
            .and_then(|end| align_up(end, layout.alignment))
            .map(|end| end - base)
            // Past llama.cpp's limit (only with a huge alignment): the
            // amount asked for, padded after as usual.
            .filter(|&n| n <= MAX_SLACK)
            .unwrap_or(bytes);
        self.set(SLACK_KEY, value(n))?;
        Ok(n)
    }
}

/// The error for a reservation over [`MAX_SLACK`].
pub(crate) fn too_much_slack() -> Error {
    Error::Build(BuildError::InvalidKey {
        key: SLACK_KEY.into(),
        reason: "a reservation of more than 1 GiB (2^30 elements): llama.cpp refuses such arrays",
    })
}
