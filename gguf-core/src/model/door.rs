//! The one door: [`Model::open`] and [`GgufFile::open`] read any
//! [`Source`] (a path, bytes, a stream, a URL, an Ollama store entry).

use super::origin::Origin;
use super::Model;
#[cfg(feature = "remote")]
use super::SPLIT_TENSORS_COUNT;
#[cfg(not(feature = "remote"))]
use crate::error::Error;
use crate::error::Result;
#[cfg(feature = "remote")]
use crate::read::Gguf;
use crate::read::{GgufFile, OpenOptions, Source};

impl<'a> Model<'a> {
    /// Opens a model from any [`Source`]: a local file (any shard of a
    /// split model opens the whole model, its siblings found by name,
    /// `{prefix}-{k:05}-of-{n:05}.gguf`, and mapped), the bytes of a file,
    /// a `Read + Seek` stream, a URL (`http(s)://`, `hf://`, `ms://`,
    /// `ollama://`, `s3://`, `gs://`, `az://`: cargo feature `remote`; any
    /// shard's URL opens the whole model too) or an Ollama store entry
    /// (`ollama:NAME[:TAG]`). See the [module docs](super) for what is
    /// validated.
    ///
    /// ```no_run
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// use gguf_core::Model;
    /// let model = Model::open("Grok-100B-v1.0-Q4_0-00003-of-00009.gguf")?;
    /// for t in model.tensors() {
    ///     println!("{} {:?}", t.name(), t.shape());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn open(source: impl Into<Source<'a>>) -> Result<Self> {
        Self::open_with(source, &OpenOptions::default())
    }

    /// [`open`](Self::open) with explicit [`OpenOptions`] for every file.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// use gguf_core::{read::Limits, OpenOptions, Model};
    /// let options = OpenOptions::default().limits(Limits::default().max_array_depth(1));
    /// let model = Model::open_with(&bytes, &options)?;
    /// assert_eq!(model.tensor_count(), 2);
    /// # Ok(()) }
    /// ```
    pub fn open_with(source: impl Into<Source<'a>>, options: &OpenOptions) -> Result<Self> {
        match source.into() {
            Source::Path(path) => Ok(Model::open_path(&path, &options.limits)?),
            Source::Ollama(name) => Model::open_path(&ollama_path(&name)?, &options.limits),
            Source::Url(url) => Model::from_remote(&url, open_url(&url, options, true)?),
            other => {
                let origin = one_origin(&other);
                Model::from_files(vec![(origin, GgufFile::open_with(other, options)?)])
            }
        }
    }
}

impl Model<'static> {
    /// [`open_with`](Self::open_with) for async code: a URL is read
    /// without blocking a thread (its shards' headers concurrently); a
    /// local source opens synchronously inside the future. Tensor data is
    /// then read with [`Tensor::read_async`](crate::Tensor::read_async).
    ///
    /// ```no_run
    /// use gguf_core::Gguf;
    /// # async fn f() -> gguf_core::Result<()> {
    /// use gguf_core::{OpenOptions, Model};
    /// let model = Model::open_async("s3://models/big-00001-of-00003.gguf", &OpenOptions::default()).await?;
    /// let bytes = model.tensor("output.weight")?.read_async().await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "remote")]
    pub async fn open_async(
        source: impl Into<Source<'static>>,
        options: &OpenOptions,
    ) -> Result<Model<'static>> {
        match source.into() {
            Source::Url(url) => {
                let files =
                    crate::remote::open_async(&url, options, Some(later_first_read)).await?;
                Model::from_remote(&url, files)
            }
            other => Model::open_with(other, options),
        }
    }

    /// The model of the remote files read from `given`: one file keeps
    /// the name it was given (`hf://…`, `ollama://…`), redacted; the
    /// shards of a split model are named by their own URLs.
    fn from_remote(given: &str, files: Vec<(String, GgufFile<'static>)>) -> Result<Self> {
        let one = files.len() == 1;
        Model::from_files(
            files
                .into_iter()
                .map(|(url, f)| match one {
                    true => (Origin::Url(crate::read::redact_url(given)), f),
                    false => (Origin::Url(url), f),
                })
                .collect(),
        )
    }
}

impl<'a> GgufFile<'a> {
    /// Opens one file from any [`Source`]: a path (the header region
    /// copied, the data section memory-mapped), the bytes of a whole file
    /// (borrowed), a `Read + Seek` stream or a URL (the header region
    /// read, each tensor's data read on request by
    /// [`Tensor::read`](crate::Tensor::read)), or an Ollama store entry.
    /// A shard opens as itself, split keys included: [`Model::open`]
    /// opens the whole model.
    ///
    /// Opening never writes. If an in-place edit of a local file was
    /// interrupted (its journal lies beside the file, see
    /// [`edit`](crate::edit)), the file is presented as it was before that
    /// edit, with the old header bytes taken from the journal; the file and
    /// the journal are left as they are, so read-only files and directories
    /// open normally. [`Editor::open`](crate::edit::Editor::open) or
    /// [`edit::recover`](crate::edit::recover) repair the file on disk.
    ///
    /// ```
    /// use gguf_core::Gguf;
    /// # fn main() -> gguf_core::Result<()> {
    /// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf")).to_vec();
    /// let file = gguf_core::GgufFile::open(&bytes)?;
    /// assert_eq!(file.tensor_count(), 2);
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.gguf");
    /// let file = gguf_core::GgufFile::open(path)?;
    /// for t in file.tensors() {
    ///     println!("{} {} {:?}", t.name(), t.ggml_type(), t.shape());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn open(source: impl Into<Source<'a>>) -> Result<Self> {
        Self::open_with(source, &OpenOptions::default())
    }

    /// [`open`](Self::open) with explicit [`OpenOptions`].
    pub fn open_with(source: impl Into<Source<'a>>, options: &OpenOptions) -> Result<Self> {
        match source.into() {
            Source::Path(path) => {
                GgufFile::parse_path(&path, &options.limits).map_err(|e| e.in_file(&path))
            }
            Source::Bytes(bytes) => GgufFile::parse_slice(bytes, &options.limits),
            Source::Reader(stream) => GgufFile::parse_stream(stream, options),
            Source::Url(url) => {
                let mut files = open_url(&url, options, false)?;
                Ok(files.remove(0).1)
            }
            Source::Ollama(name) => {
                let path = ollama_path(&name)?;
                GgufFile::parse_path(&path, &options.limits).map_err(|e| e.in_file(&path))
            }
        }
    }
}

