//! llama.cpp's policies on GGUF models, read from their metadata alone.
//!
//! The crate is layered, lowest first; a module uses only the modules
//! listed before it and [`gguf_core`] (`scripts/check_layers.py` holds the
//! order and checks it):
//! - [`summary`]: what a model is, from its header
//!   ([`summary::ModelSummary`]);
//! - [`estimate`]: the memory llama.cpp allocates to run a model;
//! - [`llama_load`]: whether llama.cpp's model loader would load a model
//!   ([`llama_load::LoadReport`]);
//! - [`quantize`]: llama-quantize's choices of which tensors to convert and
//!   to what type ([`quantize::plan`]), its whole run
//!   ([`quantize::quantize_model`]) and importance matrices
//!   ([`quantize::Imatrix`]).
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
