//! Importance matrices as llama-imatrix writes them: its GGUF format and
//! the legacy `.dat`, read, checked against a model, converted.
//!
//! GGUF (the default): keys `general.type` = `imatrix`, `imatrix.datasets`
//! (strings), `imatrix.chunk_count` and `imatrix.chunk_size` (u32); per
//! weight, sorted by name, two F32 tensors: `<name>.in_sum2` (the raw sums
//! of squared activations, one row per expert) and `<name>.counts` (tokens
//! seen, one per expert).
//!
//! Legacy `.dat` (little-endian): an i32 entry count; per entry an i32
//! name length, the name, i32 `ncall`, i32 `nval` and `nval` f32 values
//! (the mean scaled by `ncall`); then, optionally, the i32 chunk count and
//! an i32 length and the dataset name.
//!
//! Either way llama-quantize uses `sum / count` per expert ([`Imatrix::weights`]).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use crate::error::Result;
use crate::error::{Error, QuantizeError};
use gguf_core::read::GgufFile;
use gguf_core::write::Builder;
use gguf_core::Gguf;
use gguf_core::{Endian, GgmlType};

/// Which file format an [`Imatrix`] came from or is written as.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ImatrixFormat {
    /// llama-imatrix's GGUF format.
    Gguf,
    /// The legacy `.dat` format (`--output-format dat`).
    Dat,
}

/// One weight's statistics.
#[derive(Clone, PartialEq, Debug)]
pub struct ImatrixEntry {
    /// The weight's tensor name (`blk.0.attn_q.weight`).
    pub name: String,
    /// GGUF: the raw sums (`in_sum2`), experts one after another.
    /// Legacy: the mean times `ncall`.
    pub sums: Vec<f32>,
    /// GGUF: the token count of each expert (exact: read from f32).
    /// Legacy: one value, `ncall` (exact: read from i32).
    pub counts: Vec<f64>,
}

/// An importance matrix.
#[derive(Clone, PartialEq, Debug)]
pub struct Imatrix {
    /// The format of [`ImatrixEntry`]'s numbers.
    pub format: ImatrixFormat,
    /// Entries in file order (llama-imatrix sorts them by name).
    pub entries: Vec<ImatrixEntry>,
    /// Datasets it was computed on (legacy: at most one).
    pub datasets: Vec<String>,
    /// Chunks it was computed on.
    pub chunk_count: u32,
    /// Tokens per chunk (GGUF's `imatrix.chunk_size`; `None` in legacy
    /// files and GGUF files without the key).
    pub chunk_size: Option<u32>,
}

/// Refuses weights the weighted quantizers cannot compute with: a
/// non-finite, negative or too large one (see [`Imatrix::MAX_WEIGHT`]),
/// naming the entry and the column.
fn check_weights(name: &str, weights: &[f32]) -> Result<()> {
    let bad_at = weights
        .iter()
        .position(|w| !w.is_finite() || *w < 0.0 || *w > Imatrix::MAX_WEIGHT);
    let Some(i) = bad_at else {
        return Ok(());
    };
    let w = weights[i];
    let why = if !w.is_finite() {
        "non-finite"
    } else if w < 0.0 {
        "negative (a mean of squares never is)"
    } else {
        "too large for the quantizers' arithmetic (a mean of squared activations that a \
         model computes is far below)"
    };
    let bound = if w > Imatrix::MAX_WEIGHT {
        format!(", above {:e}", Imatrix::MAX_WEIGHT)
    } else {
        String::new()
    };
    Err(mismatch(
        name,
        format!("weight {w:e} of column {i} is {why}{bound}"),
    ))
}

fn bad(reason: String) -> Error {
    Error::Quantize(QuantizeError::Imatrix { reason })
}

fn mismatch(tensor: &str, reason: String) -> Error {
    Error::Quantize(QuantizeError::ImatrixMismatch {
        tensor: tensor.to_owned(),
        reason,
    })
}

/// A C string from `bytes`: up to the first NUL, as llama.cpp builds a
/// `std::string` from a `char*`.
fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Reads little-endian values with offsets in errors.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| {
            bad(format!(
                "legacy file cut at offset {} while reading {what} ({n} bytes needed, {} left)",
                self.pos,
                self.bytes.len() - self.pos
            ))
        })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn i32(&mut self, what: &str) -> Result<i32> {
        let b = self.take(4, what)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }
}

