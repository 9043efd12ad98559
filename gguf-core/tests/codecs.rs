//! Tensor codecs against third-party oracles: vectors written by
//! `tests/oracles/codec_vectors.py` from gguf-py (PyPI `gguf`), ggml's own C
//! code (libggml-base from llama-cpp-python) and numpy casts.
//!
//! Floats compare bit for bit; the one allowance is that two NaNs are equal
//! whatever their payload and sign, because NaN bits produced by arithmetic
//! differ between numpy and C on the same inputs.

use gguf_core::{codec, Endian, GgmlType};

const VECTORS: &[u8] = include_bytes!("../../tests/oracles/codec_vectors.bin");

struct Record<'a> {
    quantize: bool,
    oracle: u8,
    big_endian: bool,
    ty: GgmlType,
    input: &'a [u8],
    output: &'a [u8],
    label: &'a str,
}

fn take<'a>(b: &mut &'a [u8], n: usize) -> &'a [u8] {
    let (h, t) = b.split_at(n);
    *b = t;
    h
}

fn u32_at(b: &mut &[u8]) -> u32 {
    u32::from_le_bytes(take(b, 4).try_into().unwrap())
}

fn records() -> Vec<Record<'static>> {
    let mut b = VECTORS;
    assert_eq!(take(&mut b, 4), b"GGCV");
    assert_eq!(u32_at(&mut b), 1);
    let n = u32_at(&mut b);
    (0..n)
        .map(|_| {
            let h = take(&mut b, 4);
            let ty = GgmlType::from_id(u32_at(&mut b));
            let len = u32_at(&mut b) as usize;
            let input = take(&mut b, len);
            let len = u32_at(&mut b) as usize;
            let output = take(&mut b, len);
            let len = u32_at(&mut b) as usize;
            let label = std::str::from_utf8(take(&mut b, len)).unwrap();
            Record {
                quantize: h[0] == 1,
                oracle: h[1],
                big_endian: h[2] == 1,
                ty,
                input,
                output,
                label,
            }
        })
        .collect()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn codecs_match_oracles() {
    let mut failures = Vec::new();
    let mut nan_payload_only = Vec::new();
    let recs = records();
    assert!(recs.len() > 100, "vector file looks truncated");
    for r in &recs {
        if r.quantize {
            let src = f32s(r.input);
            match codec::quantize(r.ty, &src, &[src.len() as u64]) {
                Ok(got) if got == r.output => {}
                Ok(got) => {
                    let (bs, ts) = (
                        r.ty.block_size().unwrap() as usize,
                        r.ty.type_size().unwrap() as usize,
                    );
                    let bad: Vec<usize> = got
                        .chunks(ts)
                        .zip(r.output.chunks(ts))
                        .enumerate()
                        .filter(|(_, (a, b))| a != b)
                        .map(|(i, _)| i)
                        .collect();
                    let first = bad[0];
                    failures.push(format!(
                        "{}: {} of {} blocks differ, first block {} (input {:?}...)\n   got  {:02x?}\n   want {:02x?}",
                        r.label,
                        bad.len(),
                        got.len() / ts,
                        first,
                        &src[first * bs.max(32) / bs.max(32) * bs..][..4.min(src.len())],
                        &got[first * ts..(first + 1) * ts],
                        &r.output[first * ts..(first + 1) * ts]
                    ));
                }
                Err(e) => failures.push(format!("{}: {e}", r.label)),
            }
        } else {
            let endian = if r.big_endian {
                Endian::Big
            } else {
                Endian::Little
            };
            let want = f32s(r.output);
            match codec::dequantize_to_vec(r.ty, endian, r.input) {
                Ok(got) => {
                    let n = want.len().min(got.len());
                    let bad: Vec<usize> = (0..n).filter(|&i| !same(got[i], want[i])).collect();
                    let nan_bits = (0..n)
                        .filter(|&i| {
                            got[i].is_nan()
                                && want[i].is_nan()
                                && got[i].to_bits() != want[i].to_bits()
                        })
                        .count();
                    if nan_bits > 0 {
                        nan_payload_only.push(format!("{}: {nan_bits}", r.label));
                    }
                    if got.len() != want.len() {
                        failures.push(format!(
                            "{}: {} values, want {}",
                            r.label,
                            got.len(),
                            want.len()
                        ));
                    } else if let Some(&i) = bad.first() {
                        failures.push(format!(
                            "{}: {} of {} values differ, first [{i}] got {} ({:#010x}) want {} ({:#010x})",
                            r.label,
                            bad.len(),
                            want.len(),
                            got[i],
                            got[i].to_bits(),
                            want[i],
                            want[i].to_bits()
                        ));
                    }
                    // The parallel path must agree with the serial one.
                    let mut par = vec![0f32; got.len()];
                    codec::dequantize_par(r.ty, endian, r.input, &mut par).unwrap();
                    assert!(
                        par.iter()
                            .zip(&got)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{}",
                        r.label
                    );
                }
                Err(e) => failures.push(format!("{}: {e}", r.label)),
            }
        }
    }
    // Informational: values where both sides are NaN but the NaN bits differ.
    eprintln!("NaN values with different NaN bits (accepted): {nan_payload_only:?}");
    assert!(
        failures.is_empty(),
        "{} of {} records fail:\n{}",
        failures.len(),
        recs.len(),
        failures.join("\n")
    );
}

