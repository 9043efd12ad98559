use gguf_core::Metadata;

#[derive(Metadata)]
enum FileType {
    AllF32,
    MostlyF16,
}

fn main() {}
