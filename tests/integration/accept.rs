//! Valid files the reader must accept, with the decoded values checked, and
//! the llama.cpp lint. Every file also goes through `from_reader` and
//! `open` (see `util::accept`), which must index it identically.

use gguf::error::{CodecError, FormatError, LookupError};
use gguf::format::align_up;
use gguf::read::LintIssue;
use gguf::{Endian, Error, GgmlType, Gguf, Value, ValueType};

use super::util::{accept, ctx, raw, tiny_file, Raw, Recording};

/// Appends the little-endian bytes `le` in the builder's byte order.
fn num(r: &mut Raw, le: &[u8]) {
    let mut b = le.to_vec();
    if r.ctx.endian == Endian::Big {
        b.reverse();
    }
    r.bytes(&b);
}

const STRINGS: [&str; 4] = ["a", "", "ü日本", "tab\tnewline\n"];

/// Writes one KV of every scalar type, an array of every type (nested for
/// `array`), and two F32 tensors whose data is 0..24 in the file's byte order.
fn every_type(version: u32, endian: Endian) -> Vec<u8> {
    let mut r = Raw::new(ctx(version, endian));
    r.header(2, 27);
    r.str("u8").u32(0).u8(200);
    r.str("i8").u32(1).u8((-5i8) as u8);
    r.str("u16").u32(2);
    num(&mut r, &60_000u16.to_le_bytes());
    r.str("i16").u32(3);
    num(&mut r, &(-30_000i16).to_le_bytes());
    r.str("u32").u32(4).u32(4_000_000_000);
    r.str("i32").u32(5);
    num(&mut r, &(-2_000_000_000i32).to_le_bytes());
    r.str("f32").u32(6).f32(1.5);
    r.str("bool").u32(7).u8(1);
    r.str("string").u32(8).str("héllo");
    r.str("u64").u32(10).u64(u64::MAX - 1);
    r.str("i64").u32(11);
    num(&mut r, &(i64::MIN + 1).to_le_bytes());
    r.str("f64").u32(12);
    num(&mut r, &(-2.25f64).to_le_bytes());
    r.str("bool.false").u32(7).u8(0);
    // Arrays of every element type.
    r.str("arr.u8").u32(9).u32(0).count(3).bytes(&[1, 2, 255]);
    r.str("arr.i8")
        .u32(9)
        .u32(1)
        .count(2)
        .bytes(&[(-1i8) as u8, 127]);
    r.str("arr.u16").u32(9).u32(2).count(2);
    num(&mut r, &1u16.to_le_bytes());
    num(&mut r, &65_535u16.to_le_bytes());
    r.str("arr.i16").u32(9).u32(3).count(1);
    num(&mut r, &(-2i16).to_le_bytes());
    r.str("arr.u32")
        .u32(9)
        .u32(4)
        .count(3)
        .u32(0)
        .u32(7)
        .u32(u32::MAX);
    r.str("arr.i32").u32(9).u32(5).count(2);
    num(&mut r, &i32::MIN.to_le_bytes());
    num(&mut r, &3i32.to_le_bytes());
    r.str("arr.f32")
        .u32(9)
        .u32(6)
        .count(3)
        .f32(-0.5)
        .f32(f32::INFINITY)
        .f32(1e-30);
    r.str("arr.bool").u32(9).u32(7).count(3).bytes(&[1, 0, 1]);
    r.str("arr.string")
        .u32(9)
        .u32(8)
        .count(STRINGS.len() as u64);
    for s in STRINGS {
        r.str(s);
    }
    // [[1, 2], [], [3]] of u32
    r.str("arr.array").u32(9).u32(9).count(3);
    r.u32(4).count(2).u32(1).u32(2);
    r.u32(4).count(0);
    r.u32(4).count(1).u32(3);
    r.str("arr.u64")
        .u32(9)
        .u32(10)
        .count(2)
        .u64(0)
        .u64(u64::MAX);
    r.str("arr.i64").u32(9).u32(11).count(1);
    num(&mut r, &(-9i64).to_le_bytes());
    r.str("arr.f64").u32(9).u32(12).count(2);
    num(&mut r, &std::f64::consts::PI.to_le_bytes());
    num(&mut r, &(-0.0f64).to_le_bytes());
    r.str("arr.empty").u32(9).u32(8).count(0);
    r.tensor_info("t0", &[4, 4], 0, 0);
    r.tensor_info("t1", &[8], 0, 64);
    r.pad(32);
    for i in 0..24 {
        r.f32(i as f32);
    }
    r.buf
}