impl Imatrix {
    /// The largest importance weight [`validate`](Imatrix::validate)
    /// accepts.
    ///
    /// A weight is a mean of squared activations: an activation a model
    /// computes in f16 has a square below 65504² ≈ 4.3e9, so real weights
    /// stay far below this bound. ggml's weighted quantizers multiply the
    /// weight by `sqrt(sigma2 + x²)` and form sums of that times `x` and
    /// the levels, and products of such sums (the k-quants'
    /// `sum_w * sum_l2 - sum_l * sum_l`, the IQ searches' `sumqx² / sumq2`
    /// comparisons); in `f32` those overflow, and the block scales become
    /// NaN, once weight × x² nears 1e31..1e35 (measured on every weighted
    /// type with values of |x| up to 1, 10 and 100: the first type fails
    /// at 1e35, 1e33, 1e31). At this bound every value an F16 tensor can
    /// hold (|x| ≤ 65504) stays ten orders of magnitude below that; what
    /// still overflows (huge values in an F32 or BF16 tensor) is caught in
    /// the quantized blocks, naming the tensor.
    pub const MAX_WEIGHT: f32 = 1e15;

    /// Reads the file at `path` (GGUF when it starts with `GGUF`, else
    /// legacy). It must be a regular file (symlinks followed): a FIFO or a
    /// device is refused before it is read
    /// ([`SourceError::NotRegularFile`](gguf_core::error::SourceError::NotRegularFile)).
    /// Every error is a [`QuantizeError::ImatrixFile`] naming `path`.
    pub fn read(path: impl AsRef<Path>) -> Result<Imatrix> {
        let path = path.as_ref();
        let in_file = |e: Error| {
            Error::Quantize(QuantizeError::ImatrixFile {
                path: path.to_owned(),
                source: Box::new(e),
            })
        };
        let mut bytes = Vec::new();
        let mut file = gguf_core::read::open_regular(path).map_err(|e| in_file(e.into()))?;
        std::io::Read::read_to_end(&mut file, &mut bytes)
            .map_err(|e| in_file(Error::io(path, e)))?;
        Imatrix::parse(&bytes).map_err(in_file)
    }

    /// Reads an importance matrix from its bytes, in either format.
    ///
    /// ```
    /// use gguf_llama::quantize::{Imatrix, ImatrixFormat};
    /// // One legacy entry "w" of two values computed over 3 calls.
    /// let mut dat = Vec::new();
    /// dat.extend(1i32.to_le_bytes());
    /// dat.extend(1i32.to_le_bytes());
    /// dat.extend(b"w");
    /// dat.extend(3i32.to_le_bytes());
    /// dat.extend(2i32.to_le_bytes());
    /// dat.extend(6.0f32.to_le_bytes());
    /// dat.extend(3.0f32.to_le_bytes());
    /// let m = Imatrix::parse(&dat).unwrap();
    /// assert_eq!(m.format, ImatrixFormat::Dat);
    /// assert_eq!(m.weights(&m.entries[0]), [2.0, 1.0]);
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Imatrix> {
        if bytes.starts_with(b"GGUF") {
            let file = GgufFile::open(bytes)?;
            Imatrix::from_gguf(&file)
        } else {
            Imatrix::parse_dat(bytes)
        }
    }

