//! `Model.summary()` and `Model.estimate(...)`: the library's
//! `ModelSummary::of` and `Estimate::of` as Python dicts (the keys and
//! values `gguf estimate --json` prints), with nothing computed here.

use gguf::GgmlType;
use gguf_llama::estimate::{Device, Estimate, Fit, FlashAttn, Settings, KV_CACHE_TYPES};
use gguf_llama::summary::ModelSummary;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::GGUFError;

/// The summary as a dict: identity, size and the hyper-parameters that
/// decide memory.
pub(crate) fn summary_dict<'py>(py: Python<'py>, s: &ModelSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("architecture", s.architecture.as_deref())?;
    d.set_item("model_type", s.model_type.as_deref())?;
    d.set_item("name", s.name.as_deref())?;
    d.set_item("parameters", s.parameters)?;
    d.set_item("parameters_text", ModelSummary::format_count(s.parameters))?;
    d.set_item("tensor_bytes", s.tensor_bytes)?;
    d.set_item("bits_per_weight", s.bits_per_weight)?;
    d.set_item("file_type", s.file_type)?;
    d.set_item("file_type_guessed", s.file_type_guessed)?;
    d.set_item("quantization", &s.quantization)?;
    let types = PyDict::new(py);
    for (ty, count) in &s.tensor_types {
        types.set_item(ty.to_string(), count)?;
    }
    d.set_item("tensor_types", types)?;
    d.set_item("context_length", s.context_length)?;
    d.set_item("block_count", s.block_count)?;
    d.set_item("embedding_length", s.embedding_length)?;
    d.set_item("vocab_size", s.vocab_size)?;
    d.set_item("tokenizer_model", s.tokenizer_model.as_deref())?;
    Ok(d)
}

/// What `Model.estimate` takes, as llama.cpp's flags name them.
pub(crate) struct EstimateArgs<'a> {
    pub context: Option<u32>,
    pub batch: Option<u32>,
    pub ubatch: Option<u32>,
    pub parallel: Option<u32>,
    pub flash_attn: Option<&'a str>,
    pub cache_type_k: Option<&'a str>,
    pub cache_type_v: Option<&'a str>,
    pub swa_full: bool,
    pub kv_unified: bool,
    pub n_gpu_layers: Option<i32>,
    pub tensor_split: Option<Vec<f32>>,
    pub no_kv_offload: bool,
    pub no_mmap: bool,
}

/// `-ctk q8_0`: a cache type llama.cpp accepts, by name in any case.
fn cache_type(name: &str) -> PyResult<GgmlType> {
    GgmlType::from_name(name)
        .filter(|t| KV_CACHE_TYPES.contains(t))
        .ok_or_else(|| {
            GGUFError::new_err(format!(
                "llama.cpp does not take {name:?} as a cache type; it accepts {}",
                gguf_llama::estimate::kv_cache_type_names()
            ))
        })
}

/// The library's settings for `args`, its defaults where one is None.
pub(crate) fn settings(args: &EstimateArgs<'_>) -> PyResult<Settings> {
    let mut s = Settings::default();
    if let Some(v) = args.context {
        s = s.n_ctx(v);
    }
    if let Some(v) = args.batch {
        s = s.n_batch(v);
    }
    if let Some(v) = args.ubatch {
        s = s.n_ubatch(v);
    }
    if let Some(v) = args.parallel {
        s = s.n_parallel(v);
    }
    if let Some(text) = args.flash_attn {
        s = s.flash_attn(match text {
            "on" => FlashAttn::On,
            "off" => FlashAttn::Off,
            "auto" => FlashAttn::Auto,
            other => {
                return Err(GGUFError::new_err(format!(
                    "flash_attn: expected 'on', 'off' or 'auto', got {other:?}"
                )))
            }
        });
    }
    if let Some(name) = args.cache_type_k {
        s = s.type_k(cache_type(name)?);
    }
    if let Some(name) = args.cache_type_v {
        s = s.type_v(cache_type(name)?);
    }
    if let Some(v) = args.n_gpu_layers {
        s = s.n_gpu_layers(v);
    }
    if let Some(shares) = &args.tensor_split {
        s = s.tensor_split(shares.clone());
    }
    Ok(s.swa_full(args.swa_full)
        .kv_unified(args.kv_unified)
        .no_kv_offload(args.no_kv_offload)
        .no_mmap(args.no_mmap))
}

