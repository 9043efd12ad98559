//! `gguf estimate MODEL [llama.cpp flags] [--json] [--fit SIZE]`.

use std::path::PathBuf;

use gguf::estimate::{
    fit, kv_cache_type_names, Device, Estimate, Fit, FlashAttn, Settings, KV_CACHE_TYPES,
};
use gguf::GgmlType;
use serde_json::json;

/// Flags carry llama.cpp's names and defaults so they can be pasted from a
/// llama-server command line.
#[derive(clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// The model: a path (any shard of a split model), ollama:NAME[:TAG],
    /// or a URL (http(s)://, hf://, ms://, ollama://, s3://, gs://, az://),
    /// of which only the header is read.
    model: PathBuf,
    #[command(flatten)]
    source: crate::open::SourceArgs,
    /// Context size; 0 takes the model's training context.
    #[arg(short = 'c', long = "ctx-size", default_value_t = 0)]
    ctx_size: u32,
    /// Logical batch size.
    #[arg(short = 'b', long = "batch-size", default_value_t = 2048)]
    batch_size: u32,
    /// Physical batch size.
    #[arg(long = "ubatch-size", visible_alias = "ub", default_value_t = 512)]
    ubatch_size: u32,
    /// Parallel sequences. Defaults to 1, what a program gets from
    /// llama.cpp's library defaults; llama-server may choose more on its
    /// own (pass its -np then).
    #[arg(long = "parallel", visible_alias = "np", default_value_t = 1)]
    parallel: u32,
    /// Flash attention: on, off or auto (auto counts as on).
    #[arg(long = "flash-attn", visible_alias = "fa", default_value = "auto", value_parser = flash_attn)]
    flash_attn: FlashAttn,
    /// KV cache type of K: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl,
    /// q5_0 or q5_1 (what llama.cpp accepts; any case).
    #[arg(long = "cache-type-k", visible_alias = "ctk", default_value = "f16", value_parser = cache_type)]
    cache_type_k: GgmlType,
    /// KV cache type of V, as -ctk (quantized types need flash attention).
    #[arg(long = "cache-type-v", visible_alias = "ctv", default_value = "f16", value_parser = cache_type)]
    cache_type_v: GgmlType,
    /// Full-size cache for sliding-window layers.
    #[arg(long = "swa-full")]
    swa_full: bool,
    /// One KV stream shared by all sequences.
    #[arg(long = "kv-unified", visible_alias = "kvu")]
    kv_unified: bool,
    /// Layers to offload to the GPUs (the output layer counts as one); -1
    /// offloads all. Without -ts no GPU is assumed.
    #[arg(long = "n-gpu-layers", visible_alias = "ngl", default_value_t = -1)]
    n_gpu_layers: i32,
    /// GPUs and their shares, e.g. 3,1 for two GPUs (llama.cpp's -ts).
    #[arg(long = "tensor-split", visible_alias = "ts", value_delimiter = ',')]
    tensor_split: Vec<f32>,
    /// Keep the KV cache in host memory.
    #[arg(long = "no-kv-offload", visible_alias = "nkvo")]
    no_kv_offload: bool,
    /// Load the weights instead of memory-mapping them.
    #[arg(long = "no-mmap")]
    no_mmap: bool,
    /// Print the largest context (and with GPUs the most offloaded layers)
    /// that fit in SIZE: of host RAM without -ts, else per GPU. SIZE needs
    /// a unit: B (bytes), K (KB, KiB), M (MB, MiB), G (GB, GiB) or T (TB,
    /// TiB), binary (1G = 1 GiB), in either case: 24G, 512M, 1.5T.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    fit: Option<u64>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `-ctk q8_0`: one of the cache types llama.cpp accepts, by its name in
/// any case.
fn cache_type(name: &str) -> Result<GgmlType, String> {
    GgmlType::from_name(name)
        .filter(|t| KV_CACHE_TYPES.contains(t))
        .ok_or_else(|| {
            format!(
                "llama.cpp does not take {name:?} as a cache type; it accepts {}",
                kv_cache_type_names()
            )
        })
}

