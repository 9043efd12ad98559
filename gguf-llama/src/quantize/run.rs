//! The quantizing run: what llama-quantize writes, from a model, a preset
//! and its flags ([`QuantizeJob`]), checked whole before anything is
//! written ([`dry_run`] stops there), then streamed one tensor at a time
//! into files that appear only once complete ([`quantize_model`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use crate::error::Result;
use crate::error::{Error, QuantizeError};
use gguf_core::codec;
use gguf_core::format::tensor_nbytes;
use gguf_core::model::{SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT};
use gguf_core::write::{Builder, TensorData};
use gguf_core::GgmlType;
use gguf_core::Gguf;

use super::imatrix::{Imatrix, ImatrixEntry};
use super::keys::{output_metadata, KvOverride};
use super::plan::{plan, Plan, PlannedTensor, QuantizeOptions};
use super::report::{QuantizeReport, TensorReport};
use super::rows::{convert_stream, convert_tensor, Workers};
use super::work::{TensorWork, WorkMeter};

/// A quantizing run's settings: llama-quantize's command line as data.
///
/// ```
/// use gguf_llama::quantize::{QuantizeJob, QuantizeOptions};
/// let mut job = QuantizeJob::new(QuantizeOptions::new("Q4_K_M")?);
/// job.allow_requantize = true;
/// job.threads = 4;
/// # Ok::<(), gguf_llama::Error>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct QuantizeJob<'i> {
    /// The preset and the flags that choose tensor types. Its
    /// `has_imatrix` is ignored: the run sets it from [`imatrix`](Self::imatrix).
    pub options: QuantizeOptions,
    /// The importance matrix (after `--include-weights` /
    /// `--exclude-weights`, [`Imatrix::select`]); an empty one counts as
    /// none, as in llama-quantize.
    pub imatrix: Option<&'i Imatrix>,
    /// The importance matrix's path as given, recorded in
    /// `quantize.imatrix.file`.
    pub imatrix_file: String,
    /// `--allow-requantize`: quantized tensors may be quantized again.
    pub allow_requantize: bool,
    /// `--override-kv`, in order given.
    pub kv_overrides: Vec<KvOverride>,
    /// Threads to spread rows over (llama-quantize's trailing `nthreads`);
    /// 0 for every core; more than [`max_threads`] are that many. The
    /// output does not depend on it. Without the `parallel` feature every
    /// run uses the calling thread.
    pub threads: usize,
}

impl<'i> QuantizeJob<'i> {
    /// A run with `options`, no importance matrix, no requantizing, no
    /// overrides, every core.
    pub fn new(options: QuantizeOptions) -> Self {
        QuantizeJob {
            options,
            imatrix: None,
            imatrix_file: String::new(),
            allow_requantize: false,
            kv_overrides: Vec::new(),
            threads: 0,
        }
    }

    /// The importance matrix, unless it has no entry left.
    fn matrix(&self) -> Option<&'i Imatrix> {
        self.imatrix.filter(|m| !m.entries.is_empty())
    }
}

/// How many threads a quantizing run uses at most: 4 per core this
/// process may run on ([`std::thread::available_parallelism`], which
/// counts the affinity mask and a cgroup's CPU quota; 1 when unknown).
///
/// Encoding rows is pure computation, so threads beyond the cores only
/// wait for them; a few per core still cover a core count that is
/// reported low, while a count far above it (100,000) would ask the system
/// for that many threads and their stacks for nothing. A larger
/// [`QuantizeJob::threads`] is taken as this many.
///
/// ```
/// let n = gguf_llama::quantize::max_threads();
/// assert!(n >= 4 && n % 4 == 0);
/// ```
pub fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    cores.saturating_mul(4)
}

/// The importance matrix's entries by name ([`Imatrix::by_name`]).
type Entries<'m> = HashMap<&'m str, &'m ImatrixEntry>;