    fn parse_dat(bytes: &[u8]) -> Result<Imatrix> {
        let mut r = Reader { bytes, pos: 0 };
        let n = r.i32("the entry count")?;
        if n < 1 {
            return Err(bad(format!("legacy file with {n} entries")));
        }
        // Each entry takes at least 16 bytes: no allocation beyond the input.
        let mut entries = Vec::with_capacity((n as usize).min(bytes.len() / 16));
        for i in 0..n as usize {
            let at = r.pos;
            let len = r.i32("an entry's name length")?;
            let len = usize::try_from(len)
                .map_err(|_| bad(format!("entry {i} at offset {at}: name length {len}")))?;
            let name = c_string(r.take(len, "an entry's name")?);
            let ncall = r.i32("an entry's call count")?;
            let nval = r.i32("an entry's value count")?;
            if nval < 1 {
                return Err(bad(format!("entry {name:?} at offset {at}: {nval} values")));
            }
            let raw = r.take(
                (nval as usize).saturating_mul(4),
                &format!("the values of {name:?}"),
            )?;
            let sums = raw
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            entries.push(ImatrixEntry {
                name,
                sums,
                counts: vec![f64::from(ncall)],
            });
        }
        // The trailer is optional; llama.cpp reads what it can of it.
        let mut chunk_count = 0;
        let mut datasets = Vec::new();
        if r.left() >= 4 {
            chunk_count = r.i32("the chunk count")? as u32;
            if r.left() >= 4 {
                let len = r.i32("the dataset name length")?;
                if len > 0 && r.left() >= len as usize {
                    datasets.push(c_string(r.take(len as usize, "the dataset name")?));
                }
            }
        }
        Ok(Imatrix {
            format: ImatrixFormat::Dat,
            entries,
            datasets,
            chunk_count,
            chunk_size: None,
        })
    }

    /// Reads llama-imatrix's GGUF format from an opened file.
    pub fn from_gguf(file: &impl Gguf) -> Result<Imatrix> {
        if file.tensor_count() == 0 {
            return Err(bad("a GGUF file with no tensors".into()));
        }
        let u32_key = |k: &str| match file.value(k) {
            Some(gguf_core::Value::U32(v)) => Ok(Some(v)),
            Some(v) => Err(bad(format!(
                "{k} has type {}, expected u32",
                v.value_type()
            ))),
            None => Ok(None),
        };
        let datasets = match file.value("imatrix.datasets") {
            Some(gguf_core::Value::Array(a)) => match a.strings() {
                Some(it) => it.map(str::to_owned).collect(),
                None => Vec::new(),
            },
            _ => Vec::new(),
        };
        let chunk_count = u32_key("imatrix.chunk_count")?.unwrap_or(0);
        let chunk_size = u32_key("imatrix.chunk_size")?;

        // llama.cpp keeps its entries in a map: by name, each once. A set
        // keeps the reading linear in the tensor count (a search of the
        // names seen so far made 120,000 entries take minutes).
        let mut names: BTreeSet<&str> = BTreeSet::new();
        for i in 0..file.tensor_count() {
            let Some(t) = file.tensor_at(i) else { continue };
            let base = t
                .name()
                .strip_suffix(".in_sum2")
                .or_else(|| t.name().strip_suffix(".counts"));
            if let Some(base) = base.filter(|b| !b.is_empty()) {
                names.insert(base);
            }
        }
        let read_f32 = |name: &str| -> Result<Option<Vec<f32>>> {
            let Ok(t) = file.tensor(name) else {
                return Ok(None);
            };
            if t.ggml_type() != GgmlType::F32 {
                return Err(bad(format!(
                    "tensor {name:?} is {}, expected F32",
                    t.ggml_type()
                )));
            }
            let big = file.endian() == Endian::Big;
            let data = t.data()?;
            Ok(Some(
                data.chunks_exact(4)
                    .map(|c| {
                        let b = [c[0], c[1], c[2], c[3]];
                        if big {
                            f32::from_be_bytes(b)
                        } else {
                            f32::from_le_bytes(b)
                        }
                    })
                    .collect(),
            ))
        };
        let mut entries = Vec::with_capacity(names.len());
        for name in names {
            let sums = read_f32(&format!("{name}.in_sum2"))?;
            let counts = read_f32(&format!("{name}.counts"))?;
            let (Some(sums), Some(counts)) = (sums, counts) else {
                return Err(bad(format!("mismatched sums and counts for {name:?}")));
            };
            if counts.is_empty() || sums.len() % counts.len() != 0 {
                return Err(bad(format!(
                    "{name:?}: {} sums are not a whole number of rows for {} counts",
                    sums.len(),
                    counts.len()
                )));
            }
            entries.push(ImatrixEntry {
                name: name.to_owned(),
                sums,
                counts: counts.into_iter().map(f64::from).collect(),
            });
        }
        Ok(Imatrix {
            format: ImatrixFormat::Gguf,
            entries,
            datasets,
            chunk_count,
            chunk_size,
        })
    }

