#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The format: everything of gguf-core at the root of `gguf`.
pub use gguf_core::*;

/// llama.cpp's tokenizer, built from a model's metadata (feature
/// `tokenizer`): the gguf-tokenizer crate.
#[cfg(feature = "tokenizer")]
pub use gguf_tokenizer as tokenizer;

/// Chat templates rendered as llama.cpp renders them, with input marking
/// for tokenizing the prompt (feature `chat`): the gguf-chat crate.
#[cfg(feature = "chat")]
pub use gguf_chat as chat;

/// llama.cpp's policies (feature `llama`): the gguf-llama crate, whose
/// modules are also at the root of `gguf` ([`summary`], [`estimate`],
/// [`llama_load`], [`quantize`]).
#[cfg(feature = "llama")]
pub use gguf_llama as llama;

#[cfg(feature = "llama")]
#[doc(no_inline)]
pub use gguf_llama::{estimate, llama_load, quantize, summary};

/// Hugging Face import (feature `import`): the gguf-import crate.
#[cfg(feature = "import")]
pub use gguf_import as import;
