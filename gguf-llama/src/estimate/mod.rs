//! What llama.cpp will allocate to run a model: [`Estimate`].
//!
//! Each step mirrors one allocation of llama.cpp (the version vendored by
//! llama-cpp-python 0.3.36), as a small function named after it: the
//! context parameters it derives ([`context_params`]), the device of each
//! layer ([`layer_devices`]), the model buffers ([`model_buffers`]), the KV
//! cache ([`kv_cache`]) or recurrent state ([`recurrent_state`]), the
//! output buffer ([`output_buffer`]) and the compute buffer
//! ([`compute_buffer`], a model of ggml's graph reservation). Like the
//! [summary](crate::summary), everything is computed from the header.
//!
//! ```
//! # fn main() -> gguf_llama::Result<()> {
//! use gguf_core::{write::Builder, GgmlType, GgufFile};
//! use gguf_llama::estimate::{Estimate, Settings};
//! // A llama-shaped header: 2 layers, 64 wide, 4 query heads, 2 KV heads.
//! let mut b = Builder::new();
//! b.set("general.architecture", "llama")?;
//! for (key, v) in [("context_length", 256u32), ("embedding_length", 64), ("block_count", 2),
//!                  ("feed_forward_length", 128), ("attention.head_count", 4),
//!                  ("attention.head_count_kv", 2)] {
//!     b.set(format!("llama.{key}"), v)?;
//! }
//! b.set("llama.attention.layer_norm_rms_epsilon", 1e-5f32)?;
//! b.add_tensor("token_embd.weight", GgmlType::F32, &[64, 8], vec![0u8; 64 * 8 * 4])?;
//! let bytes = b.to_vec()?;
//! let file = GgufFile::open(&bytes)?;
//! let e = Estimate::of(&file, &Settings::default().n_ctx(300))?;
//! assert_eq!(e.n_ctx, 512); // padded to a multiple of 256
//! // 2 layers x 2 KV heads x 16-wide heads x 512 cells x f16, K and V.
//! assert_eq!(e.kv_cache_bytes, 2 * 2 * 16 * 512 * 2 * 2);
//! assert!(e.total_bytes() > e.weights_bytes);
//! # Ok(()) }
//! ```

mod compute;
mod model;
mod settings;

pub use compute::compute_buffer;
pub use model::{MemoryKind, ModelShape};
pub use settings::{kv_cache_type_names, FlashAttn, Settings, KV_CACHE_TYPES};

use crate::error::{Error, Result};
use crate::summary::ModelSummary;
use gguf_core::format::align_up;
use gguf_core::GgmlType;
use gguf_core::Gguf;

/// A device llama.cpp allocates on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Device {
    /// Host memory.
    Cpu,
    /// GPU number `n` (in `-ts` order).
    Gpu(usize),
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Cpu => write!(f, "CPU"),
            Device::Gpu(n) => write!(f, "GPU{n}"),
        }
    }
}

/// The context parameters llama.cpp derives from the settings
/// (`llama_context` constructor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextParams {
    /// `n_ctx` after padding.
    pub n_ctx: u32,
    /// Cells per sequence (`n_ctx_seq`).
    pub n_ctx_seq: u32,
    /// `n_batch`, limited by the context.
    pub n_batch: u32,
    /// `n_ubatch`, limited by `n_batch`.
    pub n_ubatch: u32,
    /// `n_seq_max`.
    pub n_seq_max: u32,
    /// Whether flash attention is on.
    pub flash_attn: bool,
}

/// llama.cpp's `llama_context` constructor: `n_ctx` 0 takes the training
/// context; `n_batch` is capped by the (unpadded) context for causal
/// models and `n_ubatch` by `n_batch`; then `n_ctx` is padded to a multiple
/// of 256, and without a unified cache each sequence gets
/// `pad(n_ctx / n_seq_max, 256)` cells and `n_ctx` becomes that times
/// `n_seq_max`. Flash attention `auto` resolves to on (CPU and the main
/// GPU backends implement it).
pub fn context_params(shape: &ModelShape, s: &Settings) -> Result<ContextParams> {
    let n_seq_max = s.n_parallel.max(1);
    let requested = if s.n_ctx == 0 {
        shape.n_ctx_train
    } else {
        s.n_ctx
    };
    let n_batch = requested.min(s.n_batch);
    let n_ubatch = n_batch.min(if s.n_ubatch == 0 { n_batch } else { s.n_ubatch });
    let pad256 = |v: u32| v.div_ceil(256).saturating_mul(256);
    let mut n_ctx = pad256(requested);
    let n_ctx_seq = if s.kv_unified {
        n_ctx
    } else {
        let per_seq = pad256(n_ctx / n_seq_max);
        if per_seq == 0 {
            return Err(Error::Estimate {
                reason: "n_ctx_seq == 0: the context is too small for the sequences".into(),
            });
        }
        n_ctx = per_seq.saturating_mul(n_seq_max);
        per_seq
    };
    if n_batch == 0 || n_ubatch == 0 {
        return Err(Error::Estimate {
            reason: "batch sizes must be at least 1".into(),
        });
    }
    Ok(ContextParams {
        n_ctx,
        n_ctx_seq,
        n_batch,
        n_ubatch,
        n_seq_max,
        flash_attn: s.flash_attn != FlashAttn::Off,
    })
}

