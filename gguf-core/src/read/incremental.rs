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

use crate::error::{FormatError, SourceError};
use std::io::{Read, Seek, SeekFrom};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::format::ValueType;

use super::backing::Backing;
use super::range::RangeRead;
use super::source::ReadSeek;
use super::{parse, GgufFile, Limits, Parsed};

/// Default size of the first read and of the margin past the known part
/// of the header: 2 MiB, as the Hugging Face Hub's own GGUF parser uses.
pub const DEFAULT_CHUNK: u64 = 2 << 20;

/// Default [`ReadOptions::max_header_len`]: 1 GiB. Real headers are a few
/// MB; a lying header claiming more is refused before it is downloaded.
pub const DEFAULT_MAX_HEADER_LEN: u64 = 1 << 30;

/// How an incremental header read proceeds.
///
/// ```
/// use gguf_core::read::ReadOptions;
/// let options = ReadOptions::default().chunk(256 * 1024);
/// assert_eq!(options.chunk, 256 * 1024);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Size of the first read, and how far each later read goes past the
    /// end the header is known to reach at least (default [`DEFAULT_CHUNK`]).
    pub chunk: u64,
    /// The largest header region that will be read (default
    /// [`DEFAULT_MAX_HEADER_LEN`]); beyond it, [`FormatError::HeaderTooLarge`].
    pub max_header_len: u64,
    /// Parser limits, as for a local file.
    pub limits: Limits,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            chunk: DEFAULT_CHUNK,
            max_header_len: DEFAULT_MAX_HEADER_LEN,
            limits: Limits::default(),
        }
    }
}

impl ReadOptions {
    /// Sets [`chunk`](Self::chunk) (at least 1 byte).
    pub fn chunk(mut self, bytes: u64) -> Self {
        self.chunk = bytes.max(1);
        self
    }

    /// Sets [`max_header_len`](Self::max_header_len).
    pub fn max_header_len(mut self, bytes: u64) -> Self {
        self.max_header_len = bytes;
        self
    }

    /// Sets [`limits`](Self::limits).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

/// A source of positional reads: a file, a byte slice, a stream, a remote
/// object.
///
/// ```
/// use gguf_core::read::ReadAt;
/// let bytes: &[u8] = b"0123456789";
/// assert_eq!(bytes.read_at(2, 3)?, b"234");
/// assert_eq!(bytes.read_at(8, 5)?, b"89"); // short only at the end
/// assert_eq!(bytes.size()?, 10);
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub trait ReadAt {
    /// Reads `len` bytes at `offset`; fewer only when the source ends
    /// before `offset + len`.
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>>;

    /// Length of the source in bytes.
    fn size(&self) -> Result<u64>;
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        (**self).read_at(offset, len)
    }

    fn size(&self) -> Result<u64> {
        (**self).size()
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let start = offset.min(self.len() as u64) as usize;
        let end = offset.saturating_add(len).min(self.len() as u64) as usize;
        Ok(self[start..end].to_vec())
    }

    fn size(&self) -> Result<u64> {
        Ok(self.len() as u64)
    }
}

impl ReadAt for Vec<u8> {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.as_slice().read_at(offset, len)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.len() as u64)
    }
}

impl ReadAt for std::fs::File {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let size = self.metadata()?.len();
        let len = len.min(size.saturating_sub(offset));
        let mut buf = vec![0u8; usize::try_from(len).map_err(|_| too_big(len))?];
        let mut done = 0;
        while done < buf.len() {
            #[cfg(unix)]
            let n =
                std::os::unix::fs::FileExt::read_at(self, &mut buf[done..], offset + done as u64);
            #[cfg(windows)]
            let n = std::os::windows::fs::FileExt::seek_read(
                self,
                &mut buf[done..],
                offset + done as u64,
            );
            match n {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        buf.truncate(done);
        Ok(buf)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.metadata()?.len())
    }
}

fn too_big(len: u64) -> Error {
    Error::from(std::io::Error::new(
        std::io::ErrorKind::OutOfMemory,
        format!("a read of {len} bytes does not fit in memory"),
    ))
}

