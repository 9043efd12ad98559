//! The checkpoint's weights: every `*.safetensors` file, memory-mapped,
//! their headers parsed and validated by the `safetensors` crate, their
//! tensors listed in the order the converter visits them.
//!
//! The converter's order: the files sorted by name (those the index's
//! `weight_map` names when there is a `model.safetensors.index.json`, else
//! every `model*.safetensors` of the directory), and inside each file the
//! tensors sorted by name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors};

use crate::error::{Error, ImportError, Result};

use super::config::read_json;

/// The index of a sharded checkpoint.
pub(crate) const INDEX: &str = "model.safetensors.index.json";

/// One mapped safetensors file.
#[derive(Debug)]
struct Part {
    path: PathBuf,
    map: Option<Mmap>,
}

/// The mapped files of a checkpoint; [`tensors`](Self::tensors) borrows
/// them.
#[derive(Debug)]
pub(crate) struct Checkpoint {
    parts: Vec<Part>,
}

/// The element type of a source tensor (those the converter reads as
/// floats).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SourceType {
    /// `F32`.
    F32,
    /// `F16`.
    F16,
    /// `BF16`.
    BF16,
    /// `F8_E4M3` (`float8_e4m3fn`: no infinities, one NaN pattern).
    F8E4M3,
    /// `F8_E5M2`.
    F8E5M2,
    /// `U8`: raw bytes (gpt-oss's MXFP4 blocks and scales), not values.
    U8,
}

impl SourceType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            SourceType::F32 => 4,
            SourceType::F16 | SourceType::BF16 => 2,
            SourceType::F8E4M3 | SourceType::F8E5M2 | SourceType::U8 => 1,
        }
    }
}

/// The block scales of an FP8 weight (`weight_scale_inv`): each value of
/// the weight is multiplied by its block's scale.
#[derive(Clone, Debug)]
pub(crate) struct BlockScale<'a> {
    /// The scales, `[ceil(rows / block rows), ceil(columns / block
    /// columns)]`, F32, BF16 or F16.
    pub scales: SourceTensor<'a>,
    /// Rows and columns per block.
    pub block: (u64, u64),
}

/// A tensor of the checkpoint: its name, file, element type, shape
/// (outermost dimension first, as safetensors and numpy order them) and
/// bytes.
#[derive(Clone, Debug)]
pub(crate) struct SourceTensor<'a> {
    pub name: String,
    pub file: &'a Path,
    pub dtype: SourceType,
    pub shape: Vec<u64>,
    pub data: &'a [u8],
    /// The map `data` lies in.
    map: Option<&'a Mmap>,
    /// The block scales of an FP8 weight, paired by
    /// `tensors::pair_quantized`.
    pub scale: Option<Box<BlockScale<'a>>>,
}

impl SourceTensor<'_> {
    /// Asks the kernel to start reading bytes `range` of this tensor's data
    /// (clamped to it) into the page cache, so that a later access finds them
    /// there while the conversion works on what came before: the reading of
    /// the next slab overlaps the conversion of this one.
    pub fn read_ahead(&self, range: std::ops::Range<usize>) {
        #[cfg(unix)]
        if let Some(map) = self.map {
            let end = range.end.min(self.data.len());
            if range.start >= end {
                return;
            }
            let base = self.data.as_ptr() as usize - map.as_ptr() as usize;
            // A hint only: a refusal changes nothing but the timing.
            let _ = map.advise_range(
                memmap2::Advice::WillNeed,
                base + range.start,
                end - range.start,
            );
        }
        #[cfg(not(unix))]
        let _ = range;
    }

    /// Tells the kernel this tensor's pages will not be needed again, so
    /// that converting a model keeps this process's memory at a tensor, not
    /// the whole mapped checkpoint.
    pub fn release(&self) {
        #[cfg(unix)]
        if let Some(map) = self.map {
            let start = self.data.as_ptr() as usize - map.as_ptr() as usize;
            let len = self.data.len();
            if start.checked_add(len).is_none_or(|end| end > map.len()) {
                return;
            }
            // SAFETY: MADV_DONTNEED on a shared, read-only file map drops
            // the pages from this process's page tables only; they were
            // never written through the map, so the next access faults them
            // in again from the page cache with the file's same bytes, and no
            // borrowed slice sees a change. The range was checked to lie
            // inside the map, so no other mapping is touched.
            #[allow(unsafe_code)]
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, len)
            };
        }
    }
}

fn checkpoint_error(file: &Path, reason: String) -> Error {
    Error::Import(ImportError::Checkpoint {
        file: file.to_owned(),
        reason,
    })
}

impl Checkpoint {
    /// Maps the safetensors files of `dir`, checking them against the
    /// index when there is one: a file it names that is missing, a tensor
    /// it lists that no file has (or the reverse) is an error naming the
    /// file and the tensor.
    pub fn open(dir: &Path) -> Result<Checkpoint> {
        let index_path = dir.join(INDEX);
        let index = if std::fs::metadata(&index_path).is_ok() {
            Some(read_index(&index_path)?)
        } else {
            None
        };
        let names: Vec<String> = match &index {
            Some(map) => map
                .values()
                .cloned()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            None => {
                let mut names = Vec::new();
                let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
                for entry in entries {
                    let entry = entry.map_err(|e| Error::io(dir, e))?;
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name.starts_with("model") && name.ends_with(".safetensors") {
                        names.push(name);
                    }
                }
                names.sort();
                names
            }
        };
        Checkpoint::open_names(dir, &names, index.as_ref(), &index_path)
    }

