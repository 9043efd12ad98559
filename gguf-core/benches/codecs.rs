//! Tensor codec throughput, in output (dequantize) or input (quantize)
//! elements per second.
//!
//! `cargo bench -p gguf-core --bench codecs`; `GGUF_BENCH_N` sets the
//! element count (default 2^18: 1 MiB of f32, cache-resident, so the figures
//! measure the decoders rather than DRAM).
//!
//! `GGUF_BENCH_BEST=1 cargo bench -p gguf-core --bench codecs` skips
//! criterion and prints the best of 300 runs per type instead: on a shared,
//! overloaded machine the best run is the figure closest to the code's own
//! speed, where criterion's mean mostly measures the other tenants.

use criterion::{criterion_group, Criterion, Throughput};
use gguf_core::{codec, Endian, GgmlType};
use std::hint::black_box;

fn n_elements() -> usize {
    std::env::var("GGUF_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 18)
}

fn input(n: usize) -> Vec<f32> {
    let mut s: u32 = 0x1234_5678;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f32 / u32::MAX as f32 - 0.5) * 0.1
        })
        .collect()
}

const DEQUANT: &[GgmlType] = &[
    GgmlType::Q4_0,
    GgmlType::Q8_0,
    GgmlType::Q4_K,
    GgmlType::Q5_K,
    GgmlType::Q6_K,
    GgmlType::IQ4_NL,
    GgmlType::IQ4_XS,
    GgmlType::BF16,
    GgmlType::F16,
];

fn bench_dequantize(c: &mut Criterion) {
    let n = n_elements();
    let x = input(n);
    let mut g = c.benchmark_group("dequantize");
    g.throughput(Throughput::Elements(n as u64));
    for &ty in DEQUANT {
        let data = if codec::can_quantize(ty) {
            codec::quantize(ty, &x, &[n as u64]).unwrap()
        } else {
            // IQ4_XS has no reference quantizer: random blocks decode just as fast.
            let ts = ty.type_size().unwrap() as usize;
            let bs = ty.block_size().unwrap() as usize;
            let mut s: u32 = 7;
            (0..n / bs * ts)
                .map(|i| {
                    s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    if i % ts < 2 {
                        0x20
                    } else {
                        (s >> 24) as u8
                    }
                })
                .collect()
        };
        let mut out = vec![0f32; n];
        g.bench_function(format!("{ty}/serial"), |b| {
            b.iter(|| codec::dequantize(ty, Endian::Little, black_box(&data), &mut out).unwrap())
        });
        g.bench_function(format!("{ty}/parallel"), |b| {
            b.iter(|| {
                codec::dequantize_par(ty, Endian::Little, black_box(&data), &mut out).unwrap()
            })
        });
    }
    g.finish();
}

fn bench_quantize(c: &mut Criterion) {
    let n = n_elements() / 4;
    let x = input(n);
    let mut g = c.benchmark_group("quantize");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(10);
    for ty in [GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K] {
        let mut out =
            vec![0u8; n / ty.block_size().unwrap() as usize * ty.type_size().unwrap() as usize];
        g.bench_function(format!("{ty}"), |b| {
            b.iter(|| codec::quantize_into(ty, black_box(&x), &mut out).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench_dequantize, bench_quantize);

fn best_of() {
    let n = n_elements();
    let x = input(n);
    let best = |f: &mut dyn FnMut()| {
        (0..300)
            .map(|_| {
                let t = std::time::Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::MAX, f64::min)
    };
    for &ty in DEQUANT {
        let data = if codec::can_quantize(ty) {
            codec::quantize(ty, &x, &[n as u64]).unwrap()
        } else {
            let q = codec::quantize(GgmlType::Q4_K, &x, &[n as u64]).unwrap();
            // IQ4_XS blocks are 136 bytes: any bytes decode, at the same speed.
            q.iter().cycle().take(n / 256 * 136).copied().collect()
        };
        let mut out = vec![0f32; n];
        let s = best(&mut || {
            codec::dequantize(ty, Endian::Little, black_box(&data), &mut out).unwrap()
        });
        let p = best(&mut || {
            codec::dequantize_par(ty, Endian::Little, black_box(&data), &mut out).unwrap()
        });
        println!(
            "dequantize {ty:7} serial {:6.2} G elem/s   parallel {:6.2} G elem/s",
            n as f64 / s / 1e9,
            n as f64 / p / 1e9
        );
    }
    for ty in [GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K] {
        let m = n / 4;
        let mut out =
            vec![0u8; m / ty.block_size().unwrap() as usize * ty.type_size().unwrap() as usize];
        let s = best(&mut || codec::quantize_into(ty, black_box(&x[..m]), &mut out).unwrap());
        println!(
            "quantize   {ty:7} serial {:8.1} M elem/s",
            m as f64 / s / 1e6
        );
    }
}

fn main() {
    if std::env::var_os("GGUF_BENCH_BEST").is_some() {
        best_of();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
