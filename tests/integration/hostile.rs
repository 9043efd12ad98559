//! Files the reader must reject, each with its exact error variant and the
//! offset, key or tensor name that locates the fault. Every case is checked
//! through a byte slice, a `Read + Seek` stream and a path (`GgufFile::open` of each), which must agree.

use gguf::error::FormatError;
use gguf::read::Limits;
use gguf::{Endian, Error, Gguf, GgufFile, ValueType};

use super::util::{ctx, raw, reject, Raw};

/// Offset of the first metadata entry in a v3 file.
const KV0: u64 = 24;

/// A file with no metadata and the given tensor infos (F32 unless `ty`),
/// padded, followed by `data_len` zero bytes.
fn with_tensors(infos: &[(&str, &[u64], u32, u64)], data_len: usize) -> Vec<u8> {
    let mut r = raw();
    r.header(infos.len() as u64, 0);
    for &(name, dims, ty, offset) in infos {
        r.tensor_info(name, dims, ty, offset);
    }
    r.pad(32);
    r.buf.resize(r.buf.len() + data_len, 0);
    r.buf
}

#[test]
fn bad_magic() {
    let mut r = raw();
    r.header(0, 0);
    r.buf[..4].copy_from_slice(b"GGUX");
    assert!(
        matches!(reject(&r.buf), Error::Format(FormatError::BadMagic { found }) if &found == b"GGUX")
    );
}

#[test]
fn empty_and_short_files() {
    assert!(matches!(
        reject(b""),
        Error::Format(FormatError::Truncated {
            offset: 0,
            needed: 4,
            ..
        })
    ));
    assert!(matches!(
        reject(b"GGUF\x03\0"),
        Error::Format(FormatError::Truncated {
            offset: 4,
            needed: 2,
            ..
        })
    ));
}

#[test]
fn version_0() {
    let mut r = Raw::new(ctx(0, Endian::Little));
    r.bytes(b"GGUF").u32(0).u64(0).u64(0);
    assert!(matches!(
        reject(&r.buf),
        Error::Format(FormatError::UnsupportedVersion { version: 0 })
    ));
}

#[test]
fn version_4_little_and_big_endian() {
    for endian in [Endian::Little, Endian::Big] {
        let mut r = Raw::new(ctx(4, endian));
        r.bytes(b"GGUF").u32(4).u64(0).u64(0);
        assert!(
            matches!(
                reject(&r.buf),
                Error::Format(FormatError::UnsupportedVersion { version: 4 })
            ),
            "{endian}"
        );
    }
}