/// Whether the importance matrix (its entries by name) has a usable row
/// set for `t`: an entry of `shape[0] * shape[2]` values (llama-quantize
/// quantizes the token embeddings without one when the size differs).
fn has_weights(m: Option<&Entries<'_>>, t: &PlannedTensor) -> bool {
    let want = t.shape.first().copied().unwrap_or(1) * t.shape.get(2).copied().unwrap_or(1);
    m.and_then(|m| m.get(t.input_name.as_str()))
        .is_some_and(|e| e.sums.len() as u64 == want)
}

/// Whether ggml converts a tensor of type `from` at all: F32, F16, BF16
/// and the quantized types it can decode.
fn convertible_source(from: GgmlType) -> bool {
    matches!(from, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16)
        || (!from.is_plain() && codec::can_dequantize(from))
}

/// Whether this crate encodes `to` (with importance weights or not):
/// one block of zeros is tried.
fn encodable(to: GgmlType, weighted: bool) -> bool {
    let Some(bs) = to.block_size().map(|b| b as usize) else {
        return false;
    };
    let Some(ts) = to.type_size() else {
        return false;
    };
    let src = vec![0.0f32; bs];
    let ones = vec![1.0f32; bs];
    let mut out = vec![0u8; ts as usize];
    let weights = (weighted && !to.is_plain()).then_some(&ones[..]);
    codec::quantize_rows_into(to, &src, bs, weights, &mut out).is_ok()
}

/// The plan, checked: every refusal of llama-quantize (and those it makes
/// only halfway through writing) as an error, or, for a dry run, as the
/// report's warnings.
fn prepare(model: &impl Gguf, job: &QuantizeJob<'_>, dry: bool) -> Result<(Plan, QuantizeReport)> {
    let imatrix = job.matrix();
    let mut options = job.options.clone();
    options.has_imatrix = imatrix.is_some();
    let plan = plan(model, &options)?;
    if let Some(m) = imatrix {
        m.validate(model)?;
    }
    let entries = imatrix.map(Imatrix::by_name);
    let mut report = QuantizeReport {
        tensors: Vec::with_capacity(plan.tensors.len()),
        file_type: plan.file_type,
        input_elements: model.tensors().map(|t| t.element_count()).sum(),
        files: Vec::new(),
        file_bytes: 0,
        needs_imatrix: false,
        requantized: 0,
        elapsed: Default::default(),
    };
    for t in &plan.tensors {
        // llama-quantize writes shard i of the input to file i (a
        // metadata-only first shard included).
        let file = if options.keep_split { t.shard } else { 0 };
        let size = |ty: GgmlType| {
            tensor_nbytes(ty, &t.shape).map_err(|e| {
                Error::Quantize(QuantizeError::Unconvertible {
                    tensor: t.name.clone(),
                    from: t.source,
                    to: ty,
                    reason: format!("{e:?}"),
                })
            })
        };
        let converts = t.target != t.source;
        let weighted = converts && has_weights(entries.as_ref(), t);
        if converts {
            refuse_conversion(t, job, weighted, dry, &mut report)?;
        }
        report.tensors.push(TensorReport {
            name: t.name.clone(),
            shape: t.shape.clone(),
            source: t.source,
            target: t.target,
            input_bytes: size(t.source)?,
            output_bytes: size(t.target)?,
            fell_back: t.fell_back,
            imatrix: weighted && !t.target.is_plain(),
            file,
        });
    }
    Ok((plan, report))
}

