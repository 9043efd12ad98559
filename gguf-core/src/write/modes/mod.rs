//! The three ways to write a [`Builder`](crate::write::Builder), which all
//! produce the same bytes: single pass, metadata first, and reserve then
//! fill.
//!
//! Lowest first: `options` (the mode and its options), `sink` (padding and
//! the sinks data goes to), `kernel` (runs of tensors copied file to file),
//! `single` (the single pass and the data section every mode writes),
//! `reserve` (the header after the data), `metadata_first` (the header now,
//! the data through a handle), `output` (the public ways out that take a
//! mode: any seekable output, a path written atomically).

mod kernel;
mod metadata_first;
mod options;
mod output;
mod reserve;
mod single;
mod sink;
#[cfg(test)]
mod tests;

pub use metadata_first::MetadataFirst;
pub(crate) use options::Progress;
pub use options::{WriteMode, WriteOptions};
pub use output::Output;
pub(crate) use sink::write_zeros;
