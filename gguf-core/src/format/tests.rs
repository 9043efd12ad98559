//! The derive-generated codecs are the reference for the wire layout: the
//! fast slice reader must agree with them field for field, and writing what
//! they read must give back the same bytes.

use std::io::Cursor;

use binrw::{BinRead, BinWrite};

use crate::format::{
    Count, Endian, GgufString, HeaderWire, KvHeaderWire, StrSpan, TensorInfoWire, WireFormat,
};
use crate::read::{Gguf, GgufFile};
use crate::testing::Raw;

fn sample(ctx: WireFormat) -> Vec<u8> {
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

fn contexts() -> Vec<WireFormat> {
    let mut v = Vec::new();
    for version in 1..=3 {
        for endian in [Endian::Little, Endian::Big] {
            v.push(WireFormat { version, endian });
        }
    }
    v
}

#[test]
fn derived_codecs_agree_with_the_reader() {
    for ctx in contexts() {
        let bytes = sample(ctx);
        let file = GgufFile::open(&bytes).unwrap();
        assert_eq!(file.wire_format(), ctx);

        let mut c = Cursor::new(&bytes[..]);
        let header = HeaderWire::read_options(&mut c, ctx.endian.binrw(), ctx).unwrap();
        assert_eq!(
            (header.version, header.tensor_count.0, header.kv_count.0),
            (ctx.version, 3, 2)
        );

        for key in file.keys() {
            let range = file.entry_range(key).unwrap();
            c.set_position(range.start);
            let kv =
                KvHeaderWire::<GgufString>::read_options(&mut c, ctx.endian.binrw(), ctx).unwrap();
            assert_eq!(kv.key.0, key);
            assert_eq!(kv.value_type, file.value_type(key).unwrap().id());
        }

        for t in file.tensors() {
            c.set_position(t.info_offset());
            let start = c.position() as usize;
            let info = TensorInfoWire::<GgufString>::read_options(&mut c, ctx.endian.binrw(), ctx)
                .unwrap();
            let end = c.position() as usize;
            assert_eq!(info.name.0, t.name());
            assert_eq!(info.dims.as_slice(), t.shape());
            assert_eq!(info.ggml_type, t.ggml_type().id());
            assert_eq!(info.offset, t.offset());

            let mut out = Cursor::new(Vec::new());
            info.write_options(&mut out, ctx.endian.binrw(), ctx)
                .unwrap();
            assert_eq!(out.into_inner(), &bytes[start..end], "{ctx:?} {}", t.name());
        }
    }
}

#[test]
fn the_byte_order_comes_from_binrw_s_endian_argument() {
    // The WireFormat says little-endian; binrw's argument says big: big wins, in
    // the derived codecs and in the hand-written ones they call.
    let little = WireFormat {
        version: 3,
        endian: Endian::Little,
    };
    let big = WireFormat {
        version: 3,
        endian: Endian::Big,
    };
    let bytes = sample(big);
    let mut c = Cursor::new(&bytes[..]);
    let header = HeaderWire::read_options(&mut c, binrw::Endian::Big, little).unwrap();
    assert_eq!((header.version, header.tensor_count.0), (3, 3));
    let mut out = Cursor::new(Vec::new());
    header
        .write_options(&mut out, binrw::Endian::Big, little)
        .unwrap();
    assert_eq!(out.get_ref()[..], bytes[..out.get_ref().len()]);
    // binrw's read_be / write_be reach the fields too.
    let mut c = Cursor::new(&bytes[..]);
    let again = HeaderWire::read_be_args(&mut c, little).unwrap();
    assert_eq!(again.kv_count.0, 2);
}

#[test]
fn derived_string_refuses_hostile_length_without_allocating() {
    let mut r = Raw::new(WireFormat::default());
    r.u64(u64::MAX).bytes(b"abc");
    for err in [
        StrSpan::read_options(
            &mut Cursor::new(&r.buf[..]),
            binrw::Endian::Little,
            WireFormat::default(),
        )
        .unwrap_err(),
        GgufString::read_options(
            &mut Cursor::new(&r.buf[..]),
            binrw::Endian::Little,
            WireFormat::default(),
        )
        .unwrap_err(),
    ] {
        match err.custom_err::<crate::error::Error>() {
            Some(crate::error::Error::Format(crate::error::FormatError::CountTooLarge {
                offset: 0,
                count: u64::MAX,
                remaining: 3,
                ..
            })) => {}
            other => panic!("expected CountTooLarge, got {other:?} ({err})"),
        }
    }
}

#[test]
fn derived_string_validates_utf8_across_pieces() {
    // Characters cut by the 256-byte pieces the codec validates in.
    for text in [
        "é".repeat(300),
        "日".repeat(200),
        format!("a{}", "😀".repeat(100)),
    ] {
        let mut r = Raw::new(WireFormat::default());
        r.str(&text);
        let span = StrSpan::read_options(
            &mut Cursor::new(&r.buf[..]),
            binrw::Endian::Little,
            WireFormat::default(),
        )
        .unwrap();
        assert_eq!(span.get(&r.buf), Some(text.as_str()));
        // A bad byte anywhere, including a character cut at the end.
        for bad in [1, 255, 256, text.len() - 1] {
            let mut bytes = r.buf.clone();
            bytes[8 + bad] = 0xFF;
            let err = StrSpan::read_options(
                &mut Cursor::new(&bytes[..]),
                binrw::Endian::Little,
                WireFormat::default(),
            )
            .unwrap_err();
            assert!(
                matches!(
                    err.custom_err::<crate::error::Error>(),
                    Some(crate::error::Error::Format(
                        crate::error::FormatError::InvalidUtf8 { offset: 8, .. }
                    ))
                ),
                "{text:?} bad at {bad}: {err}"
            );
        }
        let mut cut = r.buf.clone();
        cut.pop();
        cut[..8].copy_from_slice(&(text.len() as u64 - 1).to_le_bytes());
        assert!(StrSpan::read_options(
            &mut Cursor::new(&cut[..]),
            binrw::Endian::Little,
            WireFormat::default(),
        )
        .is_err());
    }
}

#[test]
fn version_1_counts_that_do_not_fit_u32_are_refused_on_write() {
    let ctx = WireFormat {
        version: 1,
        endian: Endian::Little,
    };
    let mut out = Cursor::new(Vec::new());
    assert!(crate::format::Count(1 << 32)
        .write_options(&mut out, binrw::Endian::Little, ctx)
        .is_err());
}

/// A file with one string-array entry holding `strings` (raw bytes).
fn string_array_file(ctx: WireFormat, strings: &[&[u8]]) -> Vec<u8> {
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

/// The strings of the array whose elements start at `body`, read with the
/// derived codecs (`ArrayHeaderWire`, then one `StrSpan` per element).
fn derived_strings(bytes: &[u8], ctx: WireFormat, body: u64) -> Vec<&str> {
    let mut c = Cursor::new(bytes);
    c.set_position(body - 4 - ctx.count_width() as u64);
    let header =
        crate::format::ArrayHeaderWire::read_options(&mut c, ctx.endian.binrw(), ctx).unwrap();
    assert_eq!(header.element_type, crate::format::ValueType::String.id());
    (0..header.len.0)
        .map(|_| {
            let span = StrSpan::read_options(&mut c, ctx.endian.binrw(), ctx).unwrap();
            span.get(bytes).unwrap()
        })
        .collect()
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
            let file = GgufFile::open(&bytes).unwrap();
            let got: Vec<&[u8]> = file.get_strings("k").unwrap().map(str::as_bytes).collect();
            assert_eq!(got, strings, "{ctx:?}");
            // The hand-written walk agrees with the derived codecs.
            let body = file.get_array("k").unwrap().offset();
            let derived: Vec<&[u8]> = derived_strings(&bytes, ctx, body)
                .into_iter()
                .map(str::as_bytes)
                .collect();
            assert_eq!(derived, strings, "{ctx:?}");
        }
        // Invalid UTF-8 in the third string is reported at its own offset
        // whichever path found it.
        for first in ["a".as_bytes(), long.as_bytes()] {
            let bytes = string_array_file(ctx, &[first, b"ok", b"\xc3(", b"z"]);
            let w = ctx.count_width();
            let header = 4 + 4 + 2 * w + (w + 1) + 4 + 4 + w;
            let third = header + (w + first.len()) + (w + 2) + w;
            match GgufFile::open(&bytes) {
                Err(crate::error::Error::Format(crate::error::FormatError::InvalidUtf8 {
                    offset,
                    ..
                })) => {
                    assert_eq!(offset, third as u64, "{ctx:?}")
                }
                other => panic!("{ctx:?}: expected InvalidUtf8, got {other:?}"),
            }
        }
    }
}