/// The refusals for tensor `t`, which changes type.
fn refuse_conversion(
    t: &PlannedTensor,
    job: &QuantizeJob<'_>,
    weighted: bool,
    dry: bool,
    report: &mut QuantizeReport,
) -> Result<()> {
    let unconvertible = |reason: &str| {
        Err(Error::Quantize(QuantizeError::Unconvertible {
            tensor: t.name.clone(),
            from: t.source,
            to: t.target,
            reason: reason.to_owned(),
        }))
    };
    if !convertible_source(t.source) {
        return unconvertible("ggml converts only F32, F16, BF16 and quantized types");
    }
    if gguf_core::codec::is_activation_type(t.target) {
        // llama-quantize reaches ggml_quantize_chunk with it and aborts.
        return unconvertible(
            "ggml uses this type only for activations: llama-quantize cannot write it and \
             llama.cpp cannot compute with weights of it",
        );
    }
    if t.quantizable && t.requires_imatrix && !weighted {
        if !dry {
            return Err(Error::Quantize(QuantizeError::ImatrixRequired {
                tensor: t.name.clone(),
                ty: t.target,
            }));
        }
        report.needs_imatrix = true;
    } else if !encodable(t.target, weighted) {
        return unconvertible(if weighted {
            "no quantizer for it with importance weights"
        } else {
            "no quantizer for it"
        });
    }
    if !t.source.is_plain() && !job.allow_requantize {
        if !dry {
            return Err(Error::Quantize(QuantizeError::Requantize {
                tensor: t.name.clone(),
                from: t.source,
                to: t.target,
            }));
        }
        report.requantized += 1;
    }
    Ok(())
}

/// What [`quantize_model`] would write for `model`, without writing:
/// every tensor's type and size, the totals (llama-quantize's `--dry-run`).
/// It fails where the plan cannot be made or the importance matrix does
/// not fit the model; a missing importance matrix and requantizing are
/// warnings in the report ([`QuantizeReport::needs_imatrix`],
/// [`QuantizeReport::requantized`]), as llama-quantize's dry run says.
///
/// ```
/// # fn main() -> gguf_llama::Result<()> {
/// use gguf_llama::quantize::{dry_run, QuantizeJob, QuantizeOptions};
/// use gguf_core::{GgmlType as T, GgufFile};
/// let mut b = gguf_core::write::Builder::new();
/// b.set("general.architecture", "llama")?.set("llama.block_count", 1u32)?;
/// b.add_tensor("blk.0.ffn_up.weight", T::F16, &[256, 4], vec![0u8; 2048])?;
/// let bytes = b.to_vec()?;
/// let r = dry_run(&GgufFile::open(&bytes)?, &QuantizeJob::new(QuantizeOptions::new("Q4_K_M")?))?;
/// assert_eq!((r.tensors[0].target, r.output_bytes()), (T::Q4_K, 4 * 144));
/// assert!(r.files.is_empty());
/// # Ok(()) }
/// ```
pub fn dry_run(model: &impl Gguf, job: &QuantizeJob<'_>) -> Result<QuantizeReport> {
    let start = Instant::now();
    let (_, mut report) = prepare(model, job, true)?;
    report.elapsed = start.elapsed();
    Ok(report)
}

/// The files of output `path`: itself, or with `keep_split` shard `k` of
/// `n` as llama-quantize names it (`.gguf` cut from the end, then
/// `-{k+1:05}-of-{n:05}.gguf`, even for one shard).
///
/// ```
/// use gguf_llama::quantize::output_files;
/// use std::path::PathBuf;
/// assert_eq!(output_files("m.gguf".as_ref(), 1, false), [PathBuf::from("m.gguf")]);
/// assert_eq!(output_files("d/m.gguf".as_ref(), 2, true),
///            [PathBuf::from("d/m-00001-of-00002.gguf"), PathBuf::from("d/m-00002-of-00002.gguf")]);
/// assert_eq!(output_files("m".as_ref(), 1, true), [PathBuf::from("m-00001-of-00001.gguf")]);
/// ```
pub fn output_files(path: &Path, count: usize, keep_split: bool) -> Vec<PathBuf> {
    if !keep_split {
        return vec![path.to_owned()];
    }
    let text = path.as_os_str().to_string_lossy();
    let stem = text.strip_suffix(".gguf").unwrap_or(&text);
    (1..=count)
        .map(|k| PathBuf::from(format!("{stem}-{k:05}-of-{count:05}.gguf")))
        .collect()
}