/// llama.cpp's `load_tensors` layer placement: the last `-ngl` of the
/// `n_layer + 1` slots (the extra one is the output layer) go to the GPUs,
/// `i_gpu_start = max(n_layer + 1 - ngl, 0)`; slot `il` goes to the first
/// GPU whose cumulative `-ts` share exceeds `(il - i_gpu_start) / n_gpu`.
/// Returns the device of every layer and, last, of the output layer. The
/// input layer (token embeddings) always stays on the CPU.
pub fn layer_devices(shape: &ModelShape, s: &Settings) -> Vec<Device> {
    let n_layer = shape.n_layer_all as i64;
    let gpus = s.gpus();
    let ngl = if s.n_gpu_layers < 0 {
        n_layer + 1
    } else {
        i64::from(s.n_gpu_layers)
    };
    let i_gpu_start = (n_layer + 1 - ngl).max(0);
    let act_gpu_layers = if gpus == 0 { 0 } else { ngl.min(n_layer + 1) };
    let mut splits: Vec<f64> = s
        .tensor_split
        .iter()
        .map(|&x| f64::from(x.max(0.0)))
        .collect();
    if splits.iter().all(|&x| x == 0.0) {
        // llama.cpp splits by free memory; with nothing known, evenly.
        splits.iter_mut().for_each(|x| *x = 1.0);
    }
    let total: f64 = splits.iter().sum();
    let mut acc = 0.0;
    let cumulative: Vec<f64> = splits
        .iter()
        .map(|x| {
            acc += x;
            acc / total
        })
        .collect();
    (0..=n_layer)
        .map(|il| {
            if il < i_gpu_start || il - i_gpu_start >= act_gpu_layers {
                return Device::Cpu;
            }
            let frac = (il - i_gpu_start) as f64 / act_gpu_layers as f64;
            // std::upper_bound: the first split strictly greater.
            let gpu = cumulative
                .iter()
                .position(|&c| c > frac)
                .unwrap_or(gpus - 1);
            Device::Gpu(gpu.min(gpus - 1))
        })
        .collect()
}

/// The device a tensor is loaded to: `blk.N.*` follows its layer, the
/// input embeddings stay on the CPU, everything else (output norm and
/// head) follows the output layer.
fn tensor_device(name: &str, devices: &[Device]) -> Device {
    let output = devices.last().copied().unwrap_or(Device::Cpu);
    if let Some(rest) = name.strip_prefix("blk.") {
        let layer = rest.split('.').next().and_then(|n| n.parse::<usize>().ok());
        return layer
            .and_then(|il| devices.get(il))
            .copied()
            .unwrap_or(output);
    }
    let input = [
        "token_embd.",
        "token_types.",
        "position_embd.",
        "per_layer_token_embd.",
    ];
    if input.iter().any(|p| name.starts_with(p)) {
        return Device::Cpu;
    }
    output
}

/// Alignment of a GPU buffer (CUDA's buffer type aligns tensors to 128).
const GPU_ALIGNMENT: u64 = 128;
/// Alignment of a CPU buffer (ggml's `TENSOR_ALIGNMENT`).
const CPU_ALIGNMENT: u64 = 32;