#[test]
fn tensor_count_u64_max() {
    let mut r = raw();
    r.header(u64::MAX, 0);
    let e = reject(&r.buf);
    assert!(
        matches!(
            e,
            Error::Format(FormatError::CountTooLarge {
                offset: 8,
                count: u64::MAX,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn kv_count_u64_max() {
    let mut r = raw();
    r.header(0, u64::MAX);
    let e = reject(&r.buf);
    assert!(
        matches!(
            e,
            Error::Format(FormatError::CountTooLarge {
                offset: 16,
                count: u64::MAX,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn v1_counts_too_large() {
    let mut r = Raw::new(ctx(1, Endian::Little));
    r.header(0, u32::MAX as u64);
    let e = reject(&r.buf);
    assert!(
        matches!(
            e,
            Error::Format(FormatError::CountTooLarge {
                offset: 12,
                count: 0xFFFF_FFFF,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn key_length_u64_max() {
    let mut r = raw();
    r.header(0, 1).u64(u64::MAX).u32(4).u32(0);
    let e = reject(&r.buf);
    assert!(
        matches!(
            e,
            Error::Format(FormatError::CountTooLarge {
                offset: KV0,
                count: u64::MAX,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn string_value_length_past_end() {
    let mut r = raw();
    r.header(0, 1).str("k").u32(8).u64(1 << 40).bytes(b"abc");
    let e = reject(&r.buf);
    assert!(
        matches!(e, Error::Format(FormatError::CountTooLarge { offset, count, remaining: 3, .. }) if offset == KV0 + 9 + 4 && count == 1 << 40),
        "{e:?}"
    );
}

#[test]
fn array_count_past_end() {
    let mut r = raw();
    r.header(0, 1)
        .str("k")
        .u32(9)
        .u32(4)
        .u64(u64::MAX / 2)
        .u32(1);
    let e = reject(&r.buf);
    // The count field is after key (8 + 1), value type (4), element type (4).
    assert!(
        matches!(e, Error::Format(FormatError::CountTooLarge { offset, count, .. }) if offset == KV0 + 17 && count == u64::MAX / 2),
        "{e:?}"
    );
    // A string array whose count exceeds the bytes left: each string takes at least its length field.
    let mut r = raw();
    r.header(0, 1)
        .str("k")
        .u32(9)
        .u32(8)
        .u64(3)
        .str("a")
        .str("b");
    let e = reject(&r.buf);
    assert!(
        matches!(
            e,
            Error::Format(FormatError::CountTooLarge {
                count: 3,
                min_bytes: 24,
                remaining: 18,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn empty_key() {
    let mut r = raw();
    r.header(0, 1).str("").u32(4).u32(0);
    assert!(matches!(
        reject(&r.buf),
        Error::Format(FormatError::EmptyKey { offset: KV0 })
    ));
}

#[test]
fn value_type_13() {
    let mut r = raw();
    r.header(0, 2).str("a").u32(0).u8(1).str("k").u32(13).u32(0);
    let second = KV0 + 8 + 1 + 4 + 1;
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::InvalidValueType { offset, key, type_id: 13 }) if *offset == second + 9 && key == "k"),
        "{e:?}"
    );
}

#[test]
fn array_element_type_13() {
    let mut r = raw();
    r.header(0, 1).str("k").u32(9).u32(13).u64(0);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::InvalidValueType { offset, key, type_id: 13 }) if *offset == KV0 + 13 && key == "k"),
        "{e:?}"
    );
    // Also inside a nested array.
    let mut r = raw();
    r.header(0, 1)
        .str("k")
        .u32(9)
        .u32(9)
        .u64(1)
        .u32(u32::MAX)
        .u64(0);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::InvalidValueType { offset, key, type_id: u32::MAX }) if *offset == KV0 + 25 && key == "k"),
        "{e:?}"
    );
}

#[test]
fn duplicate_key() {
    let mut r = raw();
    r.header(0, 3).str("a").u32(4).u32(1).str("b").u32(4).u32(2);
    let third = r.buf.len() as u64;
    r.str("a").u32(8).str("again");
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::DuplicateKey { offset, key }) if *offset == third && key == "a"),
        "{e:?}"
    );
}

#[test]
fn alignment_not_power_of_two() {
    for bad in [0u32, 13, 48, u32::MAX] {
        let mut r = raw();
        r.header(0, 1).str("general.alignment").u32(4).u32(bad);
        let e = reject(&r.buf);
        assert!(
            matches!(e, Error::Format(FormatError::InvalidAlignment { offset, alignment }) if offset == KV0 + 8 + 17 + 4 && alignment == bad as u64),
            "{bad}: {e:?}"
        );
    }
}

#[test]
fn alignment_wrong_type() {
    let mut r = raw();
    r.header(0, 1).str("general.alignment").u32(5).u32(32);
    let e = reject(&r.buf);
    assert!(
        matches!(e, Error::Format(FormatError::AlignmentType { offset, found: ValueType::I32 }) if offset == KV0 + 29),
        "{e:?}"
    );
    let mut r = raw();
    r.header(0, 1).str("general.alignment").u32(10).u64(32);
    assert!(matches!(
        reject(&r.buf),
        Error::Format(FormatError::AlignmentType {
            found: ValueType::U64,
            ..
        })
    ));
}

#[test]
fn too_many_dims() {
    let mut r = raw();
    r.header(1, 0);
    let info = r.buf.len() as u64;
    r.str("t").u32(5);
    for _ in 0..5 {
        r.u64(1);
    }
    r.u32(0).u64(0).pad(32);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::TooManyDims { offset, tensor, n_dims: 5 }) if *offset == info + 9 && tensor == "t"),
        "{e:?}"
    );
    // A huge n_dims is rejected before any dimension is read.
    let mut r = raw();
    r.header(1, 0).str("t").u32(u32::MAX).bytes(&[0; 64]);
    assert!(matches!(
        reject(&r.buf),
        Error::Format(FormatError::TooManyDims {
            n_dims: u32::MAX,
            ..
        })
    ));
}

#[test]
fn dims_u64_max() {
    let buf = with_tensors(&[("t", &[u64::MAX], 0, 0)], 64);
    let e = reject(&buf);
    assert!(
        matches!(&e, Error::Format(FormatError::ElementCountOverflow { offset, tensor, shape }) if *offset == 24 + 9 + 4 && tensor == "t" && shape == &[u64::MAX]),
        "{e:?}"
    );
    // One dimension above i64::MAX is enough, even with an unknown type.
    let buf = with_tensors(&[("t", &[i64::MAX as u64 + 1, 1], 4, 0)], 64);
    assert!(matches!(
        reject(&buf),
        Error::Format(FormatError::ElementCountOverflow { .. })
    ));
}

#[test]
fn element_count_overflow() {
    let d = 4 * i32::MAX as u64;
    let buf = with_tensors(&[("t", &[d, d, d, d], 0, 0)], 64);
    let e = reject(&buf);
    assert!(
        matches!(&e, Error::Format(FormatError::ElementCountOverflow { tensor, shape, .. }) if tensor == "t" && shape == &[d, d, d, d]),
        "{e:?}"
    );
    // Every dimension fits i64 and the product fits u64, but not i64 (ggml's bound).
    let buf = with_tensors(&[("u", &[1 << 32, 1 << 31], 24, 0)], 64);
    assert!(matches!(
        reject(&buf),
        Error::Format(FormatError::ElementCountOverflow { .. })
    ));
}

#[test]
fn byte_size_overflow() {
    // 2^62 elements fit in i64; 2^62 * 8 bytes of F64 do not fit in u64.
    let elements = 1u64 << 62;
    let buf = with_tensors(&[("t", &[1 << 31, 1 << 31], 28, 0)], 64);
    let e = reject(&buf);
    assert!(
        matches!(&e, Error::Format(FormatError::ByteSizeOverflow { tensor, elements: n, ty }) if tensor == "t" && *n == elements && *ty == gguf::GgmlType::F64),
        "{e:?}"
    );
}

#[test]
fn row_not_block_multiple() {
    let buf = with_tensors(&[("q", &[33, 2], 2, 0)], 64);
    let e = reject(&buf);
    assert!(
        matches!(&e, Error::Format(FormatError::RowNotBlockMultiple { tensor, row: 33, block: 32, .. }) if tensor == "q"),
        "{e:?}"
    );
}

#[test]
fn offset_u64_max() {
    // Not a multiple of 32: misaligned before anything else.
    let buf = with_tensors(&[("t", &[4], 0, u64::MAX)], 64);
    let e = reject(&buf);
    assert!(
        matches!(&e, Error::Format(FormatError::MisalignedTensor { tensor, offset: u64::MAX, relative: u64::MAX, alignment: 32 }) if tensor == "t"),
        "{e:?}"
    );
    // Aligned (u64::MAX rounded down to 32) but far past the end: the end
    // saturates instead of wrapping.
    let buf = with_tensors(&[("t", &[4], 0, !31u64)], 64);
    let e = reject(&buf);
    assert!(
        matches!(&e, Error::Format(FormatError::TensorOutOfBounds { tensor, end: u64::MAX, file_len, .. }) if tensor == "t" && *file_len == buf.len() as u64),
        "{e:?}"
    );
    // With alignment 1, u64::MAX itself is aligned.
    let mut r = raw();
    r.header(1, 1).str("general.alignment").u32(4).u32(1);
    r.tensor_info("t", &[4], 0, u64::MAX).bytes(&[0; 16]);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::TensorOutOfBounds { tensor, offset: u64::MAX, end: u64::MAX, .. }) if tensor == "t"),
        "{e:?}"
    );
}

#[test]
fn misaligned_offset() {
    let buf = with_tensors(&[("a", &[8], 0, 0), ("b", &[8], 0, 48)], 128);
    let data_start = (buf.len() - 128) as u64;
    let e = reject(&buf);
    assert!(
        matches!(&e, Error::Format(FormatError::MisalignedTensor { tensor, offset, relative: 48, alignment: 32 }) if tensor == "b" && *offset == data_start + 48),
        "{e:?}"
    );
}

#[test]
fn a_misaligned_tensor_is_named_at_its_file_offset() {
    // The message says where in the file the data would start (the form
    // every error uses, "at offset N"), not only the info's offset, which
    // counts from the data section.
    let buf = with_tensors(&[("a", &[8], 0, 0), ("b", &[8], 0, 48)], 128);
    let data_start = buf.len() - 128;
    let message = reject(&buf).to_string();
    assert!(
        message.contains(&format!("data at offset {} ", data_start + 48)),
        "{message}"
    );
    assert!(message.contains("48 into the data section"), "{message}");
}

#[test]
fn duplicate_tensor_name() {
    let mut r = raw();
    r.header(2, 0).tensor_info("w", &[8], 0, 0);
    let second = r.buf.len() as u64;
    r.tensor_info("w", &[8], 0, 32).pad(32).bytes(&[0; 64]);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::DuplicateTensor { offset, tensor }) if *offset == second && tensor == "w"),
        "{e:?}"
    );
}

#[test]
fn data_one_byte_short() {
    // a: 32 bytes at 0; b: 24 bytes at 32, ends at data offset 56.
    let buf = with_tensors(&[("a", &[8], 0, 0), ("b", &[6], 0, 32)], 55);
    let data_offset = buf.len() as u64 - 55;
    let e = reject(&buf);
    assert!(
        matches!(&e, Error::Format(FormatError::TensorOutOfBounds { tensor, offset, end, file_len }) if tensor == "b" && *offset == data_offset + 32 && *end == data_offset + 56 && *file_len == data_offset + 55),
        "{e:?}"
    );
    // The same file with the byte back is accepted.
    let ok = with_tensors(&[("a", &[8], 0, 0), ("b", &[6], 0, 32)], 56);
    GgufFile::open(&ok).unwrap();
}

#[test]
fn data_section_missing() {
    // The infos end and the file stops before the padding.
    let mut r = raw();
    r.header(1, 0).tensor_info("t", &[1], 0, 0);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::TensorOutOfBounds { tensor, .. }) if tensor == "t"),
        "{e:?}"
    );
}

#[test]
fn overlapping_tensors() {
    let buf = with_tensors(&[("a", &[16], 0, 0), ("b", &[16], 0, 32)], 128);
    let e = reject(&buf);
    assert!(
        matches!(&e, Error::Format(FormatError::OverlappingTensors { first, first_end: 64, second, second_start: 32 }) if first == "a" && second == "b"),
        "{e:?}"
    );
    // Out of info order: detected after sorting by offset.
    let buf = with_tensors(
        &[("x", &[8], 0, 64), ("y", &[8], 0, 0), ("z", &[24], 0, 32)],
        128,
    );
    let e = reject(&buf);
    assert!(
        matches!(&e, Error::Format(FormatError::OverlappingTensors { first, first_end: 128, second, second_start: 64 }) if first == "z" && second == "x"),
        "{e:?}"
    );
    // Same start: a zero-size tensor may share it, two sized ones may not.
    let buf = with_tensors(&[("a", &[8], 0, 0), ("b", &[8], 0, 0)], 64);
    assert!(matches!(
        reject(&buf),
        Error::Format(FormatError::OverlappingTensors {
            second_start: 0,
            ..
        })
    ));
}

#[test]
fn invalid_utf8_in_key() {
    let mut r = raw();
    r.header(0, 1).u64(2).bytes(&[0xC3, 0x28]).u32(4).u32(0);
    let e = reject(&r.buf);
    assert!(
        matches!(e, Error::Format(FormatError::InvalidUtf8 { offset, .. }) if offset == KV0 + 8),
        "{e:?}"
    );
}

#[test]
fn invalid_utf8_in_string_value() {
    let mut r = raw();
    r.header(0, 1)
        .str("k")
        .u32(8)
        .u64(3)
        .bytes(&[b'a', 0xFF, b'b']);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::InvalidUtf8 { offset, what }) if *offset == KV0 + 9 + 4 + 8 && what.contains("\"k\"")),
        "{e:?}"
    );
}