/// `24G`, `512M`, `1.5G`, `1048576B`: a number and a unit, binary (1G =
/// 1 GiB, as memory is sold to llama.cpp users in GiB). A bare number is
/// refused: `--fit 8` could mean 8 GiB or 8 bytes.
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (num, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" => {
            return Err(format!(
                "{text:?} has no unit: write {t}G for {t} GiB or {t}M for {t} MiB (binary \
                 units), or {t}B for bytes"
            ))
        }
        "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "unknown unit {unit:?} in {text:?}: the units are B (bytes), K (KB, KiB), M \
                 (MB, MiB), G (GB, GiB) or T (TB, TiB), binary (1G = 1 GiB)"
            ))
        }
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a size such as 24G or 512M"))?;
    let bytes = v * mult as f64;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64) {
        return Err(format!("{text:?} is not a size this tool can hold"));
    }
    Ok(bytes as u64)
}

/// `-fa on`, as llama.cpp spells it.
fn flash_attn(text: &str) -> Result<FlashAttn, String> {
    match text {
        "on" | "1" | "true" => Ok(FlashAttn::On),
        "off" | "0" | "false" => Ok(FlashAttn::Off),
        "auto" => Ok(FlashAttn::Auto),
        other => Err(format!("expected on, off or auto, got {other:?}")),
    }
}

fn settings(a: &Args) -> Settings {
    Settings::default()
        .n_ctx(a.ctx_size)
        .n_batch(a.batch_size)
        .n_ubatch(a.ubatch_size)
        .n_parallel(a.parallel)
        .flash_attn(a.flash_attn)
        .type_k(a.cache_type_k)
        .type_v(a.cache_type_v)
        .swa_full(a.swa_full)
        .kv_unified(a.kv_unified)
        .n_gpu_layers(a.n_gpu_layers)
        .tensor_split(a.tensor_split.clone())
        .no_kv_offload(a.no_kv_offload)
        .no_mmap(a.no_mmap)
}

fn mib(b: u64) -> String {
    format!("{:.2} MiB", b as f64 / 1024.0 / 1024.0)
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let file = crate::open::open_model(&args.model, &args.source)?;
    let s = settings(&args);
    let named = |e: gguf::llama::Error| format!("{}: {e}", crate::open::shown(&args.model));
    let est = Estimate::of(&file, &s).map_err(named)?;
    if est.exceeds_training_context() {
        crate::message(&format!(
            "gguf: {}: warning: {} cells per sequence exceed the model's training context of {}: \
             llama.cpp warns of a possible training context overflow there (llama-server caps \
             each slot at {}); the figures are for the cache allocated at the full size",
            crate::open::shown(&args.model),
            est.params.n_ctx_seq,
            est.n_ctx_train,
            est.n_ctx_train
        ));
    }
    let fitted = match args.fit {
        Some(budget) => {
            let f = fit(&file, &s, budget).map_err(named)?;
            // When nothing fits, what the smallest context needs.
            let smallest = match f.max_ctx {
                Some(_) => None,
                None => Some(Estimate::of(&file, &s.clone().n_ctx(256)).map_err(named)?),
            };
            Some((f, smallest))
        }
        None => None,
    };
    let out = if args.json {
        let mut doc = to_json(&est);
        if let Some((f, smallest)) = &fitted {
            doc["fit"] = fit_json(f, &s, smallest.as_ref());
        }
        serde_json::to_string_pretty(&doc)?
    } else {
        let mut text = to_text(&est, &s);
        if let Some((f, smallest)) = &fitted {
            text.push_str(&fit_text(f, &s, smallest.as_ref()));
        }
        text
    };
    crate::print(&out)
}

/// What a `--fit` budget applies to: host RAM, or each GPU.
fn fit_scope(f: &Fit) -> String {
    if f.devices == [Device::Cpu] {
        "of host RAM (CPU only: no -ts given, so no GPU is assumed)".to_owned()
    } else {
        let names: Vec<String> = f.devices.iter().map(Device::to_string).collect();
        format!("per GPU ({}; host RAM not checked)", names.join(", "))
    }
}