    /// The entries llama-quantize keeps under `--include-weights`
    /// (entries whose name contains one of `include`) or
    /// `--exclude-weights` (all but those containing one of `exclude`);
    /// both at once is an error, as in llama-quantize.
    ///
    /// ```
    /// use gguf_llama::quantize::{Imatrix, ImatrixEntry, ImatrixFormat};
    /// let e = |n: &str| ImatrixEntry { name: n.into(), sums: vec![1.0], counts: vec![1.0] };
    /// let m = Imatrix { format: ImatrixFormat::Gguf, entries: vec![e("blk.0.attn_q.weight"), e("blk.0.ffn_up.weight")],
    ///                   datasets: vec![], chunk_count: 1, chunk_size: Some(512) };
    /// let kept = m.select(&[], &["attn".into()]).unwrap();
    /// assert_eq!(kept.entries.len(), 1);
    /// assert_eq!(kept.entries[0].name, "blk.0.ffn_up.weight");
    /// assert!(m.select(&["a".into()], &["b".into()]).is_err());
    /// ```
    pub fn select(&self, include: &[String], exclude: &[String]) -> Result<Imatrix> {
        if !include.is_empty() && !exclude.is_empty() {
            return Err(bad(
                "--include-weights and --exclude-weights cannot be used together".into(),
            ));
        }
        let mut out = self.clone();
        out.entries.retain(|e| {
            let has = |parts: &[String]| parts.iter().any(|p| e.name.contains(p.as_str()));
            !has(exclude) && (include.is_empty() || has(include))
        });
        Ok(out)
    }

    /// What llama-quantize records of this matrix (after
    /// [`select`](Imatrix::select)) read from `file` as given on its
    /// command line; `None` when no entry is left, as llama-quantize then
    /// quantizes without one and records nothing.
    pub fn record(&self, file: &str) -> Option<super::keys::ImatrixRecord> {
        (!self.entries.is_empty()).then(|| super::keys::ImatrixRecord {
            file: file.to_owned(),
            dataset: self.datasets.first().cloned(),
            entries: self.entries.len() as u32,
            chunks: self.chunk_count,
        })
    }

    /// The entry for tensor `name` (the last one of that name, as
    /// llama.cpp's reader keeps it when a legacy file repeats a name).
    /// One lookup walks the entries: to look up many names, use
    /// [`by_name`](Imatrix::by_name).
    pub fn entry(&self, name: &str) -> Option<&ImatrixEntry> {
        self.entries.iter().rev().find(|e| e.name == name)
    }

    /// Every entry by tensor name, the last of a repeated name winning as
    /// in [`entry`](Imatrix::entry); built in one pass, for looking up
    /// every tensor of a model.
    ///
    /// ```
    /// use gguf_llama::quantize::{Imatrix, ImatrixEntry, ImatrixFormat};
    /// let e = |n: &str, v: f32| ImatrixEntry { name: n.into(), sums: vec![v], counts: vec![1.0] };
    /// let m = Imatrix { format: ImatrixFormat::Dat, entries: vec![e("a", 1.0), e("b", 2.0), e("a", 3.0)],
    ///                   datasets: vec![], chunk_count: 1, chunk_size: None };
    /// let index = m.by_name();
    /// assert_eq!(index["a"].sums, [3.0]);
    /// assert_eq!(index.len(), 2);
    /// ```
    pub fn by_name(&self) -> HashMap<&str, &ImatrixEntry> {
        let mut index = HashMap::with_capacity(self.entries.len());
        for e in &self.entries {
            index.insert(e.name.as_str(), e);
        }
        index
    }