/// llama.cpp's model buffers, per device. On the CPU with mmap (the
/// default) the buffer is the mapped file range from the first CPU
/// tensor's data to the end of the last (`get_mapping_range`, per file);
/// with `--no-mmap` it is allocated, every tensor padded to the buffer's
/// alignment (`ggml_backend_alloc_ctx_tensors_from_buft`). GPU buffers are
/// allocated the same way. A tied output layer ([`ModelShape::tied_output`])
/// on a GPU adds a second copy of the token embeddings to that GPU's
/// buffer; on the CPU it is the input's tensor and costs nothing more.
/// Tensors the CPU backend repacks (`CPU_REPACK`, which depends on the
/// CPU's instruction set) are not modelled.
pub fn model_buffers(
    model: &(impl Gguf + ?Sized),
    shape: &ModelShape,
    devices: &[Device],
    s: &Settings,
) -> Vec<(Device, u64)> {
    let mut out: Vec<(Device, u64)> = Vec::new();
    let mut add = |d: Device, n: u64| match out.iter_mut().find(|(x, _)| *x == d) {
        Some((_, v)) => *v += n,
        None => out.push((d, n)),
    };
    // (shard, first, last) of the CPU tensors, for the mapped range.
    let mut ranges: Vec<(usize, u64, u64)> = Vec::new();
    for (shard, t) in model.tensors_with_shard() {
        let dev = tensor_device(t.name(), devices);
        let bytes = t.byte_size().unwrap_or(0);
        match dev {
            Device::Cpu if !s.no_mmap => {
                let at = t.file_offset();
                let end = at.saturating_add(bytes);
                match ranges.iter_mut().find(|r| r.0 == shard) {
                    Some(r) => {
                        r.1 = r.1.min(at);
                        r.2 = r.2.max(end);
                    }
                    None => ranges.push((shard, at, end)),
                }
            }
            Device::Cpu => add(dev, align_up(bytes, CPU_ALIGNMENT).unwrap_or(bytes)),
            Device::Gpu(_) => add(dev, align_up(bytes, GPU_ALIGNMENT).unwrap_or(bytes)),
        }
    }
    for (_, first, last) in ranges {
        add(Device::Cpu, last - first);
    }
    let output = devices.last().copied().unwrap_or(Device::Cpu);
    if let (Some(bytes), Device::Gpu(_)) = (shape.tied_output, output) {
        add(output, align_up(bytes, GPU_ALIGNMENT).unwrap_or(bytes));
    }
    out.sort();
    out
}

/// One cache of a model: the full-attention cache, the sliding-window
/// cache, or the recurrent state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKind {
    /// `kv`, `kv_swa` or `recurrent`.
    pub name: &'static str,
    /// Cells (tokens, or sequences for recurrent state).
    pub cells: u32,
    /// Layers holding this cache.
    pub layers: u32,
    /// Bytes of K (or of the recurrent R state).
    pub k_bytes: u64,
    /// Bytes of V (or of the recurrent S state).
    pub v_bytes: u64,
    /// Bytes per device.
    pub per_device: Vec<(Device, u64)>,
}

impl CacheKind {
    /// K plus V.
    pub fn bytes(&self) -> u64 {
        self.k_bytes + self.v_bytes
    }
}

/// Bytes of `rows` rows of `width` elements of `ty` (`ggml_row_size`),
/// or an error when the type's blocks do not divide the row (llama.cpp
/// asserts then).
fn row_bytes(ty: GgmlType, width: u64, rows: u64) -> Result<u64> {
    let (Some(block), Some(size)) = (ty.block_size(), ty.type_size()) else {
        return Err(Error::Estimate {
            reason: format!("cache type {ty} has no known size"),
        });
    };
    if !width.is_multiple_of(block) {
        return Err(Error::Estimate {
            reason: format!(
                "cache type {ty}: rows of {width} are not a multiple of its {block}-element blocks"
            ),
        });
    }
    Ok(width / block * size * rows)
}

