//! The derive-generated codecs are the reference for the wire layout: the
//! fast slice reader must agree with them field for field, and writing what
//! they read must give back the same bytes.

use std::io::Cursor;

use binrw::{BinRead, BinWrite};

use crate::format::{Ctx, Endian, HeaderWire, KvHeaderWire, TensorInfoWire};
use crate::testing::Raw;
use crate::GgufFile;

fn sample(ctx: Ctx) -> Vec<u8> {
    let mut r = Raw::new(ctx);
    r.header(3, 2);
    r.str("general.architecture").u32(8).str("llama");
    r.str("a.b").u32(4).u32(7);
    r.tensor_info("t0", &[32, 2], 0, 0);
    r.tensor_info("t1", &[64], 8, 256);
    r.tensor_info("a.rather.long.tensor.name", &[2, 3, 4, 1], 1, 352);
    r.pad(32);
    r.bytes(&[0u8; 400]);
    r.buf
}

fn contexts() -> Vec<Ctx> {
    let mut v = Vec::new();
    for version in 1..=3 {
        for endian in [Endian::Little, Endian::Big] {
            v.push(Ctx { version, endian });
        }
    }
    v
}

#[test]
fn derived_codecs_agree_with_the_reader() {
    for ctx in contexts() {
        let bytes = sample(ctx);
        let file = GgufFile::from_bytes(&bytes).unwrap();
        assert_eq!(file.ctx(), ctx);

        let mut c = Cursor::new(&bytes[..]);
        let header = HeaderWire::read_options(&mut c, binrw::Endian::Little, ctx).unwrap();
        assert_eq!(
            (header.version, header.tensor_count.0, header.kv_count.0),
            (ctx.version, 3, 2)
        );

        for key in file.keys() {
            let range = file.entry_range(key).unwrap();
            c.set_position(range.start);
            let kv = KvHeaderWire::read_options(&mut c, binrw::Endian::Little, ctx).unwrap();
            assert_eq!(kv.key.0, key);
            assert_eq!(kv.value_type, file.value_type(key).unwrap().id());
        }

        for t in file.tensors() {
            c.set_position(t.info_offset());
            let start = c.position() as usize;
            let info = TensorInfoWire::read_options(&mut c, binrw::Endian::Little, ctx).unwrap();
            let end = c.position() as usize;
            assert_eq!(info.name.0, t.name());
            assert_eq!(info.dims.iter().map(|d| d.0).collect::<Vec<_>>(), t.shape());
            assert_eq!(info.ggml_type, t.ggml_type().id());
            assert_eq!(info.offset, t.offset());

            let mut out = Cursor::new(Vec::new());
            info.write_options(&mut out, binrw::Endian::Little, ctx)
                .unwrap();
            assert_eq!(out.into_inner(), &bytes[start..end], "{ctx:?} {}", t.name());
        }
    }
}

#[test]
fn derived_string_refuses_hostile_length_without_allocating() {
    let mut r = Raw::new(Ctx::default());
    r.u64(u64::MAX).bytes(b"abc");
    let err = crate::format::GgufString::read_options(
        &mut Cursor::new(&r.buf[..]),
        binrw::Endian::Little,
        Ctx::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("exceeds"), "{err}");
}

#[test]
fn version_1_counts_that_do_not_fit_u32_are_refused_on_write() {
    let ctx = Ctx {
        version: 1,
        endian: Endian::Little,
    };
    let mut out = Cursor::new(Vec::new());
    assert!(crate::format::Count(1 << 32)
        .write_options(&mut out, binrw::Endian::Little, ctx)
        .is_err());
}

/// A file with one string-array entry holding `strings` (raw bytes).
fn string_array_file(ctx: Ctx, strings: &[&[u8]]) -> Vec<u8> {
    let mut r = Raw::new(ctx);
    r.header(0, 1)
        .str("k")
        .u32(9)
        .u32(8)
        .count(strings.len() as u64);
    for s in strings {
        r.count(s.len() as u64).bytes(s);
    }
    r.buf
}

#[test]
fn string_arrays_fast_and_slow_paths_agree() {
    let long = "ü".repeat(100); // 200 bytes: takes the string-by-string path
    for ctx in contexts() {
        // Valid: short only (fast path), and with a long string (slow path).
        for strings in [
            vec!["a".as_bytes(), "Ġb".as_bytes(), b""],
            vec![b"a", long.as_bytes(), "é".as_bytes()],
        ] {
            let bytes = string_array_file(ctx, &strings);
            let file = GgufFile::from_bytes(&bytes).unwrap();
            let got: Vec<&[u8]> = file.get_strings("k").unwrap().map(str::as_bytes).collect();
            assert_eq!(got, strings, "{ctx:?}");
        }
        // Invalid UTF-8 in the third string is reported at its own offset
        // whichever path found it.
        for first in ["a".as_bytes(), long.as_bytes()] {
            let bytes = string_array_file(ctx, &[first, b"ok", b"\xc3(", b"z"]);
            let w = ctx.count_width();
            let header = 4 + 4 + 2 * w + (w + 1) + 4 + 4 + w;
            let third = header + (w + first.len()) + (w + 2) + w;
            match GgufFile::from_bytes(&bytes) {
                Err(crate::Error::InvalidUtf8 { offset, .. }) => {
                    assert_eq!(offset, third as u64, "{ctx:?}")
                }
                other => panic!("{ctx:?}: expected InvalidUtf8, got {other:?}"),
            }
        }
    }
}
