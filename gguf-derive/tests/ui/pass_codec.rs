use binrw::{BinRead, BinWrite};
use gguf_core::{format::WireFormat, Endian};
use gguf_derive::GgufCodec;

// gguf-core's version-dependent primitives (counts, strings, dimensions)
// are private to it; its unit tests derive with them (format/tests.rs).
#[derive(Debug, PartialEq, GgufCodec)]
struct Entry {
    tag: [u8; 2],
    n: u32,
    #[gguf(count = n)]
    items: Vec<u64>,
    #[gguf(count = 2)]
    pair: Vec<u16>,
}

fn main() {
    let e = Entry { tag: *b"ok", n: 2, items: vec![1, 2], pair: vec![3, 4] };
    for version in [1, 3] {
        let ctx = WireFormat { version, endian: Endian::Big };
        let mut out = std::io::Cursor::new(Vec::new());
        e.write_options(&mut out, binrw::Endian::Big, ctx).unwrap();
        let bytes = out.into_inner();
        assert_eq!(bytes.len(), 2 + 4 + 2 * 8 + 2 * 2);
        let back = Entry::read_options(&mut std::io::Cursor::new(bytes), binrw::Endian::Big, ctx).unwrap();
        assert_eq!(back, e);
    }
}
