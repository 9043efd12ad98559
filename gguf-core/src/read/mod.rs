//! Reading GGUF: [`GgufFile`], a validated, zero-copy view of a file.
//!
//! Opening parses the header, every metadata entry and every tensor info,
//! in that order, and checks them all (see [`crate::Error`] for what is
//! rejected). Arrays are validated but not decoded; scalars and strings are
//! decoded on lookup from the borrowed bytes. The getters are those of
//! [`Gguf`], the one read-side trait, which [`Model`](crate::Model)
//! implements too.

mod backing;
mod finite;
mod header;
mod header_copy;
mod incremental;
mod lint;
mod local_header;
mod manifest_json;
mod metadata;
pub(crate) mod ollama_store;
pub(crate) mod options;
mod range;
mod regular;
pub(crate) mod source;
pub(crate) mod tensor;
mod tensor_info;
mod tensor_values;
mod url;
pub(crate) mod view;

use crate::error::FormatError;
use std::path::Path;
use std::sync::Arc;

use indexmap::IndexMap;

use crate::error::{Error, Result};
use crate::format::array::{read_value, Walk};
use crate::format::cursor::Cursor;
use crate::format::{align_up, ArrayView, Value, WireFormat};

pub use finite::non_finite_scales;
pub use finite::{FiniteUnit, NonFinite};
pub use incremental::{
    read_header, HeaderParser, ParseStep, ReadAt, ReadOptions, SeekReader, DEFAULT_CHUNK,
    DEFAULT_MAX_HEADER_LEN,
};
pub use lint::LintIssue;
pub use ollama_store::{is_ollama_store, ollama_model_path, MODEL_MEDIA_TYPE};
pub(crate) use options::OpenOptions;
#[cfg(feature = "remote")]
pub use options::DEFAULT_HEADER_DEADLINE;
#[cfg(feature = "remote")]
pub use range::RemoteStats;
pub(crate) use regular::kind as file_kind;
pub use regular::{open_regular, read_capped, read_text_capped, MAX_TEXT_INPUT};
pub(crate) use source::Source;
pub use source::Stream;
pub(crate) use tensor::Tensor;
pub use tensor_values::RowIter;
pub use url::redact_url;
pub(crate) use view::Gguf;

use backing::Backing;
use metadata::KvEntry;
pub(crate) use range::RangeRead;
#[cfg(feature = "remote")]
pub(crate) use range::ReadFuture;
use tensor_info::TensorEntry;
#[cfg(feature = "remote")]
pub(crate) use url::STORE_SCHEMES;

/// Bounds on what a file may ask of the reader.
///
/// ```
/// use gguf_core::read::Limits;
/// let limits = Limits::default().max_array_depth(2);
/// assert_eq!(limits.max_array_depth, 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Deepest nesting of arrays accepted (1 = arrays of scalars only).
    pub max_array_depth: u32,
}

impl Limits {
    /// Sets [`max_array_depth`](Self::max_array_depth).
    pub fn max_array_depth(mut self, depth: u32) -> Self {
        self.max_array_depth = depth;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_array_depth: 16,
        }
    }
}

/// A parsed, validated GGUF file: the one-file view.
///
/// To open a model, use [`Model::open`](crate::Model::open): it takes the
/// same sources, opens every shard of a split model, and answers the same
/// getters ([`Gguf`]). A `Model` is made of `GgufFile`s, one
/// per shard ([`Model::shards`](crate::Model::shards)); use a `GgufFile`
/// directly when you have exactly one file, or its bytes, and want that
/// file's own layout (its `split.*` keys, alignment, data offset).
///
/// One file, as [`GgufFile::open`] reads it from a [`Source`]: the
/// caller's bytes borrowed; or, for a path, the header region copied and
/// the data section memory-mapped; or, for a stream or a URL, the header
/// region held and each tensor's data read on request
/// ([`Tensor::read`]). Everything handed out (`&str`, arrays, held tensor
/// data) borrows from these without copying.
///
/// ```
/// use gguf_core::Gguf;
/// # fn main() -> gguf_core::Result<()> {
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
/// use gguf_core::GgufFile;
/// let file = GgufFile::open(&bytes)?;
/// assert_eq!(file.version(), 3);
/// assert_eq!(file.get_str("general.architecture")?, "llama");
/// assert_eq!(file.get::<u32>("llama.context_length")?, 4096);
/// let t = file.tensor("token_embd.weight")?;
/// assert_eq!(t.shape(), &[8, 4]);
/// assert_eq!(t.data()?.len(), 8 * 4 * 4);
/// # Ok(()) }
/// ```
pub struct GgufFile<'a> {
    backing: Backing<'a>,
    file_len: u64,
    ctx: WireFormat,
    alignment: u64,
    /// End of the tensor infos.
    header_len: u64,
    data_offset: u64,
    kvs: IndexMap<Box<str>, KvEntry>,
    tensors: IndexMap<Box<str>, TensorEntry>,
}

