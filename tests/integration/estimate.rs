//! `gguf_llama::summary` and `gguf_llama::estimate` on models built with our
//! Builder (GQA with per-layer KV heads, sliding window, MoE, recurrent)
//! and against figures recorded from llama.cpp (tests/data/estimate_reference.json).

use gguf::estimate::{Estimate, FlashAttn, Settings};
use gguf::summary::{ModelSummary, PerLayer};
use gguf::{
    format::{OwnedArray, OwnedValue},
    write::Builder,
};
use gguf::{GgmlType, Gguf, GgufFile};

/// The one place tests call the Builder's write API: metadata entries and
/// zero-filled tensors, written to bytes.
pub fn build_model(
    kvs: &[(&str, OwnedValue)],
    tensors: &[(String, GgmlType, Vec<u64>)],
) -> Vec<u8> {
    let mut b = Builder::new();
    for (k, v) in kvs {
        b.set(*k, v.clone()).unwrap();
    }
    for (name, ty, shape) in tensors {
        let bytes = gguf::format::tensor_nbytes(*ty, shape).unwrap() as usize;
        b.add_tensor(name.as_str(), *ty, shape, vec![0u8; bytes])
            .unwrap();
    }
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    out
}

fn u32v(v: u32) -> OwnedValue {
    OwnedValue::U32(v)
}

/// A llama-shaped model: `arch`, `n_layer` blocks of width `n_embd`, the
/// given extra keys; attention and FFN tensors per block.
fn transformer(
    arch: &str,
    n_layer: u32,
    n_embd: u64,
    n_vocab: u64,
    extra: &[(&str, OwnedValue)],
) -> Vec<u8> {
    let key = |k: &str| format!("{arch}.{k}");
    let keys: Vec<(String, OwnedValue)> = vec![
        (
            "general.architecture".into(),
            OwnedValue::String(arch.into()),
        ),
        ("general.type".into(), OwnedValue::String("model".into())),
        (key("context_length"), u32v(4096)),
        (key("embedding_length"), u32v(n_embd as u32)),
        (key("block_count"), u32v(n_layer)),
        (key("feed_forward_length"), u32v(512)),
        (key("vocab_size"), u32v(n_vocab as u32)),
    ];
    let mut kvs: Vec<(&str, OwnedValue)> =
        keys.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    kvs.extend(extra.iter().cloned());
    let mut tensors = vec![(
        "token_embd.weight".to_string(),
        GgmlType::F16,
        vec![n_embd, n_vocab],
    )];
    for il in 0..n_layer {
        tensors.push((
            format!("blk.{il}.attn_norm.weight"),
            GgmlType::F32,
            vec![n_embd],
        ));
        tensors.push((
            format!("blk.{il}.attn_q.weight"),
            GgmlType::Q8_0,
            vec![n_embd, n_embd],
        ));
        let ffn = if n_embd.is_multiple_of(256) {
            GgmlType::Q4_K
        } else {
            GgmlType::Q8_0
        };
        tensors.push((format!("blk.{il}.ffn_up.weight"), ffn, vec![n_embd, 512]));
    }
    tensors.push((
        "output_norm.weight".to_string(),
        GgmlType::F32,
        vec![n_embd],
    ));
    build_model(&kvs, &tensors)
}

fn settings(n_ctx: u32, fa: FlashAttn) -> Settings {
    Settings::default().n_ctx(n_ctx).flash_attn(fa)
}

#[test]
fn summary_counts_params_bytes_and_per_layer_heads() {
    let heads_kv = OwnedValue::Array(OwnedArray::U32(vec![2, 4, 2, 1]));
    let bytes = transformer(
        "llama",
        4,
        256,
        1000,
        &[
            ("llama.attention.head_count", u32v(8)),
            ("llama.attention.head_count_kv", heads_kv),
        ],
    );
    let file = GgufFile::open(&bytes).unwrap();
    let s = ModelSummary::of(&file).unwrap();
    let params = 256 * 1000 + 4 * (256 + 256 * 256 + 256 * 512) + 256;
    assert_eq!(s.parameters, params);
    let data =
        256 * 1000 * 2 + 4 * (256 * 4 + 256 * 256 / 32 * 34 + 256 * 512 / 256 * 144) + 256 * 4;
    assert_eq!(s.tensor_bytes, data);
    assert_eq!(
        s.params.head_count_kv,
        Some(PerLayer::Layers(vec![2, 4, 2, 1]))
    );
    // No general.file_type: llama.cpp guesses from the dominant type
    // (F32 5, Q8_0 4, Q4_K 4, F16 1 -> F32 -> "all F32").
    assert_eq!(s.quantization, "(guessed) all F32");
    assert_eq!(s.vocab_size, Some(1000));
}