/// Quantizes `model` as llama-quantize does with `job`'s preset and flags,
/// writing `output` (with `--keep-split`, the shards
/// [`output_files`] names): the metadata of
/// [`keys::output_metadata`](super::keys::output_metadata), the tensors in
/// the [`plan`]'s order, each converted to its target type (decoded from
/// F32, F16, BF16 or, with `allow_requantize`, a quantized type; encoded
/// with its importance matrix row, per expert for 3-D tensors) or copied
/// when its type stays. `progress(done, total)` counts work, not bytes:
/// each converted tensor weighs its elements times a relative cost of its
/// target type (shared among the threads), each copied tensor and header
/// its bytes at the smallest cost, so that a rate or ETA drawn from it
/// holds across copies and conversions; `done == total` at the end.
///
/// Everything llama-quantize refuses is refused before any file is
/// created: a target that needs an importance matrix without one
/// ([`QuantizeError::ImatrixRequired`]), an importance matrix that does not
/// fit the model, a quantized input without `allow_requantize`
/// ([`QuantizeError::Requantize`]), a tensor that cannot be converted.
///
/// One tensor is in memory at a time (for a memory-mapped model, a slab of
/// its rows), rows are encoded on every core (`threads`), and the files
/// appear under their names only once all are complete: after an error
/// none exists. An interrupted process leaves `.gguf-XXXXXX.tmp` files
/// beside the output (the library installs no signal handler; see
/// [`exit_removing_temp_files`](gguf_core::write::exit_removing_temp_files)).
///
/// ```
/// # fn main() -> gguf_llama::Result<()> {
/// use gguf_llama::quantize::{quantize_model, QuantizeJob, QuantizeOptions};
/// use gguf_core::{GgmlType as T, Gguf, Model};
/// let x: Vec<f32> = (0..1024).map(|i| (i as f32 * 0.1).sin()).collect();
/// let mut b = gguf_core::write::Builder::new();
/// b.set("general.architecture", "llama")?.set("llama.block_count", 1u32)?;
/// b.add_tensor_typed("blk.0.ffn_up.weight", &[256, 4], &x[..])?;
/// let bytes = b.to_vec()?;
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().join("q.gguf");
/// let job = QuantizeJob::new(QuantizeOptions::new("Q8_0")?);
/// let report = quantize_model(&Model::open(&bytes)?, &out, &job, |_, _| {})?;
/// let q = Model::open(&out)?;
/// assert_eq!(q.tensor("blk.0.ffn_up.weight")?.ggml_type(), T::Q8_0);
/// assert_eq!(q.get::<u32>("general.file_type")?, 7);
/// assert_eq!(report.files, [out]);
/// # Ok(()) }
/// ```
pub fn quantize_model<M: Gguf>(
    model: &M,
    output: impl AsRef<Path>,
    job: &QuantizeJob<'_>,
    progress: impl FnMut(u64, u64),
) -> Result<QuantizeReport> {
    run(model, None, output.as_ref(), job, progress)
}

/// The bytes of a model's tensor, by name: written in order, once, into
/// the sink given ([`quantize_model_streamed`]).
pub type TensorBytes<'s> = dyn Fn(&str, &mut dyn std::io::Write) -> std::io::Result<()> + Sync + 's;

