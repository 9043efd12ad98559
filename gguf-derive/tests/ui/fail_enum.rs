use gguf_derive::GgufCodec;

#[derive(GgufCodec)]
enum NotAStruct {
    A,
}

fn main() {}