#[test]
fn kv_cache_follows_per_layer_kv_heads_and_transposed_v_padding() {
    let heads_kv = OwnedValue::Array(OwnedArray::U32(vec![2, 4, 2, 1]));
    let bytes = transformer(
        "llama",
        4,
        256,
        1000,
        &[
            ("llama.attention.head_count", u32v(8)),
            ("llama.attention.head_count_kv", heads_kv),
        ],
    );
    let file = GgufFile::open(&bytes).unwrap();
    // head width 256 / 8 = 32; 300 tokens pad to 512 cells; f16 rows.
    let e = Estimate::of(&file, &settings(300, FlashAttn::On)).unwrap();
    assert_eq!(e.n_ctx, 512);
    let k: u64 = [2, 4, 2, 1].iter().map(|h| h * 32 * 512 * 2).sum();
    assert_eq!(e.caches[0].k_bytes, k);
    assert_eq!(e.caches[0].v_bytes, k);
    // Without flash attention V is transposed, each layer padded to 4 heads.
    let e = Estimate::of(&file, &settings(300, FlashAttn::Off)).unwrap();
    assert_eq!(e.caches[0].v_bytes, 4 * (4 * 32) * 512 * 2);
    // Quantized K: Q8_0 rows of 34 bytes per 32 elements.
    let q = settings(512, FlashAttn::On).type_k(GgmlType::Q8_0);
    let e = Estimate::of(&file, &q).unwrap();
    assert_eq!(
        e.caches[0].k_bytes,
        [2u64, 4, 2, 1].iter().map(|h| h * 34 * 512).sum::<u64>()
    );
    // Quantized V needs flash attention, as llama.cpp refuses it otherwise.
    let bad = settings(512, FlashAttn::Off).type_v(GgmlType::Q8_0);
    assert!(Estimate::of(&file, &bad).is_err());
    // The output buffer: n_vocab floats per sequence.
    assert_eq!(e.output_buffer_bytes, 1000 * 4);
    let four = settings(1000, FlashAttn::On).n_parallel(4);
    let e = Estimate::of(&file, &four).unwrap();
    assert_eq!((e.params.n_ctx, e.params.n_ctx_seq), (1024, 256));
    assert_eq!(e.output_buffer_bytes, 4 * 1000 * 4);
}

#[test]
fn sliding_window_layers_get_the_smaller_cache() {
    let bytes = transformer(
        "gemma3",
        12,
        256,
        1000,
        &[
            ("gemma3.attention.head_count", u32v(4)),
            ("gemma3.attention.head_count_kv", u32v(1)),
            ("gemma3.attention.key_length", u32v(64)),
            ("gemma3.attention.value_length", u32v(64)),
            ("gemma3.attention.sliding_window", u32v(512)),
        ],
    );
    let file = GgufFile::open(&bytes).unwrap();
    let e = Estimate::of(&file, &settings(4096, FlashAttn::On)).unwrap();
    // Pattern 6: layers 5 and 11 are full attention, the other 10 slide.
    assert_eq!(
        (e.caches[0].name, e.caches[0].layers, e.caches[0].cells),
        ("kv", 2, 4096)
    );
    // pad(min(4096, 512 + 512), 256) = 1024 cells.
    assert_eq!(
        (e.caches[1].name, e.caches[1].layers, e.caches[1].cells),
        ("kv_swa", 10, 1024)
    );
    assert_eq!(e.caches[1].k_bytes, 10 * 64 * 1024 * 2);
    let full = settings(4096, FlashAttn::On).swa_full(true);
    assert_eq!(Estimate::of(&file, &full).unwrap().caches[1].cells, 4096);
}