/// [`quantize_model`] of a model whose tensor data are not in a file:
/// `model` gives the metadata and tensor infos (a header-only file, such
/// as a [`Builder::preview`]) and `data` writes each tensor's bytes when
/// its turn comes. A tensor converted is encoded a slab of rows at a time
/// as its bytes arrive, so memory stays at a slab whatever the tensor's
/// size, and nothing is written but the output: the same bytes as
/// [`quantize_model`] of the file `model` and `data` describe. An error
/// `data` returns ends the run with it (as an I/O error).
///
/// ```
/// # fn main() -> gguf_llama::Result<()> {
/// use gguf_llama::quantize::{quantize_model, quantize_model_streamed, QuantizeJob, QuantizeOptions};
/// use gguf_core::{GgmlType as T, Model};
/// let x: Vec<u8> = (0..1024u32).flat_map(|i| (i as f32 * 0.1).sin().to_le_bytes()).collect();
/// let mut b = gguf_core::write::Builder::new();
/// b.set("general.architecture", "llama")?.set("llama.block_count", 1u32)?;
/// b.add_tensor("blk.0.ffn_up.weight", T::F32, &[256, 4], &x[..])?;
/// let dir = tempfile::tempdir()?;
/// let job = QuantizeJob::new(QuantizeOptions::new("Q8_0")?);
/// let streamed = dir.path().join("s.gguf");
/// let data = |_: &str, w: &mut dyn std::io::Write| w.write_all(&x);
/// quantize_model_streamed(&b.preview()?, &data, &streamed, &job, |_, _| {})?;
/// let bytes = b.to_vec()?;
/// let whole = dir.path().join("q.gguf");
/// quantize_model(&Model::open(&bytes)?, &whole, &job, |_, _| {})?;
/// assert_eq!(std::fs::read(&streamed)?, std::fs::read(&whole)?);
/// # Ok(()) }
/// ```
pub fn quantize_model_streamed<M: Gguf>(
    model: &M,
    data: &TensorBytes<'_>,
    output: impl AsRef<Path>,
    job: &QuantizeJob<'_>,
    progress: impl FnMut(u64, u64),
) -> Result<QuantizeReport> {
    run(model, Some(data), output.as_ref(), job, progress)
}

/// [`quantize_model`], with the tensor bytes from `data` when given.
fn run<M: Gguf>(
    model: &M,
    data: Option<&TensorBytes<'_>>,
    output: &Path,
    job: &QuantizeJob<'_>,
    mut progress: impl FnMut(u64, u64),
) -> Result<QuantizeReport> {
    let start = Instant::now();
    let (plan, mut report) = prepare(model, job, false)?;
    let record = job.matrix().and_then(|m| m.record(&job.imatrix_file));
    let metadata = output_metadata(model, &plan, &job.kv_overrides, record.as_ref());
    let count = report.tensors.iter().map(|t| t.file + 1).max().unwrap_or(1);
    let paths = output_files(output, count, job.options.keep_split);
    for path in &paths {
        gguf_core::write::check_output(path)?;
    }

    #[cfg(feature = "parallel")]
    let pool = match job.threads {
        0 => None,
        n => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n.min(max_threads()))
                .build()
                .map_err(|e| Error::from(std::io::Error::other(e)))?,
        ),
    };
    #[cfg(feature = "parallel")]
    let workers = Workers {
        pool: pool.as_ref(),
    };
    #[cfg(not(feature = "parallel"))]
    let workers = Workers {
        pool: std::marker::PhantomData,
    };

    // A conversion's error, kept whole (the writer sees only an io::Error).
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let mut builders: Vec<Builder<'_>> = (0..count).map(|_| Builder::new()).collect();
    if let Some(first) = builders.first_mut() {
        for (key, value) in metadata {
            first.set(key, value)?;
        }
    }
    if count > 1 {
        let total = i32::try_from(plan.tensors.len()).map_err(|_| {
            Error::Quantize(QuantizeError::Model {
                reason: "too many tensors for split.tensors.count".into(),
            })
        })?;
        for (k, b) in builders.iter_mut().enumerate() {
            b.set(SPLIT_NO, k as u16)?;
            b.set(SPLIT_COUNT, count as u16)?;
            b.set(SPLIT_TENSORS_COUNT, total)?;
        }
    }
    let imatrix = job.matrix();
    let entries = imatrix.map(Imatrix::by_name);
    for (t, r) in plan.tensors.iter().zip(&report.tensors) {
        let source = model.tensor(&t.input_name)?;
        let b = &mut builders[r.file];
        b.allow_long_tensor_names(true);
        if t.target == t.source {
            match data {
                None => b.add_tensor(
                    t.name.clone(),
                    t.target,
                    ggml_dims(&t.shape),
                    TensorData::File(source),
                )?,
                Some(data) => {
                    let name = t.input_name.clone();
                    b.add_tensor_fn(t.name.clone(), t.target, ggml_dims(&t.shape), move |w| {
                        data(&name, w)
                    })?
                }
            };
            continue;
        }
        let (failure, use_weights, target) = (&failure, r.imatrix, t.target);
        let entry = entries.as_ref().and_then(|m| m.get(source.name()).copied());
        b.add_tensor_fn(t.name.clone(), t.target, ggml_dims(&t.shape), move |w| {
            let weights = match entry {
                Some(e) if use_weights => imatrix.map(|m| m.weights(e)),
                _ => None,
            };
            let weights = weights.as_deref();
            match data {
                None => convert_tensor(&source, target, weights, workers, w),
                Some(data) => convert_stream(&source, target, weights, workers, w, &mut |w| {
                    data(source.name(), w)
                }),
            }
            .map_err(|e| {
                let io = std::io::Error::other(e.to_string());
                *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                io
            })
        })?;
    }
    // What each tensor costs to write, per file, for the progress.
    let mut work: Vec<Vec<TensorWork>> = vec![Vec::new(); count];
    for (t, r) in plan.tensors.iter().zip(&report.tensors) {
        work[r.file].push(TensorWork {
            elements: t.shape.iter().product(),
            source: t.source,
            target: t.target,
            weighted: r.imatrix,
            bytes: 0,
        });
    }
    let threads = match job.threads {
        #[cfg(feature = "parallel")]
        0 => rayon::current_num_threads(),
        #[cfg(not(feature = "parallel"))]
        0 => 1,
        n => n,
    };
    let written = write_files(&mut builders, &paths, (work, threads), &mut progress);
    drop(builders);
    if let Err(e) = written {
        let kept = failure.lock().unwrap_or_else(|p| p.into_inner()).take();
        return Err(kept.unwrap_or(e));
    }
    report.file_bytes = written?;
    report.files = paths;
    report.elapsed = start.elapsed();
    Ok(report)
}

