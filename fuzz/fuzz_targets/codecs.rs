//! The tensor codecs on arbitrary input.
//!
//! Input: a type index into `GgmlType::ALL`, a flags byte (number of
//! blocks, how floats are made), then bytes. Every sized type's
//! dequantize runs on the bytes as whole blocks in both byte orders (and
//! the parallel decoder agrees with the serial one). Every quantizer runs
//! on floats made from the bytes (raw bit patterns: NaN, infinities,
//! subnormals; or finite values of every magnitude) and never panics;
//! where a block's inputs are finite and at most `FINITE_LIMIT` in size
//! (so that its scales fit the formats' f16/e4m3 fields), the round trip
//! stays within the error `bound` gives for the type.
#![no_main]

use gguf_core::codec;
use gguf_core::{Endian, GgmlType};
use gguf_fuzz::Bytes;
use libfuzzer_sys::fuzz_target;

const FINITE_LIMIT: f32 = 1000.0;

/// Most error of one element after a round trip, for a block whose
/// largest magnitude is `amax`: `rel * amax + abs`. `rel` follows from
/// each format's design (levels per block, how the scale is picked and
/// stored; the scale search of K-quants and the clamping of the one-sided
/// grids of Q4_0/IQ4_NL cost up to a level more); `abs` covers scales that
/// round to zero or to a subnormal in their f16 or e4m3 field.
fn bound(ty: GgmlType) -> Option<(f32, f32)> {
    use GgmlType as T;
    Some(match ty {
        T::Q8_0 | T::Q8_1 | T::Q8_K => (1.0 / 100.0, 2e-4),
        T::Q6_K => (1.0 / 10.0, 2e-4),
        T::Q5_0 => (1.0 / 12.0, 2e-4),
        T::Q5_1 => (1.0 / 16.0, 2e-4),
        T::Q5_K => (0.15, 2e-4),
        T::Q4_0 => (1.0 / 6.0, 2e-4),
        T::Q4_1 => (1.0 / 8.0, 2e-4),
        T::Q4_K | T::IQ4_NL => (0.25, 2e-4),
        T::Q3_K => (0.5, 2e-4),
        T::Q2_K => (1.0, 2e-4),
        T::MXFP4 => (0.3, 1e-30),
        T::NVFP4 => (0.35, 0.02),
        T::TQ1_0 | T::TQ2_0 | T::Q2_0 => (0.6, 2e-4),
        T::Q1_0 => (2.0, 2e-4),
        T::IQ4_XS => (0.35, 2e-4),
        // The grid types: scales are chosen for the weighted error, and an
        // element of tiny weight (a zero among large values) may come back
        // far from it (the fuzzer found IQ1_M giving 0 back as -1045 in a
        // block of amax 104; ggml's quantize_iq1_m gives the same bytes, a
        // golden case of gguf-core/tests/ggml_quant.rs). Their bytes are
        // checked against ggml's own in the codec tests; here only that
        // every result is finite.
        T::IQ3_XXS | T::IQ3_S | T::IQ2_XXS | T::IQ2_XS | T::IQ2_S | T::IQ1_S | T::IQ1_M => {
            (1e30, 1e30)
        }
        _ => return None,
    })
}

fn bits(v: &[f32]) -> Vec<u32> {
    // NaN sign and payload are free (see the tensor module's docs).
    v.iter()
        .map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes(data);
    let ty = GgmlType::ALL[input.u8() as usize % GgmlType::ALL.len()];
    let flags = input.u8();
    let (Some(bs), Some(ts)) = (ty.block_size(), ty.type_size()) else {
        return;
    };
    let (bs, ts) = (bs as usize, ts as usize);
    let blocks = (flags as usize >> 2) % 4 + 1;

    // Dequantize arbitrary blocks.
    let mut block_bytes = input.take(blocks * ts).to_vec();
    block_bytes.resize(blocks * ts, 0);
    for endian in [Endian::Little, Endian::Big] {
        let v = codec::dequantize_to_vec(ty, endian, &block_bytes).expect("whole blocks decode");
        assert_eq!(v.len(), blocks * bs);
        let mut par = vec![0f32; v.len()];
        codec::dequantize_par(ty, endian, &block_bytes, &mut par).expect("parallel decode");
        assert_eq!(
            bits(&v),
            bits(&par),
            "{ty} {endian:?}: parallel decode differs"
        );
        // Partial blocks are an error, not a panic.
        if ts > 1 {
            assert!(codec::dequantize_to_vec(ty, endian, &block_bytes[1..]).is_err());
        }
    }

    if !codec::can_quantize(ty) {
        return;
    }
    // Floats: raw bit patterns, or finite values of every magnitude.
    let n = blocks * bs;
    let raw = flags & 1 == 0;
    let x: Vec<f32> = (0..n)
        .map(|_| {
            if raw {
                f32::from_bits(input.u64_of(4) as u32)
            } else {
                let m = input.u64_of(2) as u16 as i16;
                let e = (input.u8() % 64) as i32 - 40;
                f32::from(m) * 2f32.powi(e) / 32768.0
            }
        })
        .collect();
    let q = codec::quantize(ty, &x, &[n as u64]).expect("whole blocks quantize");
    assert_eq!(q.len(), blocks * ts);
    let y = codec::dequantize_to_vec(ty, Endian::Little, &q).expect("own output decodes");
    assert_eq!(y.len(), n);
    for (i, (xb, yb)) in x.chunks(bs).zip(y.chunks(bs)).enumerate() {
        if !xb.iter().all(|v| v.is_finite() && v.abs() <= FINITE_LIMIT) {
            continue;
        }
        let amax = xb.iter().fold(0f32, |m, v| m.max(v.abs()));
        for (j, (&a, &b)) in xb.iter().zip(yb).enumerate() {
            let err = (a - b).abs();
            let ok = match ty {
                GgmlType::F32 => a.to_bits() == b.to_bits(),
                // Round to nearest: half a unit in the last place.
                GgmlType::F16 => err <= a.abs() / 2048.0 + 3e-8,
                // Subnormal results: half a step of 2^-133.
                GgmlType::BF16 => err <= a.abs() / 256.0 + f32::from_bits(1 << 15),
                _ => {
                    let (rel, abs) = bound(ty).expect("every quantizer has a bound");
                    err <= rel * amax + abs
                }
            };
            assert!(
                ok,
                "{ty} block {i} element {j}: {a} came back as {b} (block amax {amax})"
            );
        }
    }
});
