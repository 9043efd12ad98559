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