/// The largest total among the devices `fit` holds to its budget.
fn largest_need(e: &Estimate, f: &Fit) -> Option<u64> {
    e.devices
        .iter()
        .filter(|d| f.devices.contains(&d.device))
        .map(|d| d.total())
        .max()
}

/// `fit(model, settings, budget)` as the dict `gguf estimate --json
/// --fit` prints under `"fit"`; `smallest` is the estimate at `-c 256`,
/// asked for when nothing fits (what the smallest context needs).
pub(crate) fn fit_dict<'py>(
    py: Python<'py>,
    f: &Fit,
    s: &Settings,
    smallest: Option<&Estimate>,
) -> PyResult<Bound<'py, PyDict>> {
    let gpus = f.devices != [Device::Cpu];
    let d = PyDict::new(py);
    d.set_item("budget_bytes", f.budget)?;
    let devices: Vec<String> = f.devices.iter().map(Device::to_string).collect();
    d.set_item("budget_per_device", devices)?;
    d.set_item("host_ram_checked", !gpus)?;
    d.set_item("max_ctx", f.max_ctx)?;
    d.set_item("max_ctx_n_gpu_layers", gpus.then_some(s.n_gpu_layers))?;
    d.set_item(
        "max_ctx_capped_by_training_context",
        f.capped_by_training_ctx,
    )?;
    d.set_item("n_ctx_train", f.n_ctx_train)?;
    d.set_item("min_ctx_bytes", smallest.and_then(|e| largest_need(e, f)))?;
    d.set_item("max_gpu_layers", f.max_gpu_layers)?;
    d.set_item("max_gpu_layers_at_ctx", gpus.then_some(f.gpu_layers_ctx))?;
    d.set_item("layer_slots", f.layer_slots)?;
    Ok(d)
}

/// The estimate as the dict `gguf estimate --json` prints.
pub(crate) fn estimate_dict<'py>(py: Python<'py>, e: &Estimate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("parameters", e.summary.parameters)?;
    d.set_item("bits_per_weight", e.summary.bits_per_weight)?;
    d.set_item("weights_bytes", e.weights_bytes)?;
    d.set_item("kv_cache_bytes", e.kv_cache_bytes)?;
    d.set_item("output_buffer_bytes", e.output_buffer_bytes)?;
    d.set_item("compute_buffer_bytes", e.compute_buffer_bytes)?;
    d.set_item("total_bytes", e.total_bytes())?;
    let p = &e.params;
    let context = PyDict::new(py);
    context.set_item("n_ctx", p.n_ctx)?;
    context.set_item("n_ctx_seq", p.n_ctx_seq)?;
    context.set_item("n_batch", p.n_batch)?;
    context.set_item("n_ubatch", p.n_ubatch)?;
    context.set_item("n_seq_max", p.n_seq_max)?;
    context.set_item("flash_attn", p.flash_attn)?;
    context.set_item("n_ctx_train", e.n_ctx_train)?;
    context.set_item("exceeds_training_context", e.exceeds_training_context())?;
    d.set_item("context", context)?;
    let caches = PyList::empty(py);
    for c in &e.caches {
        let cache = PyDict::new(py);
        cache.set_item("kind", c.name)?;
        cache.set_item("cells", c.cells)?;
        cache.set_item("layers", c.layers)?;
        cache.set_item("k_bytes", c.k_bytes)?;
        cache.set_item("v_bytes", c.v_bytes)?;
        cache.set_item("bytes", c.bytes())?;
        caches.append(cache)?;
    }
    d.set_item("caches", caches)?;
    let devices = PyList::empty(py);
    for u in &e.devices {
        let device = PyDict::new(py);
        device.set_item("device", u.device.to_string())?;
        device.set_item("weights_bytes", u.weights)?;
        device.set_item("kv_cache_bytes", u.kv_cache)?;
        device.set_item("output_buffer_bytes", u.output)?;
        device.set_item("compute_buffer_bytes", u.compute)?;
        device.set_item("total_bytes", u.total())?;
        devices.append(device)?;
    }
    d.set_item("devices", devices)?;
    Ok(d)
}
