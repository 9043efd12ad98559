//! Estimates the memory llama.cpp allocates to run a model at several
//! context lengths: weights, KV cache, output and compute buffers.
//!
//! ```sh
//! cargo run --example estimate                       # the bundled sample
//! cargo run --example estimate -- model.gguf 32768   # a model at one context length
//! ```
//!
//! Everything comes from the header; the settings default to those of
//! llama.cpp's tools (`Settings::default()`: CPU only, one sequence, F16
//! cache).

use gguf::estimate::{Estimate, Settings};
use gguf::Model;

fn main() -> gguf::llama::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny-llama.gguf").into());
    let contexts: Vec<u32> = match args.next() {
        Some(n) => vec![n.parse().map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "context length: a number")
        })?],
        None => vec![0, 1024, 8192],
    };
    let model = Model::open(&path)?;

    println!(
        "{:>8} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "n_ctx", "weights", "kv cache", "output", "compute", "total"
    );
    for n_ctx in contexts {
        // n_ctx 0 means the model's training context.
        let settings = Settings::default().n_ctx(n_ctx);
        let e = Estimate::of(&model, &settings)?;
        println!(
            "{:>8} {:>12} {:>12} {:>12} {:>12} {:>12}",
            e.n_ctx,
            mib(e.weights_bytes),
            mib(e.kv_cache_bytes),
            mib(e.output_buffer_bytes),
            mib(e.compute_buffer_bytes),
            mib(e.total_bytes())
        );
    }
    Ok(())
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1024.0 * 1024.0))
}