/// `-ngl -1 (all 19 layer slots on the GPUs)`.
fn ngl_text(s: &Settings, slots: u32) -> String {
    if s.n_gpu_layers < 0 || s.n_gpu_layers as u32 >= slots {
        format!(
            "-ngl {} (all {slots} layer slots on the GPUs)",
            s.n_gpu_layers
        )
    } else {
        format!("-ngl {} (of {slots} layer slots)", s.n_gpu_layers)
    }
}

/// The largest total among the devices held to the budget.
fn largest_need<'e>(e: &'e Estimate, f: &Fit) -> Option<&'e gguf::estimate::DeviceUsage> {
    e.devices
        .iter()
        .filter(|d| f.devices.contains(&d.device))
        .max_by_key(|d| d.total())
}

fn fit_text(f: &Fit, s: &Settings, smallest: Option<&Estimate>) -> String {
    use std::fmt::Write;
    let mut text = format!("\n\nfit in {} {}:", gib(f.budget), fit_scope(f));
    let at_ngl = if f.devices == [Device::Cpu] {
        String::new()
    } else {
        format!(" with {}", ngl_text(s, f.layer_slots))
    };
    let _ = match f.max_ctx {
        Some(c) if f.capped_by_training_ctx => write!(
            text,
            "\n  largest context     {c}{at_ngl}: the model's training context, where the \
             search stops (the budget holds more, but llama.cpp warns past it)"
        ),
        Some(c) => write!(text, "\n  largest context     {c}{at_ngl}"),
        None => match smallest.and_then(|e| largest_need(e, f)) {
            Some(d) => write!(
                text,
                "\n  largest context     none fits{at_ngl}: -c 256 already needs {} on {}",
                mib(d.total()),
                d.device
            ),
            None => write!(text, "\n  largest context     none fits{at_ngl}"),
        },
    };
    if let Some(n) = f.max_gpu_layers {
        let _ = write!(
            text,
            "\n  most GPU layers     -ngl {n} of {} layer slots, at -c {} (the context \
             estimated above)",
            f.layer_slots, f.gpu_layers_ctx
        );
    }
    text
}

fn fit_json(f: &Fit, s: &Settings, smallest: Option<&Estimate>) -> serde_json::Value {
    let gpus = f.devices != [Device::Cpu];
    json!({
        "budget_bytes": f.budget,
        "budget_per_device": f.devices.iter().map(Device::to_string).collect::<Vec<_>>(),
        "host_ram_checked": !gpus,
        "max_ctx": f.max_ctx,
        "max_ctx_n_gpu_layers": gpus.then_some(s.n_gpu_layers),
        "max_ctx_capped_by_training_context": f.capped_by_training_ctx,
        "n_ctx_train": f.n_ctx_train,
        "min_ctx_bytes": smallest.and_then(|e| largest_need(e, f)).map(|d| d.total()),
        "max_gpu_layers": f.max_gpu_layers,
        "max_gpu_layers_at_ctx": gpus.then_some(f.gpu_layers_ctx),
        "layer_slots": f.layer_slots,
    })
}

/// GiB with two decimals from 1 GiB up, MiB below.
fn gib(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.2} GiB", b as f64 / f64::from(1u32 << 30))
    } else {
        mib(b)
    }
}

fn to_json(e: &Estimate) -> serde_json::Value {
    let caches: Vec<_> = e
        .caches
        .iter()
        .map(|c| {
            json!({
                "kind": c.name, "cells": c.cells, "layers": c.layers,
                "k_bytes": c.k_bytes, "v_bytes": c.v_bytes, "bytes": c.bytes(),
            })
        })
        .collect();
    let devices: Vec<_> = e
        .devices
        .iter()
        .map(|d| {
            json!({
                "device": d.device.to_string(),
                "weights_bytes": d.weights,
                "kv_cache_bytes": d.kv_cache,
                "output_buffer_bytes": d.output,
                "compute_buffer_bytes": d.compute,
                "total_bytes": d.total(),
            })
        })
        .collect();
    let p = &e.params;
    json!({
        "parameters": e.summary.parameters,
        "bits_per_weight": e.summary.bits_per_weight,
        "weights_bytes": e.weights_bytes,
        "kv_cache_bytes": e.kv_cache_bytes,
        "output_buffer_bytes": e.output_buffer_bytes,
        "compute_buffer_bytes": e.compute_buffer_bytes,
        "total_bytes": e.total_bytes(),
        "context": {
            "n_ctx": p.n_ctx, "n_ctx_seq": p.n_ctx_seq, "n_batch": p.n_batch,
            "n_ubatch": p.n_ubatch, "n_seq_max": p.n_seq_max, "flash_attn": p.flash_attn,
            "n_ctx_train": e.n_ctx_train,
            "exceeds_training_context": e.exceeds_training_context(),
        },
        "caches": caches,
        "devices": devices,
    })
}

