//! The quantizers against ggml with and without importance weights: golden
//! bytes written by `tests/oracles/ggml_quant_vectors.py` from ggml's
//! `ggml_quantize_chunk` (libggml-base of the llama.cpp llama-cpp-python
//! 0.3.36 vendors), compared byte for byte.

use gguf_core::error::CodecError;
use gguf_core::{codec, Endian, Error, GgmlType};

const VECTORS: &[u8] = include_bytes!("../../tests/oracles/ggml_quant_vectors.bin");

/// The types whose ggml quantizer uses importance weights: every golden
/// record of these must match, with and without weights.
const PORTED: &[GgmlType] = &[
    GgmlType::IQ4_XS,
    GgmlType::IQ4_NL,
    GgmlType::IQ3_XXS,
    GgmlType::IQ3_S,
    GgmlType::IQ2_XXS,
    GgmlType::IQ2_XS,
    GgmlType::IQ2_S,
    GgmlType::IQ1_S,
    GgmlType::IQ1_M,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
    GgmlType::Q2_K,
    GgmlType::Q3_K,
    GgmlType::Q4_K,
    GgmlType::Q5_K,
    GgmlType::Q6_K,
];

/// The types whose ggml quantizer ignores importance weights: their
/// weighted records (on a few cases) must equal our bytes with weights and
/// without.
const IGNORING: &[GgmlType] = &[
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q8_0,
    GgmlType::TQ1_0,
    GgmlType::TQ2_0,
    GgmlType::MXFP4,
    GgmlType::NVFP4,
    GgmlType::Q1_0,
    GgmlType::Q2_0,
];

/// The types ggml quantizes only with importance weights.
const IMATRIX_ONLY: &[GgmlType] = &[GgmlType::IQ2_XXS, GgmlType::IQ2_XS, GgmlType::IQ1_S];

/// `[false, true]`, or only `true` for the imatrix-only types.
fn weightings(ty: GgmlType) -> &'static [bool] {
    if IMATRIX_ONLY.contains(&ty) {
        &[true]
    } else {
        &[false, true]
    }
}

struct Case {
    label: String,
    shape: [u64; 2],
    x: Vec<f32>,
    w: Vec<f32>,
}

struct Record<'a> {
    ty: GgmlType,
    case: usize,
    weighted: bool,
    bytes: &'a [u8],
}

fn take<'a>(b: &mut &'a [u8], n: usize) -> &'a [u8] {
    let (h, t) = b.split_at(n);
    *b = t;
    h
}

