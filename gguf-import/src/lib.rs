//! Import of Hugging Face checkpoints (feature `import`): a directory with
//! `config.json`, `*.safetensors` and the tokenizer files becomes the GGUF
//! file llama.cpp's `convert_hf_to_gguf.py` writes from it, without Python.
//!
//! [`import_model`] reads `config.json` ([`config`](self) defaults as
//! `transformers` fills them), maps every safetensors file (single, or
//! sharded with `model.safetensors.index.json`), and writes, in the
//! converter's order and with its types: `general.*` (its name heuristics,
//! size label, file type, quantization version), the architecture's
//! hyper-parameters (one table per architecture: `LlamaForCausalLM`,
//! `MistralForCausalLM`, `Qwen2ForCausalLM`, `Gemma3ForCausalLM`), the
//! `tokenizer.*` keys, then the tensors renamed (`model.layers.N.self_attn.q_proj.weight`
//! -> `blk.N.attn_q.weight`), transformed (llama's Q/K row permutation,
//! Gemma's norm + 1, its embedding rows cut to the vocabulary) and
//! converted to the output type ([`OutType`]: the converter's `--outtype`;
//! 1-D tensors and norms stay F32).
//!
//! A quantization preset ([`Target::Preset`], any of `gguf quantize`'s)
//! gives the bytes of the converter's F16 output quantized by
//! llama-quantize, without writing the F16 file: its header is the
//! builder's preview and each tensor's F16 bytes go from the conversion
//! straight into [`quantize_model_streamed`], which encodes them a slab of
//! rows at a time (a stacked expert tensor expert by expert), so memory
//! stays at a slab and one expert's mapped pages, and the disk holds only
//! the output.
//!
//! With [`ImportOptions::mmproj`] the output is the checkpoint's vision
//! projector instead (the converter's `--mmproj`: `general.architecture`
//! `clip`, which llama.cpp's libmtmd loads beside the text model), for
//! the architectures [`has_projector`] names.
//!
//! Tensors are converted while the file is written, a slab of rows at a
//! time on every core (feature `parallel`): memory stays bounded by a slab
//! and the mapped input, whatever the model's size. The output appears
//! under its name only once complete (an error leaves nothing; an
//! interrupted process leaves `.gguf-XXXXXX.tmp` files beside it, see
//! [`exit_removing_temp_files`](gguf_core::write::exit_removing_temp_files)).
//!
//! ```no_run
//! # fn main() -> gguf_import::Result<()> {
//! use gguf_import::{import_model, ImportOptions, Target};
//! let options = ImportOptions::new(Target::parse("q4_k_m")?);
//! let report = import_model("Qwen2.5-0.5B-Instruct", "qwen.gguf", &options, |_, _, _| {})?;
//! println!("{} tensors, {} bytes", report.tensors, report.bytes);
//! # Ok(()) }
//! ```
//!
//! # Layers
//!
//! The files are layered, lowest first; a file uses only the layers before
//! it, [`gguf_core`] and [`gguf_llama`] (`scripts/check_layers.py` holds
//! the order and checks it):
//! - `error`;
//! - `config`: `config.json` with the `transformers` defaults;
//! - `arch` (one table per architecture, a file per family, `qwen_vl`
//!   the vision-language checkpoints' text models), `card` (the model card),
//!   `checkpoint` (the safetensors files, mapped), `rope` (generated
//!   `rope_freqs`), `vocab` (the tokenizer files to `tokenizer.*`);
//! - `hparams`: the architecture's hyper-parameter keys;
//! - `general`: the `general.*` keys;
//! - this file: [`import_model`] and its options ([`ImportOptions`],
//!   [`Target`], [`OutType`]); the crate root declares every file, so its
//!   own imports are not checked;
//! - `tensors`: which tensors, with which types, converted while written;
//! - `lora`: LoRA adapters through the same tables;
//! - `mmproj`: vision projectors (`--mmproj`), their own tables.
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod error;