#[test]
fn every_value_type_in_every_version_and_byte_order() {
    for version in [1, 2, 3] {
        for endian in [Endian::Little, Endian::Big] {
            let bytes = every_type(version, endian);
            let f = accept(&bytes);
            let label = format!("v{version} {endian}");
            assert_eq!(f.version(), version, "{label}");
            assert_eq!(f.endian(), endian, "{label}");
            assert_eq!(f.kv_count(), 27, "{label}");
            assert_eq!(f.get::<u8>("u8").unwrap(), 200, "{label}");
            assert_eq!(f.get::<i8>("i8").unwrap(), -5, "{label}");
            assert_eq!(f.get::<u16>("u16").unwrap(), 60_000, "{label}");
            assert_eq!(f.get::<i16>("i16").unwrap(), -30_000, "{label}");
            assert_eq!(f.get::<u32>("u32").unwrap(), 4_000_000_000, "{label}");
            assert_eq!(f.get::<i32>("i32").unwrap(), -2_000_000_000, "{label}");
            assert_eq!(f.get::<f32>("f32").unwrap(), 1.5, "{label}");
            assert!(f.get::<bool>("bool").unwrap(), "{label}");
            assert!(!f.get::<bool>("bool.false").unwrap(), "{label}");
            assert_eq!(f.get_str("string").unwrap(), "héllo", "{label}");
            assert_eq!(f.get::<u64>("u64").unwrap(), u64::MAX - 1, "{label}");
            assert_eq!(f.get::<i64>("i64").unwrap(), i64::MIN + 1, "{label}");
            assert_eq!(f.get::<f64>("f64").unwrap(), -2.25, "{label}");

            let arr = |k: &str| f.get_array(k).unwrap();
            assert_eq!(
                arr("arr.u8").typed::<u8>().unwrap().collect::<Vec<_>>(),
                [1, 2, 255],
                "{label}"
            );
            assert_eq!(
                arr("arr.i8").typed::<i8>().unwrap().collect::<Vec<_>>(),
                [-1, 127],
                "{label}"
            );
            assert_eq!(
                arr("arr.u16").typed::<u16>().unwrap().collect::<Vec<_>>(),
                [1, 65_535],
                "{label}"
            );
            assert_eq!(
                arr("arr.i16").typed::<i16>().unwrap().collect::<Vec<_>>(),
                [-2],
                "{label}"
            );
            assert_eq!(
                f.get_array_of::<u32>("arr.u32")
                    .unwrap()
                    .collect::<Vec<_>>(),
                [0, 7, u32::MAX],
                "{label}"
            );
            assert_eq!(
                arr("arr.i32").typed::<i32>().unwrap().collect::<Vec<_>>(),
                [i32::MIN, 3],
                "{label}"
            );
            assert_eq!(
                arr("arr.f32").typed::<f32>().unwrap().collect::<Vec<_>>(),
                [-0.5, f32::INFINITY, 1e-30],
                "{label}"
            );
            assert_eq!(
                arr("arr.bool").typed::<bool>().unwrap().collect::<Vec<_>>(),
                [true, false, true],
                "{label}"
            );
            assert_eq!(
                f.get_strings("arr.string").unwrap().collect::<Vec<_>>(),
                STRINGS,
                "{label}"
            );
            assert_eq!(
                arr("arr.u64").typed::<u64>().unwrap().collect::<Vec<_>>(),
                [0, u64::MAX],
                "{label}"
            );
            assert_eq!(
                arr("arr.i64").typed::<i64>().unwrap().collect::<Vec<_>>(),
                [-9],
                "{label}"
            );
            let f64s: Vec<f64> = arr("arr.f64").typed::<f64>().unwrap().collect();
            assert_eq!(f64s[0], std::f64::consts::PI, "{label}");
            assert!(f64s[1] == 0.0 && f64s[1].is_sign_negative(), "{label}");
            let empty = arr("arr.empty");
            assert!(
                empty.is_empty() && empty.element_type() == ValueType::String,
                "{label}"
            );
            assert_eq!(empty.strings().unwrap().count(), 0, "{label}");

            // The generic iterator agrees with the typed ones.
            let generic: Vec<Value<'_>> = arr("arr.i16").iter().collect();
            assert_eq!(generic, [Value::I16(-2)], "{label}");
            let generic: Vec<Value<'_>> = arr("arr.string").iter().collect();
            assert_eq!(generic, STRINGS.map(Value::String), "{label}");
            // Typed access with the wrong type is refused, not reinterpreted.
            assert!(arr("arr.u16").typed::<i16>().is_none(), "{label}");
            assert!(
                matches!(
                    f.get::<u32>("u64"),
                    Err(Error::Lookup(LookupError::TypeMismatch { .. }))
                ),
                "{label}"
            );
            assert!(
                matches!(
                    f.get_str("missing"),
                    Err(Error::Lookup(LookupError::KeyNotFound { .. }))
                ),
                "{label}"
            );

            // Nested: structure through ArrayView::iter.
            let nested = arr("arr.array");
            assert_eq!(
                (nested.element_type(), nested.len()),
                (ValueType::Array, 3),
                "{label}"
            );
            let inner: Vec<Vec<u32>> = nested
                .iter()
                .map(|v| v.as_array().unwrap().typed::<u32>().unwrap().collect())
                .collect();
            assert_eq!(inner, [vec![1, 2], vec![], vec![3]], "{label}");

            // Tensor data: bytes as stored, values in the file's order.
            assert_eq!(
                f.data_offset(),
                align_up(f.header_len(), 32).unwrap(),
                "{label}"
            );
            let t1 = f.tensor("t1").unwrap();
            assert_eq!(t1.shape(), &[8], "{label}");
            let data = t1.data().unwrap();
            assert_eq!(
                data,
                &bytes[(f.data_offset() + 64) as usize..][..32],
                "{label}"
            );
            let decoded: Vec<f32> = data
                .chunks_exact(4)
                .map(|c| {
                    let c = c.try_into().unwrap();
                    match endian {
                        Endian::Little => f32::from_le_bytes(c),
                        Endian::Big => f32::from_be_bytes(c),
                    }
                })
                .collect();
            assert_eq!(
                decoded,
                (16..24).map(|i| i as f32).collect::<Vec<_>>(),
                "{label}"
            );
            if endian == Endian::NATIVE {
                assert_eq!(
                    f.tensor("t0").unwrap().as_slice::<f32>().unwrap()[5],
                    5.0,
                    "{label}"
                );
            } else {
                assert!(
                    matches!(
                        f.tensor("t0").unwrap().as_slice::<f32>(),
                        Err(Error::Codec(CodecError::ViewUnavailable { .. }))
                    ),
                    "{label}"
                );
            }
        }
    }
}

