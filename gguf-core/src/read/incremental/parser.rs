//! The state machine: [`HeaderParser`] says which range it wants next, is
//! given the bytes, and parses what it holds.

use crate::error::{Error, FormatError, Result, SourceError, UsageError};
use crate::read::backing::Backing;
use crate::read::{parse, GgufFile, Parsed};

use super::options::ReadOptions;
use super::walk::min_header_end;

/// What [`HeaderParser::step`] wants next.
#[derive(Debug)]
pub enum ParseStep {
    /// Read `len` bytes at `offset` (fewer only at the end of the source)
    /// and give them to [`HeaderParser::push`].
    Read {
        /// Where to read: always the end of what the parser holds.
        offset: u64,
        /// How many bytes.
        len: u64,
    },
    /// The header region is complete and valid.
    Done(Box<GgufFile<'static>>),
}

/// An incremental header parser without I/O of its own: it asks for byte
/// ranges, is given them, and finishes with a header-only [`GgufFile`]
/// whose tensor data is not held ([`Tensor::data`](crate::read::Tensor::data)
/// fails with [`LookupError::DataNotLoaded`](crate::error::LookupError::DataNotLoaded)).
///
/// ```
/// use gguf_core::Gguf;
/// use gguf_core::read::{HeaderParser, ReadAt, ReadOptions, ParseStep};
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// let source: &[u8] = &bytes; // any source of positional reads
/// let mut parser = HeaderParser::new(&ReadOptions::default());
/// let file = loop {
///     match parser.step()? {
///         ParseStep::Read { offset, len } => parser.push(source.read_at(offset, len)?, source.size()?)?,
///         ParseStep::Done(file) => break file,
///     }
/// };
/// assert_eq!(file.tensor_count(), 2);
/// assert_eq!(parser.reads(), 1);
/// # Ok::<(), gguf_core::Error>(())
/// ```
#[derive(Debug)]
pub struct HeaderParser {
    options: ReadOptions,
    buf: Vec<u8>,
    /// Unknown until the first bytes arrive (a remote source learns it
    /// from the first response).
    file_len: Option<u64>,
    /// The range last asked for, which `push` must answer.
    pending: Option<(u64, u64)>,
    /// Size of the first read.
    first: u64,
    reads: u32,
    finished: bool,
}

impl HeaderParser {
    /// A parser that has read nothing yet.
    pub fn new(options: &ReadOptions) -> Self {
        let options = *options;
        HeaderParser {
            options,
            buf: Vec::new(),
            file_len: None,
            pending: None,
            first: options.chunk,
            reads: 0,
            finished: false,
        }
    }

    /// Makes the first read `len` bytes (at least 1) instead of one chunk,
    /// for a source whose header size can be guessed (a later shard of a
    /// split model, whose first shard was read). Later reads still end a
    /// whole chunk past what the header needs, so a short guess costs one
    /// more read, not many.
    ///
    /// ```
    /// use gguf_core::read::{HeaderParser, ReadOptions, ParseStep};
    /// let mut parser = HeaderParser::new(&ReadOptions::default()).first_read(4096);
    /// assert!(matches!(parser.step()?, ParseStep::Read { offset: 0, len: 4096 }));
    /// # Ok::<(), gguf_core::Error>(())
    /// ```
    pub fn first_read(mut self, len: u64) -> Self {
        self.first = len.max(1);
        self
    }

    /// How many reads were pushed so far.
    pub fn reads(&self) -> u32 {
        self.reads
    }

    /// How many bytes were pushed so far.
    pub fn bytes_read(&self) -> u64 {
        self.buf.len() as u64
    }

    /// Parses what is held and says what to do next.
    pub fn step(&mut self) -> Result<ParseStep> {
        if self.finished {
            return Err(Error::Usage(UsageError::Finished {
                method: "HeaderParser::step",
            }));
        }
        let Some(file_len) = self.file_len else {
            let len = self.first;
            self.pending = Some((0, len));
            return Ok(ParseStep::Read { offset: 0, len });
        };
        let have = self.buf.len() as u64;
        if self.reads > 1 && have < file_len {
            // The first bytes were parsed, so their errors are known. Until
            // the walk says the header is all here, a parse could only stop
            // short again, after parsing the vocabulary once more: ask for
            // more instead. (A bound past the limit is left to the parse
            // below, which reports an error in the bytes held first.)
            let at_least = min_header_end(&self.buf, file_len);
            if at_least > have && at_least <= self.options.max_header_len {
                return Ok(self.ask(have, at_least, file_len));
            }
        }
        match parse(&self.buf, file_len, &self.options.limits) {
            Ok(parsed) => {
                self.finished = true;
                Ok(ParseStep::Done(Box::new(self.assemble(file_len, parsed))))
            }
            Err(Error::Format(FormatError::Truncated { needed, .. })) if have < file_len => {
                let at_least = min_header_end(&self.buf, file_len).max(have.saturating_add(needed));
                if at_least > self.options.max_header_len {
                    return Err(Error::Format(FormatError::HeaderTooLarge {
                        needed: at_least,
                        limit: self.options.max_header_len,
                    }));
                }
                Ok(self.ask(have, at_least, file_len))
            }
            Err(e) => Err(e),
        }
    }

    /// Asks for the bytes from `have` to a chunk past `at_least`.
    fn ask(&mut self, have: u64, at_least: u64, file_len: u64) -> ParseStep {
        let end = at_least.saturating_add(self.options.chunk).min(file_len);
        self.pending = Some((have, end - have));
        ParseStep::Read {
            offset: have,
            len: end - have,
        }
    }

    /// Gives the parser the bytes of the range [`step`](Self::step) asked
    /// for, and the length of the whole source.
    pub fn push(&mut self, bytes: Vec<u8>, file_len: u64) -> Result<()> {
        let Some((offset, len)) = self.pending.take() else {
            return Err(Error::Usage(UsageError::NotAsked {
                method: "HeaderParser::push",
            }));
        };
        let expected = len.min(file_len.saturating_sub(offset));
        if bytes.len() as u64 != expected || self.file_len.is_some_and(|n| n != file_len) {
            return Err(Error::Source(SourceError::ShortRead {
                source_name: "source".into(),
                offset,
                expected,
                got: bytes.len() as u64,
            }));
        }
        self.file_len = Some(file_len);
        self.reads += 1;
        if self.buf.is_empty() {
            self.buf = bytes;
        } else {
            self.buf.extend_from_slice(&bytes);
        }
        Ok(())
    }

    fn assemble(&mut self, file_len: u64, parsed: Parsed) -> GgufFile<'static> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.truncate(parsed.header_len as usize);
        buf.shrink_to_fit();
        GgufFile::assemble(Backing::Header(buf), file_len, parsed)
    }
}