fn u32_at(b: &mut &[u8]) -> u32 {
    u32::from_le_bytes(take(b, 4).try_into().unwrap())
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn parse(mut b: &[u8]) -> (Vec<Case>, Vec<Record<'_>>) {
    assert_eq!(take(&mut b, 4), b"GGIQ");
    assert_eq!(u32_at(&mut b), 1);
    let cases = (0..u32_at(&mut b))
        .map(|_| {
            let n = u32_at(&mut b) as usize;
            let label = String::from_utf8(take(&mut b, n).to_vec()).unwrap();
            let (nrow, n) = (u32_at(&mut b) as usize, u32_at(&mut b) as usize);
            let x = f32s(take(&mut b, 4 * nrow * n));
            let w = f32s(take(&mut b, 4 * n));
            Case {
                label,
                shape: [n as u64, nrow as u64],
                x,
                w,
            }
        })
        .collect();
    let records = (0..u32_at(&mut b))
        .map(|_| {
            let ty = GgmlType::from_id(u32_at(&mut b));
            let case = u32_at(&mut b) as usize;
            let weighted = take(&mut b, 1)[0] == 1;
            let n = u32_at(&mut b) as usize;
            Record {
                ty,
                case,
                weighted,
                bytes: take(&mut b, n),
            }
        })
        .collect();
    assert!(b.is_empty(), "trailing bytes in the vector file");
    (cases, records)
}

fn ours(ty: GgmlType, c: &Case, weighted: bool) -> gguf_core::Result<Vec<u8>> {
    codec::quantize_weighted(ty, &c.x, &c.shape, weighted.then_some(&c.w[..]))
}

#[test]
fn weighted_quantizers_match_ggml_bytes() {
    let (cases, records) = parse(VECTORS);
    let mut checked = 0;
    let mut failures = Vec::new();
    for r in records.iter().filter(|r| PORTED.contains(&r.ty)) {
        let c = &cases[r.case];
        let got = ours(r.ty, c, r.weighted).unwrap();
        if got != r.bytes {
            let first = got.iter().zip(r.bytes).position(|(a, b)| a != b);
            failures.push(format!(
                "{} {} weighted={} first differing byte {first:?}",
                r.ty, c.label, r.weighted
            ));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "differ from ggml: {failures:#?}");
    // Every ported type has records with and without weights.
    for &ty in PORTED {
        for &weighted in weightings(ty) {
            assert!(
                records.iter().any(|r| r.ty == ty && r.weighted == weighted),
                "{ty} weighted={weighted}: no golden record"
            );
        }
    }
    let expected: usize = PORTED.iter().map(|&t| weightings(t).len()).sum();
    assert_eq!(checked, expected * cases.len());
}

/// The codecs fuzz target found IQ1_M giving zeros back as about -1045 in
/// a block of 22 values of -104.4375 and zeros: ggml's bytes are the same,
/// so the far-off zeros are IQ1_M's (a zero weighs nothing in the error
/// the quantizer minimises), not a bug of ours.
#[test]
fn iq1_m_fuzz_finding_is_ggml_behaviour() {
    let (cases, records) = parse(VECTORS);
    let ci = cases
        .iter()
        .position(|c| c.label == "fuzz-iq1m-1x256")
        .unwrap();
    let r = records
        .iter()
        .find(|r| r.ty == GgmlType::IQ1_M && r.case == ci && !r.weighted)
        .unwrap();
    let q = codec::quantize(GgmlType::IQ1_M, &cases[ci].x, &[256]).unwrap();
    assert!(q == r.bytes, "IQ1_M differs from ggml on the fuzz block");
    let y = codec::dequantize_to_vec(GgmlType::IQ1_M, Endian::Little, r.bytes).unwrap();
    assert!(y[22..].iter().any(|&v| v < -1000.0), "{:?}", &y[22..40]);
}

/// The types that ignore weights give the same bytes with them as
/// without, and those are ggml's.
#[test]
fn weight_ignoring_quantizers_match_ggml_bytes() {
    let (cases, records) = parse(VECTORS);
    for &ty in IGNORING {
        let recs: Vec<_> = records.iter().filter(|r| r.ty == ty).collect();
        assert!(!recs.is_empty(), "{ty}: no golden record");
        for r in recs {
            let c = &cases[r.case];
            assert!(r.weighted);
            assert!(
                ours(ty, c, true).unwrap() == r.bytes,
                "{ty} {}: weighted bytes differ from ggml",
                c.label
            );
            assert!(
                ours(ty, c, false).unwrap() == r.bytes,
                "{ty} {}: unweighted bytes differ from ggml",
                c.label
            );
        }
    }
}

/// ggml's `ggml_quantize_chunk` has no quantizer for Q8_1 and Q8_K (they
/// exist for dot products): we refuse weights for them rather than guess.
#[test]
fn types_ggml_cannot_quantize_refuse_weights() {
    let x = vec![0.5f32; 256];
    for ty in [GgmlType::Q8_1, GgmlType::Q8_K] {
        let e = codec::quantize_weighted(ty, &x, &[256], Some(&[1.0; 256])).unwrap_err();
        assert!(
            matches!(e, Error::Codec(CodecError::UnsupportedType { .. })),
            "{ty}: {e}"
        );
        assert!(codec::quantize_weighted(ty, &x, &[256], None).is_ok());
    }
}

/// A relative RMS error a working quantizer of `ty` stays under on
/// Gaussian data (about twice what ggml's own bytes give).
fn bound(ty: GgmlType) -> f64 {
    match ty {
        GgmlType::Q6_K | GgmlType::Q5_0 | GgmlType::Q5_1 | GgmlType::Q5_K => 0.06,
        GgmlType::Q4_0 | GgmlType::Q4_1 | GgmlType::Q4_K => 0.15,
        GgmlType::Q3_K => 0.3,
        GgmlType::Q2_K => 0.5,
        GgmlType::IQ4_XS | GgmlType::IQ4_NL => 0.15,
        GgmlType::IQ3_XXS | GgmlType::IQ3_S => 0.35,
        GgmlType::IQ2_XXS | GgmlType::IQ2_XS | GgmlType::IQ2_S => 0.55,
        _ => 0.8,
    }
}

/// Our bytes decode (through the codec's dequantizer) close to the input:
/// relative (importance-weighted) RMS error under a bound per type, on the
/// Gaussian and uniform cases.
#[test]
fn weighted_quantizers_round_trip() {
    let (cases, _) = parse(VECTORS);
    for &ty in PORTED {
        for c in cases
            .iter()
            .filter(|c| c.label.starts_with("gauss") || c.label.starts_with("uniform"))
        {
            for &weighted in weightings(ty) {
                let q = ours(ty, c, weighted).unwrap();
                let y = codec::dequantize_to_vec(ty, Endian::Little, &q).unwrap();
                // The error the quantizer minimises: weighted by the
                // importance weights when it has them.
                let n = c.shape[0] as usize;
                let wt = |i: usize| if weighted { c.w[i % n] as f64 } else { 1.0 };
                let err: f64 = (0..y.len())
                    .map(|i| wt(i) * ((c.x[i] - y[i]) as f64).powi(2))
                    .sum();
                let norm: f64 = (0..y.len()).map(|i| wt(i) * (c.x[i] as f64).powi(2)).sum();
                let rel = (err / norm).sqrt();
                assert!(
                    rel < bound(ty),
                    "{ty} {} weighted={weighted}: relative RMS error {rel}",
                    c.label
                );
            }
        }
    }
}

/// Every type with golden records is checked (none left unported), and
/// the imatrix-only types refuse without weights, saying why.
#[test]
fn imatrix_only_types_refuse_without_weights() {
    let (cases, records) = parse(VECTORS);
    let c = &cases[0];
    for r in &records {
        assert!(
            PORTED.contains(&r.ty) || IGNORING.contains(&r.ty),
            "{} has goldens but is not checked",
            r.ty
        );
    }
    for &ty in IMATRIX_ONLY {
        let e = codec::quantize_weighted(ty, &c.x, &c.shape, None).unwrap_err();
        assert!(
            matches!(e, Error::Codec(CodecError::ImatrixRequired { ty: t }) if t == ty),
            "{ty}: {e}"
        );
        assert!(e.to_string().contains("importance matrix"), "{e}");
        let e = codec::quantize(ty, &c.x, &c.shape).unwrap_err();
        assert!(
            matches!(e, Error::Codec(CodecError::ImatrixRequired { .. })),
            "{ty}: {e}"
        );
    }
}

#[test]
fn wrong_lengths_are_refused() {
    let x = vec![0.5f32; 512];
    let e =
        codec::quantize_weighted(GgmlType::IQ4_XS, &x, &[256, 2], Some(&[1.0; 512])).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Codec(CodecError::LengthMismatch {
                expected: 256,
                actual: 512,
                ..
            })
        ),
        "{e}"
    );
    let e = codec::quantize_weighted(GgmlType::Q4_K, &x, &[256, 2], Some(&[1.0; 128])).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Codec(CodecError::LengthMismatch {
                expected: 256,
                actual: 128,
                ..
            })
        ),
        "{e}"
    );
    // Rows that are not whole super-blocks, a zero row length, and an
    // output buffer of the wrong size.
    let mut out = vec![0u8; 2 * 136];
    let e = codec::quantize_rows_into(GgmlType::IQ4_XS, &x, 128, None, &mut out).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Codec(CodecError::PartialBlock {
                len: 128,
                unit: 256,
                ..
            })
        ),
        "{e}"
    );
    let e = codec::quantize_rows_into(GgmlType::IQ4_XS, &x, 0, None, &mut out).unwrap_err();
    assert!(
        matches!(e, Error::Codec(CodecError::PartialBlock { len: 0, .. })),
        "{e}"
    );
    let e =
        codec::quantize_rows_into(GgmlType::IQ4_XS, &x, 256, None, &mut out[..200]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Codec(CodecError::LengthMismatch {
                expected: 272,
                actual: 200,
                ..
            })
        ),
        "{e}"
    );
    let e = codec::quantize_weighted(GgmlType::IQ3_S, &x, &[256, 3], None).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Codec(CodecError::LengthMismatch {
                expected: 768,
                actual: 512,
                ..
            })
        ),
        "{e}"
    );
}

