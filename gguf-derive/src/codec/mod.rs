//! `#[derive(GgufCodec)]`: parse -> IR -> codegen.

pub mod codegen;
pub mod parse;
