//! Shared helpers for the integration tests.
#![allow(dead_code)]

pub use gguf::testing::{tiny_file, Raw};
