use gguf_derive::GgufCodec;

#[derive(GgufCodec)]
struct Dims {
    n: u32,
    dims: Vec<u64>,
}

fn main() {}