/// llama.cpp's KV cache (`llama_kv_cache` constructor; `llama_kv_cache_iswa`
/// for models with sliding-window layers). Every layer with a cache gets
/// K `[n_embd_k_gqa(il), cells, n_stream]` of `-ctk` and V
/// `[n_embd_v_gqa(il), cells, n_stream]` of `-ctv` (without flash
/// attention V is transposed and every layer padded to the widest; MLA
/// models store no V). Full-attention layers have `n_ctx_seq` cells (times
/// the streams: one per sequence unless unified); sliding-window layers
/// have `pad(min(n_ctx_seq, n_swa * (unified ? n_seq : 1) + n_ubatch), 256)`
/// unless `--swa-full`. NextN layers are skipped. A cache lives on its
/// layer's device unless `--no-kv-offload`.
pub fn kv_cache(
    shape: &ModelShape,
    cp: &ContextParams,
    s: &Settings,
    devices: &[Device],
) -> Result<Vec<CacheKind>> {
    for (ty, flag) in [(s.type_k, "-ctk"), (s.type_v, "-ctv")] {
        if !KV_CACHE_TYPES.contains(&ty) {
            return Err(Error::Estimate {
                reason: format!(
                    "{flag} {}: llama.cpp refuses this cache type; it accepts {}",
                    ty.name()
                        .map_or_else(|| ty.to_string(), str::to_ascii_lowercase),
                    kv_cache_type_names()
                ),
            });
        }
    }
    if !cp.flash_attn && s.type_v.type_size().is_some() && !s.type_v.is_plain() {
        return Err(Error::Estimate {
            reason: "quantized V cache was requested, but this requires Flash Attention".into(),
        });
    }
    check_head_blocks(shape, s)?;
    let n_stream = if s.kv_unified { 1 } else { cp.n_seq_max };
    let size_base = cp.n_ctx_seq;
    let size_swa = if s.swa_full {
        size_base
    } else {
        let per = shape
            .n_swa
            .saturating_mul(if s.kv_unified { cp.n_seq_max } else { 1 });
        let v = size_base.min(per.saturating_add(cp.n_ubatch));
        v.div_ceil(256).saturating_mul(256)
    };
    let v_trans = !cp.flash_attn;
    let v_max = shape.n_embd_v_gqa_max();
    let mut kinds = Vec::new();
    let groups: &[(bool, &'static str, u32)] = if shape.has_swa() {
        &[(false, "kv", size_base), (true, "kv_swa", size_swa)]
    } else {
        &[(false, "kv", size_base)]
    };
    for &(swa, name, cells) in groups {
        let rows = u64::from(cells) * u64::from(n_stream);
        let mut kind = CacheKind {
            name,
            cells,
            layers: 0,
            k_bytes: 0,
            v_bytes: 0,
            per_device: Vec::new(),
        };
        for il in 0..shape.n_layer() as usize {
            if shape.is_swa(il) != swa {
                continue;
            }
            let k = row_bytes(s.type_k, shape.n_embd_k_gqa(il), rows)?;
            let v = if shape.mla.is_some() {
                0
            } else {
                let width = if v_trans {
                    v_max
                } else {
                    shape.n_embd_v_gqa(il)
                };
                row_bytes(s.type_v, width, rows)?
            };
            kind.layers += 1;
            kind.k_bytes += k;
            kind.v_bytes += v;
            let dev = if s.no_kv_offload {
                Device::Cpu
            } else {
                devices.get(il).copied().unwrap_or(Device::Cpu)
            };
            add_to(&mut kind.per_device, dev, k + v);
        }
        kinds.push(kind);
    }
    Ok(kinds)
}

/// `llama_init_from_model`'s check: a quantized cache type's block must
/// divide every layer's key (or value) head width, else the context is
/// refused.
fn check_head_blocks(shape: &ModelShape, s: &Settings) -> Result<()> {
    for (ty, what) in [(s.type_k, "K"), (s.type_v, "V")] {
        let Some(block) = ty.block_size().filter(|&b| b > 1) else {
            continue;
        };
        for il in 0..shape.n_layer() as usize {
            let head = u64::from(if what == "K" {
                shape.head_k(il)
            } else {
                shape.head_v(il)
            });
            if !head.is_multiple_of(block) {
                return Err(Error::Estimate {
                    reason: format!(
                        "{what} cache type {ty} with block size {block} does not divide the head width {head} of layer {il}"
                    ),
                });
            }
        }
    }
    Ok(())
}

/// llama.cpp's recurrent memory (`llama_memory_recurrent`): per layer an R
/// tensor of `n_embd_r` and an S tensor of `n_embd_s` floats for each of
/// `max(1, n_seq_max)` cells.
pub fn recurrent_state(
    shape: &ModelShape,
    cp: &ContextParams,
    s: &Settings,
    devices: &[Device],
) -> CacheKind {
    let cells = cp.n_seq_max.max(1);
    let (r, st) = shape.recurrent;
    let mut kind = CacheKind {
        name: "recurrent",
        cells,
        layers: shape.n_layer(),
        k_bytes: 0,
        v_bytes: 0,
        per_device: Vec::new(),
    };
    for il in 0..shape.n_layer() as usize {
        let rb = r * u64::from(cells) * 4;
        let sb = st * u64::from(cells) * 4;
        kind.k_bytes += rb;
        kind.v_bytes += sb;
        let dev = if s.no_kv_offload {
            Device::Cpu
        } else {
            devices.get(il).copied().unwrap_or(Device::Cpu)
        };
        add_to(&mut kind.per_device, dev, rb + sb);
    }
    kind
}

/// llama.cpp's output buffer (`output_reserve(n_seq_max)` at context
/// creation): logits for `max(n_seq_max, n_seq_max)` outputs of `n_vocab`
/// floats, plus `n_embd` floats each when embeddings are on. It lives in
/// host memory.
pub fn output_buffer(shape: &ModelShape, cp: &ContextParams, s: &Settings) -> u64 {
    let n_outputs = u64::from(cp.n_seq_max);
    let embd = if s.embeddings {
        u64::from(shape.n_embd)
    } else {
        0
    };
    (shape.n_vocab + embd) * n_outputs * 4
}

fn add_to(list: &mut Vec<(Device, u64)>, dev: Device, n: u64) {
    match list.iter_mut().find(|(d, _)| *d == dev) {
        Some((_, v)) => *v += n,
        None => list.push((dev, n)),
    }
    list.sort();
}

/// What one device holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceUsage {
    /// The device.
    pub device: Device,
    /// Model weights.
    pub weights: u64,
    /// KV cache or recurrent state.
    pub kv_cache: u64,
    /// Output buffer (host only).
    pub output: u64,
    /// Compute buffer.
    pub compute: u64,
}

