//! `gguf estimate MODEL [llama.cpp flags] [--json] [--fit SIZE]`.

use std::path::PathBuf;

use gguf::estimate::{fit, Device, Estimate, FlashAttn, Settings};
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
    /// Say how a remote model was fetched (requests, bytes, time).
    #[arg(long, short)]
    verbose: bool,
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
    /// KV cache type of K (f16, q8_0, ...).
    #[arg(long = "cache-type-k", visible_alias = "ctk", default_value = "f16", value_parser = cache_type)]
    cache_type_k: GgmlType,
    /// KV cache type of V (quantized types need flash attention).
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
    /// that fits in SIZE per device, e.g. 24G, 512M (binary units).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    fit: Option<u64>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `-ctk q8_0`: llama.cpp's lower-case type names.
fn cache_type(name: &str) -> Result<GgmlType, String> {
    GgmlType::from_name(&name.to_ascii_uppercase())
        .or_else(|| GgmlType::from_name(name))
        .ok_or_else(|| format!("unknown cache type {name:?}"))
}

/// `24G`, `512M`, `1.5G`, plain bytes: binary units, as memory is sold
/// to llama.cpp users in GiB.
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text
        .trim()
        .trim_end_matches(['B', 'b'])
        .trim_end_matches(['i']);
    let (num, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        Some('T' | 't') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let v: f64 = num.parse().map_err(|_| format!("bad size {text:?}"))?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("bad size {text:?}"));
    }
    Ok((v * mult as f64) as u64)
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
    Settings {
        n_ctx: a.ctx_size,
        n_batch: a.batch_size,
        n_ubatch: a.ubatch_size,
        n_parallel: a.parallel,
        flash_attn: a.flash_attn,
        type_k: a.cache_type_k,
        type_v: a.cache_type_v,
        swa_full: a.swa_full,
        kv_unified: a.kv_unified,
        n_gpu_layers: a.n_gpu_layers,
        tensor_split: a.tensor_split.clone(),
        no_kv_offload: a.no_kv_offload,
        no_mmap: a.no_mmap,
        embeddings: false,
    }
}

fn mib(b: u64) -> String {
    format!("{:.2} MiB", b as f64 / 1024.0 / 1024.0)
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let file = crate::open::open_model(&args.model, None, args.verbose)?;
    let s = settings(&args);
    let named = |e: gguf::Error| format!("{}: {e}", args.model.display());
    let est = Estimate::of(&file, &s).map_err(named)?;
    let fitted = match args.fit {
        Some(size) => Some((size, fit(&file, &s, size).map_err(named)?)),
        None => None,
    };
    let out = if args.json {
        let mut doc = to_json(&est);
        if let Some((budget, f)) = &fitted {
            doc["fit"] = json!({
                "budget_bytes": budget,
                "max_ctx": f.max_ctx,
                "max_gpu_layers": f.max_gpu_layers,
            });
        }
        serde_json::to_string_pretty(&doc)?
    } else {
        let mut text = to_text(&est);
        if let Some((budget, f)) = &fitted {
            use std::fmt::Write;
            let _ = write!(text, "\n\nfit in {}:", mib(*budget));
            match f.max_ctx {
                Some(c) => {
                    let _ = write!(text, "\n  largest context     {c}");
                }
                None => {
                    let _ = write!(text, "\n  largest context     none fits");
                }
            }
            if let Some(n) = f.max_gpu_layers {
                let _ = write!(text, "\n  most GPU layers     {n} (at -c {})", est.n_ctx);
            }
        }
        text
    };
    crate::print(&out)
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
        },
        "caches": caches,
        "devices": devices,
    })
}

fn to_text(e: &Estimate) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let p = &e.params;
    let _ = writeln!(
        s,
        "{} params, {:.2} BPW; n_ctx {} (per sequence {}), n_batch {}, n_ubatch {}, {} sequence(s), flash attention {}",
        gguf::summary::ModelSummary::format_count(e.summary.parameters),
        e.summary.bits_per_weight,
        p.n_ctx,
        p.n_ctx_seq,
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
        let _ = Device::Cpu;
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
