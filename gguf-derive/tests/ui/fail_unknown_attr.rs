use gguf_derive::GgufCodec;

#[derive(GgufCodec)]
struct Dims {
    #[gguf(size = 4)]
    n: u32,
}

fn main() {}