#[test]
fn moe_and_recurrent_models() {
    let bytes = transformer(
        "qwen3moe",
        2,
        128,
        500,
        &[
            ("qwen3moe.attention.head_count", u32v(4)),
            ("qwen3moe.expert_count", u32v(8)),
            ("qwen3moe.expert_used_count", u32v(2)),
        ],
    );
    let file = GgufFile::open(&bytes).unwrap();
    let s = ModelSummary::of(&file).unwrap();
    assert_eq!(
        (s.params.expert_count, s.params.expert_used_count),
        (Some(8), Some(PerLayer::Scalar(2)))
    );
    let e = Estimate::of(&file, &settings(256, FlashAttn::On)).unwrap();
    assert_eq!(e.kv_cache_bytes, 2 * 2 * 128 * 256 * 2);

    // Mamba: R = (d_conv - 1) * d_inner, S = d_state * d_inner floats per
    // layer and sequence; no KV cache.
    let bytes = transformer(
        "mamba",
        3,
        64,
        100,
        &[
            ("mamba.ssm.conv_kernel", u32v(4)),
            ("mamba.ssm.inner_size", u32v(128)),
            ("mamba.ssm.state_size", u32v(16)),
            ("mamba.ssm.time_step_rank", u32v(4)),
        ],
    );
    let file = GgufFile::open(&bytes).unwrap();
    let e = Estimate::of(&file, &settings(512, FlashAttn::On).n_parallel(2)).unwrap();
    assert_eq!(e.caches.len(), 1);
    assert_eq!(e.caches[0].name, "recurrent");
    assert_eq!(e.caches[0].k_bytes, 3 * 3 * 128 * 2 * 4);
    assert_eq!(e.caches[0].v_bytes, 3 * 16 * 128 * 2 * 4);
}

#[test]
fn layers_are_placed_on_gpus_as_llama_cpp_places_them() {
    let bytes = transformer(
        "llama",
        4,
        64,
        100,
        &[("llama.attention.head_count", u32v(4))],
    );
    let file = GgufFile::open(&bytes).unwrap();
    let gpu = |ngl: i32, ts: Vec<f32>| {
        let s = settings(256, FlashAttn::On)
            .n_gpu_layers(ngl)
            .tensor_split(ts);
        Estimate::of(&file, &s).unwrap()
    };
    use gguf::estimate::Device::{Cpu, Gpu};
    // -ngl 2 of 5 slots: layer 3 and the output layer.
    assert_eq!(
        gpu(2, vec![1.0]).layer_devices,
        [Cpu, Cpu, Cpu, Gpu(0), Gpu(0)]
    );
    // All on two GPUs split 3:2 -> fractions 0, .2, .4, .6, .8 against 0.6, 1.0.
    assert_eq!(
        gpu(-1, vec![3.0, 2.0]).layer_devices,
        [Gpu(0), Gpu(0), Gpu(0), Gpu(1), Gpu(1)]
    );
    let e = gpu(-1, vec![1.0]);
    assert_eq!(e.devices[1].kv_cache, e.kv_cache_bytes);
    // The input embeddings stay on the CPU.
    assert_eq!(e.devices[0].weights, 64 * 100 * 2);
}

#[test]
fn fit_finds_the_largest_context() {
    let bytes = transformer(
        "llama",
        4,
        64,
        100,
        &[("llama.attention.head_count", u32v(4))],
    );
    let file = GgufFile::open(&bytes).unwrap();
    let s = settings(0, FlashAttn::On);
    let at = |c: u32| {
        Estimate::of(&file, &s.clone().n_ctx(c))
            .unwrap()
            .total_bytes()
    };
    let budget = at(2048);
    let f = gguf::estimate::fit(&file, &s, budget).unwrap();
    assert_eq!(f.max_ctx, Some(2048));
    assert!(at(2048 + 256) > budget);
}

