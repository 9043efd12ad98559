//! Read, write and edit GGUF files, the single-file model format of
//! llama.cpp, Ollama and LM Studio.
//!
//! This crate is the public facade over [`gguf_core`]; see its docs for
//! the layers (`format`, `read`, ...).
#![deny(missing_docs)]

pub use gguf_core::*;
