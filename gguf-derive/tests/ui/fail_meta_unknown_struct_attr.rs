use gguf_core::Metadata;

#[derive(Metadata)]
#[gguf(namespace = "general")]
struct General {
    alignment: u32,
}

fn main() {}
