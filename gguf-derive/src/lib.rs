//! Derive macros for the gguf crates.
//!
//! - `#[derive(GgufCodec)]` generates binrw `BinRead` + `BinWrite` impls for
//!   a wire struct. Both take `gguf_core::format::WireFormat` (for its version) as
//!   their arguments and binrw's own `endian` argument as the byte order,
//!   and pass both to every field, so one definition reads and writes v1
//!   (u32 lengths), v2/v3 (u64 lengths), little- and big-endian files.
//! - `#[derive(Metadata)]` maps a struct to and from metadata entries
//!   (`gguf_core::metadata::{FromMetadata, ToMetadata}`), one field per
//!   key, `{arch}` templated keys, `Option` for optional entries.
//!
//! The two derives (`codec`, `metadata`) are independent of each other, and
//! each is layered like binrw's own: `parse` turns the input and its
//! `#[gguf(...)]` attributes into a small typed IR, `codegen` (above it)
//! emits code from the IR, and the module's `mod.rs` (above both) joins
//! them (`scripts/check_layers.py` holds the order and checks it).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use proc_macro::TokenStream;

mod codec;
mod metadata;

/// Generates binrw `BinRead` and `BinWrite` impls taking `WireFormat` as args.
///
/// Fields of primitive number types (`u8`..`u64`, `i8`..`i64`, `f32`,
/// `f64`, `[u8; N]`) are read in the byte order binrw passes
/// (`read_options`' `endian`, or `read_le`/`read_be`); every other field
/// type must itself implement `BinRead`/`BinWrite` with `Args = WireFormat` and
/// gets the same byte order. The `endian` of the `WireFormat` passed is not
/// consulted: gguf-core's reader and writer pass binrw's name for
/// `ctx.endian`.
///
/// `#[gguf(count = expr)]`, where `expr` may name earlier fields, marks a
/// field whose element count is stored elsewhere: a `Vec<T>` is read
/// element by element, never reserved up front, so a hostile count cannot
/// allocate; any other type reads with `Args = (WireFormat, u64)` (the count) and
/// writes with `Args = WireFormat`, e.g. an inline, bounded `Dims`.
///
/// The struct may be generic: a field of a type parameter's type gets a
/// `BinRead` (`BinWrite`) bound on the impl, so one definition can read a
/// zero-copy string span and write a borrowed `&str`.
///
/// The generated code names `::binrw` and `::gguf_core::format::WireFormat`, so
/// the crate using the derive depends on both. It is meant for gguf-core's
/// own wire structs, which are private to gguf-core together with the
/// version-dependent primitives they are made of (counts, strings,
/// dimensions): no public item of gguf-core names a binrw type. Outside
/// gguf-core, fields of binrw's own types work:
///
/// ```
/// use binrw::{BinRead, BinWrite};
/// use gguf_core::format::WireFormat;
/// use gguf_core::Endian;
/// use gguf_derive::GgufCodec;
///
/// #[derive(Debug, PartialEq, GgufCodec)]
/// struct Shape {
///     n_dims: u32,
///     #[gguf(count = n_dims)]
///     dims: Vec<u64>,
///     ggml_type: u32,
/// }
///
/// # fn main() -> binrw::BinResult<()> {
/// let shape = Shape { n_dims: 2, dims: vec![4, 8], ggml_type: 0 };
/// let ctx = WireFormat { version: 3, endian: Endian::Big };
/// let mut out = std::io::Cursor::new(Vec::new());
/// shape.write_options(&mut out, binrw::Endian::Big, ctx)?;
/// let bytes = out.into_inner();
/// assert_eq!(bytes.len(), 4 + 2 * 8 + 4);
/// let back = Shape::read_options(&mut std::io::Cursor::new(&bytes), binrw::Endian::Big, ctx)?;
/// assert_eq!(back, shape);
/// # Ok(()) }
/// ```
#[proc_macro_derive(GgufCodec, attributes(gguf))]
pub fn derive_gguf_codec(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    match codec::parse::parse(&input) {
        Ok(ir) => codec::codegen::generate(&ir).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Implements `FromMetadata` and `ToMetadata` for a struct with named
/// fields, one metadata entry per field.
///
/// Struct attribute `#[gguf(prefix = "...")]` (may contain `{arch}`) and
/// `#[gguf(crate = "path")]`; field attributes `#[gguf(key = "full.key")]`,
/// `#[gguf(rename = "part")]` and `#[gguf(arch)]`. See
/// `gguf_core::metadata` for the full description and examples.
///
/// ```
/// use gguf_core::{write::Builder, FromMetadata, Gguf, GgufFile, Metadata};
///
/// #[derive(Debug, PartialEq, Metadata)]
/// #[gguf(prefix = "{arch}")]
/// struct Hyper {
///     context_length: u32,
///     #[gguf(rename = "attention.head_count")]
///     heads: u32,
///     vocab_size: Option<u32>,
/// }
///
/// # fn main() -> gguf_core::Result<()> {
/// let hyper = Hyper { context_length: 4096, heads: 32, vocab_size: None };
/// let mut b = Builder::new();
/// b.set("general.architecture", "llama")?;
/// b.set_all(&hyper)?;
/// let mut bytes = Vec::new();
/// b.write(&mut bytes)?;
/// let file = GgufFile::open(&bytes)?;
/// assert_eq!(file.get::<u32>("llama.attention.head_count")?, 32);
/// assert_eq!(Hyper::from_gguf(&file)?, hyper);
/// # Ok(()) }
/// ```
///
/// The derive finds the crate that defines the traits through your
/// `Cargo.toml` (`gguf-core`, or the `gguf` facade, renamed or not); name
/// it explicitly with `#[gguf(crate = "my_reexport::gguf")]` when the
/// traits come through a re-export.
#[proc_macro_derive(Metadata, attributes(gguf))]
pub fn derive_metadata(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    match metadata::parse::parse(&input) {
        Ok(ir) => metadata::codegen::generate(&ir).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
