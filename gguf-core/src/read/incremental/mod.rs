//! Reading the header region from positional reads of a source that may be
//! slow and far away (a remote object, a huge file), asking for more bytes
//! only when the parser needs them.
//!
//! [`HeaderParser`] holds no I/O: it says which byte range it wants next,
//! is given the bytes, and runs the one parser of the crate over the prefix
//! it has: after the first read, and then once the walk below says that
//! the whole header region is held (until then a parse could only stop
//! short again, after parsing the vocabulary once more). A prefix parses
//! exactly like the whole file up to the point where it runs out, where it
//! stops with [`FormatError::Truncated`]; so every error and offset is the local
//! reader's. Synchronous sources
//! implement [`ReadAt`]; the remote backends drive the same parser from
//! async code.
//!
//! How much to ask for next: the first read is one chunk. When the header
//! runs past what is held, a walk over the prefix (below) computes a lower
//! bound of where the header region ends, from the counts already read
//! (each remaining string is at least its length field, each fixed-size
//! array is exactly count × size, each remaining entry and tensor info has
//! a minimum size). The next read ends one chunk past that bound, so the
//! bytes read never exceed the header region plus one chunk, while a large
//! vocabulary is fetched in a few big steps instead of chunk by chunk.
//!
//! Lowest first: `options` ([`ReadOptions`]), `read_at` (the sources of
//! positional reads), `walk` (the lower bound of the header's end),
//! `parser` (the state machine, [`HeaderParser`]), `driver` (its
//! synchronous driver, [`read_header`]).

mod driver;
mod options;
mod parser;
mod read_at;
#[cfg(test)]
mod tests;
mod walk;

pub use driver::read_header;
pub use options::{ReadOptions, DEFAULT_CHUNK, DEFAULT_MAX_HEADER_LEN};
pub use parser::{HeaderParser, ParseStep};
pub use read_at::{ReadAt, SeekReader};
