//! The write side of [`ToMetadata`]: [`Builder::set_all`]. It lives here,
//! with the typed metadata, so that `write/` never depends on `metadata/`
//! (which builds on `read/` and `write/`).

use super::{ToMetadata, ARCH_KEY};
use crate::error::Result;
use crate::write::Builder;

impl Builder<'_> {
    /// Sets every entry of a typed metadata struct (see
    /// [`metadata`](super)), in field order; `None` fields are
    /// not written. `{arch}` in keys is the struct's `#[gguf(arch)]` field
    /// when it has a value, else this builder's `general.architecture`;
    /// with neither, a templated key fails with [`BuildError::ArchUnknown`](crate::error::BuildError::ArchUnknown) and
    /// nothing is set.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::{General, write::Builder};
    /// let general = General { architecture: "llama".into(), name: Some("tiny".into()), ..General::default() };
    /// let mut b = Builder::new();
    /// b.set_all(&general)?;
    /// assert_eq!(b.get_str("general.name")?, "tiny");
    /// assert!(b.value("general.author").is_none());
    /// # Ok(()) }
    /// ```
    pub fn set_all<M: ToMetadata + ?Sized>(&mut self, m: &M) -> Result<&mut Self> {
        let arch = self.get_str(ARCH_KEY).ok().map(str::to_owned);
        for (key, value) in m.to_metadata(arch.as_deref())? {
            self.set(key, value)?;
        }
        Ok(self)
    }
}
