use gguf_core::Metadata;

#[derive(Metadata)]
#[gguf(prefix = "general")]
struct General {
    tags: std::collections::HashMap<String, String>,
}

fn main() {}