/// The settings the llama.cpp comparison runs: (ctx, batch, ubatch, flash
/// attention, K type, V type, swa-full).
const LLAMA_SETTINGS: &[(u32, u32, u32, bool, &str, &str, bool)] = &[
    (512, 512, 512, false, "f16", "f16", true),
    (2048, 512, 256, false, "f16", "f16", false),
    (4096, 2048, 512, true, "f16", "f16", false),
    (4096, 1024, 512, true, "q8_0", "q8_0", false),
    (1024, 512, 128, true, "f16", "f16", true),
];

/// llama.cpp's printed MiB figure (two decimals) for a byte count.
fn mib(b: u64) -> String {
    format!("{:.2}", b as f64 / 1024.0 / 1024.0)
}

/// Opt-in: with `GGUF_LLAMA_TOOLS` naming a directory made by the llama
/// tools build script (its `venv/bin/python` has llama-cpp-python), loads
/// the sample (and `GGUF_GEMMA_MODEL`, if set) at several settings and
/// compares llama.cpp's printed figures with ours: parameters, BPW,
/// weights, KV and output exactly (at its print precision), compute within
/// 10%. Prints the figures, for the reference table.
#[test]
fn matches_llama_cpp_allocation() {
    let Ok(tools) = std::env::var("GGUF_LLAMA_TOOLS") else {
        eprintln!(
            "skipped: set GGUF_LLAMA_TOOLS to the llama tools directory to compare with llama.cpp"
        );
        return;
    };
    let python = std::path::Path::new(&tools).join("venv/bin/python");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracles/llama_alloc.py");
    let mut models =
        vec![concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf").to_string()];
    models.extend(std::env::var("GGUF_GEMMA_MODEL").ok());
    let mut worst = 0.0f64;
    for model in &models {
        let file = GgufFile::open(model).unwrap();
        for &(c, b, ub, fa, tk, tv, swa_full) in LLAMA_SETTINGS {
            let s = Settings::default()
                .n_ctx(c)
                .n_batch(b)
                .n_ubatch(ub)
                .flash_attn(if fa { FlashAttn::On } else { FlashAttn::Off })
                .type_k(GgmlType::from_name(&tk.to_uppercase()).unwrap())
                .type_v(GgmlType::from_name(&tv.to_uppercase()).unwrap())
                .swa_full(swa_full);
            let cfg = serde_json::json!({"n_ctx": c, "n_batch": b, "n_ubatch": ub, "flash_attn": fa,
                "type_k": tk, "type_v": tv, "swa_full": swa_full});
            let out = std::process::Command::new(&python)
                .args([script, model, &cfg.to_string()])
                .output()
                .unwrap();
            let ours = Estimate::of(&file, &s);
            if !out.status.success() {
                // llama.cpp refused the settings (say a quantized cache type
                // whose blocks do not divide the head width): so must we.
                println!("{model} {cfg}: llama.cpp refused; ours: {ours:?}");
                assert!(ours.is_err(), "{}", String::from_utf8_lossy(&out.stderr));
                continue;
            }
            let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let e = ours.unwrap();
            println!("{model} {cfg}: llama.cpp {got}");
            println!(
                "  ours: params {} bpw {:.2} weights {} kv {:?} output {} compute {}",
                ModelSummary::format_count(e.summary.parameters),
                e.summary.bits_per_weight,
                mib(e.weights_bytes),
                e.caches.iter().map(|k| mib(k.bytes())).collect::<Vec<_>>(),
                mib(e.output_buffer_bytes),
                mib(e.compute_buffer_bytes)
            );
            assert_eq!(
                got["model_params"],
                ModelSummary::format_count(e.summary.parameters)
            );
            assert_eq!(
                format!("{:.2}", got["bpw"][0].as_f64().unwrap()),
                format!("{:.2}", e.summary.bits_per_weight)
            );
            assert_eq!(
                format!("{:.2}", got["model_buffer_mib"][0].as_f64().unwrap()),
                mib(e.weights_bytes)
            );
            let kv: Vec<String> = got["kv_mib"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| format!("{:.2}", v.as_f64().unwrap()))
                .collect();
            assert_eq!(
                kv,
                e.caches.iter().map(|k| mib(k.bytes())).collect::<Vec<_>>()
            );
            assert_eq!(
                format!("{:.2}", got["output_mib"][0].as_f64().unwrap()),
                mib(e.output_buffer_bytes)
            );
            let theirs = got["compute_mib"][0].as_f64().unwrap();
            let ours = e.compute_buffer_bytes as f64 / 1024.0 / 1024.0;
            let err = (ours - theirs).abs() / theirs;
            worst = worst.max(err);
            println!("  compute error {:.1}%", err * 100.0);
        }
    }
    println!("worst compute error {:.1}%", worst * 100.0);
    assert!(worst <= 0.10, "compute buffer off by {:.1}%", worst * 100.0);
}

/// Settings from a reference-table entry.
fn reference_settings(cfg: &serde_json::Value) -> Settings {
    let ty = |k: &str| GgmlType::from_name(&cfg[k].as_str().unwrap().to_uppercase()).unwrap();
    let fa = if cfg["flash_attn"].as_bool().unwrap() {
        FlashAttn::On
    } else {
        FlashAttn::Off
    };
    Settings::default()
        .n_ctx(cfg["n_ctx"].as_u64().unwrap() as u32)
        .n_batch(cfg["n_batch"].as_u64().unwrap() as u32)
        .n_ubatch(cfg["n_ubatch"].as_u64().unwrap() as u32)
        .flash_attn(fa)
        .type_k(ty("type_k"))
        .type_v(ty("type_v"))
        .swa_full(cfg["swa_full"].as_bool().unwrap())
}

/// The default run: our figures against those recorded from llama.cpp
/// (tests/data/estimate_reference.json) for the bundled sample, and for
/// the Gemma 3 model when `GGUF_GEMMA_MODEL` points at it. Parameters,
/// BPW, weights, KV and output equal llama.cpp's printed values; compute
/// within 10%.
#[test]
fn matches_recorded_llama_cpp_figures() {
    let root = env!("CARGO_MANIFEST_DIR");
    let table: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}/tests/data/estimate_reference.json")).unwrap(),
    )
    .unwrap();
    let gemma = std::env::var("GGUF_GEMMA_MODEL").ok();
    let mut checked = 0;
    for entry in table["entries"].as_array().unwrap() {
        let name = entry["model"].as_str().unwrap();
        let path = if name.starts_with("samples/") {
            format!("{root}/{name}")
        } else if let Some(g) = &gemma {
            g.clone()
        } else {
            eprintln!("skipped {name}: set GGUF_GEMMA_MODEL to check it");
            continue;
        };
        let file = GgufFile::open(&path).unwrap();
        let ours = Estimate::of(&file, &reference_settings(&entry["settings"]));
        let theirs = &entry["llama_cpp"];
        if theirs == "refused" {
            assert!(
                ours.is_err(),
                "{name} {}: llama.cpp refused these settings",
                entry["settings"]
            );
            checked += 1;
            continue;
        }
        let e = ours.unwrap();
        let f2 = |v: &serde_json::Value| format!("{:.2}", v.as_f64().unwrap());
        let ctx = format!("{name} {}", entry["settings"]);
        assert_eq!(
            theirs["model_params"],
            ModelSummary::format_count(e.summary.parameters),
            "{ctx}"
        );
        assert_eq!(
            f2(&theirs["bpw"]),
            format!("{:.2}", e.summary.bits_per_weight),
            "{ctx}"
        );
        assert_eq!(
            f2(&theirs["model_buffer_mib"]),
            mib(e.weights_bytes),
            "{ctx}"
        );
        let kv: Vec<String> = theirs["kv_cache_mib"]
            .as_array()
            .unwrap()
            .iter()
            .map(f2)
            .collect();
        assert_eq!(
            kv,
            e.caches.iter().map(|k| mib(k.bytes())).collect::<Vec<_>>(),
            "{ctx}"
        );
        assert_eq!(
            f2(&theirs["output_buffer_mib"]),
            mib(e.output_buffer_bytes),
            "{ctx}"
        );
        let compute = theirs["compute_buffer_mib"].as_f64().unwrap();
        let ours = e.compute_buffer_bytes as f64 / 1024.0 / 1024.0;
        assert!(
            (ours - compute).abs() / compute <= 0.10,
            "{ctx}: compute {ours:.2} MiB vs llama.cpp {compute:.2}"
        );
        checked += 1;
    }
    assert!(checked >= 5, "the sample's entries must be checked");
}