/// Positional reads over any `Read + Seek`, relative to the stream's
/// position when wrapped (so a GGUF embedded in a larger stream works).
///
/// ```
/// use gguf_core::read::{ReadAt, SeekReader};
/// let src = SeekReader::new(std::io::Cursor::new(b"0123456789".to_vec()))?;
/// assert_eq!(src.read_at(4, 2)?, b"45");
/// # Ok::<(), gguf_core::Error>(())
/// ```
pub struct SeekReader<R> {
    inner: Mutex<R>,
    start: u64,
    size: u64,
}

impl<R: Read + Seek> SeekReader<R> {
    /// Wraps `reader`; offsets count from its current position.
    pub fn new(mut reader: R) -> Result<Self> {
        let start = reader.stream_position()?;
        let end = reader.seek(SeekFrom::End(0))?;
        reader.seek(SeekFrom::Start(start))?;
        Ok(SeekReader {
            inner: Mutex::new(reader),
            start,
            size: end.saturating_sub(start),
        })
    }

    /// The wrapped reader.
    pub fn into_inner(self) -> R {
        self.inner.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl<R: Read + Seek> ReadAt for SeekReader<R> {
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        // A panic elsewhere while holding the lock leaves a reader whose
        // position we reset below anyway.
        let mut r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let len = len.min(self.size.saturating_sub(offset));
        r.seek(SeekFrom::Start(self.start.saturating_add(offset)))?;
        let mut buf = Vec::new();
        buf.try_reserve_exact(usize::try_from(len).map_err(|_| too_big(len))?)
            .map_err(|_| too_big(len))?;
        (&mut *r).take(len).read_to_end(&mut buf)?;
        Ok(buf)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.size)
    }
}

/// A stream opened through [`Source::Reader`](super::Source::Reader):
/// tensor data read on request, by positioned reads behind the lock.
impl RangeRead for SeekReader<Box<dyn ReadSeek + Send>> {
    fn read_range(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.read_at(offset, len)
    }
}

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
/// whose tensor data is not held ([`Tensor::data`](super::Tensor::data)
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
            return Err(Error::from(std::io::Error::other(
                "HeaderParser::step called after it finished",
            )));
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
            return Err(Error::from(std::io::Error::other(
                "HeaderParser::push called without a pending read",
            )));
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

// ---- lower bound of the header's end ----

/// Why the walk stopped.
enum Stop {
    /// The prefix ended; the header region ends at this offset or later.
    Short(u64),
    /// Something the parser would reject or that the walk does not follow.
    Unknown,
}

/// A lower bound of where the header region (end of the tensor infos) of a
/// file starting with `prefix` ends, or 0 when the prefix does not tell.
///
/// It walks the same structure as the parser, without validating (the
/// parser has already validated everything up to where the prefix ends),
/// and where the prefix runs out it adds the least the rest can take.
fn min_header_end(prefix: &[u8], file_len: u64) -> u64 {
    let mut w = Walker {
        buf: prefix,
        pos: 0,
        big: false,
        width: 8,
    };
    match w.header() {
        Ok(()) => w.pos,
        Err(Stop::Short(end)) => end.min(file_len),
        Err(Stop::Unknown) => 0,
    }
}

/// Deepest array nesting the walk follows (the parser's limit applies to
/// files; this one only bounds the recursion).
const WALK_DEPTH: u32 = 64;

struct Walker<'a> {
    buf: &'a [u8],
    pos: u64,
    big: bool,
    /// Width of counts and lengths: 4 in version 1, else 8.
    width: u64,
}

