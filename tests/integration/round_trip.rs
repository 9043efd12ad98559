//! `Builder::from_file` then write reproduces canonical input byte for
//! byte, keeping version and byte order; converting version or byte order
//! gives what a file of that version or order holds.
//!
//! Inputs here are built field by field with `Raw`, independently of the
//! writer (gguf-py inputs are in `gguf_py.rs`).

use std::io::Cursor;

use gguf::write::{Builder, WriteMode, WriteOptions};
use gguf::{Ctx, Endian, Gguf, GgufFile};

use super::util::{ctx, rich, Mode, Raw, Src};

fn u16_bytes(r: &mut Raw, v: u16) {
    let b = match r.ctx.endian {
        Endian::Little => v.to_le_bytes(),
        Endian::Big => v.to_be_bytes(),
    };
    r.bytes(&b);
}

/// A canonical file of version and byte order `c`: metadata of several
/// types (strings, arrays, a nested array), an F32, an F16 and an I8
/// tensor, contiguous, each padded to `alignment`.
pub fn raw_file(c: Ctx, alignment: u32) -> Vec<u8> {
    let custom = alignment != 32;
    let mut r = Raw::new(c);
    r.header(3, 9 + u64::from(custom));
    r.str("general.architecture").u32(8).str("llama");
    r.str("llama.context_length").u32(4).u32(4096);
    r.str("t.u64").u32(10).u64(u64::MAX - 5);
    r.str("t.f32").u32(6).f32(-0.75);
    r.str("t.bool").u32(7).u8(1);
    r.str("t.u16").u32(2);
    u16_bytes(&mut r, 0xBEEF);
    r.str("tokenizer.ggml.tokens").u32(9).u32(8).count(3);
    for t in ["<s>", "</s>", "▁hello"] {
        r.str(t);
    }
    r.str("tokenizer.ggml.scores").u32(9).u32(6).count(3);
    for s in [0.0f32, -1.5, -2.25] {
        r.f32(s);
    }
    // Nested: [[1, 2, 3] as u32, ["a", "bc"]]
    r.str("t.nested").u32(9).u32(9).count(2);
    r.u32(4).count(3).u32(1).u32(2).u32(3);
    r.u32(8).count(2).str("a").str("bc");
    if custom {
        r.str("general.alignment").u32(4).u32(alignment);
    }
    let pad = |n: u64| n.div_ceil(u64::from(alignment)) * u64::from(alignment);
    let f32_len = 6 * 4;
    let f16_len = 5 * 2;
    r.tensor_info("w.f32", &[3, 2], 0, 0);
    r.tensor_info("w.f16", &[5], 1, pad(f32_len));
    r.tensor_info("w.i8", &[7, 1], 24, pad(f32_len) + pad(f16_len));
    r.pad(alignment as usize);
    let start = r.buf.len();
    for i in 0..6 {
        r.f32(i as f32 * 0.5 - 1.0);
    }
    r.pad(alignment as usize);
    for i in 0..5u16 {
        u16_bytes(&mut r, 0x3C00 + i * 0x111);
    }
    r.pad(alignment as usize);
    r.bytes(&[1, 0xFF, 3, 0x80, 5, 6, 7]);
    r.pad(alignment as usize);
    assert_eq!(r.buf.len() % alignment as usize, 0);
    assert!(r.buf.len() > start);
    r.buf
}

fn every_ctx() -> Vec<Ctx> {
    let mut v = Vec::new();
    for version in [1, 2, 3] {
        for endian in [Endian::Little, Endian::Big] {
            v.push(ctx(version, endian));
        }
    }
    v
}

fn rewrite(input: &[u8], change: impl FnOnce(&mut Builder<'_>)) -> Vec<u8> {
    let file = GgufFile::open(input).unwrap();
    let mut b = Builder::from_file(&file).unwrap();
    change(&mut b);
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    out
}

#[test]
fn raw_files_of_every_version_and_byte_order_round_trip_exactly() {
    for c in every_ctx() {
        for alignment in [32, 8, 256] {
            let input = raw_file(c, alignment);
            let file = GgufFile::open(&input).unwrap();
            assert_eq!(file.ctx(), c);
            let out = rewrite(&input, |_| {});
            assert!(out == input, "{c:?} align {alignment}: single pass differs");
            let mut cur = Cursor::new(Vec::new());
            Builder::from_file(&file)
                .unwrap()
                .write_with(&mut cur, WriteOptions::new().mode(WriteMode::Reserve))
                .unwrap();
            assert!(cur.into_inner() == input, "{c:?}: reserve differs");
            let mut mf = Vec::new();
            Builder::from_file(&file)
                .unwrap()
                .write_metadata_first(&mut mf)
                .unwrap()
                .finish()
                .unwrap();
            assert!(mf == input, "{c:?}: metadata-first differs");
        }
    }
}

#[test]
fn changing_version_or_byte_order_gives_that_files_bytes() {
    for from in every_ctx() {
        for to in every_ctx() {
            let input = raw_file(from, 64);
            let expected = raw_file(to, 64);
            let out = rewrite(&input, |b| {
                b.version(to.version).unwrap();
                b.endian(to.endian);
            });
            assert!(out == expected, "{from:?} -> {to:?}");
        }
    }
}

#[test]
fn little_big_little_gives_the_original_bytes() {
    for version in [1, 2, 3] {
        let le = rich(ctx(version, Endian::Little), 32);
        // Plain types only: quantized data keeps its byte order.
        let le = super::util::Content {
            tensors: le.tensors.into_iter().filter(|t| t.ty.is_plain()).collect(),
            ..le
        };
        let be = super::util::Content {
            ctx: ctx(version, Endian::Big),
            ..le.clone()
        };
        let le_bytes = le.write(Mode::Single, Src::Bytes);
        let be_bytes = be.write(Mode::Single, Src::Bytes);
        let to_be = rewrite(&le_bytes, |b| {
            b.endian(Endian::Big);
        });
        assert!(to_be == be_bytes, "v{version}: LE -> BE");
        let back = rewrite(&to_be, |b| {
            b.endian(Endian::Little);
        });
        assert!(back == le_bytes, "v{version}: LE -> BE -> LE");
    }
}

#[test]
fn written_files_read_back_and_rewrite_identically() {
    for c in every_ctx() {
        for alignment in [1, 32, 4096] {
            let content = rich(c, alignment);
            let bytes = content.write(Mode::Single, Src::Native);
            assert!(rewrite(&bytes, |_| {}) == bytes, "{c:?} align {alignment}");
        }
    }
}

#[test]
fn a_round_trip_through_a_mapped_file_keeps_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let input = raw_file(ctx(3, Endian::Little), 32);
    let src = dir.path().join("in.gguf");
    let dst = dir.path().join("out.gguf");
    std::fs::write(&src, &input).unwrap();
    let file = GgufFile::open(&src).unwrap();
    Builder::from_file(&file)
        .unwrap()
        .write_to_path(&dst)
        .unwrap();
    assert!(std::fs::read(&dst).unwrap() == input);
    // Rewriting onto the mapped input itself: the temp file is renamed
    // over it while the map still holds the old bytes.
    Builder::from_file(&file)
        .unwrap()
        .write_to_path(&src)
        .unwrap();
    drop(file);
    assert!(std::fs::read(&src).unwrap() == input);
}