/// The text `gguf estimate` prints (also shown by `gguf report`).
pub fn to_text(e: &Estimate, settings: &Settings) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let p = &e.params;
    let slots = e.layer_devices.len() as u32;
    let devices = match settings.gpus() {
        0 => "devices: CPU only (no -ts given, so no GPU is assumed)".to_owned(),
        n => format!(
            "devices: CPU and {n} GPU{} (-ts), {}",
            if n == 1 { "" } else { "s" },
            ngl_text(settings, slots)
        ),
    };
    let _ = writeln!(
        s,
        "{} params, {:.2} BPW; n_ctx {} (per sequence {}, training {}), n_batch {}, n_ubatch {}, {} sequence(s), flash attention {}\n{devices}",
        gguf::summary::ModelSummary::format_count(e.summary.parameters),
        e.summary.bits_per_weight,
        p.n_ctx,
        p.n_ctx_seq,
        e.n_ctx_train,
        p.n_batch,
        p.n_ubatch,
        p.n_seq_max,
        if p.flash_attn { "on" } else { "off" }
    );
    let _ = writeln!(s, "  weights         {:>12}", mib(e.weights_bytes));
    for c in &e.caches {
        let _ = writeln!(
            s,
            "  {:15} {:>12}  ({} cells, {} layers, K {}, V {})",
            c.name,
            mib(c.bytes()),
            c.cells,
            c.layers,
            mib(c.k_bytes),
            mib(c.v_bytes)
        );
    }
    let _ = writeln!(s, "  output buffer   {:>12}", mib(e.output_buffer_bytes));
    let _ = writeln!(
        s,
        "  compute buffer  {:>12}  (modelled)",
        mib(e.compute_buffer_bytes)
    );
    let _ = write!(s, "  total           {:>12}", mib(e.total_bytes()));
    if e.devices.len() > 1 {
        let _ = write!(s, "\nper device:");
        for d in &e.devices {
            let layers = e.layer_devices.iter().filter(|&&x| x == d.device).count();
            let _ = write!(
                s,
                "\n  {:5} {:>12}  (weights {}, KV {}, output {}, compute {}; {} layer slots)",
                d.device.to_string(),
                mib(d.total()),
                mib(d.weights),
                mib(d.kv_cache),
                mib(d.output),
                mib(d.compute),
                layers
            );
        }
    }
    s
}

/// llama.cpp's multi-letter short flags (`-ub 256`, `-ngl 99`, `-fa on`)
/// rewritten to their long names, so a llama-server command line pastes as
/// is; clap only knows one-letter shorts. Only `gguf estimate`'s arguments
/// are touched.
pub fn normalize_args(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    const SHORTS: &[(&str, &str)] = &[
        ("-ub", "--ubatch-size"),
        ("-np", "--parallel"),
        ("-fa", "--flash-attn"),
        ("-ctk", "--cache-type-k"),
        ("-ctv", "--cache-type-v"),
        ("-ngl", "--n-gpu-layers"),
        ("-ts", "--tensor-split"),
        ("-nkvo", "--no-kv-offload"),
        ("-kvu", "--kv-unified"),
    ];
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    if args.get(1).and_then(|a| a.to_str()) != Some("estimate") {
        return args;
    }
    args.into_iter()
        .map(|a| {
            match a
                .to_str()
                .and_then(|s| SHORTS.iter().find(|(short, _)| *short == s))
            {
                Some((_, long)) => long.into(),
                None => a,
            }
        })
        .collect()
}
