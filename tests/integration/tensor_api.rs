//! Decoded tensor values (`Tensor::to_f32`, rows, f16/bf16) and quantize on
//! write (`Builder::add_tensor_quantized`, `Builder::requantize_tensor`).

use gguf::error::{CodecError, FormatError, LookupError};
use std::io::Cursor;

use gguf::codec;
use gguf::write::{Builder, WriteMode, WriteOptions};
use gguf::{Endian, Error, GgmlType, Gguf, GgufFile};

use super::util::{raw, Rng};

/// `n` pseudo-random values in [-2, 2).
pub fn randoms(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    (0..n)
        .map(|_| (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0)
        .collect()
}

/// Little-endian bytes of `ty` for `x`, computed with `codec::quantize`
/// (plain types converted element by element here).
pub fn encode(ty: GgmlType, x: &[f32], shape: &[u64]) -> Vec<u8> {
    match ty {
        GgmlType::F32 => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        GgmlType::F16 => x
            .iter()
            .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
            .collect(),
        GgmlType::BF16 => x
            .iter()
            .flat_map(|&v| half::bf16::from_f32(v).to_le_bytes())
            .collect(),
        _ => codec::quantize(ty, x, shape).unwrap(),
    }
}

/// (name, type, shape) of the multi-type test file.
pub const TENSORS: &[(&str, GgmlType, &[u64])] = &[
    ("f32.3d", GgmlType::F32, &[5, 3, 2]),
    ("f16.2d", GgmlType::F16, &[7, 4]),
    ("bf16.1d", GgmlType::BF16, &[9]),
    ("q8_0.2d", GgmlType::Q8_0, &[64, 3]),
    ("q4_k.2d", GgmlType::Q4_K, &[256, 2]),
    ("empty", GgmlType::F32, &[0, 3]),
];

/// A little-endian file with every tensor of [`TENSORS`], filled with
/// random values encoded independently of the writer's quantize path.
pub fn multi_type_file() -> Vec<u8> {
    let mut b = Builder::new();
    b.set("general.architecture", "test").unwrap();
    for (i, &(name, ty, shape)) in TENSORS.iter().enumerate() {
        let n = shape.iter().product::<u64>() as usize;
        let x = randoms(i as u64 + 1, n);
        b.add_tensor(name, ty, shape, encode(ty, &x, shape))
            .unwrap();
    }
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    out
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn to_f32_equals_the_codec_on_every_tensor() {
    let bytes = multi_type_file();
    let file = GgufFile::open(&bytes).unwrap();
    for t in file.tensors() {
        let expected =
            codec::dequantize_to_vec(t.ggml_type(), Endian::Little, t.data().unwrap()).unwrap();
        assert_eq!(expected.len() as u64, t.element_count(), "{}", t.name());
        let got = t.to_f32().unwrap();
        assert_eq!(bits(&got), bits(&expected), "to_f32 of {}", t.name());

        let mut into = vec![f32::NAN; expected.len()];
        t.to_f32_into(&mut into).unwrap();
        assert_eq!(bits(&into), bits(&expected), "to_f32_into of {}", t.name());

        let h = t.to_f16().unwrap();
        let eh = codec::to_f16(t.ggml_type(), Endian::Little, t.data().unwrap()).unwrap();
        assert_eq!(h, eh, "to_f16 of {}", t.name());
        let b = t.to_bf16().unwrap();
        let eb = codec::to_bf16(t.ggml_type(), Endian::Little, t.data().unwrap()).unwrap();
        assert_eq!(b, eb, "to_bf16 of {}", t.name());
    }
    // F32 and F16 values come back exactly as they were encoded.
    let f32s = file.tensor("f32.3d").unwrap().to_f32().unwrap();
    assert_eq!(bits(&f32s), bits(&randoms(1, 30)));
    let f16s = file.tensor("f16.2d").unwrap().to_f32().unwrap();
    let want: Vec<f32> = randoms(2, 28)
        .iter()
        .map(|&v| half::f16::from_f32(v).to_f32())
        .collect();
    assert_eq!(bits(&f16s), bits(&want));
}

#[test]
fn to_f32_into_checks_the_length_and_names_the_tensor() {
    let bytes = multi_type_file();
    let file = GgufFile::open(&bytes).unwrap();
    let t = file.tensor("q8_0.2d").unwrap();
    for len in [0, 191, 193] {
        let e = t.to_f32_into(&mut vec![0.0; len]).unwrap_err();
        assert!(e.to_string().contains("q8_0.2d"), "{e}");
    }
}

#[test]
fn rows_concatenated_equal_to_f32() {
    let bytes = multi_type_file();
    let file = GgufFile::open(&bytes).unwrap();
    for t in file.tensors() {
        let whole = t.to_f32().unwrap();
        let shape = t.shape();
        // A tensor of no elements has no rows, even `[0, 3]`.
        let n_rows: u64 = match t.element_count() {
            0 => 0,
            _ => shape[1..].iter().product(),
        };

        let rows: Vec<Vec<f32>> = t.rows().unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(rows.len() as u64, n_rows, "{}", t.name());
        assert!(rows.iter().all(|r| r.len() as u64 == shape[0]));
        assert_eq!(bits(&rows.concat()), bits(&whole), "rows of {}", t.name());

        let mut lent = Vec::new();
        let mut it = t.rows().unwrap();
        assert_eq!(it.len() as u64, n_rows);
        while let Some(r) = it.next_row() {
            lent.extend_from_slice(r.unwrap());
        }
        assert_eq!(bits(&lent), bits(&whole), "next_row of {}", t.name());

        let mut seen = Vec::new();
        let mut each = Vec::new();
        t.for_each_row(|i, r| {
            seen.push(i);
            each.extend_from_slice(r);
        })
        .unwrap();
        assert_eq!(seen, (0..n_rows as usize).collect::<Vec<_>>());
        assert_eq!(bits(&each), bits(&whole), "for_each_row of {}", t.name());
    }
}

/// Tensor names with their expected values.
type Expected = Vec<(String, Vec<f32>)>;

/// Little- and big-endian files with the same F32, F16 and BF16 values.
fn twins() -> (Vec<u8>, Vec<u8>, Expected) {
    let specs: &[(&str, GgmlType, &[u64])] = &[
        ("f32", GgmlType::F32, &[6, 5]),
        ("f16", GgmlType::F16, &[8, 3]),
        ("bf16", GgmlType::BF16, &[4, 2, 2]),
    ];
    let mut expected = Vec::new();
    let mut files = Vec::new();
    for endian in [Endian::Little, Endian::Big] {
        let mut b = Builder::new();
        b.endian(endian);
        for (i, &(name, ty, shape)) in specs.iter().enumerate() {
            let n = shape.iter().product::<u64>() as usize;
            let x = randoms(40 + i as u64, n);
            let mut le = encode(ty, &x, shape);
            let size = ty.type_size().unwrap() as usize;
            // The expected values, decoded here from the little-endian bytes.
            let values: Vec<f32> = le
                .chunks(size)
                .map(|c| match ty {
                    GgmlType::F32 => f32::from_le_bytes(c.try_into().unwrap()),
                    GgmlType::F16 => half::f16::from_le_bytes(c.try_into().unwrap()).to_f32(),
                    _ => half::bf16::from_le_bytes(c.try_into().unwrap()).to_f32(),
                })
                .collect();
            if endian == Endian::Big {
                le.chunks_mut(size).for_each(<[u8]>::reverse);
            } else {
                expected.push((name.to_owned(), values));
            }
            b.add_tensor(name, ty, shape, le).unwrap();
        }
        let mut out = Vec::new();
        b.write(&mut out).unwrap();
        files.push(out);
    }
    let big = files.pop().unwrap();
    let little = files.pop().unwrap();
    (little, big, expected)
}

#[test]
fn big_endian_files_decode_like_their_little_endian_twins() {
    let (little, big, expected) = twins();
    assert_ne!(little, big);
    let le = GgufFile::open(&little).unwrap();
    let be = GgufFile::open(&big).unwrap();
    assert_eq!(be.endian(), Endian::Big);
    for (name, values) in &expected {
        let a = le.tensor(name).unwrap();
        let b = be.tensor(name).unwrap();
        assert_ne!(a.data().unwrap(), b.data().unwrap(), "{name}");
        assert_eq!(bits(&a.to_f32().unwrap()), bits(values), "{name} LE");
        assert_eq!(bits(&b.to_f32().unwrap()), bits(values), "{name} BE");
        let rows: Vec<f32> = b.rows().unwrap().flat_map(Result::unwrap).collect();
        assert_eq!(bits(&rows), bits(values), "{name} BE rows");
        assert_eq!(a.to_f16().unwrap(), b.to_f16().unwrap(), "{name}");
        assert_eq!(a.to_bf16().unwrap(), b.to_bf16().unwrap(), "{name}");
    }
}

#[test]
fn unknown_types_give_unknown_tensor_type_and_name_the_tensor() {
    let mut r = raw();
    r.header(1, 0);
    r.tensor_info("strange", &[32, 2], 1000, 0);
    r.pad(32);
    r.bytes(&[0u8; 64]);
    let file = GgufFile::open(&r.buf).unwrap();
    let t = file.tensor("strange").unwrap();
    let checks: Vec<Error> = vec![
        t.to_f32().unwrap_err(),
        t.to_f32_into(&mut [0.0; 64]).unwrap_err(),
        t.to_f16().unwrap_err(),
        t.to_bf16().unwrap_err(),
        t.rows().unwrap_err(),
        t.for_each_row(|_, _| {}).unwrap_err(),
    ];
    for e in checks {
        assert!(
            matches!(&e, Error::Codec(CodecError::UnknownTensorType { tensor, type_id: 1000 }) if tensor == "strange"),
            "{e:?}"
        );
    }
}

const QUANT_TYPES: &[GgmlType] = &[
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q4_0,
    GgmlType::Q5_1,
    GgmlType::Q8_0,
    GgmlType::Q2_K,
    GgmlType::Q4_K,
    GgmlType::Q6_K,
    GgmlType::IQ4_NL,
    GgmlType::TQ2_0,
];

#[test]
fn add_tensor_quantized_equals_tensor_quantize_and_reads_back() {
    let shape = [256u64, 3];
    let x = randoms(7, 768);
    let mut b = Builder::new();
    for &ty in QUANT_TYPES {
        b.add_tensor_quantized(format!("b.{ty}"), ty, &shape, &x[..])
            .unwrap();
        b.add_tensor_quantized(format!("o.{ty}"), ty, &shape, x.clone())
            .unwrap();
    }
    let mut out = Vec::new();
    let layout = b.write(&mut out).unwrap();
    let file = GgufFile::open(&out).unwrap();
    assert_eq!(file.tensor_count(), layout.tensors.len());
    for &ty in QUANT_TYPES {
        let want = codec::quantize(ty, &x, &shape).unwrap();
        for prefix in ["b", "o"] {
            let t = file.tensor(&format!("{prefix}.{ty}")).unwrap();
            assert_eq!(t.ggml_type(), ty);
            assert_eq!(t.shape(), shape);
            assert!(t.data().unwrap() == want, "{prefix}.{ty}");
            let back = t.to_f32().unwrap();
            let direct = codec::dequantize_to_vec(ty, Endian::Little, &want).unwrap();
            assert_eq!(bits(&back), bits(&direct), "{ty}");
        }
    }
    // F32 is a plain copy, and plain encodings are what `encode` computes.
    for ty in [GgmlType::F32, GgmlType::F16, GgmlType::BF16] {
        let t = file.tensor(&format!("b.{ty}")).unwrap();
        assert_eq!(t.data().unwrap(), encode(ty, &x, &shape), "{ty}");
    }
}

#[test]
fn quantized_sources_give_the_same_bytes_in_every_write_mode() {
    let x = randoms(9, 64 * 5);
    let build = || {
        let mut b = Builder::new();
        b.add_tensor_quantized("a", GgmlType::Q8_0, &[64, 5], &x[..])
            .unwrap();
        b.add_tensor_quantized("b", GgmlType::F16, &[32, 10], &x[..])
            .unwrap();
        b
    };
    let mut single = Vec::new();
    build().write(&mut single).unwrap();
    let mut first = Vec::new();
    build()
        .write_metadata_first(&mut first)
        .unwrap()
        .finish()
        .unwrap();
    let mut reserved = Cursor::new(Vec::new());
    build()
        .write_with(&mut reserved, WriteOptions::new().mode(WriteMode::Reserve))
        .unwrap();
    assert!(single == first);
    assert!(single == reserved.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.gguf");
    build().write_to_path(&path).unwrap();
    assert!(std::fs::read(&path).unwrap() == single);
}

#[test]
fn add_tensor_quantized_checks_up_front() {
    let x = randoms(3, 256);
    let mut b = Builder::new();
    // Row length not a multiple of the block size.
    let e = b
        .add_tensor_quantized("rows", GgmlType::Q8_0, &[16, 8], &x[..128])
        .unwrap_err();
    assert!(
        matches!(&e, Error::Format(FormatError::RowNotBlockMultiple { tensor, .. }) if tensor == "rows"),
        "{e:?}"
    );
    // Too few or too many values for the shape.
    for n in [96, 160] {
        let e = b
            .add_tensor_quantized("count", GgmlType::Q8_0, &[32, 4], &x[..n])
            .unwrap_err();
        assert!(e.to_string().contains("\"count\""), "{e}");
    }
    // A type without a quantizer.
    let e = b
        .add_tensor_quantized("iq2", GgmlType::IQ2_XXS, &[256], &x[..])
        .unwrap_err();
    assert!(e.to_string().contains("\"iq2\""), "{e}");
    assert!(
        matches!(&e, Error::Codec(CodecError::TensorCodec { source, .. }) if matches!(**source, Error::Codec(CodecError::UnsupportedType { .. }))),
        "{e:?}"
    );
    assert_eq!(b.tensor_names().count(), 0, "refused tensors were added");
}

#[test]
fn big_endian_output_swaps_plain_types_and_quantized_blocks() {
    let x = randoms(5, 64);
    let mut b = Builder::new();
    b.endian(Endian::Big);
    b.add_tensor_quantized("h", GgmlType::F16, &[32, 2], &x[..])
        .unwrap();
    b.add_tensor_quantized("f", GgmlType::F32, &[64], &x[..])
        .unwrap();
    b.add_tensor_quantized("q", GgmlType::Q8_0, &[32, 2], &x[..])
        .unwrap();
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    let file = GgufFile::open(&out).unwrap();
    for (name, ty) in [("h", GgmlType::F16), ("f", GgmlType::F32)] {
        let t = file.tensor(name).unwrap();
        let mut want = encode(ty, &x, t.shape());
        want.chunks_mut(ty.type_size().unwrap() as usize)
            .for_each(<[u8]>::reverse);
        assert_eq!(t.data().unwrap(), want, "{name}");
    }
    assert_eq!(bits(&file.tensor("f").unwrap().to_f32().unwrap()), bits(&x));

    // Q8_0 blocks: the little-endian blocks with the f16 scale swapped.
    let mut want = gguf::codec::quantize(GgmlType::Q8_0, &x, &[32, 2]).unwrap();
    gguf::codec::swap_byte_order(GgmlType::Q8_0, &mut want).unwrap();
    assert_eq!(file.tensor("q").unwrap().data().unwrap(), want);
}

#[test]
fn requantize_tensor_re_encodes_a_file_tensor_in_place() {
    let bytes = multi_type_file();
    let file = GgufFile::open(&bytes).unwrap();
    let mut b = Builder::from_file(&file).unwrap();
    b.requantize_tensor("f32.3d", GgmlType::F16).unwrap();
    b.requantize_tensor("q4_k.2d", GgmlType::Q8_0).unwrap();
    b.requantize_tensor("f16.2d", GgmlType::BF16).unwrap();
    // Refusals: not found, row length, no quantizer, not a file source.
    assert!(matches!(
        b.requantize_tensor("nope", GgmlType::F16).unwrap_err(),
        Error::Lookup(LookupError::TensorNotFound { .. })
    ));
    let e = b.requantize_tensor("bf16.1d", GgmlType::Q8_0).unwrap_err();
    assert!(e.to_string().contains("bf16.1d"), "{e}");
    assert!(b.requantize_tensor("q8_0.2d", GgmlType::IQ2_XS).is_err());
    b.add_tensor_quantized("mine", GgmlType::F32, &[32], randoms(1, 32))
        .unwrap();
    assert!(b.requantize_tensor("mine", GgmlType::F16).is_err());

    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    let conv = GgufFile::open(&out).unwrap();
    let names: Vec<_> = conv.tensors().map(|t| t.name().to_owned()).collect();
    let mut want_names: Vec<_> = file.tensors().map(|t| t.name().to_owned()).collect();
    want_names.push("mine".into());
    assert_eq!(names, want_names, "order kept");
    for (name, ty) in [
        ("f32.3d", GgmlType::F16),
        ("q4_k.2d", GgmlType::Q8_0),
        ("f16.2d", GgmlType::BF16),
    ] {
        let src = file.tensor(name).unwrap();
        let t = conv.tensor(name).unwrap();
        assert_eq!(t.ggml_type(), ty);
        assert_eq!(t.shape(), src.shape());
        let want = codec::quantize(ty, &src.to_f32().unwrap(), src.shape()).unwrap();
        assert!(t.data().unwrap() == want, "{name}");
    }
    for name in ["bf16.1d", "q8_0.2d", "empty"] {
        assert_eq!(
            conv.tensor(name).unwrap().data().unwrap(),
            file.tensor(name).unwrap().data().unwrap(),
            "{name} unchanged"
        );
    }
}

#[test]
fn as_slice_views_every_plain_type_and_checks_type_and_byte_order() {
    let f32s = [1.5f32, -2.0, 3.25, 0.0];
    let f16s: Vec<half::f16> = f32s.iter().map(|&v| half::f16::from_f32(v)).collect();
    let bf16s: Vec<half::bf16> = f32s.iter().map(|&v| half::bf16::from_f32(v)).collect();
    let f64s = [1.5f64, -2.0, 3.25, 0.0];
    let (i8s, i16s) = ([1i8, -2, 3, i8::MIN], [1i16, -2, 3, i16::MAX]);
    let (i32s, i64s) = ([1i32, -2, 3, i32::MIN], [1i64, -2, 3, i64::MAX]);
    let build = |endian: Endian| {
        let mut b = Builder::new();
        b.endian(endian);
        b.add_tensor_typed("f32", &[4], &f32s[..]).unwrap();
        b.add_tensor_typed("f16", &[4], &f16s[..]).unwrap();
        b.add_tensor_typed("bf16", &[4], &bf16s[..]).unwrap();
        b.add_tensor_typed("f64", &[4], &f64s[..]).unwrap();
        b.add_tensor_typed("i8", &[4], &i8s[..]).unwrap();
        b.add_tensor_typed("i16", &[4], &i16s[..]).unwrap();
        b.add_tensor_typed("i32", &[4], &i32s[..]).unwrap();
        b.add_tensor_typed("i64", &[4], &i64s[..]).unwrap();
        b.to_vec().unwrap()
    };
    // A map is page-aligned, so every view is aligned for its type.
    let file = super::util::open_via_file(&build(Endian::NATIVE)).unwrap();
    let t = |name: &str| file.tensor(name).unwrap();
    assert_eq!(t("f32").as_slice::<f32>().unwrap(), f32s);
    assert_eq!(t("f16").as_slice::<half::f16>().unwrap(), f16s);
    assert_eq!(t("bf16").as_slice::<half::bf16>().unwrap(), bf16s);
    assert_eq!(t("f64").as_slice::<f64>().unwrap(), f64s);
    assert_eq!(t("i8").as_slice::<i8>().unwrap(), i8s);
    assert_eq!(t("i16").as_slice::<i16>().unwrap(), i16s);
    assert_eq!(t("i32").as_slice::<i32>().unwrap(), i32s);
    assert_eq!(t("i64").as_slice::<i64>().unwrap(), i64s);
    // Same size, other type: refused, naming the tensor and both types.
    let e = t("f32").as_slice::<i32>().unwrap_err();
    assert!(
        matches!(&e, Error::Codec(CodecError::ViewUnavailable { tensor, requested: "i32", .. }) if tensor == "f32"),
        "{e:?}"
    );
    assert!(e.to_string().contains("F32"), "{e}");
    assert!(t("bf16").as_slice::<half::f16>().is_err());

    // The other byte order: multi-byte views are refused, bytes are not.
    let other = match Endian::NATIVE {
        Endian::Little => Endian::Big,
        Endian::Big => Endian::Little,
    };
    let file = super::util::open_via_file(&build(other)).unwrap();
    let e = file.tensor("f32").unwrap().as_slice::<f32>().unwrap_err();
    assert!(e.to_string().contains("-endian"), "{e}");
    assert_eq!(file.tensor("i8").unwrap().as_slice::<i8>().unwrap(), i8s);
}
