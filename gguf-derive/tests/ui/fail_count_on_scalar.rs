use gguf_derive::GgufCodec;

#[derive(GgufCodec)]
struct Dims {
    #[gguf(count = 4)]
    n: u32,
}

fn main() {}