/// Opt-in: with `GGUF_LLAMA_TOOLS` naming a directory holding
/// `lib/libggml-base.so` (benches/build_ggml_base.sh makes one) or a llama
/// tools venv, regenerates the vectors with ggml and compares them with the
/// committed file, byte for byte.
#[test]
fn committed_vectors_equal_a_fresh_ggml_run() {
    let Ok(tools) = std::env::var("GGUF_LLAMA_TOOLS") else {
        eprintln!("skipped: set GGUF_LLAMA_TOOLS to a directory with lib/libggml-base.so to regenerate the quantizer vectors with ggml");
        return;
    };
    let venv = std::path::Path::new(&tools).join("venv/bin/python");
    let python = if venv.exists() {
        venv
    } else {
        "python3".into()
    };
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/oracles/ggml_quant_vectors.py"
    );
    let out = std::env::temp_dir().join(format!("ggml_quant_vectors-{}.bin", std::process::id()));
    let status = std::process::Command::new(python)
        .args([script.as_ref(), tools.as_ref(), out.as_os_str()])
        .status()
        .unwrap();
    assert!(status.success(), "{script} failed");
    let fresh = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    assert!(
        fresh == VECTORS,
        "ggml's bytes differ from the committed tests/oracles/ggml_quant_vectors.bin"
    );
}