/// Writes each builder to its path through a temporary file beside it,
/// then renames them all, so that none appears unless all are complete.
/// `work` is each file's tensors (their bytes are taken from the layouts)
/// and the encoding threads: `progress` is told work done, not bytes
/// ([`WorkMeter`]). Returns the bytes written.
fn write_files(
    builders: &mut [Builder<'_>],
    paths: &[PathBuf],
    work: (Vec<Vec<TensorWork>>, usize),
    progress: &mut dyn FnMut(u64, u64),
) -> Result<u64> {
    let layouts = builders
        .iter()
        .map(Builder::layout)
        .collect::<gguf_core::Result<Vec<_>>>()?;
    let total: u64 = layouts.iter().map(|l| l.file_len()).sum();
    let (mut tensors, threads) = work;
    tensors.resize(layouts.len(), Vec::new());
    let files: Vec<(u64, Vec<TensorWork>)> = layouts
        .iter()
        .zip(tensors)
        .map(|(layout, mut tensors)| {
            for (t, slot) in tensors.iter_mut().zip(&layout.tensors) {
                t.bytes = slot.nbytes + slot.padding;
            }
            (layout.data_offset(), tensors)
        })
        .collect();
    let meter = WorkMeter::new(&files, threads);
    gguf_core::write::write_all_or_none(builders, paths, &mut |k, d| {
        progress(meter.done(k, d), meter.total())
    })?;
    Ok(total)
}

/// The dimensions llama-quantize writes for a tensor of `shape`: ggml's
/// `ggml_n_dims`, trailing dimensions of 1 dropped (one dimension kept), so
/// a `[64, 1]` tensor comes out as `[64]`.
fn ggml_dims(shape: &[u64]) -> &[u64] {
    let n = shape.iter().rposition(|&d| d != 1).map_or(1, |i| i + 1);
    &shape[..n.min(shape.len())]
}

#[cfg(test)]
mod dims_tests {
    #[test]
    fn trailing_ones_are_dropped_as_ggml_n_dims_drops_them() {
        assert_eq!(super::ggml_dims(&[64, 1]), &[64]);
        assert_eq!(super::ggml_dims(&[64, 1, 4]), &[64, 1, 4]);
        assert_eq!(super::ggml_dims(&[1, 1]), &[1]);
        assert_eq!(super::ggml_dims(&[64, 256]), &[64, 256]);
    }
}