pub use error::{Error, ImportError, Result, VocabError};
pub use options::{ImportOptions, ImportReport, OutType, Stage, Target};

mod arch;

mod card;
mod checkpoint;
mod config;
mod general;
mod hparams;
mod lora;
mod mmproj;
mod options;
mod rope;
mod tensors;
mod vocab;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use gguf_core::model::Model;
use gguf_core::read::GgufFile;
use gguf_core::write::TempFile;
use gguf_core::write::{Builder, WriteMode, WriteOptions};
use gguf_llama::quantize::{
    quantize_model_streamed, Preset, QuantizeJob, QuantizeOptions, TensorBytes,
};

use checkpoint::Checkpoint;
use config::Config;
use hparams::Keys;

/// llama.cpp's `LLAMA_FTYPE_MOSTLY_MXFP4_MOE`.
const MOSTLY_MXFP4_MOE: u32 = 38;

/// gguf-py's `GGML_QUANT_VERSION`, written as `general.quantization_version`.
const QUANTIZATION_VERSION: u32 = 2;

/// An architecture the import knows.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Architecture {
    /// The `architectures` names of `config.json` that select it.
    pub hf_names: &'static [&'static str],
    /// The GGUF architecture it is written as (`general.architecture`).
    pub gguf: &'static str,
    /// Whether its checkpoints keep one tensor per expert that the import
    /// stacks, or stacked experts it cuts (a mixture of experts).
    pub experts: bool,
}

/// The architectures [`import_model`] knows, in a stable order.
///
/// ```
/// let names: Vec<_> = gguf_import::architectures().flat_map(|a| a.hf_names.iter().copied()).collect();
/// assert!(names.contains(&"Qwen3ForCausalLM"));
/// ```
pub fn architectures() -> impl Iterator<Item = Architecture> {
    arch::ARCHITECTURES.iter().map(|a| Architecture {
        hf_names: a.hf_names,
        gguf: a.gguf,
        experts: !a.experts.is_empty() || !a.splits.is_empty(),
    })
}

/// Whether [`ImportOptions::mmproj`] writes a vision projector for the
/// `config.json` architecture `hf_name`.
///
/// ```
/// assert!(gguf_import::has_projector("Qwen2_5_VLForConditionalGeneration"));
/// assert!(!gguf_import::has_projector("Gemma3ForCausalLM"));
/// ```
pub fn has_projector(hf_name: &str) -> bool {
    mmproj::has_projector(hf_name)
}

/// The number of tokens gemma3's embedding rows are cut to, as the
/// converter counts them: the SentencePiece vocabulary's size, or
/// `tokenizer.json`'s vocabulary plus its added tokens.
fn vocab_rows(dir: &Path, vocab: &Keys) -> Result<Option<u64>> {
    if dir.join("tokenizer.model").is_file() {
        let n = match vocab.0.get("tokenizer.ggml.tokens") {
            Some(v) => match v.to_owned_value() {
                gguf_core::format::OwnedValue::Array(a) => Some(a.len() as u64),
                _ => None,
            },
            None => None,
        };
        return Ok(n);
    }
    let file = dir.join("tokenizer.json");
    if !file.is_file() {
        return Ok(None);
    }
    let json = config::read_json(&file)?;
    let vocab = json
        .get("model")
        .and_then(|m| m.get("vocab"))
        .and_then(|v| {
            v.as_object()
                .map(|o| o.len())
                .or_else(|| v.as_array().map(Vec::len))
        });
    let added = json
        .get("added_tokens")
        .and_then(|a| a.as_array())
        .map_or(0, Vec::len);
    Ok(vocab.map(|v| (v + added) as u64))
}

/// The files of a checkpoint directory an import may read, besides every
/// `*.safetensors` file and the `additional_chat_templates` directory.
const READ_FILES: &[&str] = &[
    "config.json",
    "generation_config.json",
    "model.safetensors.index.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "tokenizer.model",
    "special_tokens_map.json",
    "added_tokens.json",
    "merges.txt",
    "vocab.txt",
    "modules.json",
    "README.md",
    "chat_template.jinja",
    "chat_template.json",
    "adapter_config.json",
    "preprocessor_config.json",
    "processor_config.json",
];

