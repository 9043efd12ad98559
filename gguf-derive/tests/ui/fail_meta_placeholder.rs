use gguf_core::Metadata;

#[derive(Metadata)]
#[gguf(prefix = "{model}")]
struct Hyper {
    context_length: u32,
}

fn main() {}