/// A llama-shaped model with `token_embd.weight` (F16, 64 x 100) and,
/// when `untied`, an `output.weight` of the same type and shape.
fn tied_or_not(arch: &str, untied: bool) -> Vec<u8> {
    let key = |k: &str| format!("{arch}.{k}");
    let keys: Vec<(String, OwnedValue)> = vec![
        (
            "general.architecture".into(),
            OwnedValue::String(arch.into()),
        ),
        (key("context_length"), u32v(4096)),
        (key("embedding_length"), u32v(64)),
        (key("block_count"), u32v(2)),
        (key("feed_forward_length"), u32v(128)),
        // Heads 32 wide: whole blocks of every quantized cache type.
        (key("attention.head_count"), u32v(2)),
        (key("vocab_size"), u32v(100)),
    ];
    let kvs: Vec<(&str, OwnedValue)> = keys.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let mut tensors = vec![(
        "token_embd.weight".to_string(),
        GgmlType::F16,
        vec![64, 100],
    )];
    for il in 0..2 {
        tensors.push((
            format!("blk.{il}.attn_q.weight"),
            GgmlType::Q8_0,
            vec![64, 64],
        ));
    }
    tensors.push(("output_norm.weight".into(), GgmlType::F32, vec![64]));
    if untied {
        tensors.push(("output.weight".into(), GgmlType::F16, vec![64, 100]));
    }
    build_model(&kvs, &tensors)
}