/// The files of `dir` that an import reads and that exist, with the
/// importance matrix: what its output must never replace.
fn input_files(dir: &Path, imatrix_file: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    if !imatrix_file.is_empty() {
        files.push(PathBuf::from(imatrix_file));
    }
    let mut list = |dir: &Path, all: bool| {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if all || name.ends_with(".safetensors") || READ_FILES.contains(&&*name) {
                files.push(entry.path());
            }
        }
    };
    list(dir, false);
    list(&dir.join("additional_chat_templates"), true);
    files
}

/// Refuses, before anything is read, an output that would replace one of
/// the import's inputs (a file of the checkpoint, the importance matrix),
/// and one that is not a regular file. A split output's shards are its
/// outputs too: an input named as one of them is refused.
fn check_output_paths(dir: &Path, output: &Path, options: &ImportOptions<'_>) -> Result<()> {
    let inputs = input_files(dir, &options.imatrix_file);
    if options.split.is_some()
        && let Some(input) = inputs
            .iter()
            .find(|i| gguf_core::write::may_be_shard_of(output, i))
    {
        return Err(Error::Gguf(gguf_core::Error::Build(
            gguf_core::error::BuildError::OutputIsInput {
                output: output.to_owned(),
                input: input.clone(),
                reason: " (named as a shard of the split output)".into(),
            },
        )));
    }
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    gguf_core::write::check_not_inputs(&[output], &inputs)?;
    Ok(gguf_core::write::check_output(output)?)
}