/// Where a one-file source came from.
fn one_origin(source: &Source<'_>) -> Origin {
    match source {
        Source::Path(p) => Origin::Path(p.clone()),
        Source::Url(u) => Origin::Url(crate::read::redact_url(u)),
        Source::Reader(_) => Origin::Stream,
        _ => Origin::Bytes,
    }
}

/// The remote file at `url`, or every shard of its model (`shards`).
#[cfg(feature = "remote")]
fn open_url(
    url: &str,
    options: &OpenOptions,
    shards: bool,
) -> Result<Vec<(String, GgufFile<'static>)>> {
    crate::remote::open(url, options, shards.then_some(later_first_read as _))
}

#[cfg(not(feature = "remote"))]
fn open_url(url: &str, _: &OpenOptions, _: bool) -> Result<Vec<(String, GgufFile<'static>)>> {
    Err(Error::Source(crate::error::SourceError::BadUrl {
        url: crate::read::redact_url(url),
        reason: "this build of gguf-core has no remote reading (feature `remote`)".into(),
    }))
}

/// The blob of an Ollama store entry (`ollama:NAME[:TAG]`).
fn ollama_path(name: &str) -> Result<std::path::PathBuf> {
    crate::read::ollama_model_path(name)
}

/// Room for a later shard's key-value pairs (gguf-py and llama.cpp
/// write only the three `split.*` keys there, about 100 bytes).
#[cfg(feature = "remote")]
const LATER_SHARD_KV_ROOM: u64 = 4096;

/// The bytes of a tensor info with a 63-byte name (llama.cpp's names are
/// shorter than 64 bytes) and four dimensions, the most llama.cpp writes.
#[cfg(feature = "remote")]
const LLAMA_CPP_TENSOR_INFO_LEN: u64 = 8 + 63 + 4 + 4 * 8 + 4 + 8;

/// The first read for the later shards of the split model whose first
/// shard is `first`: room for a few keys and for every tensor the first
/// shard does not hold (`split.tensors.count` less its own), each as long
/// as the first shard's longest tensor info or a llama.cpp-sized one,
/// whichever is longer, plus alignment; at most `chunk`. So a later shard
/// written by gguf-py or llama.cpp costs one read; one with a longer
/// header costs one more.
#[cfg(feature = "remote")]
fn later_first_read(first: &GgufFile<'_>, chunk: u64) -> u64 {
    let total = first
        .value(SPLIT_TENSORS_COUNT)
        .and_then(|v| v.as_integer())
        .and_then(|n| u64::try_from(n).ok());
    let Some(total) = total else {
        return chunk;
    };
    let remaining = total.saturating_sub(first.tensor_count() as u64);
    let width = if first.version() == 1 { 4 } else { 8 };
    let info_len = first
        .tensors()
        .map(|t| width + t.name().len() as u64 + 4 + width * t.shape().len() as u64 + 4 + 8)
        .max()
        .unwrap_or(0)
        .max(LLAMA_CPP_TENSOR_INFO_LEN);
    remaining
        .saturating_mul(info_len)
        .saturating_add(LATER_SHARD_KV_ROOM + first.alignment())
        .min(chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(not(feature = "remote"))]
    use crate::read::Gguf;

    #[cfg(not(feature = "remote"))]
    #[test]
    fn a_url_without_the_remote_feature_is_an_error_naming_it() {
        let e = Model::open("https://user:pw@host/m.gguf?sig=abc").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("feature `remote`"), "{text}");
        assert!(text.contains("https://host/m.gguf?sig=REDACTED"), "{text}");
        assert!(!text.contains("pw") && !text.contains("abc"), "{text}");
        // The local Ollama store is a filesystem lookup: no feature needed
        // (no such model here: the test environment has no store).
        let e = GgufFile::open("ollama:gemma3").unwrap_err();
        assert!(e.to_string().contains("is it pulled"), "{e}");
    }

    #[test]
    fn a_stream_reads_tensor_data_on_request() {
        let mut b = crate::write::Builder::new();
        b.add_tensor("t", crate::format::GgmlType::I8, &[4], vec![1u8, 2, 3, 4])
            .unwrap();
        let bytes = b.to_vec().unwrap();
        let model = Model::open(Source::reader(std::io::Cursor::new(bytes))).unwrap();
        let t = model.tensor("t").unwrap();
        assert!(t.data().is_err(), "a stream's data is not held");
        assert_eq!(&*t.read().unwrap(), &[1, 2, 3, 4]);
        assert_eq!(&*t.read_range(1..3).unwrap(), &[2, 3]);
        assert_eq!(model.shards()[0].origin(), &Origin::Stream);
    }
}