    /// The importance of each column as llama-quantize passes it to the
    /// quantizers: per expert `sum / count` (1 where an expert saw no
    /// token) in the GGUF format, `value / ncall` (the values as they are
    /// when `ncall` is not above 0) in the legacy one, in f32 as it
    /// computes them.
    pub fn weights(&self, entry: &ImatrixEntry) -> Vec<f32> {
        match self.format {
            ImatrixFormat::Gguf => {
                let per = entry.sums.len() / entry.counts.len().max(1);
                entry
                    .sums
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| {
                        // llama.cpp rounds the f32 count to an integer first.
                        let count = entry.counts.get(i / per.max(1)).copied().unwrap_or(0.0);
                        let c = count.round() as i64 as f32;
                        if c > 0.0 {
                            s / c
                        } else {
                            1.0
                        }
                    })
                    .collect()
            }
            ImatrixFormat::Dat => {
                let ncall = entry.counts.first().copied().unwrap_or(0.0) as i64;
                if ncall > 0 {
                    entry.sums.iter().map(|&s| s / ncall as f32).collect()
                } else {
                    entry.sums.clone()
                }
            }
        }
    }

    /// Checks the matrix against `model`: every entry names a tensor of
    /// the model, with one value per column of each expert (the tensor's
    /// first dimension times its third), and every weight
    /// ([`weights`](Imatrix::weights)) is finite, not negative and at most
    /// [`MAX_WEIGHT`](Imatrix::MAX_WEIGHT). The token embeddings' size is
    /// not checked (llama-quantize does not). The error names the tensor.
    pub fn validate(&self, model: &impl Gguf) -> Result<()> {
        for e in &self.entries {
            let Ok(t) = model.tensor(&e.name) else {
                return Err(mismatch(
                    &e.name,
                    "the model has no such tensor (an importance matrix for another model?)".into(),
                ));
            };
            let shape = t.shape();
            let want = shape.first().copied().unwrap_or(1) * shape.get(2).copied().unwrap_or(1);
            if e.sums.len() as u64 != want && !super::rules::is_token_embd(&e.name) {
                return Err(mismatch(
                    &e.name,
                    format!(
                        "{} values, but the tensor of shape {shape:?} needs {want}",
                        e.sums.len()
                    ),
                ));
            }
            check_weights(&e.name, &self.weights(e))?;
        }
        Ok(())
    }

    /// The same statistics in the GGUF format, as llama-imatrix converts a
    /// legacy file (`--in-file x.dat`): sums and counts scaled by
    /// `chunk_size` (its `n_ctx / n_parallel`, 512 by default), which for a
    /// power of two leaves the weights bit-identical. A GGUF matrix is
    /// returned as it is.
    pub fn to_gguf(&self, chunk_size: u32) -> Imatrix {
        if self.format == ImatrixFormat::Gguf {
            return self.clone();
        }
        let cs = chunk_size as f32;
        Imatrix {
            format: ImatrixFormat::Gguf,
            entries: self
                .entries
                .iter()
                .map(|e| ImatrixEntry {
                    name: e.name.clone(),
                    sums: e.sums.iter().map(|&s| s * cs).collect(),
                    // llama-imatrix's counts are integers stored as f32.
                    counts: e
                        .counts
                        .iter()
                        .map(|&c| f64::from((c as i64 * i64::from(chunk_size)) as f32))
                        .collect(),
                })
                .collect(),
            datasets: self.datasets.clone(),
            chunk_count: self.chunk_count,
            chunk_size: Some(chunk_size),
        }
    }

    /// The same statistics in the legacy format. An entry whose experts
    /// all saw the same whole number of chunks is divided exactly by the
    /// chunk size (so converting back gives the same file); any other is
    /// written as llama-imatrix does (`ncall` the chunks rounded up, values
    /// the mean times `ncall`), which can round. Only the last dataset
    /// survives. See [`Imatrix::converts_losslessly`].
    pub fn to_dat(&self) -> Imatrix {
        if self.format == ImatrixFormat::Dat {
            return self.clone();
        }
        let chunk = i64::from(self.chunk_size.unwrap_or(512).max(1));
        let entries = self
            .entries
            .iter()
            .map(|e| {
                let counts: Vec<i64> = e.counts.iter().map(|&c| c.round() as i64).collect();
                let max = counts.iter().copied().max().unwrap_or(0);
                let uniform = counts.iter().all(|&c| c == max) && max > 0 && max % chunk == 0;
                if uniform {
                    let ncall = max / chunk;
                    ImatrixEntry {
                        name: e.name.clone(),
                        sums: e.sums.iter().map(|&s| s / chunk as f32).collect(),
                        counts: vec![ncall as i32 as f64],
                    }
                } else {
                    let ncall = (max + chunk - 1) / chunk;
                    let per = e.sums.len() / counts.len().max(1);
                    let sums = e
                        .sums
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| {
                            let c = counts.get(i / per.max(1)).copied().unwrap_or(0) as f32;
                            let (v, c) = if c == 0.0 { (1.0, 1.0) } else { (v, c) };
                            (v / c) * ncall as f32
                        })
                        .collect();
                    ImatrixEntry {
                        name: e.name.clone(),
                        sums,
                        counts: vec![ncall as i32 as f64],
                    }
                }
            })
            .collect();
        Imatrix {
            format: ImatrixFormat::Dat,
            entries,
            datasets: self.datasets.last().cloned().into_iter().collect(),
            chunk_count: self.chunk_count,
            chunk_size: None,
        }
    }

    /// Whether converting to `format` and back gives this matrix again; a
    /// legacy matrix goes to GGUF with `chunk_size` (see
    /// [`to_gguf`](Imatrix::to_gguf)), a GGUF one comes back with its own.
    pub fn converts_losslessly(&self, format: ImatrixFormat, chunk_size: u32) -> bool {
        match (self.format, format) {
            (a, b) if a == b => true,
            (ImatrixFormat::Dat, _) => self.to_gguf(chunk_size).to_dat() == *self,
            (ImatrixFormat::Gguf, _) => {
                let back = self.to_dat().to_gguf(self.chunk_size.unwrap_or(512));
                back == *self
            }
        }
    }

    /// Writes the matrix to `path` in its format, atomically: on any error
    /// `path` is untouched and no temporary file is left.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        let bytes = self.to_bytes()?;
        gguf_core::write::replace_file(path.as_ref(), |f| {
            std::io::Write::write_all(f, &bytes).map_err(gguf_core::Error::from)
        })?;
        Ok(())
    }

    /// The file bytes in this matrix's format.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        match self.format {
            ImatrixFormat::Gguf => self.gguf_bytes(),
            ImatrixFormat::Dat => self.dat_bytes(),
        }
    }

    fn dat_bytes(&self) -> Result<Vec<u8>> {
        let i32_of = |n: usize, what: &str| {
            i32::try_from(n).map_err(|_| bad(format!("{what} {n} does not fit the legacy format")))
        };
        let mut out = Vec::new();
        out.extend(i32_of(self.entries.len(), "entry count")?.to_le_bytes());
        for e in &self.entries {
            out.extend(i32_of(e.name.len(), "name length")?.to_le_bytes());
            out.extend(e.name.as_bytes());
            let ncall = e.counts.first().copied().unwrap_or(0.0) as i32;
            out.extend(ncall.to_le_bytes());
            out.extend(i32_of(e.sums.len(), "value count")?.to_le_bytes());
            for v in &e.sums {
                out.extend(v.to_le_bytes());
            }
        }
        out.extend((self.chunk_count as i32).to_le_bytes());
        let dataset = self.datasets.last().map_or("", String::as_str);
        out.extend(i32_of(dataset.len(), "dataset name length")?.to_le_bytes());
        out.extend(dataset.as_bytes());
        Ok(out)
    }

    fn gguf_bytes(&self) -> Result<Vec<u8>> {
        let mut b = Builder::new();
        b.set("general.type", "imatrix")?;
        let datasets: Vec<&str> = self.datasets.iter().map(String::as_str).collect();
        b.set("imatrix.datasets", datasets)?;
        b.set("imatrix.chunk_count", self.chunk_count)?;
        b.set("imatrix.chunk_size", self.chunk_size.unwrap_or(512))?;
        for e in &self.entries {
            let nmat = e.counts.len() as u64;
            let per = e.sums.len() as u64 / nmat.max(1);
            // ggml_n_dims drops trailing dimensions of 1.
            let (sum_shape, count_shape) = if nmat == 1 {
                (vec![per], vec![1])
            } else {
                (vec![per, nmat], vec![1, nmat])
            };
            let sums: Vec<u8> = e.sums.iter().flat_map(|v| v.to_le_bytes()).collect();
            let counts: Vec<u8> = e
                .counts
                .iter()
                .flat_map(|&c| (c as f32).to_le_bytes())
                .collect();
            b.add_tensor(
                format!("{}.in_sum2", e.name),
                GgmlType::F32,
                &sum_shape,
                sums,
            )?;
            b.add_tensor(
                format!("{}.counts", e.name),
                GgmlType::F32,
                &count_shape,
                counts,
            )?;
        }
        Ok(b.to_vec()?)
    }
}

#[cfg(test)]
#[path = "imatrix_tests.rs"]
mod tests;
