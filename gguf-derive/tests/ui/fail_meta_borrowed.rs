use gguf_core::Metadata;

#[derive(Metadata)]
#[gguf(prefix = "general")]
struct General<'a> {
    name: &'a str,
}

fn main() {}