impl std::fmt::Debug for GgufFile<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GgufFile")
            .field("version", &self.ctx.version)
            .field("endian", &self.ctx.endian)
            .field("alignment", &self.alignment)
            .field("data_offset", &self.data_offset)
            .field("kv_count", &self.kvs.len())
            .field("tensor_count", &self.tensors.len())
            .finish()
    }
}

/// The parsed header region, before it is attached to its bytes.
struct Parsed {
    ctx: WireFormat,
    alignment: u64,
    header_len: u64,
    data_offset: u64,
    kvs: IndexMap<Box<str>, KvEntry>,
    tensors: IndexMap<Box<str>, TensorEntry>,
}

/// Adds `entry` under `name` unless the name is taken (then the error
/// `duplicate` builds): the one duplicate check of keys and tensor names.
fn insert_unique<E>(
    map: &mut IndexMap<Box<str>, E>,
    name: &str,
    entry: E,
    duplicate: impl FnOnce() -> Error,
) -> Result<()> {
    match map.entry(Box::from(name)) {
        indexmap::map::Entry::Occupied(_) => Err(duplicate()),
        indexmap::map::Entry::Vacant(v) => {
            v.insert(entry);
            Ok(())
        }
    }
}

/// Parses the header region from `buf`, the first bytes of a file of
/// `file_len` bytes, in spec order: header, metadata, tensor infos, data.
fn parse(buf: &[u8], file_len: u64, limits: &Limits) -> Result<Parsed> {
    let mut cur = Cursor::new(buf, WireFormat::default(), file_len);
    let header = header::read_header(&mut cur)?;
    let meta = metadata::read_metadata(
        &mut cur,
        header.kv_count,
        header.kv_count_at,
        limits.max_array_depth,
    )?;
    let tensors =
        tensor_info::read_tensor_infos(&mut cur, header.tensor_count, header.tensor_count_at)?;
    let header_len = cur.pos() as u64;
    let data_offset = align_up(header_len, meta.alignment).ok_or(Error::Format(
        FormatError::InvalidAlignment {
            offset: 0,
            alignment: meta.alignment,
        },
    ))?;
    tensor_info::check_data_ranges(&tensors, meta.alignment, data_offset, file_len)?;
    Ok(Parsed {
        ctx: header.ctx,
        alignment: meta.alignment,
        header_len,
        data_offset,
        kvs: meta.entries,
        tensors,
    })
}

impl<'a> GgufFile<'a> {
    /// Parses and validates a whole file held in memory (the door,
    /// [`GgufFile::open`], leads here for [`Source::Bytes`]).
    pub(crate) fn parse_slice(bytes: &'a [u8], limits: &Limits) -> Result<Self> {
        let parsed = parse(bytes, bytes.len() as u64, limits)?;
        Ok(Self::assemble(
            Backing::Borrowed(bytes),
            bytes.len() as u64,
            parsed,
        ))
    }

    fn assemble(backing: Backing<'a>, file_len: u64, p: Parsed) -> Self {
        GgufFile {
            backing,
            file_len,
            ctx: p.ctx,
            alignment: p.alignment,
            header_len: p.header_len,
            data_offset: p.data_offset,
            kvs: p.kvs,
            tensors: p.tensors,
        }
    }
}

impl GgufFile<'static> {
    /// Reads and validates the file at `path`: the header region copied
    /// into memory, the data section memory-mapped read-only, so no
    /// in-place edit of the file (by an [`Editor`](crate::edit::Editor) in
    /// this process or another) can change a string or array borrowed
    /// from the header. See `read/backing.rs` and ARCHITECTURE.md for why.
    ///
    /// Opening never writes. If an in-place edit of this file was
    /// interrupted (its journal lies beside the file, see
    /// [`edit`](crate::edit)), the file is presented as it was before that
    /// edit, with the old header bytes taken from the journal.
    pub(crate) fn parse_path(path: &Path, limits: &Limits) -> Result<Self> {
        let (backing, (parsed, file_len)) = Backing::open(path, |buf, file_len| {
            let parsed = parse(buf, file_len, limits)?;
            let data_offset = parsed.data_offset;
            Ok(((parsed, file_len), data_offset))
        })
        .map_err(|e| e.with_path(path))?;
        Ok(Self::assemble(backing, file_len, parsed))
    }
}

impl<'a> GgufFile<'a> {
    /// Reads the header region of a stream (64 KiB first, then what it
    /// needs in a few large steps: never more than the header region plus
    /// 64 KiB); tensor data is read from the stream on request
    /// ([`Tensor::read`]).
    pub(crate) fn parse_stream(stream: Stream, options: &OpenOptions) -> Result<Self> {
        let reader = SeekReader::new(stream.0)?;
        let file = read_header(&reader, &options.stream_read())?;
        Ok(file.with_reader(Arc::new(reader)))
    }