#[test]
fn invalid_utf8_in_string_array() {
    let mut r = raw();
    r.header(0, 1)
        .str("tokens")
        .u32(9)
        .u32(8)
        .u64(3)
        .str("ok")
        .str("fine");
    let bad = r.buf.len() as u64;
    // A lone surrogate encoded in UTF-8 (CESU) is not valid UTF-8.
    r.u64(3).bytes(&[0xED, 0xA0, 0x80]);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::InvalidUtf8 { offset, what }) if *offset == bad + 8 && what.contains("tokens")),
        "{e:?}"
    );
}

#[test]
fn invalid_utf8_in_tensor_name() {
    let mut r = raw();
    r.header(1, 0)
        .u64(1)
        .u8(0x80)
        .u32(1)
        .u64(1)
        .u32(0)
        .u64(0)
        .pad(32)
        .bytes(&[0; 32]);
    assert!(matches!(
        reject(&r.buf),
        Error::Format(FormatError::InvalidUtf8 { offset: 32, .. })
    ));
}

#[test]
fn bool_byte_2() {
    let mut r = raw();
    r.header(0, 1).str("b").u32(7).u8(2);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::InvalidBool { offset, key, byte: 2 }) if *offset == KV0 + 13 && key == "b"),
        "{e:?}"
    );
    // In an array: the offset is the bad element's.
    let mut r = raw();
    r.header(0, 1)
        .str("bs")
        .u32(9)
        .u32(7)
        .u64(4)
        .bytes(&[0, 1, 1, 0xFF]);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::InvalidBool { offset, key, byte: 0xFF }) if *offset == KV0 + 10 + 4 + 12 + 3 && key == "bs"),
        "{e:?}"
    );
}

