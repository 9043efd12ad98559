//! The synchronous driver of [`HeaderParser`] over a [`ReadAt`] source.

use crate::error::Result;
use crate::read::GgufFile;

use super::options::ReadOptions;
use super::parser::{HeaderParser, ParseStep};
use super::read_at::ReadAt;

/// Reads the header region of `source` with `options`: the synchronous
/// driver of [`HeaderParser`].
///
/// ```
/// use gguf_core::Gguf;
/// use gguf_core::read::{read_header, ReadOptions};
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// let file = read_header(&bytes[..], &ReadOptions::default())?;
/// assert_eq!(file.get_str("general.architecture")?, "llama");
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub fn read_header<S: ReadAt + ?Sized>(
    source: &S,
    options: &ReadOptions,
) -> Result<GgufFile<'static>> {
    let mut parser = HeaderParser::new(options);
    loop {
        match parser.step()? {
            ParseStep::Read { offset, len } => {
                let bytes = source.read_at(offset, len)?;
                parser.push(bytes, source.size()?)?;
            }
            ParseStep::Done(file) => return Ok(*file),
        }
    }
}