/// llama.cpp loads a tied output layer (no `output.weight`) as a second
/// `token_embd.weight` (`TENSOR_DUPLICATED`) on the output layer's device:
/// on a GPU that copy costs what an `output.weight` of the same type and
/// shape would; on the CPU it is the input's tensor and costs nothing.
#[test]
fn a_tied_output_layer_on_a_gpu_holds_a_second_copy_of_the_embeddings() {
    use gguf::estimate::Device::{Cpu, Gpu};
    let tied = tied_or_not("llama", false);
    let untied = tied_or_not("llama", true);
    let (tied, untied) = (
        GgufFile::open(&tied).unwrap(),
        GgufFile::open(&untied).unwrap(),
    );
    let weights = |file: &GgufFile<'_>, ngl: i32, ts: Vec<f32>| {
        let s = settings(256, FlashAttn::On)
            .n_gpu_layers(ngl)
            .tensor_split(ts);
        let e = Estimate::of(file, &s).unwrap();
        let by: Vec<(gguf::estimate::Device, u64)> =
            e.devices.iter().map(|d| (d.device, d.weights)).collect();
        (by, e.weights_bytes)
    };
    let embd = 64 * 100 * 2; // F16, a multiple of the GPU alignment
                             // All layers on one GPU: the GPU holds the copy, the CPU the input's.
    let (by, total) = weights(&tied, -1, vec![1.0]);
    assert_eq!(by, weights(&untied, -1, vec![1.0]).0);
    assert_eq!(by[0], (Cpu, embd));
    assert_eq!(total, by[0].1 + by[1].1);
    // The output layer on the second of two GPUs: that one holds it.
    let (by, _) = weights(&tied, -1, vec![1.0, 1.0]);
    assert_eq!(by, weights(&untied, -1, vec![1.0, 1.0]).0);
    assert!(by[2].0 == Gpu(1) && by[2].1 >= embd, "{by:?}");
    // -ngl 0 (the output layer on the CPU) and CPU only: no copy, the
    // weights are the mapped file range.
    let file_range: u64 = tied.tensors().map(|t| t.data().unwrap().len() as u64).sum();
    for (ngl, ts) in [(0, vec![1.0]), (-1, vec![])] {
        let (by, total) = weights(&tied, ngl, ts.clone());
        assert_eq!(total, by[0].1, "-ngl {ngl} -ts {ts:?}: {by:?}");
        assert!(
            total <= file_range + 64 && total >= file_range - 64,
            "-ngl {ngl}: {total} vs {file_range}"
        );
    }
    // BitNet multiplies by the input embeddings themselves: no copy.
    let bitnet = tied_or_not("bitnet", false);
    let bitnet = GgufFile::open(&bitnet).unwrap();
    let (by, _) = weights(&bitnet, -1, vec![1.0]);
    let (tied_by, _) = weights(&tied, -1, vec![1.0]);
    assert_eq!(by[1].1 + embd, tied_by[1].1);
}

