//! The one error type of the crate.

use crate::format::GgmlType;

impl Error {
    /// Names what was being read in an error that says so
    /// ([`Truncated`](Error::Truncated), [`CountTooLarge`](Error::CountTooLarge),
    /// [`InvalidUtf8`](Error::InvalidUtf8)) and does not yet: the wire
    /// codecs report where, their callers know what.
    pub(crate) fn what(mut self, name: impl FnOnce() -> String) -> Self {
        if let Error::Truncated { what, .. }
        | Error::CountTooLarge { what, .. }
        | Error::InvalidUtf8 { what, .. } = &mut self
        {
            if what.is_empty() {
                *what = name();
            }
        }
        self
    }
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong reading, writing, editing or decoding GGUF.
///
/// Each variant says what is wrong and where: a byte `offset` from the start
/// of the file, and the key or tensor name when there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error from the operating system.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),

    /// The file does not start with the magic bytes `GGUF`.
    #[error("reading header: bad magic {found:02x?} at offset 0, expected \"GGUF\"")]
    BadMagic {
        /// The four bytes found.
        found: [u8; 4],
    },
    /// The version is not 1, 2 or 3.
    #[error("reading header: unsupported GGUF version {version} at offset 4 (supported: 1, 2, 3)")]
    UnsupportedVersion {
        /// The version read (after byte-order detection).
        version: u32,
    },
    /// The file ends before a field it declares.
    #[error("reading {what}: file truncated at offset {offset}, {needed} more bytes needed")]
    Truncated {
        /// What was being read, with the key or tensor name.
        what: String,
        /// Where the missing bytes start.
        offset: u64,
        /// How many bytes were needed there.
        needed: u64,
    },
    /// A count or length cannot fit in the bytes that remain in the file.
    #[error("reading {what}: count {count} at offset {offset} needs at least {min_bytes} bytes but only {remaining} remain")]
    CountTooLarge {
        /// What was being counted.
        what: String,
        /// Offset of the count field.
        offset: u64,
        /// The count read.
        count: u64,
        /// Lower bound of the bytes the count implies (saturating).
        min_bytes: u64,
        /// Bytes left in the file after the count.
        remaining: u64,
    },
    /// A metadata key of length zero.
    #[error("reading metadata: empty key at offset {offset}")]
    EmptyKey {
        /// Offset of the key.
        offset: u64,
    },
    /// The same key appears twice.
    #[error("reading metadata: duplicate key {key:?} at offset {offset}")]
    DuplicateKey {
        /// Offset of the second occurrence.
        offset: u64,
        /// The key.
        key: String,
    },
    /// A value or array element type id above 12.
    #[error("reading metadata key {key:?}: invalid value type {type_id} at offset {offset}")]
    InvalidValueType {
        /// Offset of the type field.
        offset: u64,
        /// The key holding the value.
        key: String,
        /// The id read.
        type_id: u32,
    },
    /// A string that is not valid UTF-8.
    #[error("reading {what}: invalid UTF-8 at offset {offset}")]
    InvalidUtf8 {
        /// What was being read.
        what: String,
        /// Offset of the string bytes.
        offset: u64,
    },
    /// A bool byte other than 0 or 1.
    #[error(
        "reading metadata key {key:?}: bool byte {byte} at offset {offset} is neither 0 nor 1"
    )]
    InvalidBool {
        /// Offset of the byte.
        offset: u64,
        /// The key.
        key: String,
        /// The byte read.
        byte: u8,
    },
    /// Arrays nested deeper than [`Limits::max_array_depth`](crate::read::Limits).
    #[error("reading metadata key {key:?}: arrays nested deeper than {limit} at offset {offset}")]
    ArrayTooDeep {
        /// Offset of the too-deep array.
        offset: u64,
        /// The key.
        key: String,
        /// The limit.
        limit: u32,
    },
    /// `general.alignment` is present but not a `u32`.
    #[error(
        "reading metadata: general.alignment at offset {offset} has type {found}, expected u32"
    )]
    AlignmentType {
        /// Offset of the value.
        offset: u64,
        /// The type found.
        found: crate::format::ValueType,
    },
    /// An alignment that is zero or not a power of two.
    #[error("alignment {alignment} (at offset {offset}) is not a power of two")]
    InvalidAlignment {
        /// Offset of the value, or 0 when given through the API.
        offset: u64,
        /// The value.
        alignment: u64,
    },
    /// The same tensor name appears twice.
    #[error("reading tensor infos: duplicate tensor name {tensor:?} at offset {offset}")]
    DuplicateTensor {
        /// Offset of the second info.
        offset: u64,
        /// The name.
        tensor: String,
    },
    /// More than 4 dimensions.
    #[error(
        "reading tensor {tensor:?}: {n_dims} dimensions at offset {offset}, at most 4 allowed"
    )]
    TooManyDims {
        /// Offset of the n_dims field.
        offset: u64,
        /// The tensor.
        tensor: String,
        /// The count read.
        n_dims: u32,
    },
    /// A dimension above `i64::MAX`, or a product of dimensions that overflows.
    #[error(
        "reading tensor {tensor:?}: shape {shape:?} at offset {offset} overflows the element count"
    )]
    ElementCountOverflow {
        /// Offset of the dims.
        offset: u64,
        /// The tensor.
        tensor: String,
        /// The dims read.
        shape: Vec<u64>,
    },
    /// Element count times type size overflows.
    #[error("tensor {tensor:?}: byte size of {elements} elements of {ty} overflows")]
    ByteSizeOverflow {
        /// The tensor.
        tensor: String,
        /// Element count.
        elements: u64,
        /// Its type.
        ty: GgmlType,
    },
    /// The first dimension is not a multiple of the type's block size.
    #[error(
        "tensor {tensor:?}: row length {row} is not a multiple of the {ty} block size {block}"
    )]
    RowNotBlockMultiple {
        /// The tensor.
        tensor: String,
        /// First dimension.
        row: u64,
        /// The type.
        ty: GgmlType,
        /// Its block size.
        block: u64,
    },
    /// A tensor's data offset is not a multiple of the alignment.
    #[error(
        "tensor {tensor:?}: data offset {offset} is not a multiple of the alignment {alignment}"
    )]
    MisalignedTensor {
        /// The tensor.
        tensor: String,
        /// Offset relative to the data section.
        offset: u64,
        /// The file's alignment.
        alignment: u64,
    },
    /// A tensor's data extends past the end of the file.
    #[error("tensor {tensor:?}: data at file offsets {offset}..{end} is past the end of the file ({file_len} bytes)")]
    TensorOutOfBounds {
        /// The tensor.
        tensor: String,
        /// Absolute start offset (saturating).
        offset: u64,
        /// Absolute end offset (saturating).
        end: u64,
        /// File length.
        file_len: u64,
    },
    /// Two tensors' data ranges overlap.
    #[error("tensors {first:?} and {second:?} overlap: {second:?} starts at data offset {second_start}, before {first:?} ends at {first_end}")]
    OverlappingTensors {
        /// The tensor that starts first.
        first: String,
        /// Where it ends (relative to the data section).
        first_end: u64,
        /// The tensor that starts inside it.
        second: String,
        /// Where it starts.
        second_start: u64,
    },
    /// A size-dependent operation on a tensor whose type id has no known size.
    #[error("tensor {tensor:?}: type id {type_id} is unknown or removed from ggml, its size is not known")]
    UnknownTensorType {
        /// The tensor.
        tensor: String,
        /// The raw type id.
        type_id: u32,
    },
    /// Tensor data was asked of a file opened without its data region.
    #[error("tensor {tensor:?}: the data region was not loaded (file opened with from_reader)")]
    DataNotLoaded {
        /// The tensor.
        tensor: String,
    },
    /// No key of that name.
    #[error("metadata key {key:?} not found")]
    KeyNotFound {
        /// The key.
        key: String,
    },
    /// No tensor of that name.
    #[error("tensor {tensor:?} not found")]
    TensorNotFound {
        /// The tensor asked for.
        tensor: String,
    },
    /// A typed getter met another type.
    #[error("metadata key {key:?} has type {found}, expected {expected}")]
    TypeMismatch {
        /// The key.
        key: String,
        /// The type asked for.
        expected: String,
        /// The type in the file.
        found: String,
    },
    /// A typed tensor view was asked for a tensor whose type, alignment or
    /// byte order does not allow it.
    #[error("tensor {tensor:?}: cannot view as {requested}: {reason}")]
    ViewUnavailable {
        /// The tensor.
        tensor: String,
        /// The view asked for.
        requested: &'static str,
        /// Why not.
        reason: String,
    },

    // ---- writer ----
    /// A wire struct could not be encoded (e.g. a count too large for v1).
    #[error("encoding: {reason}")]
    Encode {
        /// What went wrong.
        reason: String,
    },
    /// A metadata key the builder refuses.
    #[error("metadata key {key:?}: {reason}")]
    InvalidKey {
        /// The key.
        key: String,
        /// Why.
        reason: &'static str,
    },
    /// A key template contains `{arch}` but no architecture was known:
    /// neither a `#[gguf(arch)]` field nor `general.architecture`.
    #[error("metadata key {key:?}: `{{arch}}` has no value (set general.architecture first, or mark a field #[gguf(arch)])")]
    ArchUnknown {
        /// The key template.
        key: String,
    },
    /// A tensor the builder refuses: bad shape, name or type.
    #[error("tensor {tensor:?}: {reason}")]
    InvalidTensor {
        /// The tensor.
        tensor: String,
        /// Why.
        reason: String,
    },
    /// A tensor name was added twice to a builder, or a tensor renamed to
    /// the name of another.
    #[error("a tensor named {tensor:?} already exists")]
    TensorExists {
        /// The name.
        tensor: String,
    },
    /// Tensor data of the wrong length.
    #[error("tensor {tensor:?}: data is {actual} bytes, its shape and type need {expected}")]
    TensorDataSize {
        /// The tensor.
        tensor: String,
        /// Bytes the shape and type require.
        expected: u64,
        /// Bytes supplied.
        actual: u64,
    },
    /// Tensor data supplied out of declared order (metadata-first writing).
    #[error("tensor {tensor:?}: data given out of order, {expected:?} is due")]
    TensorOrder {
        /// The tensor whose data was given.
        tensor: String,
        /// The tensor whose data is due next (empty when all were written).
        expected: String,
    },
    /// A write finished before every tensor's data was supplied.
    #[error("tensor {tensor:?}: no data given ({missing} tensors still need theirs)")]
    MissingTensorData {
        /// The first tensor without data.
        tensor: String,
        /// How many tensors, from it on, have none.
        missing: usize,
    },

    // ---- editor ----
    /// Another process holds the file's edit lock.
    #[error("{path}: another editor is committing to this file (advisory lock held)")]
    Locked {
        /// The file.
        path: std::path::PathBuf,
    },
    /// The file changed on disk between `Editor::open` and `commit`.
    #[error("{path}: the file changed on disk since it was opened for editing; reopen and redo the edit")]
    ConcurrentModification {
        /// The file.
        path: std::path::PathBuf,
    },
    /// A journal beside the file is damaged in a way recovery cannot judge safe.
    #[error("{path}: edit journal is invalid: {reason}")]
    BadJournal {
        /// The journal file.
        path: std::path::PathBuf,
        /// Why.
        reason: String,
    },

    // ---- tensor codecs ----
    /// A codec error while decoding or encoding a named tensor's data.
    #[error("tensor {tensor:?}: {source}")]
    TensorCodec {
        /// The tensor.
        tensor: String,
        /// What the codec reported.
        #[source]
        source: Box<Error>,
    },
    /// The operation is not available for this tensor type.
    #[error("{operation} is not supported for tensor type {ty}")]
    UnsupportedType {
        /// The tensor type.
        ty: GgmlType,
        /// What was asked, e.g. "quantize".
        operation: &'static str,
    },
    /// A buffer does not have the length the type and element count require.
    #[error("{what}: expected {expected} bytes or elements, got {actual}")]
    LengthMismatch {
        /// What was being checked.
        what: String,
        /// Required length.
        expected: u64,
        /// Actual length.
        actual: u64,
    },
    /// A length is not a whole number of blocks (or block elements).
    #[error("{what}: {len} is not a multiple of {unit} (the block unit of {ty})")]
    PartialBlock {
        /// The tensor type.
        ty: GgmlType,
        /// What was measured, e.g. "row length" or "tensor data bytes".
        what: &'static str,
        /// The offending length.
        len: u64,
        /// The block size (elements) or type size (bytes) it must divide by.
        unit: u64,
    },

    // ---- memory estimate ----
    /// Settings llama.cpp would refuse for this model (a quantized V cache
    /// without flash attention, a cache type whose blocks do not divide
    /// the row).
    #[error("estimate: {reason}")]
    Estimate {
        /// Why.
        reason: String,
    },

    // ---- split models ----
    /// A file of a split model could not be opened, read or written;
    /// `source` says why.
    #[error("{path}: {source}")]
    Shard {
        /// The shard.
        path: std::path::PathBuf,
        /// What went wrong reading it.
        #[source]
        source: Box<Error>,
    },
    /// A shard of a split model is not where its name says it should be.
    #[error("shard {index} of {count} is missing: expected {path}")]
    ShardMissing {
        /// The path the shard should have.
        path: std::path::PathBuf,
        /// Its position, from 1.
        index: u32,
        /// Number of shards.
        count: u32,
    },
    /// A shard's `split.no` is not its position in the model.
    #[error(
        "{path}: split.no is {found}, but the file is shard {expected} (0-based) of the model"
    )]
    ShardNumber {
        /// The shard.
        path: std::path::PathBuf,
        /// Its position (0-based).
        expected: u32,
        /// The `split.no` it carries.
        found: u32,
    },
    /// A shard's `split.count` differs from the first shard's.
    #[error("{path}: split.count is {found}, but the first shard says {expected}")]
    ShardCount {
        /// The shard.
        path: std::path::PathBuf,
        /// The first shard's `split.count` (or the number of files given).
        expected: u32,
        /// The shard's.
        found: u32,
    },
    /// The shards hold another number of tensors than `split.tensors.count`.
    #[error("{path}: split.tensors.count is {expected}, but the shards hold {found} tensors")]
    ShardTensorCount {
        /// The first shard, which carries the count.
        path: std::path::PathBuf,
        /// `split.tensors.count`.
        expected: i64,
        /// Tensors found in all shards.
        found: u64,
    },
    /// The same tensor name is in two shards.
    #[error("tensor {tensor:?} is in two shards: {first} and {second}")]
    ShardDuplicateTensor {
        /// The tensor.
        tensor: String,
        /// The shard that holds it first.
        first: std::path::PathBuf,
        /// The other shard.
        second: std::path::PathBuf,
    },
    /// A shard's name does not let its siblings be found.
    #[error("{path}: {reason}")]
    ShardName {
        /// The shard.
        path: std::path::PathBuf,
        /// Why the name does not fit.
        reason: String,
    },

    // ---- incremental and remote reading ----
    /// The header region would need more bytes than the reader allows
    /// (`ReadOptions::max_header_len`), so it was not read.
    #[error("reading header: the header region needs at least {needed} bytes, more than the limit of {limit}")]
    HeaderTooLarge {
        /// Lower bound of the bytes the header region needs.
        needed: u64,
        /// The limit.
        limit: u64,
    },
    /// A positional read returned fewer bytes than asked although the
    /// source is longer (a source that shrank or misbehaves).
    #[error("{source_name}: read at offset {offset} returned {got} of {expected} bytes")]
    ShortRead {
        /// The source (file name or URL without credentials).
        source_name: String,
        /// Offset read.
        offset: u64,
        /// Bytes asked.
        expected: u64,
        /// Bytes received.
        got: u64,
    },
    /// An Ollama manifest (local or from a registry) that is missing or
    /// names no usable model blob.
    #[error("Ollama manifest {source_name}: {reason}")]
    BadManifest {
        /// The manifest's path or URL.
        source_name: String,
        /// Why.
        reason: String,
    },
    /// A URL or object-store path that cannot be used.
    #[error("{url}: {reason}")]
    BadUrl {
        /// The URL (without credentials).
        url: String,
        /// Why.
        reason: String,
    },
    /// The server answered a range request with the whole body (status
    /// 200): the file was not downloaded.
    #[error("{url}: the server ignored the Range request for bytes {offset}..{end} and began sending the whole {} instead; stopped reading (range requests are required)", total.map_or("body".to_string(), |n| format!("{n}-byte body")))]
    RangeIgnored {
        /// The URL.
        url: String,
        /// Start of the range asked.
        offset: u64,
        /// End (exclusive) of the range asked.
        end: u64,
        /// Length of the body announced, when known.
        total: Option<u64>,
    },
    /// A partial response whose `Content-Range` is missing, malformed or
    /// not the range asked.
    #[error("{url}: asked for bytes {offset}..{end}, the response's Content-Range is {}", found.as_deref().map_or("missing".to_string(), |f| format!("{f:?}")))]
    BadContentRange {
        /// The URL.
        url: String,
        /// Start of the range asked.
        offset: u64,
        /// End (exclusive) of the range asked.
        end: u64,
        /// The header received, if any.
        found: Option<String>,
    },
    /// A response body that ended before the bytes it announced (the
    /// connection closed early or the server sent too little).
    #[error("{url}: response for bytes {offset}..{} ended after {got} of {expected} bytes", offset + expected)]
    ShortBody {
        /// The URL.
        url: String,
        /// Start of the range.
        offset: u64,
        /// Bytes announced.
        expected: u64,
        /// Bytes received.
        got: u64,
    },
    /// An HTTP error status (403, 404, 5xx, ...).
    #[error("{url}: HTTP status {status}{}", status_hint(*status))]
    HttpStatus {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// No progress within the configured time.
    #[error("{url}: {what} timed out after {} s", after.as_secs_f64())]
    Timeout {
        /// The URL.
        url: String,
        /// What was waited for: "connecting", "reading the response", ...
        what: &'static str,
        /// The limit that ran out.
        after: std::time::Duration,
    },
    /// The remote file changed between two reads (its ETag, Last-Modified
    /// or size differs from the first response).
    #[error("{url}: the file changed while being read: {what} was {before:?}, is now {after:?}")]
    RemoteChanged {
        /// The URL.
        url: String,
        /// What differs: "ETag", "Last-Modified" or "size".
        what: &'static str,
        /// Value at the first read.
        before: String,
        /// Value now.
        after: String,
    },
    /// Reading a remote file's header took longer than
    /// `RemoteOptions::header_deadline` (a slow or trickling server).
    #[error("{url}: the header was not read within the deadline of {} s: {received} bytes arrived in {:.1} s", deadline.as_secs_f64(), elapsed.as_secs_f64())]
    Deadline {
        /// The URL.
        url: String,
        /// The deadline.
        deadline: std::time::Duration,
        /// Body bytes received by then.
        received: u64,
        /// Time spent.
        elapsed: std::time::Duration,
    },
    /// A redirect that was not followed (to plain HTTP where only HTTPS is
    /// allowed, to another scheme, or one too many).
    #[error("{url}: refused a redirect to {to}: {reason}")]
    RedirectRefused {
        /// The URL.
        url: String,
        /// Where the redirect pointed (without credentials).
        to: String,
        /// Why it was refused.
        reason: String,
    },
    /// A network or object-store failure (connection refused or dropped,
    /// TLS, DNS, credentials).
    #[error("{url}: {message}")]
    Network {
        /// The URL.
        url: String,
        /// What failed, with its cause chain (never credentials).
        message: String,
    },
}

fn status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (access denied: check the credentials, e.g. HF_TOKEN or AWS_ACCESS_KEY_ID)",
        404 => " (not found)",
        412 => " (the file changed while being read)",
        416 => " (range not satisfiable)",
        500..=599 => " (server error)",
        _ => "",
    }
}
