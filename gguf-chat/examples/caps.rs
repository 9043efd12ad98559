//! Prints what each template given on the command line supports.
fn main() {
    for p in std::env::args().skip(1) {
        let src = std::fs::read_to_string(&p).unwrap();
        match gguf_chat::ChatTemplate::new(&src, "<s>", "</s>") {
            Ok(t) => println!("{p}: {:?}", t.caps()),
            Err(e) => println!("{p}: {e}"),
        }
    }
}
