//! Weighted quantization (importance weights, as llama-quantize with
//! `--imatrix`) on one thread: ours against ggml's `ggml_quantize_chunk`
//! on the same input in the same run, in MB of f32 input per second (best
//! of the runs: on a shared machine the best run is the figure closest to
//! the code's own speed).
//!
//! ```text
//! GGUF_LLAMA_TOOLS=DIR cargo bench -p gguf-core --bench weighted_quant
//! ```
//!
//! `DIR` holds `lib/libggml-base.so` (benches/build_ggml_base.sh makes one);
//! without it only our figures are printed. `GGUF_BENCH_RUNS` sets the runs
//! per type (default 20), `GGUF_BENCH_TYPES` (`Q4_K,IQ4_XS`) a subset of the
//! types.

use gguf_core::{codec, GgmlType};
use std::hint::black_box;
use std::time::Instant;

const ALL_TYPES: &[GgmlType] = &[
    GgmlType::Q4_0,
    GgmlType::Q4_K,
    GgmlType::Q6_K,
    GgmlType::IQ4_XS,
];
const NROW: usize = 64;
const N_PER_ROW: usize = 4096;

fn main() {
    let runs: usize = std::env::var("GGUF_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let types: Vec<GgmlType> = match std::env::var("GGUF_BENCH_TYPES") {
        Ok(list) => list
            .split(',')
            .map(|n| GgmlType::from_name(n.trim()).expect("a type name"))
            .collect(),
        Err(_) => ALL_TYPES.to_vec(),
    };
    // Gaussian-like weights and imatrix-like positive importances.
    let mut s: u32 = 0x1234_5678;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s as f32 / u32::MAX as f32
    };
    let x: Vec<f32> = (0..NROW * N_PER_ROW)
        .map(|_| (next() + next() + next() - 1.5) * 0.05)
        .collect();
    let w: Vec<f32> = (0..N_PER_ROW)
        .map(|_| next() * next() * 4.0 + 1e-3)
        .collect();
    let mb = (x.len() * 4) as f64 / 1e6;

    let mut ours = Vec::new();
    for &ty in &types {
        let row = N_PER_ROW / ty.block_size().unwrap() as usize * ty.type_size().unwrap() as usize;
        let mut out = vec![0u8; NROW * row];
        codec::quantize_rows_into(ty, &x, N_PER_ROW, Some(&w), &mut out).unwrap();
        let mut best = f64::INFINITY;
        for _ in 0..runs {
            let t = Instant::now();
            codec::quantize_rows_into(ty, black_box(&x), N_PER_ROW, Some(&w), &mut out).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
        }
        ours.push(mb / best);
    }

    let theirs = std::env::var("GGUF_LLAMA_TOOLS")
        .ok()
        .map(|dir| ggml_figures(&dir, &types, &x, &w, runs));
    if theirs.is_none() {
        eprintln!("ggml not timed: set GGUF_LLAMA_TOOLS to a directory with lib/libggml-base.so");
    }
    println!("weighted quantize, one thread, {NROW} rows of {N_PER_ROW}, best of {runs} (MB/s of f32 input)");
    println!("{:8} {:>10} {:>10} {:>8}", "type", "ours", "ggml", "ratio");
    for (i, &ty) in types.iter().enumerate() {
        match theirs.as_ref().and_then(|t| t.get(i)) {
            Some(&g) => println!(
                "{:8} {:>10.1} {:>10.1} {:>7.2}x",
                ty.to_string(),
                ours[i],
                g,
                ours[i] / g
            ),
            None => println!("{:8} {:>10.1}", ty.to_string(), ours[i]),
        }
    }
}

/// ggml's figures, through `tests/oracles/bench_weighted_quant.py`, in
/// `types` order.
fn ggml_figures(dir: &str, types: &[GgmlType], x: &[f32], w: &[f32], runs: usize) -> Vec<f64> {
    let input = std::env::temp_dir().join(format!("weighted_quant-{}.f32", std::process::id()));
    let bytes: Vec<u8> = x.iter().chain(w).flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&input, bytes).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/oracles/bench_weighted_quant.py"
    );
    let venv = std::path::Path::new(dir).join("venv/bin/python");
    let python = if venv.exists() {
        venv
    } else {
        "python3".into()
    };
    let names: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(dir)
        .arg(&input)
        .args([NROW.to_string(), N_PER_ROW.to_string(), runs.to_string()])
        .args(&names)
        .output()
        .unwrap();
    std::fs::remove_file(&input).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect()
}
