//! The vision projector of a vision-language checkpoint (`--mmproj`): the
//! GGUF file llama.cpp's `convert_hf_to_gguf.py --mmproj` writes, which
//! libmtmd (`llama-mtmd-cli`, `llama-server --mmproj`) loads beside the
//! text model: `general.architecture` `clip`, `general.type` `mmproj`, the
//! `clip.*` keys, and the vision tower's and projector's tensors (`v.*`,
//! `mm.*`).
//!
//! The files follow the text import's order: `tables` (one
//! [`Projector`](tables::Projector) per converter class, data), then
//! `keys` (the `clip.*` keys) and `tensors` (names, types, pieces), then
//! this file's run, which shares `general.*`, the checkpoint reader and
//! the tensor conversion with the text import.

mod keys;
mod tables;
mod tensors;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use gguf_core::write::{Builder, WriteMode, WriteOptions};

use crate::arch;
use crate::checkpoint::Checkpoint;
use crate::config::Config;
use crate::error::{Error, ImportError, Result};
use crate::general;
use crate::hparams::Keys;
use crate::options::{ImportOptions, ImportReport, Stage, Target};

pub(crate) use tables::{supported, PROJECTORS};

/// gguf-py's `GGML_QUANT_VERSION`.
const QUANTIZATION_VERSION: u32 = 2;

/// The projector table for a `config.json` architecture name and
/// top-level `model_type`: `Ok(None)` when no table has the name, an
/// error when tables have it but not for that `model_type`.
pub(crate) fn find(config: &Config, hf_arch: &str) -> Result<Option<&'static tables::Projector>> {
    let named: Vec<&tables::Projector> = PROJECTORS
        .iter()
        .copied()
        .filter(|p| p.hf_names.contains(&hf_arch))
        .collect();
    if named.is_empty() {
        return Ok(None);
    }
    let model_type = config.raw.get("model_type").and_then(|t| t.as_str());
    let found = named.iter().copied().find(|p| {
        p.model_types.is_empty() || model_type.is_some_and(|t| p.model_types.contains(&t))
    });
    match found {
        Some(p) => Ok(Some(p)),
        None => {
            let known: Vec<&str> = named
                .iter()
                .flat_map(|p| p.model_types.iter().copied())
                .collect();
            Err(crate::config::config_error(
                &config.file,
                format!(
                    "model_type {:?} is not one the converter knows for a {hf_arch} projector ({})",
                    model_type.unwrap_or(""),
                    known.join(", ")
                ),
            ))
        }
    }
}

/// Whether `hf_arch` has a projector the import writes.
pub(crate) fn has_projector(hf_arch: &str) -> bool {
    PROJECTORS.iter().any(|p| p.hf_names.contains(&hf_arch))
}

/// Writes the vision projector of the checkpoint in `dir` to `output`
/// (see the module docs); `import_model`'s run when
/// [`ImportOptions::mmproj`] is set, after the output paths were checked
/// and `config.json` read.
pub(crate) fn import(
    dir: &Path,
    output: &Path,
    options: &ImportOptions<'_>,
    mut config: Config,
    hf_arch: &str,
    start: Instant,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<ImportReport> {
    let out = match options.target {
        Target::Float(t) => t,
        Target::Preset(p) => {
            return Err(Error::Import(ImportError::ProjectorType {
                name: p.name.to_owned(),
            }))
        }
    };
    let Some(projector) = find(&config, hf_arch)? else {
        return Err(Error::Import(ImportError::NoProjector {
            file: config.file.clone(),
            arch: hf_arch.to_owned(),
            supported: supported(),
        }));
    };
    // The text model's defaults, for its width (the projection's).
    if let Some(text) = arch::find(hf_arch) {
        config.apply_defaults(text.defaults);
    }
    let vision = keys::vision_config(projector, &config)?;
    let blocks = keys::vision_count(&vision, tables::BLOCK_KEYS)?;
    let pre = keys::Preprocessor::read(dir)?;

    let checkpoint = Checkpoint::open(dir)?;
    let sources = checkpoint.tensors()?;
    let planned = tensors::plan(projector, &vision, sources, out, blocks)?;

    let mut keys = Keys::default();
    keys.set("general.architecture", "clip");
    let shapes: Vec<(&str, &[u64])> = planned
        .iter()
        .map(|t| (t.name.as_str(), t.shape.as_slice()))
        .collect();
    let card_note = general::write(
        dir,
        &config.raw,
        &shapes,
        general::Kind::Projector,
        &mut keys,
    )?;
    keys::write(
        projector,
        &config,
        &vision,
        &pre,
        out.file_type(),
        &mut keys,
    )?;
    keys.set("general.quantization_version", QUANTIZATION_VERSION);
    let parameters = planned
        .iter()
        .map(|t| t.shape.iter().product::<u64>())
        .sum();

    // A conversion's error, kept whole (the writer sees an io::Error).
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let mut b = Builder::new();
    for (k, v) in keys.0 {
        b.set(k, v)?;
    }
    let metadata = b.keys().count();
    for t in &planned {
        let failure = &failure;
        b.add_tensor_fn(t.name.clone(), t.ty, &t.shape, move |w| {
            crate::tensors::write_tensor(t, w).map_err(|e| {
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
    let write = WriteOptions::new()
        .mode(WriteMode::Single)
        .progress(|d, t| progress(Stage::Convert, d, t));
    let (files, bytes): (Vec<PathBuf>, u64) = match &options.split {
        Some(split) => {
            let shards = b.write_split_with(output, split, write).map_err(kept)?;
            let bytes = shards.iter().map(|s| s.layout.file_len()).sum();
            (shards.into_iter().map(|s| s.path).collect(), bytes)
        }
        None => {
            let layout = b.write_to_path_with(output, write).map_err(kept)?;
            (vec![output.to_owned()], layout.file_len())
        }
    };
    Ok(ImportReport {
        hf_architecture: hf_arch.to_owned(),
        architecture: "clip".to_owned(),
        files,
        metadata,
        tensors: planned.len(),
        parameters,
        bytes,
        elapsed: start.elapsed(),
        notes: card_note.into_iter().collect(),
    })
}
