//! `#[derive(Metadata)]`: parse -> IR -> codegen.

pub mod codegen;
pub mod parse;
