//! Reads a model and prints what it is: architecture, size, quantization
//! and the hyper-parameters that decide its memory, from the header alone.
//!
//! ```sh
//! cargo run --example summary                 # the bundled samples/tiny-llama.gguf
//! cargo run --example summary -- model.gguf   # any file, or any shard of a split model
//! ```

use gguf::summary::ModelSummary;
use gguf::Model;

fn main() -> gguf::llama::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf").into());
    // `Model` reads a single file or every shard of a split model as one.
    let model = Model::open(&path)?;
    let s = ModelSummary::of(&model)?;
    let or_unknown = |v: Option<String>| v.unwrap_or_else(|| "?".into());

    println!("{path}");
    println!("  name:          {}", or_unknown(s.name));
    println!("  architecture:  {}", or_unknown(s.architecture));
    println!(
        "  parameters:    {} ({} bytes of tensor data, {:.2} bits per weight)",
        ModelSummary::format_count(s.parameters),
        s.tensor_bytes,
        s.bits_per_weight
    );
    println!("  quantization:  {}", s.quantization);
    let types: Vec<String> = s
        .tensor_types
        .iter()
        .map(|(ty, n)| format!("{n} x {ty}"))
        .collect();
    println!("  tensors:       {}", types.join(", "));
    let show = |v: Option<u32>| v.map_or("?".into(), |v| v.to_string());
    println!("  context:       {}", show(s.context_length));
    println!("  layers:        {}", show(s.block_count));
    println!("  embedding:     {}", show(s.embedding_length));
    println!(
        "  vocabulary:    {} ({})",
        s.vocab_size.map_or("?".into(), |v| v.to_string()),
        or_unknown(s.tokenizer_model)
    );
    Ok(())
}
