//! GGUF format types, reader, writer, editor and tensor codecs.
//!
//! Open a model through the one door, [`Model::open`]: a path (any shard
//! of a split model opens them all), the bytes of a file, a stream, a URL
//! or an Ollama entry. Its getters are the [`Gguf`] trait's:
//!
//! ```
//! use gguf_core::{Gguf, Model};
//! # fn main() -> gguf_core::Result<()> {
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("model.gguf");
//! # std::fs::write(&path, include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")))?;
//! let model = Model::open(&path)?;
//! assert_eq!(model.get_str("general.architecture")?, "llama");
//! for tensor in model.tensors() {
//!     println!("{} {:?} {}", tensor.name(), tensor.shape(), tensor.ggml_type());
//! }
//! # Ok(()) }
//! ```
//!
//! [`GgufFile`] is the one-file view a `Model` is made of: use it when you
//! have exactly one file, or its bytes, and want that file's own layout.
//!
//! The crate is layered, lowest first; a module uses only the modules
//! listed before it (`scripts/check_layers.py` holds the order and checks
//! it; `testing`, fixtures for this workspace's tests, comes last):
//! - [`format`](mod@format) and [`Error`]: the wire types, the codecs that
//!   parse and write each of them, and the size arithmetic shared by every
//!   part ([`GgmlType`], [`Value`], [`format::align_up`], ...);
//!   `Error` is the one error type, which always says what and where;
//! - [`codec`]: dequantize and quantize tensor data, bit-exact with ggml;
//! - [`read`]: [`GgufFile`], a validated zero-copy view of one file (a
//!   whole model or one shard), composed from the `format` pieces;
//!   [`Source`], what can be opened; and [`Gguf`], the getters every
//!   view of a model shares (a file, a split [`Model`], a builder's or
//!   editor's preview);
//! - [`naming`]: the GGUF file-name convention and shard names;
//! - `remote` (cargo feature `remote`): the transport behind URLs
//!   (`http(s)://`, `hf://`, `ms://`, `ollama://`, `s3://`, `gs://`,
//!   `az://`), read at the cost of their header; a private module: users
//!   open URLs through [`Model::open`], and [`Source`] describes them;
//! - [`model`]: [`Model`], what users open: one model in one file or split
//!   into shards, seen as one. The one door, [`Model::open`], takes any
//!   source: a local path, any shard of a split model, the bytes of a file, a
//!   `Read + Seek` stream, an `http(s)://`, `hf://`, `ms://`, `s3://`,
//!   `gs://`, `az://` or `ollama://` URL, or an entry of the local Ollama
//!   store (`ollama:NAME[:TAG]`, which needs no feature);
//! - [`write`](mod@write): [`write::Builder`] and [`write::Layout`], three write modes;
//! - [`metadata`]: typed metadata structs, `#[derive(Metadata)]` and the
//!   shipped [`General`], [`LlamaHyperParams`] and [`TokenizerMetadata`];
//! - [`edit`]: [`edit::Editor`], metadata edits in place or by atomic
//!   rewrite, and [`edit::ModelEditor`] for split models (Unix only: it
//!   writes at file offsets and tells a replaced file by its device and
//!   inode);
//!
//! What llama.cpp does with a model lives in crates above this one, which
//! depend on it and never the reverse: `gguf-tokenizer` (llama.cpp's
//! tokenizer), `gguf-llama` (its summary, memory estimate, loader rules and
//! llama-quantize) and `gguf-import` (Hugging Face checkpoints to GGUF).
//!
//! Each public item has one path: the handful every user needs at the
//! crate root ([`Model`], [`GgufFile`], [`Tensor`], [`Gguf`], [`Source`],
//! [`OpenOptions`], [`Value`], [`Error`], ...), the rest in its module.
//!
//! Most users depend on the facade package `gguf-kit`, which re-exports
//! this crate as `gguf` and adds the `gguf` command-line tool.
//!
//! # Cargo features
//!
//! - `parallel` (on by default): the tensor codecs on every core
//!   ([`codec::dequantize_par`], [`Tensor::to_f32`], quantizing while
//!   writing), through rayon. Off: they run on the calling thread, give the
//!   same bytes, and rayon is not compiled.
//! - `simd` (on by default): AVX2 and F16C copies of the tensor codecs on
//!   x86-64, picked at run time when the CPU has them. Off: the portable
//!   code only, with the same output, compiled once. A user who only reads
//!   metadata needs neither (`default-features = false`).
//! - `remote` (off): reading headers and tensors of
//!   files behind `http(s)://`, `hf://`, `ms://`, `ollama://`, `s3://`,
//!   `gs://` and `az://` URLs by range requests (without it, opening a URL
//!   is an error saying so). Pulls in
//!   object_store, reqwest (rustls), tokio, futures, bytes and url.
//! - `testing` (off): hooks for this workspace's own integration tests
//!   (a `testing` module of byte-level fixture builders, and
//!   `edit::Editor::commit_with_hook` with its `edit::Step`, for fault
//!   injection, and `testing::PAUSE_BEFORE_RENAME` / `PAUSE_AFTER_RENAME`,
//!   environment variables that stop a file write at its rename). It pulls in no dependency; it is not a stable API and
//!   not documented on docs.rs.
#![deny(missing_docs)]
// Unsafe code is confined to a few marked sites (memory maps, CPU-feature
// dispatch of the SIMD kernels, `copy_file_range`, `sync_file_range`), each
// with `allow` and a `SAFETY:` comment.
#![deny(unsafe_code)]

// Lets the derive macros name this crate as `::gguf_core` from inside it.
extern crate self as gguf_core;

pub mod codec;
#[cfg(unix)]
pub mod edit;
pub mod error;
pub mod format;
// The in-place edit journal's on-disk format: a leaf that the reader and
// the editor both use.
#[cfg(unix)]
mod journal;
pub mod metadata;
pub mod model;
pub mod naming;
pub mod read;
#[cfg(feature = "remote")]
mod remote;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod write;

// Each public item has one public path: the handful every user needs at
// the root (below), the rest in their modules.
pub use error::{Error, Result};
pub use format::array::ArrayView;
pub use format::ggml_type::GgmlType;
pub use format::value::{Value, ValueType};
pub use format::wire_format::Endian;
/// The derive macro for [`FromMetadata`] and [`ToMetadata`]; see [`metadata`].
pub use gguf_derive::Metadata;
pub use metadata::general::General;
pub use metadata::llama::LlamaHyperParams;
pub use metadata::tokenizer::TokenizerMetadata;
pub use metadata::traits::{FromMetadata, ToMetadata};
pub use model::Model;
pub use read::options::OpenOptions;
pub use read::source::Source;
pub use read::tensor::Tensor;
pub use read::view::Gguf;
pub use read::GgufFile;