impl Walker<'_> {
    /// Moves past `n` bytes; `tail` is the least the header needs after them.
    fn skip(&mut self, n: u64, tail: u64) -> Result<(), Stop> {
        let end = self.pos.saturating_add(n);
        if end > self.buf.len() as u64 {
            return Err(Stop::Short(end.saturating_add(tail)));
        }
        self.pos = end;
        Ok(())
    }

    fn uint(&mut self, width: u64, tail: u64) -> Result<u64, Stop> {
        let at = self.pos as usize;
        self.skip(width, tail)?;
        let mut b = [0u8; 8];
        let field = &self.buf[at..at + width as usize];
        Ok(if self.big {
            b[8 - width as usize..].copy_from_slice(field);
            u64::from_be_bytes(b)
        } else {
            b[..width as usize].copy_from_slice(field);
            u64::from_le_bytes(b)
        })
    }

    fn string(&mut self, tail: u64) -> Result<(), Stop> {
        let len = self.uint(self.width, tail)?;
        self.skip(len, tail)
    }

    /// Least size of one value of `ty` (an element of an array of it).
    fn min_size(&self, ty: ValueType) -> u64 {
        match ty.fixed_size() {
            Some(n) => n as u64,
            None if ty == ValueType::String => self.width,
            None => 4 + self.width,
        }
    }

    fn header(&mut self) -> Result<(), Stop> {
        self.skip(4, 0)?;
        let version = self.uint(4, 0)?;
        // Same rule as the parser: a version with zero low bits was
        // written big-endian.
        if version & 0xFFFF == 0 && version != 0 {
            self.big = true;
        }
        let version = if self.big {
            (version as u32).swap_bytes()
        } else {
            version as u32
        };
        if version == 1 {
            self.width = 4;
        }
        let tensor_count = self.uint(self.width, self.width)?;
        let kv_count = self.uint(self.width, 0)?;
        // Name length, n_dims, type, offset.
        let min_info = self.width + 4 + 4 + 8;
        let infos = tensor_count.saturating_mul(min_info);
        // Key length, a one-byte key, type tag, a one-byte value.
        let min_entry = self.width + 1 + 4 + 1;
        for i in 0..kv_count {
            let tail = (kv_count - i - 1)
                .saturating_mul(min_entry)
                .saturating_add(infos);
            self.string(tail.saturating_add(4 + 1))?;
            let ty = self.uint(4, tail.saturating_add(1))?;
            self.value(ty, tail, 0)?;
        }
        let dim_width = if self.width == 4 { 4 } else { 8 };
        for i in 0..tensor_count {
            let tail = (tensor_count - i - 1).saturating_mul(min_info);
            self.string(tail.saturating_add(16))?;
            let n_dims = self.uint(4, tail.saturating_add(12))?;
            if n_dims > 4 {
                return Err(Stop::Unknown);
            }
            self.skip(n_dims * dim_width, tail.saturating_add(12))?;
            self.skip(12, tail)?;
        }
        Ok(())
    }

    fn value(&mut self, type_id: u64, tail: u64, depth: u32) -> Result<(), Stop> {
        let ty = u32::try_from(type_id)
            .ok()
            .and_then(ValueType::from_id)
            .ok_or(Stop::Unknown)?;
        if let Some(n) = ty.fixed_size() {
            return self.skip(n as u64, tail);
        }
        if ty == ValueType::String {
            return self.string(tail);
        }
        if depth >= WALK_DEPTH {
            return Err(Stop::Unknown);
        }
        let elem_id = self.uint(4, tail.saturating_add(self.width))?;
        let elem = u32::try_from(elem_id)
            .ok()
            .and_then(ValueType::from_id)
            .ok_or(Stop::Unknown)?;
        let count = self.uint(self.width, tail)?;
        if let Some(n) = elem.fixed_size() {
            return self.skip(count.saturating_mul(n as u64), tail);
        }
        let min = self.min_size(elem);
        if elem == ValueType::String {
            // A vocabulary: hop from length to length, without the
            // per-element dispatch of the general loop below.
            for j in 0..count {
                let rest = (count - j - 1).saturating_mul(min).saturating_add(tail);
                self.string(rest)?;
            }
            return Ok(());
        }
        // Each element takes at least `min` bytes, so the loop ends when
        // the prefix does, whatever the count says.
        for j in 0..count {
            let rest = (count - j - 1).saturating_mul(min).saturating_add(tail);
            self.value(elem_id, rest, depth + 1)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::Gguf;

    /// A reader that counts reads and bytes.
    struct Counting<'a> {
        bytes: &'a [u8],
        reads: std::cell::Cell<u32>,
        max_end: std::cell::Cell<u64>,
    }

    impl ReadAt for Counting<'_> {
        fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
            self.reads.set(self.reads.get() + 1);
            let out = self.bytes.read_at(offset, len)?;
            self.max_end
                .set(self.max_end.get().max(offset + out.len() as u64));
            Ok(out)
        }
        fn size(&self) -> Result<u64> {
            Ok(self.bytes.len() as u64)
        }
    }

    fn vocab_file(tokens: usize, data: usize) -> Vec<u8> {
        let mut r = crate::testing::Raw::new(crate::format::WireFormat::default());
        r.header(1, 2)
            .str("tokenizer.ggml.tokens")
            .u32(9)
            .u32(8)
            .count(tokens as u64);
        for i in 0..tokens {
            r.str(&format!("tok{i}"));
        }
        r.str("tokenizer.ggml.scores")
            .u32(9)
            .u32(6)
            .count(tokens as u64);
        for i in 0..tokens {
            r.f32(i as f32);
        }
        r.tensor_info("t", &[data as u64 / 4], 0, 0).pad(32);
        r.buf.resize(r.buf.len() + data, 7);
        r.buf
    }

    #[test]
    fn lower_bound_never_passes_the_header_end() {
        let bytes = vocab_file(20_000, 4096);
        let file = GgufFile::open(&bytes).unwrap();
        let end = file.header_len();
        for cut in (0..end as usize).step_by(997) {
            let lb = min_header_end(&bytes[..cut], bytes.len() as u64);
            assert!(lb <= end, "cut {cut}: bound {lb} > header end {end}");
        }
        assert_eq!(
            min_header_end(&bytes[..end as usize], bytes.len() as u64),
            end
        );
    }

    #[test]
    fn big_header_takes_few_reads_and_at_most_one_chunk_extra() {
        const CHUNK: u64 = 256 * 1024;
        let bytes = vocab_file(40_000, 1 << 20);
        let src = Counting {
            bytes: &bytes,
            reads: 0.into(),
            max_end: 0.into(),
        };
        let file = read_header(&src, &ReadOptions::default().chunk(CHUNK)).unwrap();
        let local = GgufFile::open(&bytes).unwrap();
        assert_eq!(file.header_len(), local.header_len());
        assert_eq!(
            file.get_strings("tokenizer.ggml.tokens")
                .unwrap()
                .nth(39_999),
            Some("tok39999")
        );
        assert!(src.max_end.get() <= file.header_len() + CHUNK);
        // A header of three chunks in three reads, not four.
        assert!(file.header_len() > 3 * CHUNK);
        assert!(src.reads.get() <= 3, "{} reads", src.reads.get());
    }

    #[test]
    fn header_too_large_is_refused_before_reading_it() {
        let bytes = vocab_file(40_000, 16);
        let options = ReadOptions::default().chunk(4096).max_header_len(100_000);
        let err = read_header(&bytes[..], &options).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Format(FormatError::HeaderTooLarge { limit: 100_000, .. })
            ),
            "{err:?}"
        );
    }

    #[test]
    fn truncated_files_fail_as_locally() {
        let bytes = vocab_file(2000, 64);
        for cut in (0..bytes.len()).step_by(331) {
            let local = GgufFile::open(&bytes[..cut]).map(|_| ()).unwrap_err();
            let inc = read_header(&bytes[..cut], &ReadOptions::default().chunk(1000))
                .map(|_| ())
                .unwrap_err();
            assert_eq!(format!("{local:?}"), format!("{inc:?}"), "cut {cut}");
        }
    }

    /// Bytes past the first read are checked by one parse once the walk
    /// says the header is all there: a corrupt entry deep in the header
    /// still fails with the error and offset of the local reader.
    #[test]
    fn a_corrupt_entry_past_the_first_read_fails_as_locally() {
        let mut bytes = vocab_file(3000, 64);
        // The last byte of a token deep in the vocabulary: invalid UTF-8.
        let at = bytes.windows(7).position(|w| w == b"tok2500").unwrap() + 6;
        bytes[at] = 0xFF;
        let local = GgufFile::open(&bytes).map(|_| ()).unwrap_err();
        assert!(
            matches!(local, Error::Format(FormatError::InvalidUtf8 { .. })),
            "{local:?}"
        );
        for chunk in [100, 1000, 4096] {
            let inc = read_header(&bytes[..], &ReadOptions::default().chunk(chunk))
                .map(|_| ())
                .unwrap_err();
            assert_eq!(format!("{local:?}"), format!("{inc:?}"), "chunk {chunk}");
        }
    }
}