/// NaN, infinities, huge and subnormal values, and odd importance weights
/// (zero, negative, NaN, infinite) never panic nor hang; the output keeps
/// its size.
#[test]
fn hostile_inputs_never_panic() {
    let specials = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        -f32::MAX,
        1e-40,
        -0.0,
        0.0,
        1.0,
        -1.0,
    ];
    let mut state = 0x9E37_79B9u32;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    for &ty in PORTED {
        for round in 0..12 {
            let x: Vec<f32> = (0..512)
                .map(|_| match (next() % 4, round % 3) {
                    (0, _) => specials[next() as usize % specials.len()],
                    (_, 0) => 0.0,
                    _ => (next() as f32 / u32::MAX as f32 - 0.5) * 4.0,
                })
                .collect();
            let w: Vec<f32> = (0..256)
                .map(|_| match next() % 5 {
                    0 => specials[next() as usize % specials.len()],
                    _ => next() as f32 / u32::MAX as f32,
                })
                .collect();
            for &weighted in weightings(ty) {
                let q = codec::quantize_weighted(ty, &x, &[256, 2], weighted.then_some(&w[..]))
                    .unwrap();
                assert_eq!(
                    q.len(),
                    2 * ty.type_size().unwrap() as usize * 256 / ty.block_size().unwrap() as usize
                );
                codec::dequantize_to_vec(ty, Endian::Little, &q).unwrap();
            }
        }
    }
}