/// A file holding `pad` (a string key that shifts every offset) and three
/// arrays: `u` (u16), `s` (strings), `n` (arrays of f32, one with a NaN
/// and a negative zero, one empty).
fn arrays_file(ctx: WireFormat, pad: &str, last_string: &str) -> Vec<u8> {
    let mut r = Raw::new(ctx);
    r.header(0, 4);
    r.str("pad").u32(8).str(pad);
    r.str("u").u32(9).u32(2).count(3);
    for v in [1u16, 0x0102, 0xFFFF] {
        let b = match ctx.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        };
        r.bytes(&b);
    }
    r.str("s").u32(9).u32(8).count(2).str("Ġa").str(last_string);
    r.str("n").u32(9).u32(9).count(2);
    r.u32(6).count(3).f32(1.5).f32(f32::NAN).f32(-0.0);
    r.u32(6).count(0);
    r.buf
}

#[test]
fn array_views_compare_by_content_not_offset() {
    let reference = arrays_file(WireFormat::default(), "", "b");
    let reference = GgufFile::open(&reference).unwrap();
    for ctx in contexts() {
        let same = arrays_file(ctx, "shifts every offset", "b");
        let same = GgufFile::open(&same).unwrap();
        let other = arrays_file(ctx, "", "c");
        let other = GgufFile::open(&other).unwrap();
        for key in ["u", "s", "n"] {
            let a = reference.get_array(key).unwrap();
            let b = same.get_array(key).unwrap();
            assert_ne!(a.offset(), b.offset());
            assert_eq!(a, b, "{ctx:?} {key}");
        }
        assert_ne!(
            reference.get_array("s").unwrap(),
            other.get_array("s").unwrap(),
            "{ctx:?}"
        );
        // Different element types or lengths are never equal.
        assert_ne!(
            reference.get_array("u").unwrap(),
            same.get_array("s").unwrap()
        );
    }
}

