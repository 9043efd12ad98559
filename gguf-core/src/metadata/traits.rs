//! The two traits of typed metadata (named at the crate root).

use crate::error::Result;
use crate::format::OwnedValue;
use crate::read::Gguf;

/// A type read from the metadata of a file.
///
/// Usually derived with `#[derive(Metadata)]`; see the
/// [module documentation](crate::metadata).
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// use gguf_core::{FromMetadata, GgufFile, Metadata};
///
/// #[derive(Metadata)]
/// #[gguf(prefix = "{arch}")]
/// struct Ctx { context_length: u32 }
///
/// let file = GgufFile::open(&bytes)?;
/// assert_eq!(Ctx::from_gguf(&file)?.context_length, 4096);
/// assert_eq!(Ctx::from_gguf_arch(&file, "llama")?.context_length, 4096);
/// assert!(Ctx::from_gguf_arch(&file, "gpt2").is_err());
/// # Ok(()) }
/// ```
pub trait FromMetadata: Sized {
    /// Reads the value; `{arch}` in keys is the file's `general.architecture`
    /// (required only when some key is templated).
    fn from_gguf(file: &(impl Gguf + ?Sized)) -> Result<Self>;

    /// Reads the value with `{arch}` replaced by `arch`.
    fn from_gguf_arch(file: &(impl Gguf + ?Sized), arch: &str) -> Result<Self>;
}

/// A type written as metadata entries.
///
/// Usually derived with `#[derive(Metadata)]`; written with
/// [`Builder::set_all`](crate::write::Builder::set_all).
///
/// ```
/// # fn main() -> gguf_core::Result<()> {
/// use gguf_core::{ToMetadata, format::OwnedValue, Metadata};
///
/// #[derive(Metadata)]
/// #[gguf(prefix = "{arch}")]
/// struct Ctx { context_length: u32, vocab_size: Option<u32> }
///
/// let entries = Ctx { context_length: 512, vocab_size: None }.to_metadata(Some("gpt2"))?;
/// assert_eq!(entries, [("gpt2.context_length".to_string(), OwnedValue::U32(512))]);
/// assert!(Ctx { context_length: 512, vocab_size: None }.to_metadata(None).is_err());
/// # Ok(()) }
/// ```
pub trait ToMetadata {
    /// The entries, in field order; `None` fields are left out. `arch`
    /// fills `{arch}` unless a `#[gguf(arch)]` field has a value; with
    /// neither, a templated key is [`BuildError::ArchUnknown`](crate::error::BuildError::ArchUnknown).
    fn to_metadata(&self, arch: Option<&str>) -> Result<Vec<(String, OwnedValue)>>;
}