#[test]
fn v1_uses_u32_counts() {
    let v1 = every_type(1, Endian::Little);
    let v2 = every_type(2, Endian::Little);
    let (a, b) = (accept(&v1), accept(&v2));
    // Every length and count is 4 bytes shorter: header counts, keys,
    // the string value, array counts (14 + 3 inner), strings inside arrays,
    // tensor names and dims.
    assert!(a.header_len() < b.header_len());
    let counts = 2 + 27 + 1 + 17 + STRINGS.len() + 2 + 3;
    assert_eq!(b.header_len() - a.header_len(), 4 * counts as u64);
}

#[test]
fn zero_kvs_and_zero_tensors() {
    let mut r = raw();
    r.header(0, 0);
    let f = accept(&r.buf);
    assert_eq!((f.kv_count(), f.tensor_count(), f.header_len()), (0, 0, 24));
    assert_eq!(f.alignment(), 32);
    // Also with the padding a writer adds.
    r.pad(32);
    assert_eq!(accept(&r.buf).data_offset(), 32);
}

#[test]
fn zero_element_tensor() {
    let mut r = raw();
    r.header(3, 0);
    r.tensor_info("empty", &[0, 4], 0, 0);
    r.tensor_info("w", &[8], 0, 0);
    r.tensor_info("empty.q", &[0], GgmlType::Q4_K.id(), 32);
    r.pad(32).bytes(&[7; 32]);
    let f = accept(&r.buf);
    let e = f.tensor("empty").unwrap();
    assert_eq!(
        (
            e.element_count(),
            e.byte_size().unwrap(),
            e.data().unwrap().len()
        ),
        (0, 0, 0)
    );
    assert_eq!(f.tensor("empty.q").unwrap().byte_size().unwrap(), 0);
    assert_eq!(f.tensor("w").unwrap().data().unwrap(), &[7; 32]);
}