    /// Maps the one safetensors file `name` of `dir` (a PEFT adapter's
    /// `adapter_model.safetensors`).
    pub fn open_file(dir: &Path, name: &str) -> Result<Checkpoint> {
        let index_path = dir.join(INDEX);
        Checkpoint::open_names(dir, &[name.to_owned()], None, &index_path)
    }

    fn open_names(
        dir: &Path,
        names: &[String],
        index: Option<&BTreeMap<String, String>>,
        index_path: &Path,
    ) -> Result<Checkpoint> {
        if names.is_empty() {
            let bin = dir.join("pytorch_model.bin");
            let why = if bin.exists() {
                "no model*.safetensors file (PyTorch .bin checkpoints are not supported: convert them to safetensors first)"
            } else {
                "no model*.safetensors file"
            };
            return Err(checkpoint_error(dir, why.into()));
        }
        let mut parts = Vec::with_capacity(names.len());
        for name in names {
            if name.contains(['/', '\\']) || name == ".." {
                return Err(checkpoint_error(
                    index_path,
                    format!("weight_map names {name:?}, which is not a file of the checkpoint directory"),
                ));
            }
            let path = dir.join(name);
            // A FIFO or device is refused: mapping needs a regular file.
            let file = match gguf_core::read::open_regular(&path) {
                Ok(f) => f,
                Err(e)
                    if e.io_error().map(std::io::Error::kind)
                        == Some(std::io::ErrorKind::NotFound) =>
                {
                    let tensor = index
                        .and_then(|m| m.iter().find(|(_, f)| *f == name).map(|(t, _)| t.clone()));
                    let reason = match tensor {
                        Some(t) => format!("missing (the index places {t:?} in it)"),
                        None => "missing".into(),
                    };
                    return Err(checkpoint_error(&path, reason));
                }
                Err(e) => return Err(e.into()),
            };
            let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
            let map = if len == 0 {
                None
            } else {
                // SAFETY: the map is read only while this import runs; like
                // every mmap-based reader, its bytes are sound as long as no
                // other program writes or truncates the checkpoint file
                // meanwhile (the converter's own reader has the same caveat).
                #[allow(unsafe_code)]
                let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(&path, e))?;
                Some(map)
            };
            parts.push(Part { path, map });
        }
        let checkpoint = Checkpoint { parts };
        if let Some(index) = index {
            checkpoint.check_index(index_path, index)?;
        }
        Ok(checkpoint)
    }

    /// The tensors of every file, in the converter's order.
    pub fn tensors(&self) -> Result<Vec<SourceTensor<'_>>> {
        let mut out = Vec::new();
        for part in &self.parts {
            let bytes: &[u8] = part.map.as_deref().unwrap_or(&[]);
            let st = SafeTensors::deserialize(bytes).map_err(|e| {
                checkpoint_error(&part.path, format!("not a valid safetensors file: {e}"))
            })?;
            let mut views = st.tensors();
            views.sort_by(|a, b| a.0.cmp(&b.0));
            for (name, view) in views {
                let dtype = match view.dtype() {
                    Dtype::F32 => SourceType::F32,
                    Dtype::F16 => SourceType::F16,
                    Dtype::BF16 => SourceType::BF16,
                    Dtype::F8_E4M3 => SourceType::F8E4M3,
                    Dtype::F8_E5M2 => SourceType::F8E5M2,
                    Dtype::U8 => SourceType::U8,
                    other => {
                        return Err(Error::Import(ImportError::Tensor {
                            file: part.path.clone(),
                            tensor: name,
                            reason: format!(
                                "data type {other:?} is not supported (F32, F16, BF16, and the FP8 and MXFP4 layouts of quantized checkpoints are)"
                            ),
                        }))
                    }
                };
                out.push(SourceTensor {
                    name,
                    file: &part.path,
                    dtype,
                    shape: view.shape().iter().map(|&d| d as u64).collect(),
                    data: view.data(),
                    map: part.map.as_ref(),
                    scale: None,
                });
            }
        }
        Ok(out)
    }

    /// The index and the files list the same tensors.
    fn check_index(&self, index_path: &Path, index: &BTreeMap<String, String>) -> Result<()> {
        let mut seen = BTreeSet::new();
        for part in &self.parts {
            let bytes: &[u8] = part.map.as_deref().unwrap_or(&[]);
            let (_, meta) = SafeTensors::read_metadata(bytes).map_err(|e| {
                checkpoint_error(&part.path, format!("not a valid safetensors file: {e}"))
            })?;
            for name in meta.tensors().into_keys() {
                if !index.contains_key(&name) {
                    return Err(Error::Import(ImportError::Tensor {
                        file: part.path.clone(),
                        tensor: name,
                        reason: format!("not listed in {INDEX}"),
                    }));
                }
                seen.insert(name);
            }
        }
        if let Some((tensor, file)) = index.iter().find(|(t, _)| !seen.contains(*t)) {
            return Err(checkpoint_error(
                index_path,
                format!("tensor {tensor:?} is placed in {file:?}, which does not hold it (an incomplete or mismatched shard)"),
            ));
        }
        Ok(())
    }
}

/// The `weight_map` of an index: tensor name -> file name.
fn read_index(path: &Path) -> Result<BTreeMap<String, String>> {
    let json = read_json(path)?;
    let Some(map) = json.get("weight_map").and_then(|m| m.as_object()) else {
        return Err(checkpoint_error(path, "no \"weight_map\" object".into()));
    };
    map.iter()
        .map(|(tensor, file)| match file.as_str() {
            Some(f) => Ok((tensor.clone(), f.to_owned())),
            None => Err(checkpoint_error(
                path,
                format!("weight_map[{tensor:?}] is {file}, not a file name"),
            )),
        })
        .collect()
}
