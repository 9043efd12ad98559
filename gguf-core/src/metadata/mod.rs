//! Typed metadata: plain Rust structs mapped to and from metadata entries.
//!
//! `#[derive(Metadata)]` implements [`FromMetadata`](traits::FromMetadata) (read a struct from a
//! [`GgufFile`](crate::GgufFile), a [`Model`](crate::Model) or any
//! [`Gguf`](crate::Gguf)) and [`ToMetadata`] (turn it into entries for
//! [`Builder::set_all`](crate::write::Builder::set_all)). Each field's
//! type says how its value is stored, through [`MetaField`]: numbers and
//! bools must match the stored type exactly (as llama.cpp's getters
//! demand), `String` is a string, `Vec<T>` an array, `Option<T>` an entry
//! that may be absent.
//!
//! The crate ships three such structs, [`General`](crate::General), [`LlamaHyperParams`](crate::LlamaHyperParams)
//! and [`TokenizerMetadata`](crate::TokenizerMetadata), for the keys of the GGUF specification.
//!
//! Attributes:
//! - `#[gguf(prefix = "general")]` on the struct: a field `name` maps to
//!   `general.name`. The prefix may contain `{arch}`, replaced by the
//!   architecture (`#[gguf(prefix = "{arch}")]` gives `llama.context_length`).
//!   Without a prefix, the key is the field name.
//! - `#[gguf(rename = "attention.head_count")]` on a field: replaces the
//!   field-name part of the key.
//! - `#[gguf(key = "tokenizer.chat_template")]` on a field: the full key,
//!   ignoring the prefix (may contain `{arch}` too).
//! - `#[gguf(arch)]` on a `String` or `Option<String>` field: when writing,
//!   its value fills `{arch}`.
//! - `#[gguf(crate = "path")]` on the struct: where the `gguf_core` API
//!   lives. By default the derive looks the crate up in the compiling
//!   crate's `Cargo.toml` (with `proc-macro-crate`, so renamed dependencies
//!   work): `gguf-core` when it is a dependency, else the `gguf` facade.
//!
//! ```
//! # fn main() -> gguf_core::Result<()> {
//! use gguf_core::{write::Builder, FromMetadata, GgufFile, Metadata};
//!
//! #[derive(Debug, PartialEq, Metadata)]
//! #[gguf(prefix = "{arch}")]
//! struct Hyper {
//!     context_length: u32,
//!     #[gguf(rename = "attention.head_count")]
//!     heads: u32,
//!     #[gguf(key = "general.name")]
//!     name: Option<String>,
//! }
//!
//! let hyper = Hyper { context_length: 2048, heads: 8, name: None };
//! let mut b = Builder::new();
//! b.set("general.architecture", "llama")?;
//! b.set_all(&hyper)?;
//! assert_eq!(b.keys().collect::<Vec<_>>(),
//!            ["general.architecture", "llama.context_length", "llama.attention.head_count"]);
//!
//! let mut bytes = Vec::new();
//! b.write(&mut bytes)?;
//! let file = GgufFile::open(&bytes)?;
//! assert_eq!(Hyper::from_gguf(&file)?, hyper);
//! # Ok(()) }
//! ```

mod build;
mod field;
pub(crate) mod general;
pub(crate) mod llama;
pub(crate) mod tokenizer;
pub(crate) mod traits;

pub use field::{MetaElem, MetaField};
pub(crate) use traits::ToMetadata;

// The derive macro, for the shipped structs (users name it at the crate root).
pub(crate) use gguf_derive::Metadata;

use crate::error::{BuildError, Error, Result};

use crate::format::ARCH_KEY;

/// The placeholder replaced by the architecture in key templates.
pub const ARCH_PLACEHOLDER: &str = "{arch}";

/// Replaces `{arch}` in a key template, or fails with
/// [`BuildError::ArchUnknown`] when the template needs an architecture and
/// none is given.
///
/// ```
/// use gguf_core::metadata::resolve_key;
/// assert_eq!(resolve_key("{arch}.block_count", Some("llama")).unwrap(), "llama.block_count");
/// assert_eq!(resolve_key("general.name", None).unwrap(), "general.name");
/// assert!(resolve_key("{arch}.block_count", None).is_err());
/// ```
pub fn resolve_key(template: &str, arch: Option<&str>) -> Result<String> {
    if !template.contains(ARCH_PLACEHOLDER) {
        return Ok(template.to_owned());
    }
    match arch {
        Some(arch) => Ok(template.replace(ARCH_PLACEHOLDER, arch)),
        None => Err(Error::Build(BuildError::ArchUnknown {
            key: template.to_owned(),
        })),
    }
}

/// A field that can hold the architecture (`#[gguf(arch)]`).
///
/// ```
/// use gguf_core::metadata::ArchField;
/// assert_eq!(ArchField::arch(&String::from("llama")), Some("llama"));
/// assert_eq!(ArchField::arch(&None::<String>), None);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold the architecture",
    label = "#[gguf(arch)] needs a `String` or `Option<String>` field"
)]
pub trait ArchField {
    /// The architecture, if set.
    fn arch(&self) -> Option<&str>;
}

impl ArchField for String {
    fn arch(&self) -> Option<&str> {
        Some(self)
    }
}

impl ArchField for Option<String> {
    fn arch(&self) -> Option<&str> {
        self.as_deref()
    }
}