/// A file with `general.alignment`, a 3-element F32 tensor and an 8-element
/// one placed at the next multiple of the alignment.
fn aligned(alignment: u32) -> Vec<u8> {
    let second = align_up(12, alignment as u64).unwrap();
    let mut r = raw();
    r.header(2, 1)
        .str("general.alignment")
        .u32(4)
        .u32(alignment);
    r.tensor_info("a", &[3], 0, 0)
        .tensor_info("b", &[8], 0, second);
    r.pad(alignment as usize);
    for i in 0..3 {
        r.f32(i as f32);
    }
    r.pad(alignment as usize);
    for i in 0..8 {
        r.f32(100.0 + i as f32);
    }
    r.buf
}

#[test]
fn alignments_1_64_4096() {
    for alignment in [1u32, 64, 4096] {
        let bytes = aligned(alignment);
        let f = accept(&bytes);
        assert_eq!(f.alignment(), alignment as u64);
        assert_eq!(
            f.data_offset(),
            align_up(f.header_len(), alignment as u64).unwrap()
        );
        assert_eq!(f.data_offset() % alignment as u64, 0);
        let b = f.tensor("b").unwrap();
        let floats: Vec<f32> = b
            .data()
            .unwrap()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(
            floats,
            (0..8).map(|i| 100.0 + i as f32).collect::<Vec<_>>(),
            "alignment {alignment}"
        );
        assert!(
            f.lint_llama_cpp().is_empty(),
            "alignment {alignment}: {:?}",
            f.lint_llama_cpp()
        );
    }
    // With alignment 1 the data section starts right after the infos.
    let bytes = aligned(1);
    let f = accept(&bytes);
    assert_eq!(f.data_offset(), f.header_len());
}

#[test]
fn big_endian_file() {
    let mut r = Raw::new(ctx(3, Endian::Big));
    r.header(2, 2)
        .str("general.architecture")
        .u32(8)
        .str("llama");
    r.str("llama.context_length").u32(4).u32(0x0102_0304);
    r.tensor_info("f16", &[4], GgmlType::F16.id(), 0)
        .tensor_info("i32", &[2], GgmlType::I32.id(), 32);
    r.pad(32);
    // f16 bits of 1.0, -2.0, 0.5 and 65504.0.
    let halves = [0x3C00u16, 0xC000, 0x3800, 0x7BFF];
    for h in halves {
        r.bytes(&h.to_be_bytes());
    }
    r.pad(32).u32(0xDEAD_BEEF).u32(7);
    let bytes = r.buf.clone();
    let f = accept(&bytes);
    assert_eq!(f.endian(), Endian::Big);
    assert_eq!(f.version(), 3);
    assert_eq!(f.get::<u32>("llama.context_length").unwrap(), 0x0102_0304);
    assert_eq!(f.get_str("general.architecture").unwrap(), "llama");
    let d = f.tensor("f16").unwrap().data().unwrap();
    let got: Vec<u16> = d
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(got, halves);
    assert_eq!(
        f.tensor("i32").unwrap().data().unwrap(),
        &[0xDE, 0xAD, 0xBE, 0xEF, 0, 0, 0, 7]
    );
    assert_eq!(f.lint_llama_cpp(), [LintIssue::BigEndian]);
}