/// `depth` arrays nested inside each other, the innermost holding one u8.
fn nested(depth: u32) -> Vec<u8> {
    let mut r = raw();
    r.header(0, 1).str("deep").u32(9);
    for _ in 1..depth {
        r.u32(9).u64(1);
    }
    r.u32(0).u64(1).u8(7);
    r.buf
}

#[test]
fn arrays_nested_deeper_than_the_limit() {
    let limit = Limits::default().max_array_depth;
    GgufFile::open(&nested(limit)).expect("nesting at the limit is accepted");
    let buf = nested(limit + 1);
    let e = reject(&buf);
    // The too-deep array is the innermost one: header (type 4 + count 8) per level.
    let expected = KV0 + 12 + 4 + 12 * limit as u64;
    assert!(
        matches!(&e, Error::Format(FormatError::ArrayTooDeep { offset, key, limit: l }) if *offset == expected && key == "deep" && *l == limit),
        "{e:?}"
    );
    // A custom limit is honoured by every entry point.
    let strict = Limits::default().max_array_depth(1);
    let buf = nested(2);
    let a = GgufFile::open_with(&buf, &gguf::OpenOptions::default().limits(strict)).unwrap_err();
    assert!(
        matches!(a, Error::Format(FormatError::ArrayTooDeep { limit: 1, .. })),
        "{a:?}"
    );
    let b = GgufFile::open_with(
        gguf::Source::reader(std::io::Cursor::new(buf.to_vec())),
        &gguf::OpenOptions::default().limits(strict),
    )
    .unwrap_err();
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    GgufFile::open_with(&nested(1), &gguf::OpenOptions::default().limits(strict)).unwrap();
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    // 100,000 levels in 1.2 MB: rejected at the limit, never recursed into.
    let buf = nested(100_000);
    assert!(matches!(
        reject(&buf),
        Error::Format(FormatError::ArrayTooDeep { .. })
    ));
}