/// Lists what each type is checked against, and fails if a type with a size
/// has no dequantize vector at all.
#[test]
fn every_sized_type_has_a_dequantize_oracle() {
    let recs = records();
    let mut missing = Vec::new();
    for &ty in GgmlType::ALL {
        let oracles: Vec<&str> = recs
            .iter()
            .filter(|r| r.ty == ty && !r.quantize && !r.big_endian)
            .map(|r| ["gguf-py", "ggml", "numpy", "policy"][r.oracle as usize])
            .collect();
        if oracles.is_empty() {
            missing.push(ty);
        }
    }
    assert!(
        missing.is_empty(),
        "types without a dequantize oracle: {missing:?}"
    );
}

/// The types with ggml goldens in `tests/oracles/ggml_quant_vectors.bin`
/// (checked byte for byte by `tests/ggml_quant.rs`).
fn iq_golden_types() -> Vec<GgmlType> {
    let mut b: &[u8] = include_bytes!("../../tests/oracles/ggml_quant_vectors.bin");
    assert_eq!(take(&mut b, 4), b"GGIQ");
    assert_eq!(u32_at(&mut b), 1);
    for _ in 0..u32_at(&mut b) {
        let n = u32_at(&mut b) as usize;
        take(&mut b, n);
        let (nrow, n) = (u32_at(&mut b) as usize, u32_at(&mut b) as usize);
        take(&mut b, 4 * (nrow * n + n));
    }
    let mut types = Vec::new();
    for _ in 0..u32_at(&mut b) {
        types.push(GgmlType::from_id(u32_at(&mut b)));
        take(&mut b, 5);
        let n = u32_at(&mut b) as usize;
        take(&mut b, n);
    }
    types
}

#[test]
fn every_quantizable_type_has_a_quantize_oracle() {
    let recs = records();
    let missing: Vec<GgmlType> = GgmlType::ALL
        .iter()
        .copied()
        .filter(|&t| t != GgmlType::F32 && codec::can_quantize(t))
        .filter(|&t| !recs.iter().any(|r| r.quantize && r.ty == t))
        .filter(|t| !iq_golden_types().contains(t))
        .collect();
    assert!(
        missing.is_empty(),
        "quantizable types without an oracle: {missing:?}"
    );
}

