use gguf_core::Metadata;

#[derive(Metadata)]
struct ContextLength(u32);

fn main() {}