#[test]
fn truncated_inside_a_value_names_the_key() {
    let mut r = raw();
    r.header(0, 1).str("general.name").u32(10).bytes(&[1, 2, 3]);
    let e = reject(&r.buf);
    assert!(
        matches!(&e, Error::Format(FormatError::Truncated { what, offset, needed: 5 }) if what.contains("general.name") && *offset == KV0 + 20 + 4),
        "{e:?}"
    );
}

#[test]
fn big_endian_hostile_files_are_rejected_too() {
    let mut r = Raw::new(ctx(3, Endian::Big));
    r.header(0, 1).str("k").u32(9).u32(13).u64(0);
    assert!(matches!(
        reject(&r.buf),
        Error::Format(FormatError::InvalidValueType { type_id: 13, .. })
    ));
    let mut r = Raw::new(ctx(3, Endian::Big));
    r.header(u64::MAX, 0);
    assert!(matches!(
        reject(&r.buf),
        Error::Format(FormatError::CountTooLarge {
            offset: 8,
            count: u64::MAX,
            ..
        })
    ));
}

/// A file with one string array under key "s".
fn string_array(strings: &[Vec<u8>], version: u32, endian: Endian) -> (Vec<u8>, Vec<u64>) {
    let mut r = Raw::new(ctx(version, endian));
    r.header(0, 1)
        .str("s")
        .u32(9)
        .u32(8)
        .count(strings.len() as u64);
    let mut offsets = Vec::new();
    for s in strings {
        r.count(s.len() as u64);
        offsets.push(r.buf.len() as u64);
        r.bytes(s);
    }
    (r.buf, offsets)
}

