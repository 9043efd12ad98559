use gguf_core::Metadata;

#[derive(Metadata)]
struct Names {
    #[gguf(arch, key = "general.architecture")]
    architecture: String,
    #[gguf(arch, key = "general.name")]
    name: String,
}

fn main() {}