/// Imports the Hugging Face checkpoint in `dir` to `output` (see the
/// [module docs](self)). `progress(stage, done, total)` counts bytes of
/// the files being written, and in the [`Stage::Quantize`] stage the work
/// of [`quantize_model_streamed`]'s progress.
///
/// Errors name the file, and the key or tensor: a missing or malformed
/// `config.json`, an architecture without a table
/// ([`ImportError::UnsupportedArchitecture`]), a missing shard, a tensor
/// of another data type or of a shape the config does not allow. Nothing
/// appears under `output`'s name unless the whole file was written.
///
/// Before anything is read, an `output` (or a shard of it) that is one of
/// the files the import reads (`config.json`, a safetensors file, a
/// tokenizer file, the importance matrix...) is refused
/// ([`BuildError::OutputIsInput`](gguf_core::error::BuildError::OutputIsInput)),
/// as is one that is not a regular file. Every file read must be a
/// regular file (symlinks are followed, as the Hugging Face cache links
/// to blobs), and JSON and text files are read up to
/// [`MAX_TEXT_INPUT`](gguf_core::read::MAX_TEXT_INPUT) bytes.
pub fn import_model(
    dir: impl AsRef<Path>,
    output: impl AsRef<Path>,
    options: &ImportOptions<'_>,
    mut progress: impl FnMut(Stage, u64, u64),
) -> Result<ImportReport> {
    let start = Instant::now();
    let dir = dir.as_ref();
    let output = output.as_ref();
    check_output_paths(dir, output, options)?;
    if let Some(base) = &options.lora_base {
        return import_lora(dir, base, output, options, &mut progress, start);
    }
    if options.mmproj {
        let config = Config::read(dir)?;
        let hf_arch = config.architecture()?.to_owned();
        return mmproj::import(dir, output, options, config, &hf_arch, start, &mut progress);
    }
    let (mut config, arch, hf_arch) = read_config(dir)?;
    let checkpoint = Checkpoint::open(dir)?;
    let mut sources = checkpoint.tensors()?;
    let mtp_layers = tensors::rename_mtp(arch, &config, &mut sources)?;
    if let arch::Mtp::Renamed { count } = arch.mtp
        && config.find(&[count]).is_none()
    {
        // As the converter counts them when the config does not say.
        config.hparams.insert(count.to_owned(), mtp_layers.into());
    }
    let sources = tensors::pair_quantized(arch, &config, sources)?;
    let (mxfp4, sources) = tensors::mxfp4(arch, &config, sources)?;
    // Before anything is built from the hyper-parameters (the vocabulary's
    // padding, Llama 3's RoPE factors): they must fit the tensors.
    tensors::check_hparams(arch, &config, &sources)?;
    let out = match options.target {
        Target::Float(t) => t,
        Target::Preset(_) => OutType::F16,
    };

    let vocab = Keys(
        vocab::vocab_metadata(
            dir,
            arch.vocab,
            &config.raw,
            options.pre_tokenizer.as_deref(),
        )?
        .into_iter()
        .collect(),
    );
    // The converter writes gpt-oss's repacked MXFP4 experts before any
    // other tensor, and labels a 16- or 32-bit output MXFP4_MOE.
    let file_type = match out {
        OutType::F32 | OutType::F16 | OutType::BF16 if !mxfp4.is_empty() => MOSTLY_MXFP4_MOE,
        _ => out.file_type(),
    };
    if let (Target::Preset(preset), Some(t)) = (options.target, mxfp4.first()) {
        // llama-quantize refuses the converter's file: its experts are
        // quantized already.
        return Err(config::config_error(
            &config.file,
            format!(
                "quant_method mxfp4: the converter keeps the experts MXFP4 ({} ...), which llama-quantize does not requantize to {}; import as f16, bf16 or q8_0 (the experts stay MXFP4), or quantize that file with `gguf quantize --allow-requantize`",
                t.name, preset.name
            ),
        ));
    }
    let mut planned = mxfp4;
    // Keys the converter sets while generating tensors, which come right
    // after `general.architecture` (it generates them before the metadata).
    let mut generated_keys = Keys::default();
    match arch.generated {
        arch::Generated::Nothing => {}
        arch::Generated::Llama3Rope => {
            if let Some(factors) = rope::llama3_rope_freqs(&config)? {
                planned.push(tensors::generated("rope_freqs.weight", factors));
            }
        }
        arch::Generated::Phi3LongRope => {
            if let Some(r) = rope::phi3_long_rope(&config)? {
                generated_keys.set(
                    format!("{}.rope.scaling.attn_factor", arch.gguf),
                    r.attn_factor,
                );
                planned.push(tensors::generated("rope_factors_long.weight", r.long));
                planned.push(tensors::generated("rope_factors_short.weight", r.short));
            }
        }
    }
    let taken: Vec<&str> = planned.iter().map(|t| t.name.as_str()).collect();
    let read = tensors::plan(
        arch,
        &config,
        sources,
        out,
        vocab_rows(dir, &vocab)?,
        &taken,
    )?;
    planned.extend(read);

    let mut keys = Keys::default();
    keys.set("general.architecture", arch.gguf);
    for (k, v) in generated_keys.0 {
        keys.set(k, v);
    }
    let shapes: Vec<(&str, &[u64])> = planned
        .iter()
        .map(|t| (t.name.as_str(), t.shape.as_slice()))
        .collect();
    let card_note = general::write(dir, &config.raw, &shapes, general::Kind::Model, &mut keys)?;
    hparams::write(arch, &config, dir, file_type, &mut keys)?;
    keys.set("general.quantization_version", QUANTIZATION_VERSION);
    for (k, v) in vocab.0 {
        keys.set(k, v);
    }
    let written = write_planned(keys, &planned, options, output, &mut progress)?;
    Ok(report(hf_arch, arch, &planned, written, start, card_note))
}