/// llama.cpp's tools take only f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl,
/// q5_0 and q5_1 as cache types; the estimate refuses the others, even
/// where their blocks divide the heads (256 wide here, as Gemma 3's).
#[test]
fn cache_types_llama_cpp_refuses_are_refused() {
    let bytes = transformer(
        "llama",
        2,
        512,
        100,
        &[("llama.attention.head_count", u32v(2))],
    );
    let file = GgufFile::open(&bytes).unwrap();
    let with = |k: GgmlType, v: GgmlType| {
        Estimate::of(&file, &settings(256, FlashAttn::On).type_k(k).type_v(v))
    };
    for ty in [
        GgmlType::IQ2_XS,
        GgmlType::Q4_K,
        GgmlType::Q8_1,
        GgmlType::I32,
    ] {
        for (k, v) in [(ty, GgmlType::F16), (GgmlType::F16, ty)] {
            let err = with(k, v).unwrap_err().to_string();
            assert!(
                err.contains("llama.cpp refuses this cache type")
                    && err.contains("f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1"),
                "{ty}: {err}"
            );
        }
    }
    for &ty in gguf::estimate::KV_CACHE_TYPES {
        assert!(with(ty, ty).is_ok(), "{ty}");
    }
}

/// `fit` says which devices its budget held, whether the training context
/// stopped the search, and at which context it fitted the GPU layers.
#[test]
fn fit_names_its_devices_and_the_training_context_cap() {
    use gguf::estimate::Device::{Cpu, Gpu};
    let bytes = tied_or_not("llama", true);
    let file = GgufFile::open(&bytes).unwrap();
    let s = settings(0, FlashAttn::On);
    let big = 1 << 40;
    let f = gguf::estimate::fit(&file, &s, big).unwrap();
    assert_eq!(f.devices, [Cpu]);
    assert_eq!((f.max_ctx, f.n_ctx_train), (Some(4096), 4096));
    assert!(f.capped_by_training_ctx);
    assert_eq!(f.max_gpu_layers, None);
    // A budget that holds 1024 cells but not the training context.
    let at = |c: u32| {
        let s = s.clone().n_ctx(c);
        Estimate::of(&file, &s).unwrap().total_bytes()
    };
    let f = gguf::estimate::fit(&file, &s, at(1024)).unwrap();
    assert_eq!(f.max_ctx, Some(1024));
    assert!(!f.capped_by_training_ctx);
    // With GPUs: each GPU is held to the budget, layers fitted at -c.
    let gpus = s.clone().n_ctx(512).tensor_split(vec![1.0, 1.0]);
    let f = gguf::estimate::fit(&file, &gpus, big).unwrap();
    assert_eq!(f.devices, [Gpu(0), Gpu(1)]);
    assert_eq!((f.gpu_layers_ctx, f.layer_slots), (512, 3));
    assert_eq!(f.max_gpu_layers, Some(3));
}

#[test]
fn a_context_past_the_training_context_is_flagged() {
    let bytes = tied_or_not("llama", true);
    let file = GgufFile::open(&bytes).unwrap();
    for (c, np, past) in [
        (4096, 1, false),
        (4097, 1, true),
        (8192, 2, false),
        (8448, 2, true),
    ] {
        let e = Estimate::of(&file, &settings(c, FlashAttn::On).n_parallel(np)).unwrap();
        assert_eq!(e.n_ctx_train, 4096);
        assert_eq!(e.exceeds_training_context(), past, "-c {c} -np {np}");
    }
}
