use gguf_core::Metadata;

#[derive(Metadata)]
#[gguf(prefix = "general")]
struct General {
    #[gguf(arch)]
    alignment: u32,
}

fn main() {}