/// The config of the checkpoint in `dir`, with its architecture's table
/// and defaults.
fn read_config(dir: &Path) -> Result<(Config, &'static arch::Architecture, String)> {
    let mut config = Config::read(dir)?;
    let hf_arch = config.architecture()?.to_owned();
    let arch = arch::find(&hf_arch).ok_or_else(|| {
        Error::Import(ImportError::UnsupportedArchitecture {
            file: config.file.clone(),
            arch: hf_arch.clone(),
            supported: arch::supported(),
        })
    })?;
    config.apply_defaults(arch.defaults);
    for key in arch.ignored_config {
        config.hparams.remove(*key);
    }
    Ok((config, arch, hf_arch))
}

/// [`import_model`] of a LoRA adapter in `dir` trained on the checkpoint
/// in `base` (see [`ImportOptions::lora_base`]).
fn import_lora(
    dir: &Path,
    base: &Path,
    output: &Path,
    options: &ImportOptions<'_>,
    progress: &mut dyn FnMut(Stage, u64, u64),
    start: Instant,
) -> Result<ImportReport> {
    let Target::Float(out) = options.target else {
        return Err(config::config_error(
            &dir.join("adapter_config.json"),
            "a LoRA adapter is written as f32, f16, bf16 or q8_0 (the converter's --outtype), not as a quantization preset".into(),
        ));
    };
    let base_inputs = input_files(base, "");
    let base_inputs: Vec<&Path> = base_inputs.iter().map(PathBuf::as_path).collect();
    gguf_core::write::check_not_inputs(&[output], &base_inputs)?;
    let adapter = lora::read_config(dir)?;
    let (config, arch, hf_arch) = read_config(base)?;
    let checkpoint = Checkpoint::open_file(dir, lora::ADAPTER_FILE)?;
    let sources = checkpoint.tensors()?;
    let planned = lora::plan(arch, &config, sources, out)?;

    let mut keys = Keys::default();
    keys.set("general.architecture", arch.gguf);
    let shapes: Vec<(&str, &[u64])> = planned
        .iter()
        .map(|t| (t.name.as_str(), t.shape.as_slice()))
        .collect();
    // The adapter's own directory is the converter's model card: its
    // README.md, generation_config.json and name.
    let no_config = serde_json::Value::Object(Default::default());
    let card_note = general::write(
        dir,
        &no_config,
        &shapes,
        general::Kind::LoraAdapter,
        &mut keys,
    )?;
    keys.set("adapter.lora.alpha", adapter.alpha);
    keys.set("general.quantization_version", QUANTIZATION_VERSION);
    let written = write_planned(keys, &planned, options, output, progress)?;
    Ok(report(hf_arch, arch, &planned, written, start, card_note))
}