    /// This header-only file, reading tensor data from `reader` on
    /// request.
    pub(crate) fn with_reader(self, reader: Arc<dyn RangeRead>) -> Self {
        let backing = match self.backing {
            Backing::Header(header) | Backing::Ranged { header, .. } => {
                Backing::Ranged { header, reader }
            }
            // Tensor data already held needs no reader.
            held => held,
        };
        GgufFile { backing, ..self }
    }

    /// Alignment of the data section (`general.alignment` or 32).
    pub fn alignment(&self) -> u64 {
        self.alignment
    }

    /// Where the tensor infos end (unpadded size of the header region).
    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// Absolute offset of the data section.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// Length of the whole file in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The header region as stored: magic, counts, metadata and tensor
    /// infos (`0..header_len()`), without the padding before the data.
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// assert_eq!(&file.header_bytes()[..4], b"GGUF");
    /// assert_eq!(file.header_bytes().len() as u64, file.header_len());
    /// # Ok(()) }
    /// ```
    pub fn header_bytes(&self) -> &[u8] {
        let header = self.backing.header();
        let end = usize::try_from(self.header_len).map_or(header.len(), |e| e.min(header.len()));
        &header[..end]
    }

    /// The data section (`data_offset()..file_len()`), where every tensor's
    /// data lies; `None` when tensor data is not held (a stream, a URL:
    /// see [`Tensor::read`]).
    ///
    /// ```
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// let data = file.data_section().unwrap();
    /// assert_eq!(data.len() as u64, file.file_len() - file.data_offset());
    /// # Ok(()) }
    /// ```
    pub fn data_section(&self) -> Option<&[u8]> {
        self.backing.data_section(self.data_offset)
    }

    /// The padded header region (`0..data_offset()`, or to the end of a
    /// shorter file): what an in-place edit rewrites.
    #[cfg(unix)]
    pub(crate) fn header_region(&self) -> &[u8] {
        let header = self.backing.header();
        let end = usize::try_from(self.data_offset.min(self.file_len))
            .map_or(header.len(), |e| e.min(header.len()));
        &header[..end]
    }

    /// File bytes `start..start + len`, if held (see [`Backing::range`]).
    pub(crate) fn range(&self, start: usize, len: usize) -> Option<&[u8]> {
        self.backing.range(start, len)
    }

    /// Tells the kernel the mapped bytes in `start..start + len` will not be
    /// needed soon (no-op for buffers that are not maps).
    pub(crate) fn release(&self, start: usize, len: usize) {
        self.backing.release(start, len);
    }

    /// The file behind a memory map ([`open`](GgufFile::open)), for
    /// kernel-side copies of tensor data.
    pub(crate) fn mapped_file(&self) -> Option<&std::fs::File> {
        self.backing.file()
    }

    /// True when tensor data is held ([`Tensor::data`] borrows it): a
    /// path (mapped) or bytes. False for a stream or a URL, whose tensor
    /// data [`Tensor::read`] reads on request, and for a header read alone
    /// ([`HeaderParser`]).
    pub fn has_data(&self) -> bool {
        self.backing.has_data()
    }

    /// Where tensor data is read on request (a stream, a remote file),
    /// when it is not held.
    pub(crate) fn reader(&self) -> Option<&Arc<dyn RangeRead>> {
        self.backing.reader()
    }

    /// What reading this remote file cost so far (requests, bytes, time);
    /// `None` for a file that is not remote.
    #[cfg(feature = "remote")]
    pub fn remote_stats(&self) -> Option<RemoteStats> {
        self.reader().and_then(|r| r.stats())
    }

    /// The ETag of this remote file, when its server sent one.
    #[cfg(feature = "remote")]
    pub fn remote_etag(&self) -> Option<String> {
        self.reader().and_then(|r| r.etag())
    }

    // ---- metadata (the rest is in [`Gguf`]) ----

    /// Byte range of the whole entry (key, type and value) of `key`.
    pub fn entry_range(&self, key: &str) -> Option<std::ops::Range<u64>> {
        self.kvs
            .get(key)
            .map(|e| e.entry_offset as u64..e.value_end as u64)
    }

    /// Position of `key` in file order.
    pub(crate) fn key_index(&self, key: &str) -> Option<usize> {
        self.kvs.get_index_of(key)
    }

    fn decode(&self, e: &KvEntry) -> Value<'_> {
        let bytes = self.backing.header();
        if let Some((elem, len, body)) = e.array {
            return Value::Array(ArrayView::new(
                elem,
                len,
                &bytes[body..e.value_end],
                body as u64,
                self.ctx,
            ));
        }
        let mut cur = Cursor::at(bytes, e.value_offset, self.ctx);
        // Validated at open; a failure here would be a bug, not bad input.
        read_value(&mut cur, e.value_type, 0, &Walk::TRUSTED, 0, &String::new)
            .unwrap_or(Value::U8(0))
    }
}