#[test]
fn unknown_and_removed_type_ids() {
    for id in [43u32, 4, 36, 1000] {
        let mut r = raw();
        r.header(3, 0);
        r.tensor_info("before", &[8], 0, 0);
        r.tensor_info("strange", &[32, 2], id, 32);
        r.tensor_info("after", &[8], 0, 32);
        r.pad(32);
        for i in 0..16 {
            r.f32(i as f32);
        }
        let f = accept(&r.buf);
        let t = f.tensor("strange").unwrap();
        assert_eq!(t.ggml_type(), GgmlType::Unknown(id));
        assert_eq!(
            (t.shape(), t.element_count(), t.offset()),
            (&[32u64, 2][..], 64, 32)
        );
        let e = t.byte_size().unwrap_err();
        assert!(
            matches!(&e, Error::Codec(CodecError::UnknownTensorType { tensor, type_id }) if tensor == "strange" && *type_id == id),
            "{e:?}"
        );
        let e = t.data().unwrap_err();
        assert!(
            matches!(&e, Error::Codec(CodecError::UnknownTensorType { tensor, type_id }) if tensor == "strange" && *type_id == id),
            "{e:?}"
        );
        assert_eq!(
            f.tensor("after").unwrap().as_slice::<f32>().unwrap(),
            &[8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]
        );
        assert_eq!(
            f.tensor("before").unwrap().as_slice::<f32>().unwrap()[7],
            7.0
        );
        assert_eq!(
            f.lint_llama_cpp(),
            [LintIssue::UnknownType {
                tensor: "strange".into(),
                type_id: id
            }]
        );
    }
}

#[test]
fn unknown_type_start_past_end_is_rejected() {
    // Its size is unknown, but its start must still be inside the file.
    let mut r = raw();
    r.header(1, 0)
        .tensor_info("strange", &[4], 43, 1 << 20)
        .pad(32);
    let e = super::util::reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::TensorOutOfBounds { tensor, .. }) if tensor == "strange"),
        "{e:?}"
    );
}

#[test]
fn non_contiguous_offsets_are_accepted() {
    // A gap between tensors and data out of info order.
    let mut r = raw();
    r.header(2, 0)
        .tensor_info("late", &[8], 0, 96)
        .tensor_info("early", &[8], 0, 0)
        .pad(32);
    r.buf.resize(r.buf.len() + 128, 1);
    let f = accept(&r.buf);
    assert_eq!(f.tensor("late").unwrap().data().unwrap().len(), 32);
    // Each tensor not where llama.cpp's running sum puts it is listed.
    assert_eq!(
        f.lint_llama_cpp(),
        [
            LintIssue::NonContiguous {
                tensor: "late".into(),
                expected: 0,
                found: 96
            },
            LintIssue::NonContiguous {
                tensor: "early".into(),
                expected: 128,
                found: 0
            }
        ]
    );
}

#[test]
fn lint_clean_file() {
    let bytes = tiny_file();
    assert_eq!(accept(&bytes).lint_llama_cpp(), []);
    // 63-byte names are fine, 64 are not.
    for (len, issues) in [(63, 0), (64, 1)] {
        let name = "n".repeat(len);
        let mut r = raw();
        r.header(1, 0)
            .tensor_info(&name, &[8], 0, 0)
            .pad(32)
            .bytes(&[0; 32]);
        let lint = accept(&r.buf).lint_llama_cpp();
        assert_eq!(lint.len(), issues, "{len}: {lint:?}");
        if issues == 1 {
            assert_eq!(lint[0], LintIssue::LongTensorName { tensor: name });
        }
    }
}

#[test]
fn lint_lists_every_issue() {
    let mut r = Raw::new(ctx(1, Endian::Little));
    let long = "x".repeat(70);
    r.header(3, 2).str("ok").u32(4).u32(1);
    r.str("nested").u32(9).u32(9).count(1).u32(0).count(1).u8(1);
    r.tensor_info("a", &[8], 0, 64)
        .tensor_info(&long, &[8], 0, 0)
        .tensor_info("u", &[8], 43, 128);
    r.pad(32).bytes(&[0; 192]);
    let f = accept(&r.buf);
    let lint = f.lint_llama_cpp();
    assert!(lint.contains(&LintIssue::Version1), "{lint:?}");
    assert!(
        lint.contains(&LintIssue::NestedArray {
            key: "nested".into()
        }),
        "{lint:?}"
    );
    assert!(
        lint.contains(&LintIssue::LongTensorName {
            tensor: long.clone()
        }),
        "{lint:?}"
    );
    assert!(
        lint.contains(&LintIssue::UnknownType {
            tensor: "u".into(),
            type_id: 43
        }),
        "{lint:?}"
    );
    assert!(
        lint.contains(&LintIssue::NonContiguous {
            tensor: "a".into(),
            expected: 0,
            found: 64
        }),
        "{lint:?}"
    );
    assert!(!lint.contains(&LintIssue::BigEndian));
    for issue in &lint {
        assert!(!issue.to_string().is_empty());
    }
}