impl DeviceUsage {
    /// Everything on the device.
    pub fn total(&self) -> u64 {
        self.weights + self.kv_cache + self.output + self.compute
    }
}

/// What llama.cpp allocates for a model at given settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The model's summary.
    pub summary: ModelSummary,
    /// The derived context parameters.
    pub params: ContextParams,
    /// Context size after padding (`n_ctx`).
    pub n_ctx: u32,
    /// The model's training context (`n_ctx_train`).
    pub n_ctx_train: u32,
    /// Weights, all devices.
    pub weights_bytes: u64,
    /// The caches (full, sliding-window, recurrent).
    pub caches: Vec<CacheKind>,
    /// KV cache or recurrent state, all devices.
    pub kv_cache_bytes: u64,
    /// Output buffer.
    pub output_buffer_bytes: u64,
    /// Compute buffers, all devices.
    pub compute_buffer_bytes: u64,
    /// Per device, CPU first.
    pub devices: Vec<DeviceUsage>,
    /// Device of each layer, the output layer last.
    pub layer_devices: Vec<Device>,
}

impl Estimate {
    /// Estimates a model at `settings`.
    pub fn of(model: &(impl Gguf + ?Sized), settings: &Settings) -> Result<Self> {
        let summary = ModelSummary::of(model)?;
        let shape = ModelShape::of(model, &summary)?;
        Self::with_shape(model, summary, &shape, settings)
    }

    /// Estimates with an already derived shape (for repeated estimates
    /// such as [`fit`]).
    pub fn with_shape(
        model: &(impl Gguf + ?Sized),
        summary: ModelSummary,
        shape: &ModelShape,
        settings: &Settings,
    ) -> Result<Self> {
        let cp = context_params(shape, settings)?;
        let layer_devs = layer_devices(shape, settings);
        let weights = model_buffers(model, shape, &layer_devs, settings);
        let caches = match shape.memory {
            MemoryKind::Kv => kv_cache(shape, &cp, settings, &layer_devs)?,
            MemoryKind::Recurrent => vec![recurrent_state(shape, &cp, settings, &layer_devs)],
            MemoryKind::None => Vec::new(),
        };
        let output = output_buffer(shape, &cp, settings);
        let compute = compute_buffer(shape, &cp, settings, &caches, &layer_devs);

        let mut all: Vec<Device> = vec![Device::Cpu];
        all.extend((0..settings.gpus()).map(Device::Gpu));
        let get = |list: &[(Device, u64)], d: Device| {
            list.iter()
                .filter(|(x, _)| *x == d)
                .map(|(_, v)| *v)
                .sum::<u64>()
        };
        let devices: Vec<DeviceUsage> = all
            .into_iter()
            .map(|d| DeviceUsage {
                device: d,
                weights: get(&weights, d),
                kv_cache: caches.iter().map(|c| get(&c.per_device, d)).sum(),
                output: if d == Device::Cpu { output } else { 0 },
                compute: get(&compute, d),
            })
            .collect();
        Ok(Estimate {
            summary,
            n_ctx: cp.n_ctx,
            n_ctx_train: shape.n_ctx_train,
            params: cp,
            weights_bytes: weights.iter().map(|(_, v)| v).sum(),
            kv_cache_bytes: caches.iter().map(CacheKind::bytes).sum(),
            output_buffer_bytes: output,
            compute_buffer_bytes: compute.iter().map(|(_, v)| v).sum(),
            caches,
            devices,
            layer_devices: layer_devs,
        })
    }

