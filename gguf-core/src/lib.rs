//! GGUF format types, reader, writer, editor and tensor codecs.
//!
//! The crate is layered like the format:
//! - [`format`](mod@format): wire types and the size arithmetic shared by every part
//!   ([`GgmlType`], [`format::Value`], [`format::align_up`], ...);
//! - [`read`]: [`GgufFile`], a validated zero-copy view of one file,
//!   [`read::Source`], what can be opened (a path, bytes, a `Read + Seek`
//!   stream, a URL, an Ollama store entry), and [`Gguf`], the getters every
//!   view of a model shares (a file, a split [`Model`], a builder's or
//!   editor's preview);
//! - [`model`]: [`Model`], a model in one file or split into shards, seen as
//!   one, and the one door: [`Model::open`] reads any source;
//! - [`naming`]: the GGUF file-name convention and shard names;
//! - [`edit`]: [`edit::Editor`], metadata edits in place or by atomic rewrite
//!   (Unix only: it writes at file offsets and tells a replaced file by its
//!   device and inode);
//! - [`write`](mod@write): [`write::Builder`] and [`write::Layout`], three write modes;
//! - [`metadata`]: typed metadata structs, `#[derive(Metadata)]` and the
//!   shipped [`General`], [`LlamaHyperParams`] and [`Tokenizer`];
//! - [`estimate`]: the memory llama.cpp allocates to run a model;
//! - [`summary`]: what a model is, from its header ([`summary::ModelSummary`]);
//! - [`llama_load`]: whether llama.cpp's model loader would load a model
//!   ([`llama_load::LoadReport`]);
//! - [`quantize`]: llama-quantize's choices of which tensors to convert and
//!   to what type ([`quantize::choose_pure`]);
//! - `remote` (cargo feature `remote`): the transport behind URLs
//!   (`http(s)://`, `hf://`, `ms://`, `ollama://`, `s3://`, `gs://`,
//!   `az://`), read at the cost of their header; users open URLs through
//!   [`Model::open`] (the local Ollama store, `ollama:NAME[:TAG]`, needs
//!   no feature);
//! - [`tensor`]: dequantize and quantize tensor data, bit-exact with ggml;
//! - [`Error`]: the one error type, which always says what and where; its
//!   groups ([`error::FormatError`], [`error::LookupError`], ...) are in [`error`](mod@error).
//!
//! Most users depend on the facade package `gguf-kit`, which re-exports
//! this crate as `gguf` and adds the `gguf` command-line tool.
//!
//! # Cargo features
//!
//! - `parallel` (on by default): the tensor codecs on every core
//!   ([`tensor::dequantize_par`], [`read::Tensor::to_f32`], quantizing while
//!   writing), through rayon. Off: they run on the calling thread, give the
//!   same bytes, and rayon is not compiled.
//! - `simd` (on by default): AVX2 and F16C copies of the tensor codecs on
//!   x86-64, picked at run time when the CPU has them. Off: the portable
//!   code only, with the same output, compiled once. A user who only reads
//!   metadata needs neither (`default-features = false`).
//! - `remote` (off): the `remote` module, reading headers and tensors of
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

#[cfg(unix)]
pub mod edit;
pub mod error;
pub mod estimate;
pub mod format;
pub mod llama_load;
pub mod metadata;
pub mod model;
pub mod naming;
pub mod quantize;
pub mod read;
#[cfg(feature = "remote")]
pub mod remote;
pub mod summary;
pub mod tensor;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod write;

pub use error::{Error, Result};
pub use format::{ArrayView, Ctx, Endian, GgmlType, Value, ValueType};
pub use metadata::{FromMetadata, General, LlamaHyperParams, Metadata, ToMetadata, Tokenizer};
pub use model::Model;
pub use read::{Gguf, GgufFile, LintIssue, Tensor};
