#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub use gguf_core::*;