#[test]
fn length_errors_are_precise() {
    let err = codec::dequantize_to_vec(GgmlType::Q8_0, Endian::Little, &[0u8; 35]).unwrap_err();
    assert!(
        matches!(
            err,
            gguf_core::Error::Codec(gguf_core::error::CodecError::PartialBlock {
                len: 35,
                unit: 34,
                ..
            })
        ),
        "{err}"
    );
    let mut out = [0f32; 31];
    let err = codec::dequantize(GgmlType::Q8_0, Endian::Little, &[0u8; 34], &mut out).unwrap_err();
    assert!(
        matches!(
            err,
            gguf_core::Error::Codec(gguf_core::error::CodecError::LengthMismatch {
                expected: 32,
                actual: 31,
                ..
            })
        ),
        "{err}"
    );
    let err = codec::dequantize_to_vec(GgmlType::Unknown(36), Endian::Little, &[]).unwrap_err();
    assert!(
        matches!(
            err,
            gguf_core::Error::Codec(gguf_core::error::CodecError::UnsupportedType { .. })
        ),
        "{err}"
    );
    let err = codec::quantize(GgmlType::I32, &[0.0; 256], &[256]).unwrap_err();
    assert!(
        matches!(
            err,
            gguf_core::Error::Codec(gguf_core::error::CodecError::UnsupportedType { .. })
        ),
        "{err}"
    );
    let err = codec::quantize(GgmlType::IQ2_XXS, &[0.0; 256], &[256]).unwrap_err();
    assert!(
        matches!(
            err,
            gguf_core::Error::Codec(gguf_core::error::CodecError::ImatrixRequired { .. })
        ),
        "{err}"
    );
    let err = codec::quantize(GgmlType::Q4_K, &[0.0; 512], &[128, 4]).unwrap_err();
    assert!(
        matches!(
            err,
            gguf_core::Error::Codec(gguf_core::error::CodecError::PartialBlock {
                len: 128,
                unit: 256,
                ..
            })
        ),
        "{err}"
    );
    let err = codec::quantize(GgmlType::Q4_0, &[0.0; 64], &[32, 3]).unwrap_err();
    assert!(
        matches!(
            err,
            gguf_core::Error::Codec(gguf_core::error::CodecError::LengthMismatch {
                expected: 96,
                actual: 64,
                ..
            })
        ),
        "{err}"
    );
}

/// Arbitrary bytes never panic any decoder, in either byte order.
#[test]
fn random_bytes_never_panic() {
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..292 * 8)
        .map(|_| {
            s ^= s << 7;
            s ^= s >> 9;
            s as u8
        })
        .collect();
    for &ty in GgmlType::ALL {
        let ts = ty.type_size().unwrap() as usize;
        for endian in [Endian::Little, Endian::Big] {
            let data = &bytes[..ts * 8];
            let v = codec::dequantize_to_vec(ty, endian, data).unwrap();
            assert_eq!(v.len() as u64, 8 * ty.block_size().unwrap());
        }
    }
}

/// Quantize then dequantize stays close to the input for every quantizer
/// (a sanity check on top of the bit-exact oracle comparisons).
#[test]
fn quantize_round_trip_is_close() {
    let x: Vec<f32> = (0..1024)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    for &ty in GgmlType::ALL {
        if !codec::can_quantize(ty) {
            continue;
        }
        let q = codec::quantize(ty, &x, &[1024]).unwrap();
        let y = codec::dequantize_to_vec(ty, Endian::Little, &q).unwrap();
        let rms = (x
            .iter()
            .zip(&y)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f32>()
            / 1024.0)
            .sqrt();
        let bound = match ty {
            GgmlType::Q1_0 | GgmlType::TQ1_0 | GgmlType::TQ2_0 | GgmlType::Q2_0 => 0.7,
            GgmlType::Q2_K | GgmlType::IQ2_S => 0.2,
            GgmlType::IQ1_M => 0.45,
            _ => 0.13,
        };
        assert!(rms < bound, "{ty}: rms error {rms}");
    }
}

/// Arbitrary f32 bit patterns (NaN payloads, infinities, subnormals, huge
/// values) never panic any quantizer, even with overflow checks on.
#[test]
fn random_floats_never_panic() {
    let mut s: u32 = 0x2545_f491;
    let x: Vec<f32> = (0..1024)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            f32::from_bits(s)
        })
        .collect();
    for &ty in GgmlType::ALL {
        if codec::can_quantize(ty) {
            let q = codec::quantize(ty, &x, &[1024]).unwrap();
            codec::dequantize_to_vec(ty, Endian::Little, &q).unwrap();
        }
    }
}