/// The derive over the crate's own version-dependent primitives: a string
/// and a `Vec` of counts take the version's width, a fixed-count `Vec` and
/// plain numbers do not (moved here from gguf-derive's UI test when these
/// primitives became private to the crate).
#[test]
fn derived_codec_over_private_primitives_follows_the_version() {
    #[derive(Debug, PartialEq, gguf_derive::GgufCodec)]
    struct Entry {
        tag: [u8; 2],
        name: GgufString,
        n: u32,
        #[gguf(count = n)]
        items: Vec<Count>,
        #[gguf(count = 2)]
        pair: Vec<u16>,
    }
    let e = Entry {
        tag: *b"ok",
        name: GgufString("x".into()),
        n: 2,
        items: vec![Count(1), Count(2)],
        pair: vec![3, 4],
    };
    for version in [1, 3] {
        let ctx = WireFormat {
            version,
            endian: Endian::Big,
        };
        let mut out = Cursor::new(Vec::new());
        e.write_options(&mut out, binrw::Endian::Big, ctx).unwrap();
        let bytes = out.into_inner();
        let width = if version == 1 { 4 } else { 8 };
        assert_eq!(bytes.len(), 2 + width + 1 + 4 + 2 * width + 4);
        let back = Entry::read_options(&mut Cursor::new(bytes), binrw::Endian::Big, ctx).unwrap();
        assert_eq!(back, e);
    }
}

/// A span borrows its text from the stream's bytes, or nothing when it
/// lies outside them (a doc example until the type became crate-private).
#[test]
fn str_span_gets_its_text_or_none() {
    let span = StrSpan { offset: 8, len: 3 };
    assert_eq!(span.get(b"\x03\0\0\0\0\0\0\0abc"), Some("abc"));
    assert_eq!(span.get(b"short"), None);
}

/// Dimensions hold at most four entries (a doc example until the type
/// became crate-private).
#[test]
fn dims_hold_at_most_four() {
    let d = crate::format::Dims::new(&[4096, 32000]).unwrap();
    assert_eq!(d.as_slice(), &[4096, 32000]);
    assert!(crate::format::Dims::new(&[1; 5]).is_none());
}
