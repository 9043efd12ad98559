use binrw::{BinRead, BinWrite};
use gguf_core::format::{Count, Ctx, Endian, GgufString};
use gguf_derive::GgufCodec;

#[derive(Debug, PartialEq, GgufCodec)]
struct Entry {
    tag: [u8; 2],
    name: GgufString,
    n: u32,
    #[gguf(count = n)]
    items: Vec<Count>,
    #[gguf(count = 2)]
    pair: Vec<u16>,
}

fn main() {
    let e = Entry { tag: *b"ok", name: GgufString("x".into()), n: 2, items: vec![Count(1), Count(2)], pair: vec![3, 4] };
    for version in [1, 3] {
        let ctx = Ctx { version, endian: Endian::Big };
        let mut out = std::io::Cursor::new(Vec::new());
        e.write_options(&mut out, binrw::Endian::Big, ctx).unwrap();
        let bytes = out.into_inner();
        let width = if version == 1 { 4 } else { 8 };
        assert_eq!(bytes.len(), 2 + width + 1 + 4 + 2 * width + 4);
        let back = Entry::read_options(&mut std::io::Cursor::new(bytes), binrw::Endian::Big, ctx).unwrap();
        assert_eq!(back, e);
    }
}