/// What an import wrote: `written` is [`write_planned`]'s answer.
fn report(
    hf_architecture: String,
    arch: &arch::Architecture,
    planned: &[tensors::Planned<'_>],
    (files, bytes, metadata): (Vec<PathBuf>, u64, usize),
    start: Instant,
    note: Option<String>,
) -> ImportReport {
    ImportReport {
        hf_architecture,
        architecture: arch.gguf.to_owned(),
        files,
        metadata,
        tensors: planned.len(),
        parameters: planned
            .iter()
            .map(|t| t.shape.iter().product::<u64>())
            .sum(),
        bytes,
        elapsed: start.elapsed(),
        notes: note.into_iter().collect(),
    }
}

/// Writes `planned` with the metadata `keys` to `output` as `options`
/// say (one file, shards, or F16 quantized to a preset): the files, their
/// bytes, and the metadata count of the (first) file.
fn write_planned(
    keys: Keys,
    planned: &[tensors::Planned<'_>],
    options: &ImportOptions<'_>,
    output: &Path,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<(Vec<PathBuf>, u64, usize)> {
    // A conversion's error, kept whole (the writer sees an io::Error).
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let mut b = Builder::new();
    for (k, v) in keys.0 {
        b.set(k, v)?;
    }
    let metadata = b.keys().count();
    for (i, t) in planned.iter().enumerate() {
        let failure = &failure;
        let next = planned.get(i + 1);
        b.add_tensor_fn(t.name.clone(), t.ty, &t.shape, move |w| {
            next.inspect(|n| tensors::read_ahead(n));
            tensors::write_tensor(t, w).map_err(|e| {
                let io = std::io::Error::other(e.to_string());
                *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                io
            })
        })?;
    }
    let kept = |e: gguf_core::Error| {
        failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or(e.into())
    };

    let (files, bytes) = match options.target {
        Target::Float(_) => {
            let write = WriteOptions::new()
                .mode(WriteMode::Single)
                .progress(|d, t| progress(Stage::Convert, d, t));
            match &options.split {
                Some(split) => {
                    let shards = b.write_split_with(output, split, write).map_err(kept)?;
                    let bytes = shards.iter().map(|s| s.layout.file_len()).sum();
                    (shards.into_iter().map(|s| s.path).collect(), bytes)
                }
                None => {
                    let layout = b.write_to_path_with(output, write).map_err(kept)?;
                    (vec![output.to_owned()], layout.file_len())
                }
            }
        }
        Target::Preset(preset) => {
            let dir_out = match output.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            // The F16 file is never written: its header is the builder's
            // preview, and each tensor's F16 bytes go straight from the
            // conversion into the quantizer, a slab at a time.
            let f16 = b.preview()?;
            let by_name: HashMap<&str, usize> = planned
                .iter()
                .enumerate()
                .map(|(i, t)| (t.name.as_str(), i))
                .collect();
            let failure = &failure;
            let data = move |name: &str, w: &mut dyn std::io::Write| {
                let &i = by_name
                    .get(name)
                    .ok_or_else(|| std::io::Error::other(format!("no tensor {name}")))?;
                // The quantizer asks for the tensors in the plan's order.
                planned.get(i + 1).inspect(|n| tensors::read_ahead(n));
                let t = &planned[i];
                tensors::write_tensor(t, w).map_err(|e| {
                    let io = std::io::Error::other(e.to_string());
                    *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    io
                })
            };
            quantize(preset, options, &f16, &data, output, dir_out, progress).map_err(|e| {
                failure
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take()
                    .unwrap_or(e)
            })?
        }
    };
    Ok((files, bytes, metadata))
}

/// Quantizes the converted F16 model `f16` (its header; `data` writes
/// its tensors' bytes) to `preset` as llama-quantize does, into `output`
/// (or, when splitting, into a temporary file then split as `gguf split`
/// splits). Returns the files and their bytes.
fn quantize(
    preset: &'static Preset,
    options: &ImportOptions<'_>,
    f16: &GgufFile<'_>,
    data: &TensorBytes<'_>,
    output: &Path,
    dir_out: &Path,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<(Vec<PathBuf>, u64)> {
    let mut q = QuantizeOptions::new(preset.name)?;
    q.preset = preset;
    let mut job = QuantizeJob::new(q);
    job.imatrix = options.imatrix;
    job.imatrix_file = options.imatrix_file.clone();
    job.threads = options.threads;
    let Some(split) = &options.split else {
        let report = quantize_model_streamed(f16, data, output, &job, |d, t| {
            progress(Stage::Quantize, d, t)
        })?;
        return Ok((report.files, report.file_bytes));
    };
    // The quantized file under a temporary name (removed when dropped),
    // then split into the output's shards.
    let whole = TempFile::new_in(dir_out).map_err(|e| e.with_path(output))?;
    quantize_model_streamed(f16, data, whole.path(), &job, |d, t| {
        progress(Stage::Quantize, d, t)
    })?;
    let quantized = Model::open(whole.path())?;
    let mut b = Builder::from_model(&quantized)?;
    let shards = b.write_split_with(
        output,
        split,
        WriteOptions::new().progress(|d, t| progress(Stage::Quantize, d, t)),
    )?;
    let bytes = shards.iter().map(|s| s.layout.file_len()).sum();
    Ok((shards.into_iter().map(|s| s.path).collect(), bytes))
}

#[cfg(test)]
mod tests;