/// Checks the reader against `std::str::from_utf8` applied to each string.
#[track_caller]
fn check_strings(strings: &[Vec<u8>], version: u32, endian: Endian) {
    let (bytes, offsets) = string_array(strings, version, endian);
    let first_bad = strings.iter().position(|s| std::str::from_utf8(s).is_err());
    match (GgufFile::open(&bytes), first_bad) {
        (Ok(f), None) => {
            let got: Vec<&str> = f.get_strings("s").unwrap().collect();
            let want: Vec<&str> = strings
                .iter()
                .map(|s| std::str::from_utf8(s).unwrap())
                .collect();
            assert_eq!(got, want);
            // The hot path agrees with the binrw reference codec.
            let body = f.get_array("s").unwrap().offset();
            assert_eq!(
                got,
                gguf::testing::wire_strings(&bytes, f.wire_format(), body)
                    .expect("the reference codec reads the array")
            );
        }
        (Err(Error::Format(FormatError::InvalidUtf8 { offset, .. })), Some(i)) => {
            assert_eq!(offset, offsets[i], "string {i} of {strings:?}")
        }
        (r, bad) => panic!("expected first invalid string {bad:?}, got {r:?} for {strings:?}"),
    }
}

#[test]
fn utf8_across_string_boundaries() {
    let long = |c: &str| c.repeat(200).into_bytes();
    let cases: Vec<Vec<Vec<u8>>> = vec![
        // A character split across two strings is two invalid strings.
        vec![b"a\xC3".to_vec(), b"\xBCb".to_vec()],
        // ...also when a long string (non-ASCII length byte) sits between.
        vec![b"a\xC3".to_vec(), long("x"), b"\xBCb".to_vec()],
        vec![long("é"), b"\xBC".to_vec()],
        vec![b"ok".to_vec(), long("y"), b"\xFF".to_vec(), long("z")],
        vec![long("日"), long("ü"), b"".to_vec(), b"fine".to_vec()],
        vec![b"x".to_vec(), long("a"), b"ab\xC3".to_vec()],
        vec![vec![0x80; 128], b"a".to_vec()],
    ];
    for case in &cases {
        for version in [1, 3] {
            check_strings(case, version, Endian::Little);
            check_strings(case, version, Endian::Big);
        }
    }
}

#[test]
fn utf8_validation_matches_std_on_random_string_arrays() {
    let mut rng = super::util::Rng(0x0CF8);
    let pieces: [&[u8]; 10] = [
        b"a",
        b"Z ",
        "é".as_bytes(),
        "日".as_bytes(),
        "😀".as_bytes(),
        "Ġ".as_bytes(),
        b"\xC3",
        b"\xBC",
        b"\xFF",
        b"\xED\xA0\x80",
    ];
    for _ in 0..3000 {
        let n = rng.below(6) as usize;
        let strings: Vec<Vec<u8>> = (0..n)
            .map(|_| {
                // Mostly short strings, sometimes 128+ bytes; bad bytes rare.
                let parts = if rng.below(5) == 0 {
                    60 + rng.below(80)
                } else {
                    rng.below(6)
                };
                let mut s = Vec::new();
                for _ in 0..parts {
                    let k = if rng.below(12) == 0 {
                        rng.below(10)
                    } else {
                        rng.below(6)
                    };
                    s.extend_from_slice(pieces[k as usize]);
                }
                s
            })
            .collect();
        let endian = if rng.below(2) == 0 {
            Endian::Little
        } else {
            Endian::Big
        };
        check_strings(&strings, 1 + rng.below(3) as u32, endian);
    }
}