/// A file with `tokens` strings of metadata and a `data_len`-byte tensor.
fn big_data(tokens: usize, data_len: u64) -> Vec<u8> {
    let mut r = raw();
    r.header(1, 1)
        .str("tokenizer.ggml.tokens")
        .u32(9)
        .u32(8)
        .count(tokens as u64);
    for i in 0..tokens {
        r.str(&format!("token-{i}"));
    }
    r.tensor_info("big", &[data_len / 4], 0, 0).pad(32);
    r.buf.resize(r.buf.len() + data_len as usize, 0xAB);
    r.buf
}

#[test]
fn from_reader_reads_only_the_header_region() {
    const CHUNK: u64 = 64 * 1024;
    let bytes = big_data(1000, 16 << 20);
    let max_pos = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let rec = Recording {
        inner: std::io::Cursor::new(bytes.clone()),
        max_pos: max_pos.clone(),
    };
    let f = gguf::GgufFile::open(gguf::Source::reader(rec)).unwrap();
    let rec_max = || max_pos.load(std::sync::atomic::Ordering::Relaxed);
    assert!(f.header_len() < CHUNK);
    assert!(
        rec_max() <= f.header_len() + CHUNK,
        "read up to {} for a header of {}",
        rec_max(),
        f.header_len()
    );
    assert_eq!(f.header_bytes().len() as u64, f.header_len());
    assert!(f.data_section().is_none());
    assert!(matches!(
        f.tensor("big").unwrap().data(),
        Err(Error::Lookup(LookupError::DataNotLoaded { .. }))
    ));
    // Read on request: that tensor's bytes and no more.
    let big = f.tensor("big").unwrap();
    let read = big.read().unwrap();
    let start = big.file_offset() as usize;
    assert_eq!(&*read, &bytes[start..start + read.len()]);
    assert_eq!(rec_max(), big.file_offset() + big.byte_size().unwrap());
}

/// For a header region larger than the first 64 KiB read, `from_reader`
/// re-parses from the start after each read, so it grows its buffer
/// geometrically (linear total work). The price is that it may read up to
/// the next doubling past the tensor infos, i.e. at most twice the header
/// region, never the data section beyond that. Bounding the overshoot to
/// one chunk would need a resumable parser (reported to the lead).
#[test]
fn from_reader_with_a_big_header() {
    const CHUNK: u64 = 64 * 1024;
    let bytes = big_data(150_000, 32 << 20);
    let max_pos = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let rec = Recording {
        inner: std::io::Cursor::new(bytes.clone()),
        max_pos: max_pos.clone(),
    };
    let f = gguf::GgufFile::open(gguf::Source::reader(rec)).unwrap();
    let rec_max = || max_pos.load(std::sync::atomic::Ordering::Relaxed);
    assert!(f.header_len() > 10 * CHUNK);
    assert_eq!(
        f.get_strings("tokenizer.ggml.tokens").unwrap().nth(149_999),
        Some("token-149999")
    );
    let bound = (f.header_len() + CHUNK).max(2 * f.header_len());
    assert!(
        rec_max() <= bound,
        "read up to {} for a header of {}",
        rec_max(),
        f.header_len()
    );
    assert!(
        rec_max() < bytes.len() as u64 / 4,
        "read most of the data section"
    );
}

#[test]
fn from_reader_at_a_nonzero_stream_position() {
    // The GGUF starts at the reader's current position (e.g. inside an archive).
    let gguf = tiny_file();
    let mut bytes = vec![0xEE; 100];
    bytes.extend_from_slice(&gguf);
    let mut cur = std::io::Cursor::new(bytes);
    std::io::Seek::seek(&mut cur, std::io::SeekFrom::Start(100)).unwrap();
    let streamed = gguf::GgufFile::open(gguf::Source::reader(cur)).unwrap();
    super::util::assert_same_index(&accept(&gguf), &streamed);
}
