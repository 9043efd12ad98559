//! llama.cpp's policies on GGUF models, read from their metadata alone.
//!
//! The crate is layered; a module uses only the layers below its own and
//! [`gguf_core`] (`scripts/check_layers.py` holds the order and checks
//! it). Lowest first, after the crate's `Error`:
//! - [`summary`] and [`llama_load`]: what a model is, from its header
//!   ([`summary::ModelSummary`]); whether llama.cpp's model loader would
//!   load it ([`llama_load::LoadReport`]);
//! - [`estimate`] and [`quantize`]: the memory llama.cpp allocates to run a
//!   model (over its summary); llama-quantize's choices of which tensors to
//!   convert and to what type ([`quantize::plan`], reading keys as the
//!   loader does), its whole run ([`quantize::quantize_model`]) and
//!   importance matrices ([`quantize::Imatrix`]).
//!
//! Each follows the llama.cpp that llama-cpp-python 0.3.36 vendors
//! ([`llama_load::LLAMA_CPP_VERSION`]).
//!
//! # Cargo features
//!
//! - `parallel` (on by default): quantizing on every core through rayon.
//!   Off: one thread, the same bytes.
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod error;
pub mod estimate;
pub mod llama_load;
pub mod quantize;
pub mod summary;

pub use error::{Error, QuantizeError, Result};
