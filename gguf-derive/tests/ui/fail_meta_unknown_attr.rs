use gguf_core::Metadata;

#[derive(Metadata)]
#[gguf(prefix = "general")]
struct General {
    #[gguf(default = 1)]
    alignment: u32,
}

fn main() {}
