use gguf_core::Metadata;

#[derive(Metadata)]
#[gguf(prefix = "{arch}")]
struct Hyper {
    #[gguf(key = "llama.attention.head_count", rename = "heads")]
    head_count: u32,
}

fn main() {}