    /// Everything, all devices.
    pub fn total_bytes(&self) -> u64 {
        self.devices.iter().map(DeviceUsage::total).sum()
    }

    /// Whether each sequence gets more cells than the model's training
    /// context: llama.cpp then warns of a "possible training context
    /// overflow" (and llama-server caps each slot at the training context,
    /// the cache still allocated at the full size).
    pub fn exceeds_training_context(&self) -> bool {
        self.params.n_ctx_seq > self.n_ctx_train
    }
}

/// The answer to `--fit`: what fits in a memory budget, and on which
/// devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fit {
    /// The budget, in bytes per device.
    pub budget: u64,
    /// The devices held to the budget: the CPU (host memory) without
    /// GPUs; with GPUs every GPU, host memory then unchecked.
    pub devices: Vec<Device>,
    /// The largest context (a multiple of 256, at most the training
    /// context) whose estimate fits, if any does; at the settings' `-ngl`.
    pub max_ctx: Option<u32>,
    /// True when `max_ctx` is the training context and a larger context
    /// would fit too: the search stops there, as llama.cpp warns beyond
    /// it.
    pub capped_by_training_ctx: bool,
    /// The model's training context.
    pub n_ctx_train: u32,
    /// With GPUs: the most layers (`-ngl`, the output layer counting as
    /// one) that fit at [`gpu_layers_ctx`](Self::gpu_layers_ctx).
    pub max_gpu_layers: Option<u32>,
    /// Layer slots (`n_layer + 1`: the output layer counts as one).
    pub layer_slots: u32,
    /// The context the GPU layers were fitted at: the settings' context
    /// after padding (not `max_ctx`).
    pub gpu_layers_ctx: u32,
}

/// The largest context, and with GPUs the most offloaded layers, for which
/// every device's total stays within `budget` bytes (CPU only: the CPU
/// total; with GPUs: each GPU's total).
pub fn fit(model: &(impl Gguf + ?Sized), settings: &Settings, budget: u64) -> Result<Fit> {
    let summary = ModelSummary::of(model)?;
    let shape = ModelShape::of(model, &summary)?;
    let gpus = settings.gpus();
    let devices: Vec<Device> = if gpus == 0 {
        vec![Device::Cpu]
    } else {
        (0..gpus).map(Device::Gpu).collect()
    };
    let fits = |s: &Settings| -> Result<bool> {
        let e = Estimate::with_shape(model, summary.clone(), &shape, s)?;
        Ok(e.devices
            .iter()
            .filter(|d| devices.contains(&d.device))
            .all(|d| d.total() <= budget))
    };
    // Contexts in steps of 256 (llama.cpp pads to that anyway); memory
    // grows with the context, so a binary search finds the largest.
    let steps = shape.n_ctx_train.div_ceil(256).max(1);
    let at = |k: u32| Settings {
        n_ctx: k.saturating_mul(256),
        ..settings.clone()
    };
    let max_ctx = if fits(&at(1))? {
        let (mut lo, mut hi) = (1u32, steps);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(&at(mid))? {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some(lo * 256)
    } else {
        None
    };
    let capped_by_training_ctx =
        max_ctx == Some(steps * 256) && fits(&at(steps.saturating_add(1)))?;
    let layer_slots = shape.n_layer_all + 1;
    let max_gpu_layers = if gpus == 0 {
        None
    } else {
        let with = |n: u32| Settings {
            n_gpu_layers: n as i32,
            ..settings.clone()
        };
        let (mut lo, mut hi) = (0u32, layer_slots);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(&with(mid))? {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some(lo)
    };
    Ok(Fit {
        budget,
        devices,
        max_ctx,
        capped_by_training_ctx,
        n_ctx_train: shape.n_ctx_train,
        max_gpu_layers,
        layer_slots,
        gpu_layers_ctx: context_params(&shape, settings)?.n_ctx,
    })
}
